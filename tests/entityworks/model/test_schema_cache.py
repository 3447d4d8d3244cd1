"""The schema cache of ``table_schema``: never stale, never growing past what is alive; and the
package's ``registry`` name, which is the module ``entityworks.registry``."""

from __future__ import annotations

import dataclasses
import gc
import subprocess
import sys
import weakref
from dataclasses import dataclass
from pathlib import Path

import pytest

import entityworks
from entityworks import table, table_schema
from entityworks.model import schema
from entityworks.registry import TypeRegistry, registry
from entityworks.types import construct

ROOT = Path(__file__).resolve().parents[3]


class Cents(int):
    """An int subclass: the registry finds ``int``'s entry through the MRO until it has one
    of its own."""


@dataclass
class Price:
    id: int
    amount: Cents


def _custom(reg: TypeRegistry, name: str) -> TypeRegistry:
    """``reg`` with an entry of its own for :class:`Cents`, told apart by its name."""
    reg.register(dataclasses.replace(reg.lookup(int), name=name, python_type=Cents))
    return reg


def test_a_new_registry_at_a_dead_ones_address_gets_its_own_schema(monkeypatch) -> None:
    # A cache keyed by id(registry) mixes up registries whose addresses coincide; every
    # address coinciding is the worst case of CPython reusing a dead registry's memory.
    monkeypatch.setattr(schema, "id", lambda _obj: 1, raising=False)
    first = _custom(registry.copy(), "first")
    assert table_schema(Price, first).column("amount").info.name == "first"
    del first
    gc.collect()
    for i in range(20):
        other = _custom(registry.copy(), f"other{i}")
        assert table_schema(Price, other).column("amount").info.name == f"other{i}"


def test_reused_addresses_for_real() -> None:
    """The same without patching: registries die and new ones take their memory."""
    reused = 0
    seen: set[int] = set()
    for i in range(500):
        reg = _custom(registry.copy(), f"r{i}")
        reused += id(reg) in seen
        seen.add(id(reg))
        assert table_schema(Price, reg).column("amount").info.name == f"r{i}"
        del reg  # no cycles: freed here, and its memory free for the next one
        if reused >= 10:
            break
    assert reused >= 10  # CPython reused addresses: the case above happened here


def test_a_registration_makes_the_cached_schema_stale() -> None:
    reg = registry.copy()
    assert table_schema(Price, reg).column("amount").info.name == "int"  # int's, by MRO
    _custom(reg, "cents")
    assert table_schema(Price, reg).column("amount").info.name == "cents"
    reg.register_factory(
        lambda tp: tp is Cents,
        lambda tp, r: dataclasses.replace(r.lookup(int), name="factory", python_type=Cents),
    )
    _custom(reg, "exact again")  # an exact entry wins over a factory
    assert table_schema(Price, reg).column("amount").info.name == "exact again"
    assert table_schema(Price).column("amount").info.name == "int"  # the default: untouched


def test_the_cache_holds_nothing_alive() -> None:
    """Classes and registries used once and dropped leave nothing behind."""
    refs: list[weakref.ref[object]] = []
    for i in range(50):
        cls = dataclasses.make_dataclass(f"Throwaway{i}", [("id", int), ("name", str)])
        reg = registry.copy()
        assert table_schema(cls, reg).name == f"throwaway{i}"
        assert table_schema(cls).name == f"throwaway{i}"  # the default registry too
        refs += [weakref.ref(cls), weakref.ref(reg)]
        del cls, reg
    # construct's bounded LRU caches of __init__ plans are not this cache
    construct._init_plan.cache_clear()
    construct._builder.cache_clear()
    gc.collect()
    alive = [r() for r in refs if r() is not None]
    assert alive == []


def test_a_schema_is_cached_per_class_and_registry() -> None:
    reg = registry.copy()
    assert table_schema(Price, reg) is table_schema(Price, reg)
    assert table_schema(Price) is table_schema(Price)
    assert table_schema(Price, reg) is not table_schema(Price)

    @dataclass
    class Sub(Price):  # a subclass does not inherit its base's cached schema
        note: str = ""

    assert table_schema(Sub).name == "sub" and table_schema(Sub).column_names[-1] == "note"


def test_table_renames_a_class_reflected_before() -> None:
    @dataclass
    class Renamed:
        id: int

    assert table_schema(Renamed).name == "renamed"
    table("later_name")(Renamed)
    assert table_schema(Renamed).name == "later_name"


def _python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize(
    "first",
    [
        "",
        "import entityworks; entityworks.registry; ",
        "from entityworks import registry; ",
        "from entityworks import Store; ",
    ],
)
def test_import_entityworks_registry_as_gives_the_module(first: str) -> None:
    out = _python(
        f"{first}import entityworks.registry as r\n"
        "import types, entityworks\n"
        "print(isinstance(r, types.ModuleType), r.__name__,"
        " entityworks.registry is r)"
    )
    assert out == "True entityworks.registry True"


def test_every_public_name_imports_from_the_package() -> None:
    names = ", ".join(entityworks.__all__)
    out = _python(
        f"from entityworks import {names}\n"
        "from entityworks import registry\n"
        "print(registry.lookup(int).name, type(registry.copy()).__name__)"
    )
    assert out == "int TypeRegistry"
    for name in entityworks.__all__:
        assert getattr(entityworks, name) is not None, name


def test_the_module_speaks_for_the_default_registry() -> None:
    import entityworks.registry as module

    assert module.lookup(int) is registry.lookup(int)
    assert module.supports(int) and not module.supports(complex)
    assert module.for_xsd("xs:long") is registry.for_xsd("xs:long")
    assert module.companion_types("mysql") == registry.companion_types("mysql")
    copied = module.copy()
    assert isinstance(copied, TypeRegistry) and copied is not registry
    before = registry.generation
    module.register(registry.lookup(int))  # the same entry again: a registration all the same
    assert registry.generation == before + 1


def test_the_module_given_as_a_registry_stands_for_the_default_one() -> None:
    """Code written when ``entityworks.registry`` was the default registry passes it."""
    import entityworks.registry as module
    from entityworks import Store, to_arrow

    assert table_schema(Price, module) is table_schema(Price)  # type: ignore[arg-type]
    with Store("sqlite://", registry=module) as store:  # type: ignore[arg-type]
        assert store.registry is registry
        store.create(Price)
        store.insert(Price(1, Cents(5)))
        assert list(store.select(Price)) == [Price(1, 5)]  # type: ignore[arg-type]
    assert to_arrow(Price, [Price(1, Cents(5))], registry=module).num_rows == 1  # type: ignore[arg-type]
