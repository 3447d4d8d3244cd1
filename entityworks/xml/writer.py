"""The streaming XML writer: row elements as text, inside a document frame written by lxml.

The engine under :mod:`~entityworks.xml.table` and :mod:`~entityworks.xml.dataset` (and the
DataSet side of the database exchange): :class:`RowFormatter` turns batches of column tuples
of one table into row elements, column by column from the registry's ``to_text`` (building an
lxml element per value would cost several times more than the whole format step), and
:func:`write_document` streams them into the dataset root element. Every value is checked on
the way out (type, characters XML 1.0 cannot hold), so a file we write can always be read
back; a file target appears under its name only once it is complete.
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import ExitStack
from itertools import compress, count, repeat
from operator import countOf, is_not
from typing import Any, BinaryIO, get_args, get_origin

from lxml import etree

from .._files import atomic_output, check_output_path, write_bytes
from ..errors import ValueEncodingError
from ..model.schema import TableSchema
from ..registry import INT64_MAX, INT64_MIN, encode_error, runtime_base
from .parser import DIFFGRAM_NS, DIFFGRAM_ROOT
from .xsdwrite import column_xsd, encode_name, value_check

# Characters XML 1.0 cannot represent at all (not even as character references).
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_NEEDS_WORK = re.compile("[&<>\r\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _escape(text: str) -> str:
    bad = _XML_INVALID.search(text)
    if bad:
        raise ValueError(
            f"contains U+{ord(bad.group()):04X} at index {bad.start()}, which "
            "XML 1.0 cannot hold (not even escaped)"
        )
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")
    )


def _runtime_class(python_type: Any) -> Any:
    if get_origin(python_type) is not None and get_args(python_type):
        origin = get_origin(python_type)
        if origin.__module__ == "typing":  # Annotated[X, ...]
            return _runtime_class(runtime_base(get_args(python_type)[0]))
        return origin
    return python_type


_NoneType = type(None)


def _column_encoder(
    info: Any, nullable: bool, plain: bool, inline: bool, open_tag: str, close_tag: str
) -> Callable[[Sequence[Any]], list[str] | None] | None:
    """One column's texts a column at a time, or ``None`` when the registry has no column
    test or column text for the type. The encoder answers ``None`` when it cannot vouch for
    every value (a value the type test does not pass, text that needs escaping or is only
    whitespace): the value-by-value path then converts, escapes or names the row."""
    test, texts_of = info.check_column, info.xml_codec.to_text_column
    if test is None or texts_of is None:
        return None
    element = (open_tag + "%s" + close_tag).__mod__

    def encode(values: Sequence[Any]) -> list[str] | None:
        nulls = countOf(map(type, values), _NoneType)
        if nulls and not nullable:
            return None  # the value-by-value path names the row
        present = [v for v in values if v is not None] if nulls else values
        if not test(present):
            return None
        texts: list[str] = texts_of(present)
        if not plain:
            if _NEEDS_WORK.search("".join(texts)):
                return None  # markup to escape, or a character XML cannot hold
            if any(map(str.isspace, texts)):
                return None  # whitespace only: written with xml:space="preserve"
        if inline:
            return texts
        if not nulls:
            return list(map(element, texts))
        out = [""] * len(values)  # absent where None; the elements go to the other places
        deque(
            map(
                out.__setitem__,
                compress(count(), map(is_not, values, repeat(None))),
                map(element, texts),
            ),
            maxlen=0,
        )
        return out

    return encode


class RowFormatter:
    """Turns batches of column tuples of one table into row elements (text)."""

    def __init__(self, schema: TableSchema) -> None:
        self.schema: TableSchema = schema
        self.names: list[str] = schema.column_names
        tag = encode_name(schema.name)
        parts = [f"<{tag}>"]
        self.encoders: list[Callable[[Sequence[Any], int], list[str]]] = []
        #: Per column: its element with a slot for the text, and for a column whose text
        #: usually needs no escaping (str) and is never absent, the column encoder giving
        #: bare texts, which the batch's template then wraps (no second pass over them).
        self._tagged: list[str] = []
        self._bare: list[Callable[[Sequence[Any]], list[str] | None] | None] = []
        self._inline: list[bool] = []
        self._templates: dict[tuple[bool, ...], str] = {}
        for c in schema.columns:
            ctag = encode_name(c.name)
            inline = c.info.xml_codec.plain_text and not c.nullable
            parts.append(f"<{ctag}>%s</{ctag}>" if inline else "%s")
            extra = value_check(column_xsd(schema, c), c.info.python_type)
            self.encoders.append(self._encoder(c.name, ctag, c.info, c.nullable, inline, extra))
            self._tagged.append(f"<{ctag}>%s</{ctag}>")
            self._inline.append(inline)
            self._bare.append(
                _column_encoder(c.info, False, c.info.xml_codec.plain_text, True, "", "")
                if not inline and not c.nullable and extra is None
                else None
            )
        self.open_template: str = "".join(parts)
        self.close: str = f"</{tag}>\n"
        parts.append(self.close)  # a row per line: error lines then name rows
        self.template: str = "".join(parts)

    def _encoder(
        self,
        name: str,
        tag: str,
        info: Any,
        nullable: bool,
        inline: bool,
        extra: Callable[[Any], None] | None = None,
    ) -> Callable[[Sequence[Any], int], list[str]]:
        cls = _runtime_class(info.python_type)
        allowed = {cls} | ({type(None)} if nullable else set()) | ({int} if cls is float else set())
        to_text = info.xml_codec.to_text
        plain = info.xml_codec.plain_text
        open_tag, close_tag = f"<{tag}>", f"</{tag}>"
        preserve = f'<{tag} xml:space="preserve">'

        def element(value: Any) -> str:
            if value is None:
                return ""
            text: str = to_text(value)
            if plain:
                return open_tag + text + close_tag
            if text and not text.strip(" \t\n\r"):  # whitespace only: .NET would drop it
                return preserve + _escape(text) + close_tag
            if _NEEDS_WORK.search(text):
                text = _escape(text)
            return open_tag + text + close_tag

        one = to_text if inline else element
        if extra is not None:  # a narrower XSD type than the registry's (from .NET)
            unchecked = one

            def one(value: Any) -> str:
                if value is not None:
                    extra(value)
                return unchecked(value)

        rule = info.checked  # the registry's rule, as in the Store and frames

        def check(value: Any) -> Any:
            if value is None:
                if not nullable:
                    raise ValueError("None in a column that is not Optional")
                return None
            return rule(value)

        column = (
            _column_encoder(info, nullable, plain, inline, open_tag, close_tag)
            if extra is None
            else None
        )

        def encode(values: Sequence[Any], first: int) -> list[str]:
            if column is not None:
                texts = column(values)
                if texts is not None:
                    return texts
            try:
                if not set(map(type, values)) <= allowed:
                    raise TypeError
                if (
                    cls is int
                    and values
                    and not (INT64_MIN <= min(values) and max(values) <= INT64_MAX)
                ):
                    raise TypeError  # xs:long's range, which import validates
                return list(map(one, values))
            except Exception:
                out = []
                for i, value in enumerate(values):  # the rule per value: convert or refuse
                    try:
                        out.append(one(check(value)))
                    except Exception as exc:
                        raise encode_error(name, value, exc, first + i) from None
                return out

        return encode

    def open_rows(self, rows: Sequence[Sequence[Any]], first: int) -> list[str]:
        """Each row's element without its end tag (:attr:`close`), for nested rows."""
        if not rows:
            return []
        columns = list(zip(*rows, strict=True))
        texts = [enc(col, first) for enc, col in zip(self.encoders, columns, strict=True)]
        return list(map(self.open_template.__mod__, zip(*texts, strict=True)))

    def format(self, rows: Sequence[Sequence[Any]], first: int) -> str:
        """Row elements for ``rows``; ``first`` is the index of rows[0] for error messages."""
        if not rows:
            return ""
        return self.format_columns(list(zip(*rows, strict=True)), first)

    def format_columns(self, columns: Sequence[Sequence[Any]], first: int) -> str:
        """Row elements for rows given as columns (lists of equal length, table column
        order); ``first`` is the index of the first row for error messages."""
        if not columns or not columns[0]:
            return ""
        texts = []
        tagged = list(self._inline)
        for i, (enc, bare, col) in enumerate(zip(self.encoders, self._bare, columns, strict=True)):
            text = bare(col) if bare is not None else None
            if text is None:
                text = enc(col, first)
            else:
                tagged[i] = True
            texts.append(text)
        key = tuple(tagged)
        template = self._templates.get(key)
        if template is None:
            template = self._templates[key] = "".join(
                [
                    self.open_template[: self.open_template.index(">") + 1],
                    *[t if on else "%s" for t, on in zip(self._tagged, tagged, strict=True)],
                    self.close,
                ]
            )
        return "".join(map(template.__mod__, zip(*texts, strict=True)))


