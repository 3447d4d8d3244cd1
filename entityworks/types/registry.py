"""The type registry itself: :class:`TypeRegistry` maps a Python type to a :class:`TypeInfo`.

A :class:`TypeInfo` says what one Python type *is*:

* ``check`` is the type's value rule, the one place that says which values a field of the
  type accepts (and the few conversions Python's typing allows, such as an ``int`` in a
  ``float`` field). Store, frames and XML all apply it, so they accept and refuse the same
  values. The codecs of the built-in entries apply it themselves, except for the five
  ``native`` types (bool, int, float, str, bytes), whose values bulk paths hand to drivers
  untouched: writers call ``check`` for any value that is not exactly of the native type.
* ``companions`` name the hidden columns (or Arrow fields) that keep what a storage's own
  column type loses: an aware datetime's UTC offset, a Decimal's exponent, the sign of -0.0.
  They are asked with a :class:`Target`, which says what the storage keeps (its
  capabilities), never which database it is: the SQL layer passes its backends' targets,
  the Arrow layer :data:`ARROW`.

What it *becomes* in each format is a record per format (:mod:`.codecs`), each read by its
format's package only: :class:`~.codecs.SqlCodec` (``info.sql_codec``: the column type and
the storage codecs, an Enum into its value, an array into ``.npy`` bytes),
:class:`~.codecs.ArrowCodec` (``info.arrow_codec``) and :class:`~.codecs.XmlCodec`
(``info.xml_codec``: the XSD type and the lexical forms, XSD 1.0 / .NET ``XmlConvert``).
The flat names of before the records (``info.to_db``, ``info.xsd``...) stay readable for
users' code; entityworks reads the records.

What a type becomes in SQL is the SQL layer's to decide: the column type is a function
giving it, and the built-in entries give a :class:`~.storage.StorageType`, a name that
:mod:`entityworks.sql` resolves through its own table. This module imports nothing of SQL.

Lookup goes: exact type, then ``typing.Annotated`` markers, then the MRO, then predicate
factories (Enum subclasses, nested dataclasses, JSON containers, NumPy arrays), newest first.
Results are memoised and every registration clears the memo, as in cattrs' dispatch.

This module knows no particular type: the entries live in :mod:`.scalars`, :mod:`.json` and
:mod:`.arrays` (and in the applications that add their own, such as the catalog's packed
grids), and :mod:`.default` puts them together.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any, TypedDict, get_args, get_origin

from ..errors import UnsupportedTypeError
from . import storage
from .codecs import ArrowCodec, Codec, SqlCodec, XmlCodec

#: Joins a field's column name and a companion's suffix: ``at`` + ``offset`` -> ``at__offset``.
COMPANION_SEPARATOR = "__"


@dataclass(frozen=True, slots=True)
class Companion:
    """A hidden column (SQL) or field (Arrow) beside a field's own, holding what its type loses.

    ``split(value)`` gives the companion's value for a checked, non-None field value (``None``
    stores nothing extra); ``join(main, part)`` rebuilds the field value from the decoded main
    value and the companion's value, which is ``None`` when the companion is NULL or missing
    (a table written before the companion existed): the main value is then kept as it is.
    """

    suffix: str
    split: Callable[[Any], Any]
    join: Callable[[Any, Any], Any]
    #: What it keeps, for error messages: "the UTC offset".
    keeps: str
    #: The companion's SQL column type (a function giving it; see
    #: :attr:`~.codecs.SqlCodec.column_type`).
    sql: Callable[[], Any] = storage.small_integer
    arrow: Callable[[], Any] | None = None
    #: Set when this companion is the column other tools read (a SQLite Decimal's plain
    #: text): it takes the field's SQL column name, and the field's own column, the one
    #: entityworks compares, keys, indexes and orders by, is named ``{name}__{own}``.
    own: str | None = None
    #: The companions a table built before this one existed has instead; its field's own
    #: column then has the field's name (see ``tables.layout``).
    older: tuple[Companion, ...] = ()
    #: ``split`` of a whole column of checked values (``None`` giving ``None``), for bulk
    #: writers (see :mod:`.columns`); ``None``: ``split`` value by value.
    split_column: Callable[[Sequence[Any]], list[Any]] | None = None
    #: ``join`` of whole columns (``join_column(mains, parts)``, a ``None`` main staying
    #: ``None``), for bulk readers; ``None``: ``join`` value by value.
    join_column: Callable[[Sequence[Any], Sequence[Any]], list[Any]] | None = None
    #: ``join_column`` of the columns as the database gives them, the field's own column
    #: not yet decoded (``join_raw(stored mains, parts)``), done at once where one loop
    #: can (a SQLite Decimal's key and text: ``cloops.as_written``); it answers
    #: ``None`` for any column it does not read exactly so, which is then decoded and
    #: joined as usual.
    join_raw: Callable[[Sequence[Any], Sequence[Any]], list[Any] | None] | None = None
    #: The field's own stored column and this companion's, of a whole column of checked
    #: values, at once, as the database takes them (``split_raw(values) -> (mains,
    #: parts)``), where one loop can (a SQLite Decimal's key and text, each ``str()``
    #: made once: ``cloops.keys_and_texts``); it answers ``None`` for any column it does
    #: not write exactly so, which is then encoded and split as usual.
    split_raw: Callable[[Sequence[Any]], tuple[list[Any], list[Any]] | None] | None = None
    #: True when SQLite's ``ANY`` column (entityworks 0.2.3 and before declared its
    #: int, float and str columns so) keeps what this companion keeps elsewhere (the sign
    #: of -0.0): such an older column has none and needs none.
    any_keeps: bool = False

    def column(self, name: str) -> str:
        """The companion's column name for the field column ``name`` (its key, for one
        that takes the field's SQL name: see ``own``)."""
        return f"{name}{COMPANION_SEPARATOR}{self.suffix}"

    def own_column(self, name: str) -> str:
        """The SQL name of the field's own column beside a companion that took ``name``."""
        assert self.own is not None
        return f"{name}{COMPANION_SEPARATOR}{self.own}"


