"""Compiled kernels that later processes load as machine code, without importing numba.

numba's own disk cache still needs numba in the process, and importing numba and setting up
its CPU target costs about a second of CPU on a small machine: far more than the kernel a
command line then runs for. So the entry points that a fresh process calls first (a sudoku
solve, a field of view) are numba ``cfunc`` kernels: plain C functions of pointers and
integers, which ctypes calls with the GIL released. The first process compiles a kernel
with numba and keeps its machine code on disk as an object file; every later process hands
that file to LLVM's JIT linker through llvmlite (numba's own code generator, installed with
it, which starts in a few hundredths of a second) and calls the code it gets back.

The file name carries a digest of everything the machine code depends on: the kernel's
source modules, the numba and llvmlite versions, Python, the host CPU and its features, and
numba's code-generation settings from the environment. A file is only loaded when every
symbol it needs resolves in this process (numba's C helpers, for errors and memory, come
from its extension modules, loaded on their own as numba itself would load them), and
anything unexpected (another object format, an unreadable or foreign file) falls back to
compiling with numba in the same process. The fast path therefore changes when a process
is ready, never what a kernel computes.

Machine code runs as whoever loads it, so it is only ever read from a folder that this user
alone can have written (:mod:`generators._compiled.private`: ``NUMBA_CACHE_DIR/generators-native``
when a user set the variable, else ``__pycache__/native`` beside this package, else the
per-user cache folder, each taken only when it and every folder above it pass the
ownership and permission checks), and a file carries an HMAC-SHA256, keyed with that
folder's secret, of its name, header and code. The HMAC is checked (``hmac.compare_digest``)
before the file is parsed any further, let alone handed to LLVM: a file this user's
processes did not write is never linked into the process, it is compiled again and
replaced instead.
"""

from __future__ import annotations

import ctypes
import hashlib
import hmac
import importlib
import importlib.util
import json
import os
import platform
import struct
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from generators._compiled import numba_compat, private

#: First bytes of a kernel file; the format number changes when the layout does. The
#: HMAC-SHA256 of the rest (see :func:`_seal`) follows, then a JSON header line, then code.
_MAGIC = b"generators-kernel 2\n"
_MAC_BYTES = 32

#: Environment settings that change the code numba generates (they go into the digest).
_CODEGEN_ENV = ("NUMBA_OPT", "NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "NUMBA_BOUNDSCHECK",
                "NUMBA_FASTMATH", "NUMBA_LOOP_VECTORIZE", "NUMBA_SLP_VECTORIZE",
                "NUMBA_ENABLE_AVX", "NUMBA_DISABLE_INTEL_SVML")  # fmt: skip


@dataclass(frozen=True)
class Kernel:
    """One compiled entry point: where numba builds it and how ctypes calls it."""

    name: str  #: file stem, and the kernel's name in messages
    builder: str  #: ``"module:function"`` returning the numba ``cfunc`` (imports numba)
    python: str  #: ``"module:function"`` doing the same from the block's values, uncompiled
    sources: tuple[str, ...]  #: modules whose source the machine code is compiled from
    restype: Any  #: ctypes result type
    argtypes: tuple[Any, ...]  #: ctypes argument types


_lock = threading.Lock()
_loaded: dict[str, Callable[..., Any]] = {}
_how: dict[str, str] = {}  # kernel name -> "file" (loaded without numba) or "numba"
_engines: list[Any] = []  # the JIT engines own the loaded code: kept for the process's life


def kernel(spec: Kernel) -> Callable[..., Any]:
    """The ctypes function of ``spec``, loaded or compiled on first use."""
    function = _loaded.get(spec.name)
    if function is None:
        with _lock:
            function = _loaded.get(spec.name)
            if function is None:
                function = _loaded[spec.name] = _obtain(spec)
    return function


_blocks = threading.local()
_BLOCK = 32  # int64 values in an argument block


def argument_block() -> tuple[Any, int]:
    """This thread's block of ``int64`` values for a kernel's arguments, and its address.

    A kernel takes one pointer to its arguments, packed with ``struct.pack_into``: ctypes
    converts a dozen typed arguments in about two microseconds, packing them costs a tenth
    of that. Each thread has its own block, since kernels run with the GIL released.
    """
    try:
        return _blocks.block  # type: ignore[no-any-return]
    except AttributeError:
        block = (ctypes.c_int64 * _BLOCK)()
        _blocks.block = (block, ctypes.addressof(block))
        return _blocks.block  # type: ignore[no-any-return]