#: Per child list field, for each row of a batch: its child rows, the child table's columns
#: in order (``parent_key``, ``position``, then the item's fields), in list order.
ChildRows = Mapping[str, Sequence[Sequence[Sequence[Any]]]]

_ROW_PREFIX = re.compile(r"row \d+, column '[^']*': ")


class FamilyFormatter:
    """Turns batches of column tuples of a table with child lists, each with its child rows
    (see :data:`ChildRows`), into row elements: a batch's rows, then its rows of each child
    table, the document ``write_xml`` makes of the same rows as instances (batch by batch).

    A child row's ``parent_key`` is its owner's key and its ``position`` its index in the
    owner's list, whatever the given row holds there, as an instance's list gives them.
    """

    def __init__(self, schema: TableSchema) -> None:
        self.schema: TableSchema = schema
        self.parent: RowFormatter = RowFormatter(schema)
        self.key: str = schema.require_key("an XML export with child rows").name
        self._at = schema.column_names.index(self.key)
        self.children: list[tuple[str, int, RowFormatter]] = [
            (child.field, child.schema.links, RowFormatter(child.schema))
            for child in schema.children
        ]
        self.child_counts: list[int] = [0] * len(self.children)

    def format(self, rows: Sequence[Sequence[Any]], children: ChildRows, first: int) -> str:
        """Row elements for ``rows`` and their child rows; ``first`` is the index of
        rows[0] for error messages (a child row's error names the row that owns it)."""
        parts = [self.parent.format(rows, first)]
        at = self._at
        for n, (fname, links, formatter) in enumerate(self.children):
            owned = children.get(fname) or [()] * len(rows)
            out: list[tuple[Any, ...]] = []
            for i, (row, items) in enumerate(zip(rows, owned, strict=True)):
                if not items:
                    continue
                parent_key = row[at]
                if parent_key is None:
                    raise ValueEncodingError(
                        f"row {first + i}, column {self.key!r}: the key is None, so its "
                        f"{fname} rows could not refer to it",
                        column=self.key,
                        row=first + i,
                    )
                out.extend(
                    (parent_key, position, *item[links:]) for position, item in enumerate(items)
                )
            try:
                parts.append(formatter.format(out, self.child_counts[n]))
            except ValueEncodingError as exc:
                raise _owner_error(exc, owned, fname, first, self.child_counts[n]) from exc
            self.child_counts[n] += len(out)
        return "".join(parts)