class Target(str):
    """Where a type's values are stored, as the type layer sees it: a name and what that
    storage keeps of a value, which decides the type's companions (see
    :meth:`TypeInfo.companions_for`).

    The SQL layer gives each backend one (named after its SQLAlchemy dialect), the Arrow
    layer :data:`ARROW`. A ``str`` equal to its name, so that ``companions`` functions
    written when targets were plain names (``target == "mysql"``) keep working; the
    built-in entries read the capabilities only.
    """

    keeps_decimal_scale: bool
    keeps_negative_zero: bool
    decimal_as_key: bool

    def __new__(
        cls,
        name: str,
        *,
        keeps_decimal_scale: bool = True,
        keeps_negative_zero: bool = True,
        decimal_as_key: bool = False,
    ) -> Target:
        made = super().__new__(cls, name)
        #: A decimal column keeps the exponent of the value written (``1.50`` stays
        #: ``1.50``); else a companion keeps it.
        made.keeps_decimal_scale = keeps_decimal_scale
        #: A float column keeps the sign of ``-0.0``; else a companion keeps it.
        made.keeps_negative_zero = keeps_negative_zero
        #: Decimals are stored as a sortable key (text that compares like the numbers,
        #: normalised): the plain decimal text, exponent kept, goes beside it and takes the
        #: field's column name, so that other tools read the number.
        made.decimal_as_key = decimal_as_key
        return made

    def capabilities(self) -> tuple[bool, bool, bool]:
        """What this target keeps, as a tuple (two targets with one behave alike)."""
        return (self.keeps_decimal_scale, self.keeps_negative_zero, self.decimal_as_key)

    def __repr__(self) -> str:
        flags = ", ".join(
            f"{name}={getattr(self, name)!r}"
            for name in ("keeps_decimal_scale", "keeps_negative_zero", "decimal_as_key")
        )
        return f"Target({str(self)!r}, {flags})"


#: The Arrow target (a :class:`Target` named ``"arrow"``): Arrow's ``decimal256(p, s)``
#: pads every value to its column's scale; its doubles keep ``-0.0``.
ARROW = Target("arrow", keeps_decimal_scale=False)

#: Targets by name, for callers that still pass a name (``companion_types("mysql")``):
#: the SQL layer declares its backends' targets here (:func:`declare_target`).
_TARGETS: dict[str, Target] = {str(ARROW): ARROW}


def declare_target(target: Target) -> Target:
    """Make ``target`` the one its name stands for (the SQL layer declares its backends')."""
    _TARGETS[str(target)] = target
    return target


def as_target(target: str) -> Target:
    """``target`` itself when it is a :class:`Target`; else the target declared under that
    name, or one that keeps everything (a storage nobody declared: no companions)."""
    if isinstance(target, Target):
        return target
    found = _TARGETS.get(target)
    return found if found is not None else Target(target)


