"""CLI arguments, fuzzed through click's CliRunner: every command line exits 0, or 2 with one
line on stderr; never a traceback."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from entityworks.catalog import (
    build_map,
    generate_into,
    open_catalog,
    store_entropy,
    store_sudokus,
)
from entityworks.cli import cli
from generators import sudoku
from tests.reliability.conftest import SEED
from tests.reliability.guards import Canary, no_network

# no deadline: a loaded machine must not fail a property (a deadline only measures an
# example after it returned, so it never caught a hang either)
SETTINGS = dict(
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
PUZZLE = "003020600900305001001806400008102900700000008006708200002609500800203009005010300"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A catalog with a few maps, puzzles and an entropy report, and some input files."""
    store = open_catalog(tmp_path / "cat.db")
    generate_into(store, "dungeon", 3, seed=1, params={"width": 40, "height": 30})
    entries = [sudoku.NamedPuzzle("line 1", PUZZLE, 1)]
    store_sudokus(store, "p.txt", entries, [sudoku.solve(PUZZLE)])
    (tmp_path / "blob.bin").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "empty.bin").write_bytes(b"")
    (tmp_path / "p.txt").write_text(PUZZLE + "\n")
    (tmp_path / "euler.txt").write_text(
        "Grid 01\n" + "\n".join(PUZZLE[i : i + 9] for i in range(0, 81, 9)) + "\n"
    )
    store_entropy(store, [str(tmp_path / "blob.bin")])
    store.close()
    for kind in ("caves", "cellular", "islands", "dungeon"):  # compiled code cached first, so
        build_map(kind, 1, {"width": 30, "height": 20})  # no case pays for compiling it
    return tmp_path


TABLES = [
    "maps",
    "maps_rooms",
    "maps_corridors",
    "maps_caves",
    "sudoku_puzzles",
    "entropy_reports",
    "entityworks_version",
    "nope",
    "",
    "maps; DROP TABLE maps",
]
COLUMNS = [
    "id",
    "kind",
    "seed",
    "width",
    "open_ratio",
    "created_at",
    "parameters",
    "grid",
    "puzzle",
    "nope",
    "-id",
    "--id",
    "",
]
OPS = ["=", "==", "!=", "<>", "<", "<=", ">", ">=", " = ", "=>", "~"]


def hostile() -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), max_size=20),
        st.sampled_from(
            [
                "'; DROP TABLE maps; --",
                "null",
                "NULL",
                "1e999",
                "nan",
                "-1",
                "9" * 30,
                "0x10",
                "[1,2]",
                '{"a":1}',
                "true",
                "2020-01-01",
                "2020-13-45",
                "AAAA",
                "é",
                "🐉",
                " ",
                "%",
                "_",
            ]
        ),
    )


def where_exprs() -> st.SearchStrategy[str]:
    return st.one_of(
        st.builds(
            lambda c, o, v: f"{c}{o}{v}", st.sampled_from(COLUMNS), st.sampled_from(OPS), hostile()
        ),
        hostile(),
    )


def files() -> st.SearchStrategy[str]:
    return st.sampled_from(
        [
            "blob.bin",
            "empty.bin",
            "p.txt",
            "euler.txt",
            "cat.db",
            "missing.txt",
            ".",
            "fuzz.txt",
            "-",
        ]
    )


def outputs() -> st.SearchStrategy[str]:
    return st.sampled_from(
        [
            "out.xml",
            "out dir/x.xml",
            "ü.xml",
            "out.parquet",
            "o.png",
            "",
            ".",
            "-",
            "missing/dir/x.xml",
            "out",
        ]
    )


def dbs() -> st.SearchStrategy[str]:
    return st.sampled_from(
        ["cat.db"] * 6
        + [
            "missing.db",
            "sqlite://",
            ":memory:",
            "",
            "nonsense://x",
            "mysql://x/y",
            "fresh.db",
            "sqlite:////nonexistent/dir/x.db",
            ".",
        ]
    )


