"""The one-row path's compiled functions: an instance's SQL row (``RowCodec.row_encoder``)
is what the batch encoder gives for a one-item batch, refusals included, for every registry
type on every backend; the compiled row reader gives back what was written through
``insert``/``update``/``get``; no source is compiled from a name that does not mean
itself."""

from __future__ import annotations

import dataclasses
import math
import typing
from functools import partial
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entityworks import Store
from entityworks.sql._bound import counting_from
from entityworks.sql._bulk import encode

from ..strategies import AllTypes, keeps_dict_order, rows, same
from ..test_promise import storable

#: Every registry type, without the child list (one-row calls of a class with child tables
#: take the general path).
Flat = dataclasses.make_dataclass(
    "Flat",
    [
        (n, t)
        for n, t in typing.get_type_hints(AllTypes, include_extras=True).items()
        if n != "items"
    ],
    namespace={"__module__": __name__},
)
FIELDS = [f.name for f in dataclasses.fields(Flat)]


def flat(obj: AllTypes, *, finite: bool = False) -> Any:
    """``obj`` as a Flat; ``finite``: NaN and infinities (which SQLite's REAL and MariaDB's
    DOUBLE refuse) as 1.5."""
    values = {n: getattr(obj, n) for n in FIELDS}
    if finite:
        for name in ("f", "of"):
            if values[name] is not None and not math.isfinite(values[name]):
                values[name] = 1.5
    return Flat(**values)


def _same_sql(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is type(b) and type(a).__eq__ is object.__eq__ and hasattr(a, "obj"):
        a, b = a.obj, b.obj  # psycopg's Binary wrapper: the bytes it holds
    return type(a) is type(b) and (a == b or same(a, b))


def _outcome(fn: Any, obj: Any) -> tuple[str, Any]:
    try:
        return "row", list(fn(obj))
    except Exception as exc:  # noqa: BLE001 - both must refuse alike
        return "refused", type(exc)


def _one_item_batch(model: Any, processors: Any, obj: Any) -> Any:
    return encode(model, [obj], counting_from(0), processors)[0]


# the store fixture serves every example (each test clears what it wrote)
SETTINGS = settings(
    max_examples=60,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@SETTINGS
@given(objs=rows(xml=False), broken=st.sampled_from(["", "dec", "f", "day", "s", "aware"]))
def test_the_compiled_row_is_the_batch_encoders_row(store: Store, objs, broken):
    model = store.model(Flat)
    attributes = [model.fields[i] for i in model.field_index]
    for obj in map(flat, objs):
        if broken:  # a value of the wrong type: both refuse it
            setattr(obj, broken, object())
        for processors in (model.encoders, model.codec.checked):
            compiled = model.codec.row_encoder(attributes, processors)
            assert compiled is not None
            batch = partial(_one_item_batch, model, processors)
            want = _outcome(batch, obj)
            got = _outcome(compiled, obj)
            assert got[0] == want[0], (got, want)
            if got[0] == "row":
                assert len(got[1]) == len(want[1]) == len(model.names)
                differ = [
                    (model.names[i], a, b)
                    for i, (a, b) in enumerate(zip(got[1], want[1], strict=True))
                    if not _same_sql(a, b)
                ]
                assert not differ
            elif broken:
                assert got[0] == "refused"


@SETTINGS
@given(objs=rows(xml=False))
def test_one_row_calls_give_back_every_type(store: Store, objs):
    store.create(Flat)
    store.delete(Flat, where={})
    if not storable(store.engine.dialect.name, objs):  # NUL in PostgreSQL text and JSON
        return
    objs = [flat(o, finite=True) for o in objs]
    ordered = keeps_dict_order(store.engine.dialect.name)
    for obj in objs:
        store.insert(obj)
        assert same(store.get(Flat, obj.id), obj, dict_order=ordered)
    for obj in reversed(objs):
        changed = dataclasses.replace(obj, s=obj.s + "!", odec=None, oaware=None)
        store.update(changed)
        got = store.get(Flat, obj.id)
        assert same(got, changed, dict_order=ordered)
        assert got.odec is None and got.oaware is None
    assert store.count(Flat) == len(objs)


def test_no_source_is_compiled_from_a_name_that_does_not_mean_itself(sqlite_store: Store):
    # an attribute name that is no identifier, a keyword, or one that Python source reads
    # as another name (NFKC: "\ufb01eld" is "field"): the caller takes the general path
    model = sqlite_store.model(Flat)
    attributes = [model.fields[i] for i in model.field_index]
    assert model.codec.row_encoder(attributes, model.encoders) is not None
    for name in ("\ufb01eld", "class", "s]; __import__('os').system('false'); [o.s", "a b"):
        hostile = [name, *attributes[1:]]
        assert model.codec.row_encoder(hostile, model.encoders) is None