def every_target() -> tuple[Target, ...]:
    """The declared targets and one of each combination of capabilities: every set of
    companions a type can have, whichever backends are loaded (for name clashes)."""
    combinations = tuple(
        Target("", keeps_decimal_scale=a, keeps_negative_zero=b, decimal_as_key=c)
        for a, b, c in product((True, False), repeat=3)
    )
    return (*_TARGETS.values(), *combinations)


#: The keywords of :class:`TypeInfo` that build its :class:`SqlCodec` (constructor keyword ->
#: the record's field), its :class:`ArrowCodec` and its :class:`XmlCodec`.
_SQL_KEYWORDS = {
    "sql": "column_type",
    "to_db": "encode",
    "from_db": "decode",
    "to_db_many": "encode_many",
    "from_db_many": "decode_many",
    "encoded_as": "opaque_as",
}
_ARROW_KEYWORDS = {"arrow": "arrow_type", "to_arrow": "encode", "from_arrow": "decode"}
_XML_KEYWORDS = {
    "xsd": "xsd_type",
    "to_text": "to_text",
    "from_text": "from_text",
    "from_valid_text": "from_valid_text",
    "plain_text": "plain_text",
    "xsd_attributes": "attributes",
    "xsd_aliases": "aliases",
    "to_text_column": "to_text_column",
}


