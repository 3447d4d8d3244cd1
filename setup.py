"""The C extensions of ``generators`` and ``entityworks``, compiled when the package is built
(``pip install .`` compiles them with the system's C compiler; a wheel carries them compiled).
Everything else about the package is declared in pyproject.toml.

Every C source ``generators/**/_c*.c`` or ``entityworks/**/*.c`` is one extension module of
that dotted name (``entityworks/types/cloops.c`` is ``entityworks.types.cloops``): a new
engine needs no change here. The engines take NumPy arrays through the buffer protocol only
(no NumPy headers at build time) and check every buffer's shape, strides and ranges before a
loop.

``ENTITYWORKS_SANITIZE=1`` at build time adds AddressSanitizer and UndefinedBehaviorSanitizer
(CI builds the extensions once more that way and runs the engine tests under them)."""

from __future__ import annotations

import os
from pathlib import Path

from setuptools import Extension, setup

HERE = Path(__file__).resolve().parent

COMPILE = ["-O3", "-std=c11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"]
LINK: list[str] = []
if os.environ.get("ENTITYWORKS_SANITIZE") == "1":
    sanitize = [
        "-fsanitize=address,undefined",
        "-fno-omit-frame-pointer",
        "-fno-sanitize-recover=all",
    ]
    COMPILE = [*(flag for flag in COMPILE if flag != "-O3"), "-O1", "-g", *sanitize]
    LINK = sanitize


def extensions() -> list[Extension]:
    found = []
    sources = [*(HERE / "generators").rglob("_c*.c"), *(HERE / "entityworks").rglob("*.c")]
    for source in sorted(sources):
        relative = source.relative_to(HERE)
        found.append(
            Extension(
                ".".join(relative.with_suffix("").parts),
                [relative.as_posix()],
                # the headers beside it (the checked buffers): a change rebuilds it
                depends=[h.relative_to(HERE).as_posix() for h in sorted(source.parent.glob("*.h"))],
                extra_compile_args=COMPILE,
                extra_link_args=LINK,
            )
        )
    return found


setup(ext_modules=extensions())
