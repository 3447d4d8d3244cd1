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

The cache folder follows numba's: ``NUMBA_CACHE_DIR`` when a user set it, else
``__pycache__`` beside this package when writable, else the per-user cache folder.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import os
import platform
import struct
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

#: First bytes of a kernel file; the format number changes when the layout does.
_MAGIC = b"generators-kernel 1\n"

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
    path = _path(spec)
    if path is not None:
        address = _load(path)
        if address is not None:
            _how[spec.name] = "file"
            return prototype(address)
    module, _, attribute = spec.builder.partition(":")
    build = getattr(importlib.import_module(module), attribute)
    compiled = build(cache=True)
    _how[spec.name] = "numba"
    if path is not None and not _keep(path, compiled):
        # numba loaded it from its own cache, which keeps no code we can write out: compile
        # once more, uncached, so that the next process needs no numba
        _keep(path, build(cache=False))
    return prototype(compiled.address)


def _path(spec: Kernel) -> Path | None:
    """Where the machine code of ``spec`` is kept for this process's configuration."""
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
        for module in (*spec.sources, __name__):
            found = importlib.util.find_spec(module)
            if found is None or found.origin is None:
                return None
            digest.update(Path(found.origin).read_bytes() + b"\0")
        folder = _folder()
    except Exception:  # noqa: BLE001 - no llvmlite, no metadata, no readable source
        return None
    if folder is None:
        return None
    return folder / f"{spec.name}-{digest.hexdigest()[:24]}.kernel"


def _folder() -> Path | None:
    """The first writable cache folder, as numba chooses its own."""
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        candidates = [Path(user) / "generators-native"]
    else:
        candidates = [Path(__file__).resolve().parent / "__pycache__" / "native", _user_cache()]
    for folder in candidates:
        if folder.is_dir() and os.access(folder, os.W_OK | os.X_OK):
            return folder
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(folder, os.W_OK | os.X_OK):
            return folder
    return None


def _user_cache() -> Path:
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "generators" / "native"


def _keep(path: Path, compiled: Any) -> bool:
    """Write the machine code of a freshly compiled ``cfunc`` next to its symbol name;
    False when there is none to write (a ``cfunc`` numba loaded from its own cache).

    numba has no public call for a kernel's object code: this emits it from the optimised
    module that the ``cfunc``'s code library holds, and keeps nothing when that is not
    there (another numba) or when the result is not an object file :func:`_load` can check.
    """
    try:
        library = compiled._library
        code = library.codegen._tm.emit_object(library._final_module)
        header = json.dumps({"symbol": compiled.native_name}).encode()
    except Exception:  # noqa: BLE001 - an internal layout this numba does not have
        return True  # nothing to gain from compiling again
    symbols = _elf_symbols(code)
    if symbols is None:
        return True  # another object format: numba's own cache serves these platforms
    if compiled.native_name not in symbols[0]:
        return False
    try:
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".tmp-", delete=False) as out:
            out.write(_MAGIC + header + b"\n" + code)
        os.replace(out.name, path)
    except OSError:
        with contextlib.suppress(OSError, NameError):
            os.unlink(out.name)
    return True


def _load(path: Path) -> int | None:
    """The address of the kernel in ``path`` once loaded, or None to compile instead."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data.startswith(_MAGIC):
        return None
    header, _, code = data[len(_MAGIC) :].partition(b"\n")
    try:
        symbol = json.loads(header)["symbol"]
    except (ValueError, KeyError, TypeError):
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
        if any(ll.address_of_symbol(name) is None for name in symbols[1]):
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
    """Give LLVM the addresses of numba's C helpers, as numba's CPU target does when it
    starts, without importing numba: its three helper extensions are loaded on their own.

    The kernels call them on their error paths (raising, reporting) and for memory
    (reference counts, allocation); loading the runtime extension also sets up numba's
    memory system, so those calls work exactly as under numba.
    """
    global _helpers_registered
    if _helpers_registered:
        return
    found = importlib.util.find_spec("numba")
    if found is None or found.origin is None:
        raise ImportError("numba is not installed")
    root = Path(found.origin).parent
    helperlib = _extension("numba._helperlib", root / "_helperlib")
    dynfunc = _extension("numba._dynfunc", root / "_dynfunc")
    runtime = _extension("numba.core.runtime._nrt_python",
                         root / "core" / "runtime" / "_nrt_python")
    ll.add_symbol("_Py_NoneStruct", id(None))
    for module in (helperlib, dynfunc):
        for name, address in module.c_helpers.items():
            ll.add_symbol("numba_" + name, address)
    for value in vars(builtins).values():
        if isinstance(value, type) and issubclass(value, BaseException):
            ll.add_symbol("PyExc_" + value.__name__, id(value))
    for name, address in runtime.c_helpers.items():
        ll.add_symbol(name if name.startswith("_") else "NRT_" + name, address)
    _helpers_registered = True


def _extension(name: str, stem: Path) -> Any:
    """The extension module ``name`` from the file ``stem`` + this Python's suffix, loaded
    without importing its package (the same module object numba gets later, if it does)."""
    if name in sys.modules:
        return sys.modules[name]
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = stem.with_name(stem.name + suffix)
        if path.is_file():
            loader = importlib.machinery.ExtensionFileLoader(name, str(path))
            spec = importlib.util.spec_from_loader(name, loader, origin=str(path))
            if spec is None:
                break
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
            return module
    raise ImportError(f"no extension module {stem.name} in {stem.parent}")


def _elf_symbols(code: bytes) -> tuple[set[str], set[str]] | None:
    """(defined global symbols, undefined symbols) of a little-endian ELF64 object, or None
    for any other format (those are compiled by numba in each process instead)."""
    if code[:4] != b"\x7fELF" or code[4:6] != b"\x02\x01":
        return None
    try:
        shoff, = struct.unpack_from("<Q", code, 0x28)
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
