"""What ``insert`` reads: records from CSV, TSV, a JSON array of objects or newline-delimited
JSON, streamed (a bounded buffer whatever the file's size), their column types detected when
no table or dataclass gives them, and each value made into its column's type, exactly or
refused with the row and the column named.

A record is numbered from 1 (CSV and TSV: the data rows, after the header). CSV and TSV
cells are text: an empty cell is NULL in a column of any type but text (as sqlite-utils
reads them), and a cell is parsed by the type registry's text form of its column's type.
JSON values keep their JSON type: a number goes into an integer, float or Decimal column
only when it is exactly that (``3.0`` is no integer), text into a text column or is parsed
as the column's type (dates, UUIDs...), an object or array into a text column as its JSON
text.

Detected types (:func:`detect`), per column over every record: integers (64-bit), floats
(decimal numbers; integers mixed in become floats), booleans (JSON only), text, and JSON
objects or arrays as text. CSV text is a number only when written plainly (no ``+``, no
leading zeros or spaces), so ``007`` stays the text it was. A JSON column whose records
hold values of two kinds (``3`` and ``"x"``) is refused rather than stored as text: that
text would not come back as the number it was.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import EntityworksError, InputTooLarge

if TYPE_CHECKING:
    from ..model.schema import TableSchema

#: The input formats, and the file extensions that name them.
FORMATS = ("csv", "tsv", "json", "nl")
EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".json": "json",
    ".jsonl": "nl",
    ".ndjson": "nl",
    ".nl": "nl",
}
#: The longest record (bytes of JSON, characters of a CSV field) read before refusing: what
#: bounds the memory of a file without line breaks or one endless value.
MAX_RECORD = 64 << 20
_CHUNK = 1 << 16
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_INT64 = (-(2**63), 2**63 - 1)


class JsonFloat(float):
    """A JSON number with a fraction or exponent: its float value, and its text (which a
    Decimal column takes exactly)."""

    text: str

    def __new__(cls, text: str) -> JsonFloat:
        made = super().__new__(cls, text)
        made.text = text
        return made


class InputError(EntityworksError, ValueError):
    """A file ``insert`` cannot read, or a value that does not fit its column: the message
    names the row (from 1) and the column."""

    def __init__(self, message: str, *, row: int | None = None, column: str | None = None) -> None:
        super().__init__(message)
        self.row = row
        self.column = column


def input_format(path: str, given: str | None) -> str:
    """The format a flag names, else the one ``path``'s extension names."""
    if given is not None:
        return given
    if path == "-":
        raise EntityworksError(
            "standard input has no extension: say its format with --csv, --tsv, --json or --nl"
        )
    found = EXTENSIONS.get(Path(path).suffix.lower())
    if found is None:
        raise EntityworksError(
            f"cannot tell the format of {path!r} from its extension: say it with --csv, "
            "--tsv, --json or --nl (extensions: " + ", ".join(sorted(EXTENSIONS)) + ")"
        )
    return found