def how_loaded(name: str) -> str | None:
    """``"file"`` when kernel ``name`` came from its machine-code file, ``"numba"`` when
    numba compiled or loaded it in this process, ``"python"`` under ``NUMBA_DISABLE_JIT``,
    None before its first use."""
    return _how.get(name)


def _obtain(spec: Kernel) -> Callable[..., Any]:
    if os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"):
        # numba's debugging mode compiles nothing: the kernel's Python twin reads the block
        module, _, attribute = spec.python.partition(":")
        run = getattr(importlib.import_module(module), attribute)
        _how[spec.name] = "python"
        return lambda address: run(list((ctypes.c_int64 * _BLOCK).from_address(address)))
    prototype = ctypes.CFUNCTYPE(spec.restype, *spec.argtypes)
    name = _name(spec)
    place = None if name is None else private.folder()
    if place is not None and name is not None:
        address = _load(place, name)
        if address is not None:
            _how[spec.name] = "file"
            return prototype(address)
    module, _, attribute = spec.builder.partition(":")
    build = getattr(importlib.import_module(module), attribute)
    compiled = build(cache=True)
    _how[spec.name] = "numba"
    if place is not None and name is not None and not _keep(place, name, compiled):
        # numba loaded it from its own cache, which keeps no code we can write out: compile
        # once more, uncached, so that the next process needs no numba. Run that fresh code
        # here too: numba keys its cache on the entry point's own file only, so what it
        # loaded can predate an edit to a module the entry point calls (``spec.sources``)
        compiled = build(cache=False)
        _keep(place, name, compiled)
    return prototype(compiled.address)


def _path(spec: Kernel) -> Path | None:
    """Where the machine code of ``spec`` is kept for this process's configuration."""
    name = _name(spec)
    place = None if name is None else private.folder()
    return None if place is None or name is None else place.path / name


def _name(spec: Kernel) -> str | None:
    """The file name of the machine code of ``spec``: a digest of all it depends on."""
    try:
        import llvmlite.binding as ll

        digest = hashlib.sha256()
        parts = [sys.version, sys.platform, platform.machine(), metadata.version("numba"),
                 metadata.version("llvmlite"), ll.get_process_triple(), ll.get_host_cpu_name(),
                 ll.get_host_cpu_features().flatten(), spec.builder, repr(spec.argtypes),
                 repr(spec.restype)]  # fmt: skip
        parts += [f"{name}={os.environ.get(name, '')}" for name in _CODEGEN_ENV]
        for part in parts:
            digest.update(part.encode() + b"\0")
        for module in (*spec.sources, __name__, numba_compat.__name__):
            found = importlib.util.find_spec(module)
            if found is None or found.origin is None:
                return None
            digest.update(Path(found.origin).read_bytes() + b"\0")
    except Exception:  # noqa: BLE001 - no llvmlite, no metadata, no readable source
        return None
    return f"{spec.name}-{digest.hexdigest()[:24]}.kernel"


def _seal(secret: bytes, name: str, header: bytes, code: bytes) -> bytes:
    """The kernel file ``name`` holding ``header`` and ``code``, authenticated with
    ``secret``: the name is part of what is signed, so a file cannot stand in for another."""
    body = header + b"\n" + code
    mac = hmac.new(secret, _MAGIC + name.encode() + b"\0" + body, hashlib.sha256).digest()
    return _MAGIC + mac + body


def _unseal(secret: bytes, name: str, data: bytes) -> tuple[bytes, bytes] | None:
    """(header, code) of kernel file ``name`` when it was sealed with ``secret``, else None."""
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + _MAC_BYTES:
        return None
    mac, body = data[len(_MAGIC) : len(_MAGIC) + _MAC_BYTES], data[len(_MAGIC) + _MAC_BYTES :]
    expected = hmac.new(secret, _MAGIC + name.encode() + b"\0" + body, hashlib.sha256).digest()
    if not hmac.compare_digest(mac, expected):
        return None
    header, _, code = body.partition(b"\n")
    return header, code