class _Unset:
    """The default of :class:`TypeInfo`'s flat arguments: not given."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "unset"


#: A flat argument of :class:`TypeInfo` left out (typed ``Any`` so that the arguments keep
#: the types they always had).
_UNSET: Any = _Unset()
#: The flat arguments a record needs when it is not given itself.
_REQUIRED = frozenset({"sql", "arrow", "xsd", "to_text", "from_text"})


def _record(
    kind: type[Any], record: Any, given: dict[str, Any], names: dict[str, str], keyword: str
) -> Any:
    """The codec record ``record`` with the flat constructor arguments ``given`` that were
    given put in (renamed by ``names``), or, without ``record``, one of type ``kind`` built
    of them."""
    flat = {names[k]: v for k, v in given.items() if v is not _UNSET}
    if record is not None:
        if not isinstance(record, kind):
            raise TypeError(f"TypeInfo: {keyword}= takes a {kind.__name__}, not {record!r}")
        if kind is SqlCodec:
            # a new encode or decode without its whole-column form: the record's would
            # stand for the old one, so none is kept (value by value, as it is given)
            for one, many in (("encode", "encode_many"), ("decode", "decode_many")):
                if one in flat and many not in flat:
                    flat[many] = None
        return dataclasses.replace(record, **flat) if flat else record
    missing = [k for k, v in given.items() if k in _REQUIRED and (v is _UNSET or v is None)]
    if missing:
        raise TypeError(f"TypeInfo: give {keyword}= or {', '.join(missing)}")
    return kind(**flat)


@dataclass(frozen=True, slots=True, init=False)
class TypeInfo:
    """One Python type: what it is and which values it accepts (``check``), and what it
    becomes in each format, one codec record per format (:class:`SqlCodec`,
    :class:`ArrowCodec`, :class:`XmlCodec`; see :mod:`.codecs`). Each format's package reads
    its own record only.

    Built either of the records (``TypeInfo(name, python_type, sql_codec=SqlCodec(...),
    arrow_codec=ArrowCodec(...), xml_codec=XmlCodec(...), check=...)``) or, as before the
    records existed, of their fields as flat arguments (``TypeInfo(name, python_type, sql,
    arrow, xsd, to_text, from_text, to_db=..., ...)``, the same positional order and
    keywords), which build the records. Flat arguments given beside a record replace its
    fields (so ``dataclasses.replace(info, from_db=Cents)`` works as it did). The flat names stay
    readable as properties (``info.to_db`` is ``info.sql_codec.encode``).
    ``sqlite_typeof=`` is accepted and ignored: the SQLite backend derives a column's
    storage class from ``native``.

    Two entries are equal when their fields (and records) are.
    """

    name: str
    python_type: Any
    #: What it is in SQL (read by :mod:`entityworks.sql` only).
    sql_codec: SqlCodec
    #: What it is in Arrow (read by :mod:`entityworks.arrow` only).
    arrow_codec: ArrowCodec
    #: What it is in XML (read by :mod:`entityworks.xml` and the command line only).
    xml_codec: XmlCodec
    #: The value rule: ``check(value)`` returns the non-None ``value`` as the field's own type
    #: (an ``int`` in a ``float`` field becomes a ``float``; a ``bool`` in an ``int`` field an
    #: ``int``) or raises ``TypeError`` / ``ValueError`` saying why it is refused. ``None``
    #: (user types) means the codecs alone decide.
    check: Codec
    #: ``check`` a whole column at a time: ``check_column(values)`` is True when every
    #: non-None value passes ``check`` unchanged; False only means "apply ``check`` value by
    #: value" (which converts or refuses). Bulk writers use it (see :mod:`.columns`).
    check_column: Callable[[Sequence[Any]], bool] | None
    #: For the types drivers and Arrow bind without a codec: values of exactly this type pass
    #: ``check`` unchanged except for limits every backend enforces itself (the 64-bit range
    #: of ``int``), so bulk paths may skip ``check`` for them.
    native: type | None
    #: True when the records' encoders (``SqlCodec.encode``, ``ArrowCodec.encode``,
    #: ``XmlCodec.to_text``) apply ``check`` themselves (every built-in entry's do), so
    #: writers need not call it first.
    checked_codecs: bool
    #: True for types that can be a primary key generated by the database.
    autoincrement: bool
    #: ``companions(target)``: the hidden columns a storage (a :class:`Target`: a SQL
    #: backend's, or :data:`ARROW`) needs to keep every value of this type exactly, decided
    #: by what the target keeps.
    companions: Callable[[Target], tuple[Companion, ...]] | None

    def __init__(
        self,
        name: str,
        python_type: Any,
        sql: Callable[[], Any] = _UNSET,
        arrow: Callable[[], Any] = _UNSET,
        xsd: str = _UNSET,
        to_text: Callable[[Any], str] = _UNSET,
        from_text: Callable[[str], Any] = _UNSET,
        to_db: Codec = _UNSET,
        from_db: Codec = _UNSET,
        to_arrow: Codec = _UNSET,
        from_arrow: Codec = _UNSET,
        xsd_attributes: Mapping[str, str] = _UNSET,
        autoincrement: bool = False,
        xsd_aliases: tuple[str, ...] = _UNSET,
        from_valid_text: Codec = _UNSET,
        plain_text: bool = _UNSET,
        check: Codec = None,
        native: type | None = None,
        sqlite_typeof: str | None = None,
        companions: Callable[[Target], tuple[Companion, ...]] | None = None,
        checked_codecs: bool = False,
        from_db_many: Callable[[Sequence[Any]], list[Any]] | None = _UNSET,
        to_db_many: Callable[[Sequence[Any]], list[Any]] | None = _UNSET,
        encoded_as: str | None = _UNSET,
        check_column: Callable[[Sequence[Any]], bool] | None = None,
        to_text_column: Callable[[Sequence[Any]], list[str]] | None = _UNSET,
        *,
        sql_codec: SqlCodec | None = None,
        arrow_codec: ArrowCodec | None = None,
        xml_codec: XmlCodec | None = None,
    ) -> None:
        del sqlite_typeof  # accepted for compatibility: see the class's docstring
        sql_flat = {
            "sql": sql,
            "to_db": to_db,
            "from_db": from_db,
            "to_db_many": to_db_many,
            "from_db_many": from_db_many,
            "encoded_as": encoded_as,
        }
        arrow_flat = {"arrow": arrow, "to_arrow": to_arrow, "from_arrow": from_arrow}
        xml_flat = {
            "xsd": xsd,
            "to_text": to_text,
            "from_text": from_text,
            "from_valid_text": from_valid_text,
            "plain_text": plain_text,
            "xsd_attributes": xsd_attributes if xsd_attributes is _UNSET else dict(xsd_attributes),
            "xsd_aliases": xsd_aliases,
            "to_text_column": to_text_column,
        }
        set_ = object.__setattr__
        set_(self, "name", name)
        set_(self, "python_type", python_type)
        set_(self, "sql_codec", _record(SqlCodec, sql_codec, sql_flat, _SQL_KEYWORDS, "sql_codec"))
        set_(
            self,
            "arrow_codec",
            _record(ArrowCodec, arrow_codec, arrow_flat, _ARROW_KEYWORDS, "arrow_codec"),
        )
        set_(self, "xml_codec", _record(XmlCodec, xml_codec, xml_flat, _XML_KEYWORDS, "xml_codec"))
        set_(self, "check", check)
        set_(self, "check_column", check_column)
        set_(self, "native", native)
        set_(self, "checked_codecs", checked_codecs)
        set_(self, "autoincrement", autoincrement)
        set_(self, "companions", companions)

    def companions_for(self, target: str) -> tuple[Companion, ...]:
        """The companions of this type on ``target`` (a :class:`Target`, or the name of a
        declared one: see :func:`as_target`)."""
        return self.companions(as_target(target)) if self.companions is not None else ()

    def checked(self, value: Any) -> Any:
        """``value`` after ``check`` (unchanged when the type has no rule)."""
        return self.check(value) if self.check is not None else value

    # -- the flat names of the records' fields, for code written before the records --------
    @property
    def sql(self) -> Callable[[], Any]:
        """:attr:`SqlCodec.column_type` of :attr:`sql_codec`."""
        return self.sql_codec.column_type

    @property
    def to_db(self) -> Codec:
        """:attr:`SqlCodec.encode` of :attr:`sql_codec`."""
        return self.sql_codec.encode

    @property
    def from_db(self) -> Codec:
        """:attr:`SqlCodec.decode` of :attr:`sql_codec`."""
        return self.sql_codec.decode

    @property
    def to_db_many(self) -> Callable[[Sequence[Any]], list[Any]] | None:
        """:attr:`SqlCodec.encode_many` of :attr:`sql_codec`."""
        return self.sql_codec.encode_many

    @property
    def from_db_many(self) -> Callable[[Sequence[Any]], list[Any]] | None:
        """:attr:`SqlCodec.decode_many` of :attr:`sql_codec`."""
        return self.sql_codec.decode_many

    @property
    def encoded_as(self) -> str | None:
        """:attr:`SqlCodec.opaque_as` of :attr:`sql_codec`."""
        return self.sql_codec.opaque_as

    @property
    def arrow(self) -> Callable[[], Any]:
        """:attr:`ArrowCodec.arrow_type` of :attr:`arrow_codec`."""
        return self.arrow_codec.arrow_type

    @property
    def to_arrow(self) -> Codec:
        """:attr:`ArrowCodec.encode` of :attr:`arrow_codec`."""
        return self.arrow_codec.encode

    @property
    def from_arrow(self) -> Codec:
        """:attr:`ArrowCodec.decode` of :attr:`arrow_codec`."""
        return self.arrow_codec.decode

    @property
    def xsd(self) -> str:
        """:attr:`XmlCodec.xsd_type` of :attr:`xml_codec`."""
        return self.xml_codec.xsd_type

    @property
    def to_text(self) -> Callable[[Any], str]:
        """:attr:`XmlCodec.to_text` of :attr:`xml_codec`."""
        return self.xml_codec.to_text

    @property
    def from_text(self) -> Callable[[str], Any]:
        """:attr:`XmlCodec.from_text` of :attr:`xml_codec`."""
        return self.xml_codec.from_text

    @property
    def from_valid_text(self) -> Codec:
        """:attr:`XmlCodec.from_valid_text` of :attr:`xml_codec`."""
        return self.xml_codec.from_valid_text

    @property
    def plain_text(self) -> bool:
        """:attr:`XmlCodec.plain_text` of :attr:`xml_codec`."""
        return self.xml_codec.plain_text

    @property
    def xsd_attributes(self) -> Mapping[str, str]:
        """:attr:`XmlCodec.attributes` of :attr:`xml_codec`."""
        return self.xml_codec.attributes

    @property
    def xsd_aliases(self) -> tuple[str, ...]:
        """:attr:`XmlCodec.aliases` of :attr:`xml_codec`."""
        return self.xml_codec.aliases

    @property
    def to_text_column(self) -> Callable[[Sequence[Any]], list[str]] | None:
        """:attr:`XmlCodec.to_text_column` of :attr:`xml_codec`."""
        return self.xml_codec.to_text_column


class TypeMarker:
    """Base class for ``Annotated`` markers that select a registry entry.

    ``Annotated[datetime, AWARE]`` looks up the entry registered for ``AWARE`` instead of
    plain ``datetime``.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"entityworks.{self.name}"


