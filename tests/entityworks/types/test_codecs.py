"""A registry entry says what a type is; what it becomes in SQL, Arrow and XML are per-format
records (``SqlCodec``, ``ArrowCodec``, ``XmlCodec``), each read by its format's package only.
The flat constructor and attribute names of before the records keep working for users."""

from __future__ import annotations

import ast
import dataclasses
import decimal
from pathlib import Path

import pytest
import sqlalchemy as sa

import entityworks
from entityworks import Store, TypeInfo
from entityworks.registry import ArrowCodec, SqlCodec, XmlCodec, registry
from entityworks.sql.backends.base import storage_class

PACKAGE = Path(entityworks.__file__).parent

#: Attribute names of a TypeInfo's codecs that no module of entityworks may read flat (they
#: are read from the entry's records), on any object whose expression does not end in
#: ``codec`` (``info.sql_codec.decode_many``, ``xml_codec.plain_text``).
FLAT_ANYWHERE = frozenset(
    {
        "to_db",
        "from_db",
        "to_db_many",
        "from_db_many",
        "encoded_as",
        "to_arrow",
        "from_arrow",
        "xsd_attributes",
        "xsd_aliases",
        "from_valid_text",
        "plain_text",
        "to_text_column",
        "sqlite_typeof",
    }
)
#: Names too common to flag on any object: flagged on expressions naming an entry
#: (``info``, ``column.info``, ``base``).
FLAT_ON_ENTRIES = frozenset({"sql", "arrow", "xsd", "to_text", "from_text"})
#: (module, attribute) pairs that read something else of that name: ``Store.to_arrow``.
UNRELATED = frozenset({("sql/store.py", "to_arrow"), ("cli/_arrow.py", "to_arrow")})


