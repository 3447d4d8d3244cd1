"""The error types of entityworks.

Every error the library raises on purpose derives from :class:`EntityworksError`, and most
also derive from the builtin a caller would naturally catch (``TypeError``, ``ValueError``,
``KeyError``). Messages name what was wrong: the class, the field or column, the row, the value.
"""

from __future__ import annotations

from typing import Any


class EntityworksError(Exception):
    """Base class of every error entityworks raises deliberately."""


class SchemaError(EntityworksError, TypeError):
    """A dataclass cannot be mapped to a table (bad annotation, key, name...)."""

    def __init__(self, message: str, *, cls: Any = None, field: str | None = None) -> None:
        super().__init__(message)
        self.cls = cls
        self.field = field


class UnsupportedTypeError(SchemaError):
    """A field's annotation has no entry in the type registry."""

    def __init__(
        self, message: str, *, cls: Any = None, field: str | None = None, type_: Any = None
    ) -> None:
        super().__init__(message, cls=cls, field=field)
        self.type_ = type_


class InvalidNameError(SchemaError, ValueError):
    """A table or column name that a database cannot hold."""


class UnknownColumnError(EntityworksError, KeyError):
    """A column name given by the caller is not part of the table's schema."""

    def __init__(self, table: str, column: str, known: list[str]) -> None:
        self.table = table
        self.column = column
        super().__init__(
            f"table {table!r} has no column {column!r}; columns are: {', '.join(known)}"
        )

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class UnknownTableError(EntityworksError, KeyError):
    """A table that does not exist in the database."""

    def __str__(self) -> str:
        return str(self.args[0])


class ValueEncodingError(EntityworksError, ValueError):
    """A value cannot be encoded or decoded for its column."""

    def __init__(
        self, message: str, *, column: str | None = None, row: int | None = None, value: Any = None
    ) -> None:
        super().__init__(message)
        self.column = column
        self.row = row
        self.value = value


class WriteError(EntityworksError):
    """A write failed; nothing of it was kept. ``row`` and ``column`` locate the cause."""

    def __init__(
        self,
        message: str,
        *,
        table: str | None = None,
        row: int | None = None,
        column: str | None = None,
    ) -> None:
        super().__init__(message)
        self.table = table
        self.row = row
        self.column = column


class ConfigurationError(EntityworksError, ValueError):
    """A Store cannot work as asked: a bad engine option, an engine it cannot set up."""


class FilterError(EntityworksError, ValueError):
    """A malformed ``where`` / ``order_by`` argument."""


class XMLImportError(EntityworksError, ValueError):
    """An XML or XSD document was refused (unsafe, invalid or undecodable)."""

    def __init__(self, message: str, *, row: int | None = None, column: str | None = None) -> None:
        super().__init__(message)
        self.row = row
        self.column = column


class OutputPathError(EntityworksError, ValueError):
    """An output path that is not a regular file (a device, FIFO, directory, link...)."""

    def __init__(self, message: str, *, path: Any = None) -> None:
        super().__init__(message)
        self.path = path


class InputTooLarge(EntityworksError, ValueError):
    """An input went past the size limit it was read with (``--max-size`` / ``max_bytes``)."""


__all__ = [
    "ConfigurationError",
    "EntityworksError",
    "FilterError",
    "InputTooLarge",
    "InvalidNameError",
    "OutputPathError",
    "SchemaError",
    "UnknownColumnError",
    "UnknownTableError",
    "UnsupportedTypeError",
    "ValueEncodingError",
    "WriteError",
    "XMLImportError",
]


class NotFoundError(EntityworksError, KeyError):
    """No row has the given primary key."""

    def __str__(self) -> str:
        return str(self.args[0])


__all__.append("NotFoundError")


class NoSuchTableError(UnknownTableError):
    """A class's table (or one of its child tables) was never created in the database: a
    read names the class and the table instead of failing with the driver's error."""

    def __init__(self, message: str, *, cls: Any = None, table: str | None = None) -> None:
        super().__init__(message)
        self.cls = cls
        self.table = table


__all__.append("NoSuchTableError")


class StoredValueError(ValueEncodingError):
    """A stored row that no value of its field matches for every reader: a companion column
    another tool changed disagrees with the value beside it (a SQLite Decimal's text and its
    key), or holds what entityworks never writes (a scale of 99, an offset beyond ±14:00).
    The read is refused rather than give a value other tools do not see; ``table``, ``key``
    (the row's primary key, as a text such as ``id=3``) and ``column`` (the field's column)
    locate it."""

    def __init__(
        self, message: str, *, table: str, key: str, column: str, value: Any = None
    ) -> None:
        super().__init__(message, column=column, value=value)
        self.table = table
        self.key = key


__all__.append("StoredValueError")


class GateRefused(Exception):
    """Internal to the bulk write paths (not an error a caller sees): a value of a gated
    column is not exactly of its column's type, so the bulk path stops before sending it
    and the checked path, which names the row, takes the batch."""

    def __init__(self, field: str, chunk_start: int) -> None:
        super().__init__(
            f"column {field!r}: a value of another type in the rows from {chunk_start}"
        )
        self.field = field