class ClassByName:
    """A class named by its module and name, imported only when asked for (:meth:`load`).

    It stands as the base of an ``Annotated`` type whose marker selects the registry entry,
    so that declaring a column of a heavy library's class imports nothing:
    ``Annotated[ClassByName("numpy", "ndarray"), PACKED]`` (the catalog's ``PackedGrid``) is
    looked up by its marker; only a registry without an entry for the marker loads the
    class, to look it up instead. Type checkers should see the class itself::

        if TYPE_CHECKING:
            Grid = Annotated[numpy.ndarray, PACKED]
        else:
            Grid = Annotated[ClassByName("numpy", "ndarray"), PACKED]
    """

    __slots__ = ("module", "name")
    module: str
    name: str

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def load(self) -> type:
        """The class (importing its module), :class:`UnsupportedTypeError` when it is none."""
        import importlib

        found = getattr(importlib.import_module(self.module), self.name, None)
        if not isinstance(found, type):
            raise UnsupportedTypeError(f"{self!r} names no class", type_=self)
        return found

    def __repr__(self) -> str:
        return f"{self.module}.{self.name}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ClassByName):
            return (self.module, self.name) == (other.module, other.name)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((ClassByName, self.module, self.name))


def runtime_base(tp: Any) -> Any:
    """``tp`` with a :class:`ClassByName` loaded (anything else as it is)."""
    return tp.load() if isinstance(tp, ClassByName) else tp