def _flat_reads(text: str, module: str) -> list[str]:
    """``module:line: owner.name`` for each flat codec attribute the source ``text`` reads."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.Attribute) or not isinstance(node.ctx, ast.Load):
            continue
        owner = ast.unparse(node.value)
        if owner.endswith("codec") or (module, node.attr) in UNRELATED:
            continue
        if node.attr in FLAT_ANYWHERE or (
            node.attr in FLAT_ON_ENTRIES and (owner.endswith("info") or owner == "base")
        ):
            found.append(f"{module}:{node.lineno}: {owner}.{node.attr}")
    return sorted(found)


def test_no_module_reads_the_flat_codec_attributes() -> None:
    modules = [p for p in PACKAGE.rglob("*.py") if p != PACKAGE / "types" / "registry.py"]
    assert len(modules) > 50
    found = [
        line
        for path in sorted(modules)
        for line in _flat_reads(
            path.read_text(encoding="utf-8"), path.relative_to(PACKAGE).as_posix()
        )
    ]
    assert found == []


def test_the_scan_finds_a_flat_read() -> None:
    source = (
        "def f(info, column, store):\n"
        "    a = info.to_db\n"
        "    b = column.info.sql()\n"
        "    c = info.sql_codec.encode, info.xml_codec.plain_text, column.info.xml_codec.xsd_type\n"
        "    d = store.to_arrow\n"
    )
    assert _flat_reads(source, "sql/x.py") == [
        "sql/x.py:2: info.to_db",
        "sql/x.py:3: column.info.sql",
        "sql/x.py:5: store.to_arrow",
    ]
    assert _flat_reads(source, "sql/store.py") == [
        "sql/store.py:2: info.to_db",
        "sql/store.py:3: column.info.sql",
    ]


def test_the_codecs_module_imports_no_format_library() -> None:
    tree = ast.parse((PACKAGE / "types" / "codecs.py").read_text(encoding="utf-8"))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
    }
    assert imported <= {"__future__", "collections", "dataclasses", "typing"}


# -- the constructor: flat as before, or the records -------------------------------------------


def _to_text(value: int) -> str:
    return str(value)


def _flat() -> TypeInfo:
    return TypeInfo(
        "Cents",
        int,
        sa.BigInteger,
        int,
        "xs:long",
        _to_text,
        int,
        to_db=abs,
        from_db=int,
        to_arrow=abs,
        xsd_attributes={"msdata:DataType": "System.Int64"},
        xsd_aliases=("xs:int",),
        plain_text=True,
        encoded_as="cents",
        autoincrement=True,
    )


def test_flat_arguments_build_the_records() -> None:
    info = _flat()
    assert info.sql_codec == SqlCodec(sa.BigInteger, encode=abs, decode=int, opaque_as="cents")
    assert info.arrow_codec == ArrowCodec(int, encode=abs)
    assert info.xml_codec == XmlCodec(
        "xs:long",
        _to_text,
        int,
        plain_text=True,
        attributes={"msdata:DataType": "System.Int64"},
        aliases=("xs:int",),
    )
    assert info.autoincrement is True
    # the flat names read the records
    assert (info.sql, info.to_db, info.from_db, info.encoded_as) == (
        sa.BigInteger,
        abs,
        int,
        "cents",
    )
    assert (info.arrow, info.to_arrow, info.from_arrow) == (int, abs, None)
    assert (info.xsd, info.to_text, info.from_text, info.plain_text) == (
        "xs:long",
        _to_text,
        int,
        True,
    )
    assert info.xsd_aliases == ("xs:int",)
    assert info.xsd_attributes == {"msdata:DataType": "System.Int64"}
    assert (info.from_valid_text, info.to_db_many, info.from_db_many, info.to_text_column) == (
        None,
        None,
        None,
        None,
    )


def test_records_build_the_same_entry() -> None:
    made = TypeInfo(
        "Cents",
        int,
        sql_codec=SqlCodec(sa.BigInteger, encode=abs, decode=int, opaque_as="cents"),
        arrow_codec=ArrowCodec(int, encode=abs),
        xml_codec=XmlCodec(
            "xs:long",
            _to_text,
            int,
            plain_text=True,
            attributes={"msdata:DataType": "System.Int64"},
            aliases=("xs:int",),
        ),
        autoincrement=True,
    )
    assert made == _flat()
    assert made != dataclasses.replace(made, name="Other")
    assert dataclasses.replace(made, arrow_codec=ArrowCodec(int)).to_arrow is None


def test_flat_arguments_beside_a_record_replace_its_fields() -> None:
    # as ``dataclasses.replace(integer, from_db=Cents)`` does (docs/how-to/plugins.md)
    integer = registry.lookup(int)
    cents = dataclasses.replace(integer, name="Cents", from_db=abs, from_text=float)
    assert cents.sql_codec == dataclasses.replace(integer.sql_codec, decode=abs)
    assert cents.xml_codec == dataclasses.replace(integer.xml_codec, from_text=float)
    assert cents.arrow_codec is integer.arrow_codec
    assert (cents.check, cents.native, cents.autoincrement) == (
        integer.check,
        int,
        True,
    )
    # any value given replaces the record's field, None and False too
    assert dataclasses.replace(integer, plain_text=False).xml_codec.plain_text is False
    exact = registry.lookup(decimal.Decimal)
    assert exact.sql_codec.encode is not None
    assert dataclasses.replace(exact, to_db=None).sql_codec.encode is None
    assert dataclasses.replace(exact, to_db=None).arrow_codec is exact.arrow_codec


def test_missing_or_wrong_records_are_refused() -> None:
    with pytest.raises(TypeError, match="give arrow_codec= or arrow"):
        TypeInfo("X", int, sa.BigInteger, xsd="xs:long", to_text=str, from_text=int)
    with pytest.raises(TypeError, match="give xml_codec= or xsd, to_text, from_text"):
        TypeInfo("X", int, sa.BigInteger, int)
    with pytest.raises(TypeError, match="takes a SqlCodec"):
        TypeInfo("X", int, sql_codec=ArrowCodec(int))  # type: ignore[arg-type]


def test_sqlite_typeof_is_accepted_and_the_backend_derives_the_storage_class() -> None:
    info = TypeInfo("Ticks", int, sa.BigInteger, int, "xs:long", str, int, sqlite_typeof="text")
    assert not hasattr(info, "sqlite_typeof")
    assert storage_class(info) is None  # no native type: a codec decides
    found = {tp: storage_class(registry.lookup(tp)) for tp in (bool, int, float, str, bytes)}
    assert found == {bool: None, int: "integer", float: "real", str: "text", bytes: None}
    assert storage_class(registry.lookup(decimal.Decimal)) is None


def test_a_user_entry_built_of_records_round_trips_through_sqlite(tmp_path: Path) -> None:
    # stored through its SqlCodec: the raw column holds what ``encode`` gave
    @dataclasses.dataclass
    class Account:
        id: int
        balance: Hundredths

    local = registry.copy()
    local.register(
        TypeInfo(
            "Hundredths",
            Hundredths,
            sql_codec=SqlCodec(
                lambda: sa.BigInteger(), encode=lambda h: h.cents, decode=Hundredths
            ),
            arrow_codec=ArrowCodec(lambda: __import__("pyarrow").int64()),
            xml_codec=XmlCodec("xs:long", lambda h: str(h.cents), lambda t: Hundredths(int(t))),
        )
    )
    path = tmp_path / "a.db"
    with Store(f"sqlite:///{path}", registry=local) as store:
        store.create(Account)
        store.insert(Account(1, Hundredths(1234)))
        assert store.get(Account, 1) == Account(1, Hundredths(1234))
    import sqlite3

    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT balance, typeof(balance) FROM account").fetchall() == [
            (1234, "integer")
        ]


@dataclasses.dataclass(frozen=True)
class Hundredths:
    cents: int


def test_register_codec_replaces_one_format_of_an_entry(tmp_path: Path) -> None:
    @dataclasses.dataclass
    class Wallet:
        id: int
        balance: Hundredths

    local = registry.copy()
    local.register(
        TypeInfo(
            "Hundredths",
            Hundredths,
            sql_codec=SqlCodec(
                lambda: sa.BigInteger(), encode=lambda h: h.cents, decode=Hundredths
            ),
            arrow_codec=ArrowCodec(lambda: __import__("pyarrow").int64()),
            xml_codec=XmlCodec("xs:long", lambda h: str(h.cents), lambda t: Hundredths(int(t))),
        )
    )
    before = local.lookup(Hundredths)
    text = SqlCodec(
        lambda: sa.Text(), encode=lambda h: f"{h.cents}c", decode=lambda t: Hundredths(int(t[:-1]))
    )
    after = local.register_codec(Hundredths, text)
    assert local.lookup(Hundredths) is after
    assert after.sql_codec is text
    assert (after.arrow_codec, after.xml_codec) == (before.arrow_codec, before.xml_codec)
    path = tmp_path / "w.db"
    with Store(f"sqlite:///{path}", registry=local) as store:
        store.create(Wallet)
        store.insert(Wallet(1, Hundredths(1234)))
        assert store.get(Wallet, 1) == Wallet(1, Hundredths(1234))
    import sqlite3

    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT balance, typeof(balance) FROM wallet").fetchall() == [
            ("1234c", "text")
        ]
    with pytest.raises(TypeError, match="takes a SqlCodec, ArrowCodec or XmlCodec"):
        local.register_codec(Hundredths, "xs:long")  # type: ignore[arg-type]