def records(path: Path, fmt: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(row number, record)`` of the file at ``path``, streamed."""
    if fmt in ("csv", "tsv"):
        yield from _delimited(path, "\t" if fmt == "tsv" else ",")
    elif fmt == "nl":
        yield from _lines(path)
    else:
        yield from _array(path)


def _delimited(path: Path, delimiter: str) -> Iterator[tuple[int, dict[str, Any]]]:
    limit = csv.field_size_limit()
    csv.field_size_limit(MAX_RECORD)
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            reader = csv.reader(f, delimiter=delimiter)
            number = 0
            try:
                header = next(reader, None)
                if header is None:
                    return
                twice = sorted({h for h in header if header.count(h) > 1})
                if twice:
                    raise InputError(f"the header names {', '.join(map(repr, twice))} twice")
                for number, row in enumerate(reader, 1):
                    if not row:
                        continue  # a blank line
                    if len(row) != len(header):
                        raise InputError(
                            f"row {number} has {len(row)} fields, the header {len(header)}",
                            row=number,
                        )
                    yield number, dict(zip(header, row, strict=True))
            except csv.Error as exc:
                raise InputError(f"row {number + 1}: not readable as CSV ({exc})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"the file is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    finally:
        csv.field_size_limit(limit)


def _decode(text: str, number: int) -> dict[str, Any]:
    try:
        value = json.loads(text, parse_float=JsonFloat)
    except json.JSONDecodeError as exc:
        raise InputError(f"row {number}: not JSON ({exc.msg})", row=number) from None
    return _object(value, number)


def _object(value: Any, number: int) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(f"row {number}: a JSON {type(value).__name__}, not an object", row=number)
    return value


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with open(path, encoding="utf-8-sig") as f:
        number = 0
        while True:
            line = f.readline(MAX_RECORD + 1)
            if not line:
                return
            if len(line) > MAX_RECORD:
                raise InputTooLarge(f"row {number + 1}: longer than {MAX_RECORD:,} characters")
            if line.strip():
                number += 1
                yield number, _decode(line, number)


def _array(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The objects of a JSON array, decoded one at a time from a bounded buffer."""
    with open(path, encoding="utf-8-sig") as f:
        yield from _JsonArray(f).objects()


_SPACE = re.compile(r"[ \t\n\r]*")


class _JsonArray:
    """A reader of one JSON array of objects: a buffer of text and a position in it, topped
    up a chunk at a time and cut before each top-up, so it holds at most one object and a
    chunk."""

    def __init__(self, f: io.TextIOBase) -> None:
        self.f = f
        self.buffer = ""
        self.pos = 0
        self.ended = False
        self.decoder = json.JSONDecoder(parse_float=JsonFloat)

    def more(self) -> bool:
        chunk = self.f.read(_CHUNK)
        if not chunk:
            self.ended = True
            return False
        self.buffer = self.buffer[self.pos :] + chunk
        self.pos = 0
        return True

    def next_char(self) -> str:
        """The next character that is not white space ("" at the end), not consumed."""
        while True:
            self.pos = _SPACE.match(self.buffer, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buffer) or not self.more():
                return self.buffer[self.pos : self.pos + 1]

    def objects(self) -> Iterator[tuple[int, dict[str, Any]]]:
        if self.next_char() != "[":
            raise InputError("a JSON file holds an array of objects: it starts with '['")
        self.pos += 1
        number = 0
        if self.next_char() == "]":
            self.pos += 1
            self.end()
            return
        while True:
            number += 1
            self.next_char()
            yield number, _object(self.value(number), number)
            following = self.next_char()
            self.pos += 1
            if following == ",":
                continue
            if following == "]":
                self.end()
                return
            raise InputError(f"after row {number}: expected ',' or ']' in the JSON array")

    def value(self, number: int) -> Any:
        while True:
            try:
                value, self.pos = self.decoder.raw_decode(self.buffer, self.pos)
                return value
            except json.JSONDecodeError as exc:
                cut = exc.msg.startswith("Unterminated") or exc.pos >= len(self.buffer) - 64
                if self.ended or not cut:
                    raise InputError(f"row {number}: not JSON ({exc.msg})", row=number) from None
                if len(self.buffer) - self.pos > MAX_RECORD:
                    raise InputTooLarge(
                        f"row {number}: longer than {MAX_RECORD:,} characters"
                    ) from None
                self.more()

    def end(self) -> None:
        if self.next_char():
            raise InputError("text after the end of the JSON array")


# -- types ------------------------------------------------------------------------------


@dataclass
class Detected:
    """A column's kinds of value seen so far (:func:`detect`)."""

    name: str
    kinds: set[str] = field(default_factory=set)
    first: dict[str, int] = field(default_factory=dict)

    def see(self, kind: str, number: int) -> None:
        if kind not in self.kinds:
            self.kinds.add(kind)
            self.first[kind] = number

    def python_type(self, text_input: bool) -> type:
        kinds = self.kinds - {"null"}
        if text_input:
            if not kinds or "text" in kinds:
                return str
            return int if kinds == {"int"} else float
        if not kinds:
            return str
        if kinds <= {"int", "float"}:
            return int if kinds == {"int"} else float
        if len(kinds) == 1:
            return {"bool": bool, "text": str, "json": str, "decimal": _decimal()}[kinds.pop()]
        if kinds <= {"int", "decimal"}:
            return _decimal()
        a, b = sorted(kinds, key=self.first.__getitem__)[:2]
        raise InputError(
            f"column {self.name!r} holds {_KIND_WORDS[a]} (row {self.first[a]}) and "
            f"{_KIND_WORDS[b]} (row {self.first[b]}): no one type keeps both; give the "
            "column's type (--dataclass, or create the table first)",
            row=self.first[b],
            column=self.name,
        )


_KIND_WORDS = {
    "int": "integers",
    "float": "floats",
    "decimal": "integers beyond 64 bits",
    "bool": "booleans",
    "text": "text",
    "json": "JSON objects or arrays",
}


def _decimal() -> type:
    import decimal

    return decimal.Decimal


def _text_kind(text: str) -> str:
    if text == "":
        return "null"
    if _INT.fullmatch(text) and _INT64[0] <= int(text) <= _INT64[1]:
        return "int"
    if _FLOAT.fullmatch(text) and math.isfinite(float(text)):
        return "float"
    return "text"


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int" if _INT64[0] <= value <= _INT64[1] else "decimal"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "text"
    return "json"


def detect(rows: Iterator[tuple[int, dict[str, Any]]], text_input: bool) -> list[tuple[str, type]]:
    """Each column's name and detected type, in the order the columns first appear."""
    columns: dict[str, Detected] = {}
    kind_of = _text_kind if text_input else _json_kind
    for number, record in rows:
        for name, value in record.items():
            found = columns.get(name)
            if found is None:
                found = columns[name] = Detected(name)
                if number > 1:
                    found.see("null", number)  # absent from the rows before
            found.see(kind_of(value), number)
        for name, found in columns.items():
            if name not in record:
                found.see("null", number)
    return [(found.name, found.python_type(text_input)) for found in columns.values()]


# -- values -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """How the records become instances of one dataclass: each column's field and type."""

    cls: type
    schema: TableSchema
    fields: dict[str, tuple[str, Any]]  # column name -> (field name, TypeInfo)
    defaults: frozenset[str]  # columns whose field has a default: left out when absent
    required: frozenset[str]  # columns that need a value: neither NULL nor a generated key

    @classmethod
    def of(cls, target: type, schema: TableSchema) -> Target:
        import dataclasses

        given = {
            f.name
            for f in dataclasses.fields(target)
            if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        }
        fields = {}
        defaults, required = set(), set()
        for c in schema.columns:
            shown = c.column_name or c.name
            fields[shown] = (c.name, c.info)
            if c.name in given:
                defaults.add(shown)
            elif not c.nullable and not (c.primary_key and c.info.autoincrement):
                required.add(shown)
        return cls(target, schema, fields, frozenset(defaults), frozenset(required))

    def check_columns(self, names: Sequence[str], number: int | None = None) -> None:
        """Refuse a column the table has not, or (CSV header) a missing required one."""
        unknown = [n for n in names if n not in self.fields]
        if unknown:
            where = "the header" if number is None else f"row {number}"
            raise InputError(
                f"{where} names {', '.join(map(repr, unknown))}, which table "
                f"{self.schema.name!r} has not (columns: {', '.join(self.fields)})",
                row=number,
                column=unknown[0],
            )

    def instance(self, number: int, record: dict[str, Any], text_input: bool) -> Any:
        self.check_columns(list(record), number)
        values: dict[str, Any] = {}
        for name, (field_name, info) in self.fields.items():
            if name in record:
                values[field_name] = self.value(number, name, info, record[name], text_input)
            elif name in self.required:
                raise InputError(
                    f"row {number}, column {name!r}: no value, and the column takes no NULL",
                    row=number,
                    column=name,
                )
            elif name not in self.defaults:
                values[field_name] = None  # NULL, or a key generated
        try:
            return self.cls(**values)
        except (TypeError, ValueError) as exc:
            raise InputError(f"row {number}: {exc}", row=number) from None

    def value(self, number: int, name: str, info: Any, raw: Any, text_input: bool) -> Any:
        python_type = info.python_type
        try:
            if text_input:
                if raw == "" and python_type is not str:
                    return None
                return info.xml_codec.from_text(raw) if python_type is not str else raw
            return _json_value(raw, python_type, info)
        except InputError as exc:
            reason = str(exc)
        except (ValueError, TypeError, ArithmeticError) as exc:
            reason = f"{raw!r} is not a valid {info.name} ({exc})"
        except RecursionError:
            reason = "the value is nested too deeply"
        raise InputError(f"row {number}, column {name!r}: {reason}", row=number, column=name)


def _json_value(raw: Any, python_type: type, info: Any) -> Any:
    import decimal

    if raw is None:
        return None
    if python_type is bool:
        if isinstance(raw, bool):
            return raw
    elif python_type is int:
        if isinstance(raw, int) and not isinstance(raw, bool):
            return raw
    elif python_type is float:
        if isinstance(raw, float):  # JsonFloat, or NaN and Infinity
            return float(raw)
        if isinstance(raw, int) and not isinstance(raw, bool):
            if abs(raw) <= 2**53:
                return float(raw)
            raise InputError(f"{raw} is no float exactly (beyond 2**53)")
    elif python_type is decimal.Decimal:
        if isinstance(raw, JsonFloat):
            return decimal.Decimal(raw.text)
        if isinstance(raw, int) and not isinstance(raw, bool):
            return decimal.Decimal(raw)
    elif python_type is str:
        if isinstance(raw, str):
            return raw
        if isinstance(raw, dict | list):
            return json.dumps(raw)
    elif isinstance(raw, str):
        return info.xml_codec.from_text(raw)
    shown = "a JSON float" if isinstance(raw, JsonFloat) else f"a JSON {_json_name(raw)}"
    raise InputError(f"{shown} ({_short(raw)}) does not fit a column of type {info.name}")


def _json_name(raw: Any) -> str:
    if isinstance(raw, bool):
        return "boolean"
    return {int: "integer", str: "string", dict: "object", list: "array"}.get(
        type(raw), type(raw).__name__
    )


def _short(raw: Any) -> str:
    text = json.dumps(raw) if not isinstance(raw, JsonFloat) else raw.text
    return text if len(text) <= 40 else text[:37] + "..."


__all__ = [
    "EXTENSIONS",
    "FORMATS",
    "MAX_RECORD",
    "InputError",
    "JsonFloat",
    "Target",
    "detect",
    "input_format",
    "records",
]