Factory = Callable[[Any, "TypeRegistry"], TypeInfo]

#: A format's codec maker: the keyword parameters of a codec family (see
#: :meth:`TypeRegistry.codecs`) -> that format's record.
CodecMaker = Callable[..., SqlCodec | ArrowCodec | XmlCodec]

#: The formats' records, by the keyword of :class:`TypeInfo` that takes each.
_FORMATS: dict[type[Any], tuple[str, str]] = {
    SqlCodec: ("sql_codec", "SQL"),
    ArrowCodec: ("arrow_codec", "Arrow"),
    XmlCodec: ("xml_codec", "XML"),
}


class CodecRecords(TypedDict):
    """The three records of one type, as :class:`TypeInfo`'s keywords take them
    (``TypeInfo(name, tp, **registry.codecs("int"), check=...)``)."""

    sql_codec: SqlCodec
    arrow_codec: ArrowCodec
    xml_codec: XmlCodec


class TypeRegistry:
    """Maps Python types to :class:`TypeInfo`; user types are added with :meth:`register`."""

    def __init__(self) -> None:
        self._exact: dict[Any, TypeInfo] = {}
        self._factories: list[tuple[Callable[[Any], bool], Factory]] = []
        self._memo: dict[Any, TypeInfo] = {}
        #: (record type, codec family) -> the format's maker (:meth:`register_codec_maker`).
        self._makers: dict[tuple[type[Any], str], CodecMaker] = {}
        #: Counts registrations: what was built from the entries before (a cached table
        #: schema) is stale once it changes.
        self.generation: int = 0

    # -- registration -------------------------------------------------------------------
    def register(self, info: TypeInfo, key: Any = None) -> TypeInfo:
        """Register ``info`` for ``key`` (default: ``info.python_type``); replaces any entry."""
        self._exact[info.python_type if key is None else key] = info
        self._memo.clear()
        self.generation += 1
        return info

    def register_codec(self, key: Any, codec: SqlCodec | ArrowCodec | XmlCodec) -> TypeInfo:
        """Replace one format's record of the entry :meth:`lookup` gives for ``key`` (an
        entry's ``sql_codec`` for a :class:`SqlCodec`, and so on) and register the result for
        ``key``: a format's package or a plugin (in its ``register_types`` hook) says what a
        type becomes in its format without restating the rest of the entry."""
        info = self.lookup(key)
        if isinstance(codec, SqlCodec):
            changed = dataclasses.replace(info, sql_codec=codec)
        elif isinstance(codec, ArrowCodec):
            changed = dataclasses.replace(info, arrow_codec=codec)
        elif isinstance(codec, XmlCodec):
            changed = dataclasses.replace(info, xml_codec=codec)
        else:
            raise TypeError(
                f"register_codec takes a SqlCodec, ArrowCodec or XmlCodec, not {codec!r}"
            )
        return self.register(changed, key)

    def register_codec_maker(
        self, record: type[SqlCodec | ArrowCodec | XmlCodec], family: str, maker: CodecMaker
    ) -> CodecMaker:
        """Say what the types of codec family ``family`` become in one format: ``record``
        (:class:`SqlCodec`, :class:`ArrowCodec` or :class:`XmlCodec`) names the format,
        ``maker(**params)`` gives its record for a type of the family (see :meth:`codecs`).

        Each format's package registers its makers for the built-in families in its
        ``register_codecs`` hook (:mod:`entityworks.hooks`): what a type is stays in the type
        layer, what it becomes in SQL, Arrow and XML in ``entityworks.sql.codecs``,
        ``entityworks.arrow.codecs`` and ``entityworks.xml.codecs``. A later maker for the same
        format and family replaces the earlier one (a plugin storing JSON another way), for the
        entries made after it."""
        if record not in _FORMATS:
            raise TypeError(
                f"register_codec_maker takes SqlCodec, ArrowCodec or XmlCodec, not {record!r}"
            )
        self._makers[(record, family)] = maker
        self._memo.clear()
        self.generation += 1
        return maker

    def register_codec_makers(
        self,
        record: type[SqlCodec | ArrowCodec | XmlCodec],
        scalars: Mapping[str, SqlCodec | ArrowCodec | XmlCodec],
        makers: Mapping[str, CodecMaker],
    ) -> None:
        """:meth:`register_codec_maker` for each of a format's families: ``scalars`` (family
        -> the one record of a family without parameters) and ``makers`` (family -> maker)."""
        for family, codec in scalars.items():
            self.register_codec_maker(record, family, _constant(codec))
        for family, maker in makers.items():
            self.register_codec_maker(record, family, maker)

    def codec_families(self) -> dict[str, tuple[str, ...]]:
        """Codec family -> the formats (``"SQL"``, ``"Arrow"``, ``"XML"``) with a maker for it."""
        families: dict[str, tuple[str, ...]] = {}
        for record, (_keyword, label) in _FORMATS.items():
            for kind, family in self._makers:
                if kind is record:
                    families[family] = (*families.get(family, ()), label)
        return families

    def codecs(self, family: str, **params: Any) -> CodecRecords:
        """The records of a type of codec family ``family``, one per format, each made by the
        maker its format registered (:meth:`register_codec_maker`) with ``params``.

        The built-in families: each built-in scalar by its entry's name (``"int"``,
        ``"Decimal"``, ``"AwareDatetime"``..., no parameters); ``"enum"`` (``enum``: the
        Enum class, ``base``: the entry of its values' type, ``to_value``: member -> checked
        value); ``"json"`` (``dumps``: value -> JSON text, ``loads``: JSON text -> value,
        both checking); ``"npy"`` (``to_bytes`` / ``from_bytes``: an array and its ``.npy``
        bytes). Raises :class:`UnsupportedTypeError` when a format has no maker for it."""
        made: dict[str, Any] = {}
        for record, (keyword, label) in _FORMATS.items():
            maker = self._makers.get((record, family))
            if maker is None:
                raise UnsupportedTypeError(
                    f"no {label} codec for the codec family {family!r}: the {label} layer "
                    f"registers its makers through the register_codecs hook "
                    f"(registry.register_codec_maker({record.__name__}, {family!r}, ...))",
                    type_=family,
                )
            codec = maker(**params)
            if not isinstance(codec, record):
                raise TypeError(
                    f"the {label} codec maker of {family!r} gave {codec!r}, not a {record.__name__}"
                )
            made[keyword] = codec
        return CodecRecords(
            sql_codec=made["sql_codec"],
            arrow_codec=made["arrow_codec"],
            xml_codec=made["xml_codec"],
        )

    @typing.overload
    def register_factory(
        self, predicate: Callable[[Any], bool], factory: None = None
    ) -> Callable[[Factory], Factory]: ...
    @typing.overload
    def register_factory(self, predicate: Callable[[Any], bool], factory: Factory) -> Factory: ...
    def register_factory(
        self, predicate: Callable[[Any], bool], factory: Factory | None = None
    ) -> Callable[[Factory], Factory] | Factory:
        """Register a factory building a TypeInfo for every type ``predicate`` accepts.

        Newer factories win. Usable as a decorator: ``@registry.register_factory(pred)``.
        """

        def add(fn: Factory) -> Factory:
            self._factories.insert(0, (predicate, fn))
            self._memo.clear()
            self.generation += 1
            return fn

        return add if factory is None else add(factory)

    def copy(self) -> TypeRegistry:
        """An independent registry with the same entries (for isolated customisation)."""
        other = TypeRegistry()
        other._exact = dict(self._exact)
        other._factories = list(self._factories)
        other._makers = dict(self._makers)
        return other

    # -- lookup ---------------------------------------------------------------------------
    def lookup(self, tp: Any) -> TypeInfo:
        """The TypeInfo for ``tp``; raises :class:`UnsupportedTypeError` when none fits."""
        try:
            return self._memo[tp]
        except (KeyError, TypeError):
            pass
        info = self._find(tp)
        if info is None:
            raise UnsupportedTypeError(
                f"no registry entry for type {type_name(tp)}; register one with "
                "entityworks.register_type(...)",
                type_=tp,
            )
        try:
            self._memo[tp] = info
        except TypeError:  # unhashable annotation
            pass
        return info

    def for_xsd(self, xsd_type: str, attributes: dict[str, str] | None = None) -> TypeInfo:
        """The entry whose XSD type (or alias) is ``xsd_type``, for reading foreign schemas.

        ``attributes`` are the element's ``msdata:*`` attributes: an entry whose own
        ``XmlCodec.attributes`` they contradict is skipped, and the entry matching most of them
        wins (``msdata:DataType="System.Guid..."`` on ``xs:string`` selects UUID).
        """
        attributes = attributes or {}
        best: tuple[int, TypeInfo] | None = None
        for info in self._exact.values():
            codec = info.xml_codec
            if not codec.accepts(xsd_type):
                continue
            score = 0
            for name, value in codec.attributes.items():
                if name in attributes:
                    if attributes[name] != value:
                        break
                    score += 1
            else:
                if best is None or score > best[0]:
                    best = (score, info)
        if best is None:
            raise UnsupportedTypeError(
                f"no registry entry for XSD type {xsd_type!r}", type_=xsd_type
            )
        return best[1]

    def companion_types(self, target: str) -> dict[str, Any]:
        """Column suffix -> the type whose companion column has it, on ``target`` (a
        :class:`Target` or a declared one's name; for
        reflection): a companion's suffix, the suffix of a field column beside a companion
        that took its name, and those of older layouts."""
        kinds: dict[str, Any] = {}
        resolved = as_target(target)
        for info in self._exact.values():
            for part in info.companions_for(resolved):
                suffixes = [part.suffix] if part.own is None else [part.own]
                suffixes += [older.suffix for older in part.older]
                for suffix in suffixes:
                    kinds.setdefault(suffix, info.python_type)
        return kinds

    def entries(self) -> list[tuple[Any, TypeInfo]]:
        """The exact entries, ``(key, info)`` in registration order (no factories)."""
        return list(self._exact.items())

    def supports(self, tp: Any) -> bool:
        """True when :meth:`lookup` finds an entry for ``tp``."""
        try:
            self.lookup(tp)
        except UnsupportedTypeError:
            return False
        return True

    def _find(self, tp: Any) -> TypeInfo | None:
        if get_origin(tp) is typing.Annotated:
            base, *extras = get_args(tp)
            for extra in extras:
                if _hashable(extra) and extra in self._exact:
                    return self._exact[extra]
            for predicate, factory in self._factories:  # markers with a parametrised entry
                if predicate(tp):
                    return factory(tp, self)
            return self._find(runtime_base(base))
        if _hashable(tp) and tp in self._exact:
            return self._exact[tp]
        for predicate, factory in self._factories:
            if predicate(tp):
                return factory(tp, self)
        if isinstance(tp, type):
            for base in tp.__mro__[1:]:
                if base in self._exact and base is not object:
                    return self._exact[base]
        return None


