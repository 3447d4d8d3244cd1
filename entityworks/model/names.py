"""Names: what a table, column or index may be called, and the checks that refuse a class
whose fields would give some backend's table two columns of one name."""

from __future__ import annotations

import hashlib
import keyword
import re
import unicodedata
from collections.abc import Sequence
from typing import Any, Protocol

from ..errors import InvalidNameError
from ..registry import TypeInfo


class NamedColumn(Protocol):
    """What the name checks read of a column (:class:`~entityworks.model.schema.Column`)."""

    @property
    def name(self) -> str: ...

    @property
    def sql_name(self) -> str: ...

    @property
    def column_name(self) -> str | None: ...

    @property
    def info(self) -> TypeInfo: ...


MAX_NAME_BYTES = 63  # PostgreSQL's limit; MariaDB allows 64
_FORBIDDEN = re.compile(r"[\x00-\x1f\x7f./\\`]")


def snake_case(name: str) -> str:
    """``LevelMap`` -> ``level_map``; ``HTTPLog`` -> ``http_log``."""
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    return s.lower()


def index_name(table: str, columns: Sequence[str], prefix: str = "ix") -> str:
    """The name of a composite index: ``ix_<table>_<columns>`` (``prefix`` ``fk``: a foreign
    key, ``uq``: a unique constraint), shortened with a digest when it would exceed the
    longest name every backend accepts."""
    name = f"{prefix}_{table}_{'_'.join(columns)}"
    if len(name.encode("utf-8")) <= MAX_NAME_BYTES:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:10]
    return f"{prefix}_{digest}_{name.encode('utf-8')[:40].decode('utf-8', 'ignore')}"


def check_name(name: str, what: str, cls: Any = None, field: str | None = None) -> str:
    """Refuse names no supported database can hold (quoting takes care of the rest)."""
    problem = None
    if not isinstance(name, str) or not name:
        problem = "it is empty"
    elif len(name.encode("utf-8")) > MAX_NAME_BYTES:
        problem = f"it is longer than {MAX_NAME_BYTES} bytes"
    elif _FORBIDDEN.search(name):
        problem = "it contains a control character, '.', '/', '\\' or '`'"
    elif name != name.strip():
        problem = "it starts or ends with whitespace"
    elif name.lower().startswith("sqlite_"):
        problem = "names starting with 'sqlite_' are reserved by SQLite"
    elif "table" in what and name.lower().startswith("pg_"):
        problem = (
            "table names starting with 'pg_' are reserved by PostgreSQL (its system "
            "catalogs would hide the table)"
        )
    if problem:
        owner = f" ({cls.__qualname__}.{field})" if cls is not None and field else ""
        raise InvalidNameError(f"invalid {what} {name!r}{owner}: {problem}", cls=cls, field=field)
    return name


def unusable_field_name(name: str) -> str | None:
    """Why a dataclass built from a table or an XSD cannot have a field called ``name``
    (a column's name), or None when it can.

    Besides names that are no identifiers: Python NFKC-normalises identifiers, so a field
    called ``µ`` (MICRO SIGN) or ``ﬁx`` (a ligature) could be neither set by ``__init__`` nor
    read as an attribute, both of which see ``μ`` and ``fix``. Such columns are refused,
    as other names no field can have, rather than renamed: XML and Arrow carry field names,
    which would then differ from the database's.
    """
    if not name.isidentifier() or keyword.iskeyword(name):
        return "not a Python identifier, so no dataclass field can hold it"
    normal = unicodedata.normalize("NFKC", name)
    if normal != name:
        return (
            f"Python reads this name as {normal!r} (it normalises identifiers, NFKC), so "
            "no dataclass field can hold it"
        )
    return None


def check_unique_names(cls: type, columns: Sequence[NamedColumn]) -> None:
    """Refuse two fields whose columns have one name (``column(name="y")`` beside a field
    ``y``), or names only case tells apart, naming both fields and their columns."""
    seen: dict[str, NamedColumn] = {}
    for c in columns:
        folded = c.sql_name.casefold()
        first = seen.get(folded)
        if first is None:
            seen[folded] = c
            continue
        if first.sql_name == c.sql_name:
            problem = f"both have the column {c.sql_name!r}"
        else:
            problem = (
                f"have the columns {first.sql_name!r} and {c.sql_name!r}, which differ "
                "only in case: databases that ignore case in names cannot tell them apart"
            )
        renamed = next((x.name for x in (c, first) if x.column_name is not None), None)
        fix = (
            "rename one of them"
            if renamed is None
            else f"give {renamed!r} another column(name=...)"
        )
        raise InvalidNameError(
            f"{cls.__qualname__}: fields {first.name!r} and {c.name!r} {problem}; {fix}",
            cls=cls,
            field=c.name,
        )


def check_companion_names(cls: type, columns: Sequence[NamedColumn]) -> None:
    """Refuse a field named like a companion column of another field (``at__offset`` beside
    an aware ``at``, ``price__scale`` or ``price__key`` beside a Decimal ``price``): some
    backend's table would have two columns of that name, so the class is refused here, the
    same on every backend and format, naming both fields."""
    from ..registry import COMPANION_SEPARATOR
    from ..types.registry import every_target

    # a clash needs a column named ``base__suffix``: without one, nothing to look up
    if not any(COMPANION_SEPARATOR in name for c in columns for name in (c.name, c.sql_name)):
        return
    # every combination of what a storage keeps (and every declared target, such as Arrow's):
    # the same refusals whichever backends are loaded
    targets = every_target()
    owners: dict[str, tuple[NamedColumn, str]] = {}
    for c in columns:
        for target in targets:
            for part in c.info.companions_for(target):
                suffixes = [part.suffix, *(older.suffix for older in part.older)]
                if part.own is not None:
                    suffixes.append(part.own)
                for suffix in suffixes:
                    for base in (c.name, c.sql_name):
                        owners.setdefault(
                            f"{base}{COMPANION_SEPARATOR}{suffix}".casefold(), (c, part.keeps)
                        )
    for c in columns:
        for name in (c.name, c.sql_name):
            found = owners.get(name.casefold())
            if found is not None and found[0] is not c:
                owner, keeps = found
                raise InvalidNameError(
                    f"{cls.__qualname__}: fields {owner.name!r} and {c.name!r}: {name!r} is "
                    f"the name of the column that keeps {keeps} of {owner.name!r} "
                    f"({owner.info.name}) on some backend; rename {c.name!r}",
                    cls=cls,
                    field=c.name,
                )


__all__ = [
    "MAX_NAME_BYTES",
    "NamedColumn",
    "check_companion_names",
    "check_name",
    "check_unique_names",
    "index_name",
    "snake_case",
    "unusable_field_name",
]