def _keep(place: private.Folder, name: str, compiled: Any) -> bool:
    """Write the machine code of a freshly compiled ``cfunc`` next to its symbol name;
    False when there is none to write (a ``cfunc`` numba loaded from its own cache).

    numba has no public call for a kernel's object code (:func:`.numba_compat.object_code`
    emits it): nothing is kept when there is none (another numba) or when the result is not
    an object file :func:`_load` can check.
    """
    try:
        code = numba_compat.object_code(compiled)
        header = json.dumps({"symbol": compiled.native_name}).encode()
    except Exception:  # noqa: BLE001 - an internal layout this numba does not have
        return True  # nothing to gain from compiling again
    symbols = _elf_symbols(code)
    if symbols is None:
        return True  # another object format: numba's own cache serves these platforms
    if compiled.native_name not in symbols[0]:
        return False
    secret = private.key(place)
    if secret is not None:
        private.write(place, name, _seal(secret, name, header, code))
    return True


def _load(place: private.Folder, name: str) -> int | None:
    """The address of the kernel in file ``name`` of ``place`` once loaded, or None to
    compile instead. Nothing reaches llvmlite before the file is known to be ours: read
    only through :func:`generators._compiled.private.read`, and its HMAC checked first."""
    data = private.read(place, name)
    if data is None:
        return None
    secret = private.key(place)
    opened = None if secret is None else _unseal(secret, name, data)
    if opened is None:
        return None
    header, code = opened
    try:
        symbol = json.loads(header)["symbol"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(symbol, str):
        return None
    symbols = _elf_symbols(code)
    if symbols is None or symbol not in symbols[0]:
        return None
    try:
        import llvmlite.binding as ll

        ll.initialize_native_target()
        ll.initialize_native_asmprinter()
        machine = ll.Target.from_default_triple().create_target_machine()
        # creating the engine also makes the process's own symbols (Python's C API) visible
        engine = ll.create_mcjit_compiler(ll.parse_assembly(""), machine)
        _register_numba_helpers(ll)
        if any(ll.address_of_symbol(needed) is None for needed in symbols[1]):
            return None  # LLVM would abort the process on an unresolved symbol
        engine.add_object_file(ll.ObjectFileRef.from_data(code))
        engine.finalize_object()
        address = int(engine.get_function_address(symbol))
    except Exception:  # noqa: BLE001 - whatever failed, numba compiles instead
        return None
    if not address:
        return None
    _engines.append(engine)
    return address


_helpers_registered = False


def _register_numba_helpers(ll: Any) -> None:
    """Give LLVM the addresses of numba's C helpers once per process, without importing
    numba (:func:`.numba_compat.register_helpers`). The kernels call them on their error
    paths (raising, reporting) and for memory (reference counts, allocation), which then
    work exactly as under numba."""
    global _helpers_registered
    if not _helpers_registered:
        numba_compat.register_helpers(ll)
        _helpers_registered = True


def _elf_symbols(code: bytes) -> tuple[set[str], set[str]] | None:
    """(defined global symbols, undefined symbols) of a little-endian ELF64 object, or None
    for any other format (those are compiled by numba in each process instead)."""
    if code[:4] != b"\x7fELF" or code[4:6] != b"\x02\x01":
        return None
    try:
        (shoff,) = struct.unpack_from("<Q", code, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", code, 0x3A)
        sections = [struct.unpack_from("<IIQQQQIIQQ", code, shoff + i * shentsize)
                    for i in range(shnum)]  # fmt: skip
        defined: set[str] = set()
        undefined: set[str] = set()
        for _, kind, _, _, offset, size, link, _, _, entsize in sections:
            if kind != 2:  # SHT_SYMTAB
                continue
            strings = sections[link]
            names = code[strings[4] : strings[4] + strings[5]]
            for start in range(offset, offset + size, entsize or 24):
                name_at, info, _, index, _, _ = struct.unpack_from("<IBBHQQ", code, start)
                name = names[name_at : names.index(b"\0", name_at)].decode()
                if not name:
                    continue
                if index == 0:
                    undefined.add(name)
                elif info >> 4 in (1, 2):  # global or weak
                    defined.add(name)
    except (struct.error, ValueError, IndexError, UnicodeDecodeError):
        return None
    return defined, undefined