def _constant(codec: SqlCodec | ArrowCodec | XmlCodec) -> CodecMaker:
    """The maker of a family without parameters: always ``codec``."""
    return lambda: codec


def _hashable(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def type_name(tp: Any) -> str:
    """How error messages name ``tp``: a class by its qualified name, anything else by repr."""
    return tp.__qualname__ if isinstance(tp, type) else repr(tp)


def pyarrow_module() -> types.ModuleType:
    """pyarrow, imported on first use: Arrow types are built only when asked for."""
    import pyarrow

    return pyarrow


def unwrap_optional(tp: Any) -> tuple[Any, bool]:
    """Split ``X | None`` into ``(X, True)``; other unions raise; anything else -> (tp, False).

    ``Annotated[X | None, ...]`` keeps its markers on the inner type.
    """
    annotated_extras: tuple[Any, ...] = ()
    if get_origin(tp) is typing.Annotated:
        inner, *extras = get_args(tp)
        annotated_extras = tuple(extras)
        tp = inner
    origin = get_origin(tp)
    nullable = False
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) != len(get_args(tp)) - 1 or len(args) != 1:
            raise UnsupportedTypeError(
                f"union {tp!r} is not supported: only X | None (Optional[X]) is", type_=tp
            )
        tp, nullable = args[0], True
        if get_origin(tp) is typing.Annotated:
            inner, *extras = get_args(tp)
            annotated_extras += tuple(extras)
            tp = inner
    if annotated_extras:
        tp = typing.Annotated[(tp, *annotated_extras)]
    return tp, nullable
