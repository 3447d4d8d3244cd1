"""Dataclass lists <-> ``pyarrow.Table`` <-> ``pandas.DataFrame`` <-> Parquet.

In three parts: :mod:`.columns` (the Arrow layout of a class), :mod:`.write` (instances and
query rows -> Arrow, pandas, Parquet) and :mod:`.read` (Arrow, pandas, Parquet -> instances).

The Arrow schema is built from the registry (``TypeInfo.arrow``), never inferred from the
values, so an all-``None`` column still has its type and an ``Optional[int]`` stays int64.
The one exception is the size of a decimal type: a ``Decimal`` column's ``value`` is the
narrowest ``decimal128(p, s)`` holding all of its values (``s``: the most digits after the
point of any value; ``p``: ``s`` plus the most digits before it), ``decimal256(p, s)`` when
``p`` exceeds decimal128's 38 (the registry's rule allows 35 + 30 digits), so pyarrow,
pandas, Parquet readers and SQL engines compute with it as numbers. A column without a value
(an empty table, only ``None``) is ``decimal256(65, 30)``, MariaDB's DECIMAL(65, 30), where
every accepted value fits. Batches of one query (``rows_to_arrow``) are cast, without loss,
to the widest. Conversion is column-wise: one attribute getter and one ``pyarrow.array``
call per column, with the registry's ``to_arrow`` / ``from_arrow`` applied only where a type
needs them. In pandas every column uses ``pandas.ArrowDtype``: nullable ints stay integers,
and ``None`` stays distinct from ``NaN`` and from the empty string, so the round trip is
exact.

Every dataclass field is one column named after it, and nothing else is: a ``list[Item]``
field (a child table in SQL) becomes an Arrow ``list<struct>`` column whose struct has one
field per ``Item`` field.

Values are held to the registry's rules (``TypeInfo.check``), as in the Store and XML: pyarrow
would turn ``1.0`` into an int64 1 or ``b"x"`` into the string ``"x"``; here a value of the
wrong type is refused with its row and column. A type whose values Arrow's own type cannot
hold whole has companions for Arrow (``registry.Companion``): its column is then a struct
of the value (field ``value``, of the registry's Arrow type) and one field per companion
(named by its suffix). An ``AwareDatetime`` is ``struct<value: timestamp[us, tz=UTC],
offset: int16>``: the instant (pandas computes with it as usual) and the value's UTC offset
in minutes (null for UTC). A ``Decimal`` is ``struct<value: decimal128(p, s), scale:
int8>``: a decimal column pads every value to its scale (1.5 and 1.50 both become 1.50 at
scale 2), so ``scale`` keeps each value's own number of digits after the point.

Read back, such a column may also be the value alone: a plain timestamp reads as UTC, a
decimal column at its scale (a foreign column's places beyond 30 are dropped when they are
zeros, refused otherwise), text for a Decimal field (written before Arrow decimals, or by
hand) as the text says, and so do Python Decimals in a DataFrame's object column. The
companions then may stand in columns beside it named ``<field>__<suffix>``
(``placed_at__offset``, ``total__scale``), as entityworks 0.2 wrote them.

A ``timedelta`` is ``duration[us]`` for every value the registry accepts except -2**63
microseconds, which is pandas' NaT (a missing value to pandas and to ``pandas.read_parquet``
of the file): frames refuse it, naming its row and column.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .columns import arrow_schema
    from .read import from_arrow, from_pandas, read_parquet
    from .write import to_arrow, to_pandas, write_parquet

#: Public name -> the module defining it, imported when the name is first read: the
#: package itself imports neither pyarrow nor the registry, so that its codec makers
#: (:mod:`.codecs`) are loaded while the default registry is being filled.
_LAZY = {
    "arrow_schema": "columns",
    "from_arrow": "read",
    "from_pandas": "read",
    "read_parquet": "read",
    "to_arrow": "write",
    "to_pandas": "write",
    "write_parquet": "write",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "arrow_schema",
    "from_arrow",
    "from_pandas",
    "read_parquet",
    "to_arrow",
    "to_pandas",
    "write_parquet",
]