def options(pairs: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[list[str]]:
    """A few of the given options, each with a value (or a missing value)."""

    def flatten(chosen: list[tuple[str, Any]]) -> list[str]:
        out: list[str] = []
        for name, value in chosen:
            out.append(name)
            if value is not None:
                out.append(str(value))
        return out

    items = [st.tuples(st.just(k), v) for k, v in pairs.items()]
    return st.lists(st.one_of(*items), max_size=4).map(flatten)


def numbers() -> st.SearchStrategy[Any]:
    return st.one_of(st.integers(-3, 40), st.sampled_from(["x", "1.5", "9" * 25, "", "-0"]))


def command_lines() -> st.SearchStrategy[list[str]]:
    db = st.tuples(st.just("--db"), dbs())
    query = st.builds(
        lambda t, o, d: ["query", t, *o, *d],
        st.sampled_from(TABLES),
        options(
            {
                "--where": where_exprs(),
                "-w": where_exprs(),
                "--order-by": st.sampled_from(COLUMNS),
                "--limit": numbers(),
                "--offset": numbers(),
                "--columns": st.sampled_from(["id,kind", "id,,", "nope", ",", "id, seed", ""]),
                "--format": st.sampled_from(["table", "csv", "json", "xml", ""]),
            }
        ),
        db,
    )
    generate = st.builds(
        lambda k, o, d: ["generate", k, "--workers", "1", *o, *d],
        st.sampled_from(["dungeon", "cellular", "islands", "caves", "nope", ""]),
        options(
            {
                "--count": st.integers(-1, 2),
                "--width": st.integers(-1, 60),
                "--height": st.integers(-1, 50),
                "--seed": numbers(),
                "-p": st.builds(
                    lambda k, v: f"{k}={v}",
                    st.sampled_from(
                        [
                            "width",
                            "height",
                            "close_cell_prob",
                            "max_rooms",
                            "smoothing",
                            "nope",
                            "",
                            "seed",
                        ]
                    ),
                    hostile(),
                ),
            }
        ),
        db,
    )
    render = st.builds(
        lambda i, o, d: ["render", i, *o, *d],
        numbers().map(str),
        options(
            {
                "--ascii": st.sampled_from(["-", "a.txt", ""]),
                "--png": outputs(),
                "--tiled": outputs(),
                "--block": numbers(),
            }
        ),
        db,
    )
    export = st.builds(
        lambda t, out, o, d: ["export-xml", t, out, *o, *d],
        st.sampled_from(TABLES),
        outputs(),
        options({"--where": where_exprs(), "--xsd": outputs()}),
        db,
    )
    import_ = st.builds(
        lambda f, o, d: ["import-xml", f, *o, *d],
        files(),
        options({"--xsd": files(), "--table": st.sampled_from(TABLES)}),
        db,
    )
    parquet = st.builds(
        lambda t, out, o, d: ["parquet", t, out, *o, *d],
        st.sampled_from(TABLES),
        outputs(),
        options(
            {
                "--where": where_exprs(),
                "--compression": st.sampled_from(["zstd", "none", "lz77", ""]),
            }
        ),
        db,
    )
    solve = st.builds(
        lambda f, o, d: ["sudoku", "solve", f, "-j", "1", *o, *d],
        files(),
        options({"--format": st.sampled_from(["auto", "euler", "lines", "x"])}),
        db,
    )
    euler = st.builds(lambda f: ["sudoku", "euler96", f, "-j", "1"], files())
    ent = st.builds(
        lambda fs, o, d: ["entropy", *fs, *o, *d],
        st.lists(files(), max_size=3),
        options({"--terse": st.none()}),
        db,
    )
    schema = st.builds(lambda t, d: ["schema", t, *d], st.sampled_from(TABLES), db)
    ddl = st.builds(
        lambda t, o: ["ddl", t, *o],
        st.sampled_from(TABLES),
        options(
            {
                "--dialect": st.sampled_from(["sqlite", "postgresql", "mysql", "mssql", "oracle"]),
                "--templates": st.none(),
            }
        ),
    )
    migrate = st.builds(
        lambda o, d: ["migrate", *o, *d],
        options(
            {"--revision": st.sampled_from(["head", "base", "garbage", "0001", "-1", "+1", ""])}
        ),
        db,
    )
    noise = st.lists(hostile(), max_size=4)
    return st.one_of(
        query,
        query,
        generate,
        render,
        export,
        import_,
        parquet,
        solve,
        euler,
        ent,
        schema,
        ddl,
        migrate,
        noise,
        st.builds(
            lambda a: [a, "--help"],
            st.sampled_from(["query", "generate", "sudoku", "schema", "nope"]),
        ),
    )


@pytest.mark.slow
def test_command_lines_exit_cleanly(workdir, monkeypatch, figures):
    runner = CliRunner()
    canary = Canary(workdir)
    counts: dict[str, int] = {"cases": 0, "exit_0": 0, "exit_2": 0}
    monkeypatch.chdir(workdir)
    monkeypatch.delenv("ENTITYWORKS_TRACEBACK", raising=False)
    monkeypatch.delenv("ENTITYWORKS_DB", raising=False)

    @seed(SEED)
    @settings(max_examples=400, **SETTINGS)
    @given(args=command_lines(), content=st.text(max_size=200) | st.just(PUZZLE))
    def check(args: list[str], content: str) -> None:
        counts["cases"] += 1
        (workdir / "fuzz.txt").write_text(content, encoding="utf-8", errors="surrogatepass")
        result = runner.invoke(cli, args, prog_name="entityworks")
        where = f"entityworks {' '.join(args)!r}"
        assert "Traceback" not in result.output + result.stderr, where
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"{where} raised {result.exception!r}") from result.exception
        assert result.exit_code in (0, 2), (where, result.exit_code, result.stderr)
        counts[f"exit_{result.exit_code}"] += 1
        if result.exit_code == 2:
            lines = result.stderr.splitlines()
            assert len(lines) == 1 and lines[0].startswith("error: "), (where, result.stderr)
        assert not canary.leaked(result.output + result.stderr)

    with no_network(monkeypatch), canary.armed():
        check()
    figures["fuzz_cli"] = counts
    assert os.path.exists(workdir / "cat.db")
