"""What a type becomes in each format: one codec record per format, held by its registry
entry (:class:`~.registry.TypeInfo`).

A :class:`~.registry.TypeInfo` says what a type *is* and which values it accepts (its
``check``); how its values are stored is each format's own business, and each format reads
its own record only:

* :class:`SqlCodec`, read by :mod:`entityworks.sql`: the column type and the storage codecs.
* :class:`ArrowCodec`, read by :mod:`entityworks.arrow`: the Arrow type and its codecs.
* :class:`XmlCodec`, read by :mod:`entityworks.xml` (and the command line's lexical
  forms): the XSD type name, the lexical forms (XSD 1.0 / .NET ``XmlConvert``) and what
  .NET's schemas say of the type.

Every codec function takes a non-None value (writers and readers pass ``None`` / NULL
through themselves); a codec that is ``None`` means "the value passes unchanged", which
keeps the bulk paths fast.

This module imports nothing of SQLAlchemy, pyarrow or lxml: the column and Arrow types are
functions giving them, called when a table or an Arrow schema is built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: A function applied to each non-None value, or ``None``: the value passes unchanged.
Codec = Callable[[Any], Any] | None


@dataclass(frozen=True, slots=True)
class SqlCodec:
    """What a type is in SQL: its column type and the codecs between a value and what that
    column type accepts (an Enum and its value, an array and its ``.npy`` bytes)."""

    #: The SQL column type: a function giving a SQLAlchemy type (user entries:
    #: ``lambda: sa.LargeBinary()``), or a :class:`~.storage.StorageType` naming one that
    #: :mod:`entityworks.sql` makes (the built-in entries: building the registry and
    #: encoding rows then never imports SQLAlchemy).
    column_type: Callable[[], Any]
    #: A value -> what the column type binds (``None``: the value itself).
    encode: Codec = None
    #: What the database gives back -> the value (``None``: as it comes).
    decode: Codec = None
    #: ``encode`` of a whole column at once (non-None values -> the list of what ``encode``
    #: gives each, equal), for types whose values are written by the hundred and encode
    #: faster together (packed point paths, a timedelta's microseconds, an Enum's values,
    #: JSON lists of scalars: the bulk writes use it); it raises on a value it does not
    #: take as ``encode`` would, and writers then apply ``encode`` value by value to name
    #: it (or convert it). ``None``: value by value.
    encode_many: Callable[[Sequence[Any]], list[Any]] | None = None
    #: ``decode`` of a whole column at once (a list of non-NULL stored values -> a list of
    #: equal values), for types whose values are read by the hundred and decode faster
    #: together (packed point paths, timedeltas, Enums, bytes, bools); ``None``: ``decode``
    #: value by value. A record made from another with a new ``encode`` or ``decode``
    #: (``dataclasses.replace``) must give its own ``*_many`` or None: the other's would
    #: stand for the old function (``TypeInfo``'s flat ``to_db=`` / ``from_db=`` do so).
    decode_many: Callable[[Sequence[Any]], list[Any]] | None = None
    #: The stored form, when SQL cannot compare it by value ("packed bytes"): filters refuse
    #: comparisons on such columns. JSON text and ``.npy`` bytes are known without it.
    opaque_as: str | None = None


@dataclass(frozen=True, slots=True)
class ArrowCodec:
    """What a type is in Arrow: its Arrow type and the codecs for the values Arrow cannot
    hold natively (a UUID as its text, an Enum as its value)."""

    #: A function giving the ``pyarrow.DataType`` of the type's columns.
    arrow_type: Callable[[], Any]
    #: A value -> what pyarrow takes for ``arrow_type`` (``None``: the value itself).
    encode: Codec = None
    #: What pyarrow gives back (``to_pylist``) -> the value (``None``: as it comes).
    decode: Codec = None


@dataclass(frozen=True, slots=True)
class XmlCodec:
    """What a type is in XML: its XSD type name, its lexical forms and what .NET's
    ``DataSet`` schemas say of it."""

    #: The XSD type name of the type's elements (``xs:long``).
    xsd_type: str
    #: A value -> its lexical form.
    to_text: Callable[[Any], str]
    #: A lexical form -> the value (``ValueError`` for text that is none).
    from_text: Callable[[str], Any]
    #: Decoder for text an XSD validator has already accepted as ``xsd_type`` (or an
    #: alias): it may skip the lexical checks ``from_text`` makes. ``None``: ``from_text``.
    from_valid_text: Codec = None
    #: True when ``to_text`` never yields markup characters, control characters or
    #: whitespace-only text, so the XML writer may skip escaping.
    plain_text: bool = False
    #: Extra attributes on the XSD element, e.g. ``msdata:DataType`` for .NET's Guid.
    attributes: Mapping[str, str] = field(default_factory=dict)
    #: Other XSD type names (as .NET writes them) that decode into this type (``xs:int``).
    aliases: tuple[str, ...] = ()
    #: ``to_text`` of a whole column of values the entry's ``check_column`` passed (a list
    #: without ``None``): the same strings, a column at a time. ``None``: value by value.
    to_text_column: Callable[[Sequence[Any]], list[str]] | None = None

    def accepts(self, xsd_type: str) -> bool:
        """True when elements of ``xsd_type`` decode into this type (its own or an alias)."""
        return xsd_type == self.xsd_type or xsd_type in self.aliases


__all__ = ["ArrowCodec", "Codec", "SqlCodec", "XmlCodec"]
