"""What generators reads of numba's internals (``generators._compiled.numba_compat``) works
on the numba installed: each function against the real numba (``.ci/run`` runs these on the
lowest supported numba as well as the newest)."""

from __future__ import annotations

import ctypes
import importlib.util
import os
from pathlib import Path
from typing import Any

import numba
import pytest

from generators._compiled import native as _native
from generators._compiled import numba_compat


def _twice(x):  # type: ignore[no-untyped-def]
    return 2 * x + 1


def _add(a, b):  # type: ignore[no-untyped-def]
    return a + b


def _files(root: Path) -> set[str]:
    return {p.suffix for p in root.rglob("*") if p.is_file()}


def test_function_cache_keeps_numba_s_files_under_its_root_only(tmp_path: Path) -> None:
    root = tmp_path / "numba"
    cache = numba_compat.function_cache(_twice, str(root))
    assert numba_compat.is_function_cache(cache)
    assert Path(cache.cache_path).is_relative_to(root)
    folder = os.path.dirname(os.path.abspath(__file__))
    assert Path(cache.cache_path).name.startswith(os.path.basename(folder) + "_")
    compiled = numba.njit(nogil=True)(_twice)
    numba_compat.use_cache(compiled, cache)
    assert compiled(20) == 41
    assert {".nbi", ".nbc"} <= _files(root)  # numba's index and data files, there
    again = numba.njit(nogil=True)(_twice)  # a new dispatcher: loads instead of compiling
    numba_compat.use_cache(again, numba_compat.function_cache(_twice, str(root)))
    assert again(1) == 3
    assert sum(again.stats.cache_hits.values()) == 1
    assert not numba_compat.is_function_cache(object())


def test_compiled_cfunc_is_callable_and_cached_where_told(tmp_path: Path) -> None:
    root = tmp_path / "numba"
    signature = numba.types.int64(numba.types.int64, numba.types.int64)
    cache = numba_compat.function_cache(_add, str(root))
    compiled = numba_compat.compiled_cfunc(signature, _add, cache)
    call = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)(compiled.address)
    assert call(40, 2) == 42
    assert ".nbi" in _files(root)
    uncached = numba_compat.compiled_cfunc(signature, _add, None)
    assert (
        ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)(uncached.address)(1, 2)
        == 3
    )


def test_object_code_is_an_object_file_defining_the_entry_point() -> None:
    signature = numba.types.int64(numba.types.int64, numba.types.int64)
    compiled = numba_compat.compiled_cfunc(signature, _add, None)
    code = numba_compat.object_code(compiled)
    assert isinstance(code, bytes) and code
    symbols = _native._elf_symbols(code)
    if symbols is None:
        pytest.skip("not an ELF platform: numba's own cache serves it")
    assert compiled.native_name in symbols[0]


def test_register_helpers_gives_llvm_numba_s_c_helpers() -> None:
    given: dict[str, int] = {}

    class Binding:
        def add_symbol(self, name: str, address: int) -> None:
            given[name] = address

    for name, parts in numba_compat.HELPER_EXTENSIONS:
        spec = importlib.util.find_spec("numba")
        assert spec is not None and spec.origin is not None
        stem = Path(spec.origin).parent.joinpath(*parts)
        assert any(stem.parent.glob(stem.name + ".*")), name  # the extension is there
    binding: Any = Binding()
    numba_compat.register_helpers(binding)
    assert given["_Py_NoneStruct"] == id(None)
    assert given["PyExc_ValueError"] == id(ValueError)
    assert any(n.startswith("numba_") for n in given)  # _helperlib, _dynfunc
    assert any(n.startswith("NRT_") for n in given)  # the runtime
    assert all(isinstance(a, int) and a for a in given.values())
