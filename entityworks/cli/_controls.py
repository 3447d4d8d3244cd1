"""The characters a terminal acts on instead of showing them, which no output of ours prints
raw (:mod:`.output` escapes them in tables and CSV, :mod:`._jsonout` in JSON)."""

from __future__ import annotations

#: Code points a terminal acts on instead of showing them: C0 controls (ESC starts escape
#: sequences such as OSC 52, a clipboard write), DEL, C1 controls (U+009B is a one-character
#: CSI), the line and paragraph separators U+2028/U+2029, and the bidirectional formatting
#: controls (U+061C, U+200E/U+200F, U+202A-U+202E, U+2066-U+2069) that reorder a line.
TERMINAL_CONTROLS: frozenset[int] = frozenset(
    [
        *range(0x20),
        *range(0x7F, 0xA0),
        0x061C,
        0x200E,
        0x200F,
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
        0x2028,
        0x2029,
    ]
)
