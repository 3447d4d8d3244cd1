"""Storing solved sudoku files: each puzzle once, and every entry of every file.

Apart from the maps because puzzles share nothing with them but the Store: their own
tables (``sudoku_puzzles``, ``sudoku_entries``), their own conflict (:class:`EntryConflict`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import EntityworksError
from ..sql.filters import col
from ..sql.store import Store
from ._models import SudokuEntry, SudokuPuzzle


@dataclass(frozen=True)
class SudokuResult:
    """What :func:`store_sudokus` did: puzzle rows written, puzzles not written again
    (already stored, or repeated in the file), unsolvable entries, the new puzzle rows, and
    the file's entries recorded now and found recorded before."""

    stored: int
    duplicates: int
    unsolved: list[str]
    records: list[SudokuPuzzle]
    entries: int = 0
    entries_known: int = 0


class EntryConflict(EntityworksError):
    """A file's entry is recorded, at the same source and position, with another puzzle."""


#: Values per ``IN (...)`` lookup of :func:`store_sudokus`.
_LOOKUP = 500


def store_sudokus(
    store: Store, source: str, entries: Sequence[Any], solutions: Sequence[Any]
) -> SudokuResult:
    """Store solved puzzles (``generators.sudoku`` ``NamedPuzzle`` + ``Solution`` lists)
    and every entry of the file they came from, all in one transaction.

    A puzzle is one ``sudoku_puzzles`` row however often it occurs (the text is unique);
    each entry of ``entries`` is a ``sudoku_entries`` row (``source``, its position, name
    and line) naming that puzzle. Entries already recorded for ``source`` are kept as they
    are, so storing a file again adds nothing. An entry recorded for ``source`` at the same
    position with another puzzle (another file of the same name) raises
    :class:`EntryConflict` and nothing is written. Puzzles without a solution are stored
    with ``solution=None``. Each solved puzzle records the solver's version
    (``generators.__version__``) beside its guesses and nodes.
    """
    from generators import __version__ as solver_version

    fresh: dict[str, SudokuPuzzle] = {}
    unsolved = []
    for entry, solution in zip(entries, solutions, strict=True):
        puzzle = entry.puzzle
        if solution is None:
            unsolved.append(entry.name)
        if puzzle in fresh:
            continue
        count = 0 if solution is None else (1 if solution.unique in (True, None) else 2)
        fresh[puzzle] = SudokuPuzzle(
            None,
            source,
            entry.name,
            puzzle,
            None if solution is None else solution.grid,
            81 - puzzle.count("0"),
            count,
            None if solution is None else solution.guesses,
            None if solution is None else solution.nodes,
            solver_version=None if solution is None else solver_version,
        )
    known = list(fresh)
    ids: dict[str, int] = {}
    with store.transaction():
        for start in range(0, len(known), _LOOKUP):
            existing = store.select(
                SudokuPuzzle,
                columns=["id", "puzzle"],
                where=col("puzzle").in_(known[start : start + _LOOKUP]),
            )
            for key, text in existing:
                ids[text] = key
                fresh.pop(text, None)
        rows = list(fresh.values())
        store.insert_many(rows)
        ids.update((row.puzzle, row.id) for row in rows)  # type: ignore[misc]
        recorded: dict[int, int] = {}  # position -> puzzle id, as stored before
        for start in range(0, len(entries), _LOOKUP):
            where = [
                col("source") == source,
                col("position") >= start,
                col("position") < start + _LOOKUP,
            ]
            recorded.update(
                store.select(SudokuEntry, columns=["position", "puzzle_id"], where=where)
            )
        new = []
        for position, entry in enumerate(entries):
            puzzle_id = ids[entry.puzzle]
            was = recorded.get(position)
            if was is None:
                new.append(SudokuEntry(None, source, position, entry.name, entry.line, puzzle_id))
            elif was != puzzle_id:
                raise EntryConflict(
                    f"{source}: entry {position} ({entry.name}) is recorded with another "
                    f"puzzle: another file of that name was stored before; store this one "
                    f"under a source name of its own"
                )
        store.insert_many(new)
    return SudokuResult(
        len(rows), len(entries) - len(rows), unsolved, rows, len(new), len(entries) - len(new)
    )


__all__ = ["EntryConflict", "SudokuResult", "store_sudokus"]
