"""The rows every door writes and reads: a keyed parent with a child list and most value kinds.

The values are chosen to be awkward rather than friendly: a Decimal with trailing zeros and
one that is negative, aware datetimes at offsets other than UTC, text with quotes and
non-ASCII, a NULL, a row without children and one with several.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

from entityworks import AwareDatetime


@dataclass
class Room:
    x: int
    label: str


@dataclass
class Level:
    id: int | None
    name: str
    width: int
    ratio: float
    price: Decimal
    placed: AwareDatetime
    day: date
    tag: uuid.UUID
    note: str | None
    rooms: list[Room] = field(default_factory=list)


#: The table names entityworks gives the two classes.
PARENT, CHILD = "level", "level_rooms"


def rows() -> list[Level]:
    """Four rows, keys left for the database to generate (``id=None``)."""
    east = timezone(timedelta(hours=5, minutes=30))
    west = timezone(timedelta(hours=-8))
    return [
        Level(
            None,
            "first",
            60,
            0.5,
            Decimal("2.50"),
            datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=east),
            date(2024, 1, 1),
            uuid.UUID("12345678-1234-5678-1234-567812345678"),
            None,
            [Room(1, "r1"), Room(2, "r2"), Room(3, "r3")],
        ),
        Level(
            None,
            'it\'s "quoted" é ✓',
            60,
            -1.25,
            Decimal("-0.001"),
            datetime(1999, 12, 31, 23, 59, 59, tzinfo=west),
            date(1999, 12, 31),
            uuid.UUID("00000000-0000-0000-0000-000000000001"),
            "a note",
            [],
        ),
        Level(
            None,
            "third",
            80,
            1e-7,
            Decimal("123456789.1234"),
            datetime(2030, 6, 15, 12, 0, tzinfo=UTC),
            date(2030, 6, 15),
            uuid.UUID("ffffffff-ffff-ffff-ffff-ffffffffffff"),
            "",
            [Room(-5, "")],
        ),
        Level(
            None,
            "fourth",
            7,
            3.0,
            Decimal("0"),
            datetime(2024, 2, 29, 0, 0, tzinfo=east),
            date(2024, 2, 29),
            uuid.UUID("abcdefab-cdef-abcd-efab-cdefabcdefab"),
            None,
            [Room(0, "z"), Room(9, "y")],
        ),
    ]


def keyed(objs: list[Level]) -> list[Level]:
    """The rows as the database numbers them (1, 2, ... in insertion order)."""
    return [
        Level(i, o.name, o.width, o.ratio, o.price, o.placed, o.day, o.tag, o.note, list(o.rooms))
        for i, o in enumerate(objs, start=1)
    ]