def _owner_error(
    exc: ValueEncodingError,
    owned: Sequence[Sequence[Any]],
    fname: str,
    first: int,
    numbered_from: int,
) -> ValueEncodingError:
    """A child row's error, told by the row that owns it (the child rows are numbered on
    their own while they are formatted)."""
    if exc.row is None:
        return exc
    left = exc.row - numbered_from
    for i, items in enumerate(owned):
        if left < len(items):
            detail = _ROW_PREFIX.sub("", str(exc), count=1)
            return ValueEncodingError(
                f"row {first + i}, column {exc.column!r} of {fname}[{left}]: {detail}",
                column=exc.column,
                row=first + i,
                value=exc.value,
            )
        left -= len(items)
    return exc


#: Where a document goes: a path (written whole or not at all) or an open binary stream.
Target = str | os.PathLike[str] | BinaryIO


_DIFFGRAM_NSMAP = {"msdata": "urn:schemas-microsoft-com:xml-msdata", "diffgr": DIFFGRAM_NS}


def _stream_document(
    f: BinaryIO,
    chunks: Iterable[str],
    dataset: str,
    inline: Callable[[], etree._Element] | None = None,
    diffgram: bool = False,
) -> None:
    """Stream ``chunks`` of row elements into ``f`` inside the dataset root element, after
    the ``inline`` schema if one is given (inside ``diffgr:diffgram`` for a DiffGram)."""
    with etree.xmlfile(f, encoding="utf-8") as xf, ExitStack() as frame:
        xf.write_declaration(standalone=True)
        if diffgram:
            frame.enter_context(xf.element(DIFFGRAM_ROOT, nsmap=_DIFFGRAM_NSMAP))
            xf.write("\n")
        with xf.element(encode_name(dataset)):
            xf.write("\n")
            if inline is not None:
                xf.write(inline())
                xf.write("\n")
            for chunk in chunks:
                if chunk:
                    xf.flush()  # keep lxml's buffered output ahead of our rows
                    f.write(chunk.encode("utf-8"))
            xf.flush()


def write_document(
    target: Target,
    chunks: Iterable[str],
    dataset: str,
    xsd: tuple[str | os.PathLike[str], Callable[[], bytes]] | None = None,
    inline: Callable[[], etree._Element] | None = None,
    diffgram: bool = False,
) -> None:
    """Write the document (and the XSD ``(path, content)``), each whole or not at all.

    Both paths are checked (regular file or nothing) before the first row is formatted;
    on any error neither file changes. A stream target gets the rows as they come.
    """
    if hasattr(target, "write"):
        if xsd is not None:
            check_output_path(xsd[0])
        _stream_document(
            target,  # type: ignore[arg-type]
            chunks,
            dataset,
            inline,
            diffgram,
        )
        if xsd is not None:
            write_bytes(xsd[0], xsd[1]())
        return
    with ExitStack() as stack:
        xsd_file = stack.enter_context(atomic_output(xsd[0])) if xsd is not None else None
        f = stack.enter_context(atomic_output(target))
        _stream_document(f, chunks, dataset, inline, diffgram)
        if xsd_file is not None:
            xsd_file.write(xsd[1]())  # type: ignore[index]


__all__ = ["ChildRows", "FamilyFormatter", "RowFormatter", "Target", "write_document"]
