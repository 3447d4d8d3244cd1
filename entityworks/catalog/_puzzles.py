"""Storing solved sudoku files: each puzzle once, and every entry of every file.

Apart from the maps because puzzles share nothing with them but the Store: their own
tables (``sudoku_puzzles``, ``sudoku_entries``), their own conflict (:class:`EntryConflict`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import EntityworksError
from ..sql.filters import col
from ..sql.store import Store
from ._models import SudokuEntry, SudokuPuzzle, utc_now

if TYPE_CHECKING:
    from generators.sudoku import PuzzleColumns, SolvedArray


@dataclass(frozen=True)
class SudokuResult:
    """What :func:`store_sudokus` or :func:`store_sudoku_arrays` did: puzzle rows written,
    puzzles not written again (already stored, or repeated in the file), unsolvable entries,
    the new puzzle rows (as :class:`SudokuPuzzle` objects from :func:`store_sudokus`; empty
    from :func:`store_sudoku_arrays`, which makes none), and the file's entries recorded now
    and found recorded before."""

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
    with store.transaction():
        ids = _stored_ids(store, list(fresh))
        for text in ids:
            fresh.pop(text, None)
        rows = list(fresh.values())
        store.insert_many(rows)
        ids.update((row.puzzle, row.id) for row in rows)  # type: ignore[misc]
        recorded = _recorded(store, source, len(entries))
        new = []
        for position, entry in enumerate(entries):
            puzzle_id = ids[entry.puzzle]
            was = recorded.get(position)
            if was is None:
                new.append(SudokuEntry(None, source, position, entry.name, entry.line, puzzle_id))
            elif was != puzzle_id:
                raise _conflict(source, position, entry.name)
        store.insert_many(new)
    return SudokuResult(
        len(rows), len(entries) - len(rows), unsolved, rows, len(new), len(entries) - len(new)
    )


def _stored_ids(store: Store, puzzles: Sequence[str]) -> dict[str, int]:
    """The keys of those of ``puzzles`` (distinct texts) stored already, by puzzle text."""
    ids: dict[str, int] = {}
    for start in range(0, len(puzzles), _LOOKUP):
        existing = store.select(
            SudokuPuzzle,
            columns=["id", "puzzle"],
            where=col("puzzle").in_(puzzles[start : start + _LOOKUP]),
        )
        ids.update((text, key) for key, text in existing)
    return ids


def _recorded(store: Store, source: str, total: int) -> dict[int, int]:
    """The entries of ``source`` among positions ``0..total-1`` recorded before: position ->
    puzzle id."""
    recorded: dict[int, int] = {}
    for start in range(0, total, _LOOKUP):
        where = [
            col("source") == source,
            col("position") >= start,
            col("position") < start + _LOOKUP,
        ]
        recorded.update(store.select(SudokuEntry, columns=["position", "puzzle_id"], where=where))
    return recorded


def _conflict(source: str, position: int, name: str) -> EntryConflict:
    return EntryConflict(
        f"{source}: entry {position} ({name}) is recorded with another "
        f"puzzle: another file of that name was stored before; store this one "
        f"under a source name of its own"
    )


def store_sudoku_arrays(
    store: Store, source: str, entries: Sequence[Any] | PuzzleColumns, solved: SolvedArray
) -> SudokuResult:
    """:func:`store_sudokus` of ``generators.sudoku.solve_array``'s results: the same rows,
    written without an object per puzzle or per entry.

    ``entries`` are the ``NamedPuzzle`` list the puzzles were read as (or the same as
    ``PuzzleColumns``, from ``generators.sudoku.read_columns``), ``solved`` the
    ``SolvedArray`` of their puzzles (row ``i`` answers entry ``i``; ``prove_unique`` as
    wanted: its counts are the stored ``solution_count``). The rows are built as plain
    values from the arrays and written through ``encode_values`` and
    ``Store.insert_encoded``, every value encoded and checked as ``insert_many`` would
    check the :class:`SudokuPuzzle` and :class:`SudokuEntry` objects; everything else is
    :func:`store_sudokus`'s: one transaction, a puzzle stored once with its first entry's
    name, every entry recorded, a file stored again adds nothing, :class:`EntryConflict`
    with nothing written. The new rows' ``created_at`` is the time of the call (to the
    second, as :func:`store_sudokus` stamps each object). :attr:`SudokuResult.records` is
    empty.
    """
    from generators import __version__ as solver_version
    from generators.sudoku import PuzzleColumns

    from ..sql.encoded import encode_values, fields

    if isinstance(entries, PuzzleColumns):
        puzzles, names, lines = entries.puzzles, entries.names, entries.lines
    else:
        puzzles = [entry.puzzle for entry in entries]
        names = [entry.name for entry in entries]
        lines = [entry.line for entry in entries]
    total = len(puzzles)
    if len(solved) != total:
        raise ValueError(f"{total} entries but {len(solved)} solutions: one solution row per entry")
    if fields(SudokuEntry, registry=store.registry) != _ENTRY_FIELDS:
        raise EntityworksError("SudokuEntry's columns changed: update _ENTRY_FIELDS")
    counts: list[int] = solved.counts.tolist()
    first: dict[str, int] = {}  # puzzle text -> its first entry, in order
    for position, text in enumerate(puzzles):
        first.setdefault(text, position)
    order = fields(SudokuPuzzle, registry=store.registry)
    now = utc_now()
    with store.transaction():
        ids = _stored_ids(store, list(first))
        new = [position for text, position in first.items() if text not in ids]
        for start in range(0, len(new), _WRITE):  # a batch of rows held at a time
            part = new[start : start + _WRITE]
            grids = solved.grids[part].tobytes().decode("ascii")
            found = [counts[i] for i in part]
            guesses = solved.guesses[part].tolist()
            nodes = solved.nodes[part].tolist()
            values: dict[str, list[Any]] = {
                "id": [None] * len(part),
                "source": [source] * len(part),
                "name": [names[i] for i in part],
                "puzzle": [puzzles[i] for i in part],
                "solution": [
                    grids[81 * k : 81 * k + 81] if n else None for k, n in enumerate(found)
                ],
                "clues": [81 - puzzles[i].count("0") for i in part],
                "solution_count": found,
                "difficulty": [g if n else None for g, n in zip(guesses, found, strict=True)],
                "nodes": [m if n else None for m, n in zip(nodes, found, strict=True)],
                "created_at": [now] * len(part),
                "solver_version": [solver_version if n else None for n in found],
            }
            rows = list(zip(*[values[name] for name in order], strict=True))
            del values, grids
            keys = store.insert_encoded(encode_values(SudokuPuzzle, rows, {}, store.registry))
            ids.update(zip([puzzles[i] for i in part], keys, strict=True))
        recorded = _recorded(store, source, total)
        fresh: list[int] = []  # positions of the entries to record
        for position, text in enumerate(puzzles):
            was = recorded.get(position)
            if was is None:
                fresh.append(position)
            elif was != ids[text]:
                raise _conflict(source, position, names[position])
        for start in range(0, len(fresh), _WRITE):
            rows = [
                (None, source, i, names[i], lines[i], ids[puzzles[i]])
                for i in fresh[start : start + _WRITE]
            ]
            store.insert_encoded(encode_values(SudokuEntry, rows, {}, store.registry))
    unsolved = [names[i] for i, n in enumerate(counts) if n == 0]
    return SudokuResult(len(new), total - len(new), unsolved, [], len(fresh), total - len(fresh))


#: Rows per ``insert_encoded`` call of :func:`store_sudoku_arrays`: what it holds at once.
_WRITE = 10_000

#: The order of the values of :func:`store_sudoku_arrays`'s ``sudoku_entries`` rows.
_ENTRY_FIELDS = ("id", "source", "position", "name", "line", "puzzle_id")


__all__ = ["EntryConflict", "SudokuResult", "store_sudoku_arrays", "store_sudokus"]
