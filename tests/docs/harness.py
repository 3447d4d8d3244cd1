"""The one harness that runs every example in README.md and docs/.

A page's fenced blocks run in order, in one temporary folder, sharing one Python namespace:

* ```python  -- executed as a module of its own (dataclasses find it in ``sys.modules``);
  what it prints is captured. A block of ``>>>`` lines is a doctest: each result shown must
  be what its line gives.
* ```console -- each ``$ COMMAND`` line runs in bash (the installed ``entityworks`` first on
  ``PATH``); the lines after it are its output (stdout and stderr, as a terminal shows them).
* any other language -- shown only, unless an HTML comment right above the fence says:

  ``<!-- file: NAME -->``            the block is written to NAME (then it is not run);
  ``<!-- file: NAME, class C -->``   the block replaces class C in the file NAME;
  ``<!-- output -->``                the block is what the previous python block printed;
  ``<!-- data: FILE -->``            FILE is copied from the data folder before the block runs
                                     (the page is skipped without it; a failure under CI=true);
  ``<!-- replace: OLD => NEW -->``   OLD is replaced by NEW before running (NEW may be
                                     ``{postgres}`` or ``{mariadb}``: the test database URLs,
                                     the page is skipped without them);
  ``<!-- check: NAME -->``           after the block, ``tests/docs/checks.py``'s NAME(namespace)
                                     asserts more;
  ``<!-- skip: REASON -->``          the block is not run (REASON says why; kept rare).

A page whose commands should run on several databases says so once, anywhere in it:
``<!-- backends: sqlite=FILE postgres mariadb -->``. It then runs once per backend with
``ENTITYWORKS_DB`` set (a private server database, created and dropped around the run, whose
name is shown as ``levels``); the outputs shown come from the first backend, and on the others
every command must succeed and every check pass.

Outputs are never typed by hand: ``python -m tests.docs.harness --write [PAGE...]`` runs the
pages and rewrites every console output and ``<!-- output -->`` block from the real run;
``--check`` (and ``tests/docs/test_examples.py``) fails when a page differs from its run.
Figures that change from run to run (timings, rates) are written as stable placeholders
(``N.N s``), and the temporary folder's path as ``.``.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

FENCE = re.compile(
    r"(?P<directives>(?:^<!-- [a-z]+(?::[^\n]*?)? -->\n)*)"
    r"^(?P<indent>[ ]*)```(?P<language>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ ]*$",
    re.MULTILINE | re.DOTALL,
)

#: Run-to-run figures and their placeholders, applied to every produced output.
VOLATILE: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b\d+(?:\.\d+)? (s|ms)\b"), r"N.N \1"),
    (re.compile(r"\b\d[\d,]*(?:\.\d+)? (maps|rows|puzzles|MB)/s\b"), r"N.N \1/s"),
    (re.compile(r"storage \d+% of the time"), "storage N% of the time"),
    (re.compile(r"\d+ worker\(s\)"), "N worker(s)"),
]


class Skip(Exception):
    """The page cannot run here (a missing data file or database)."""


def pages() -> list[Path]:
    """Every page the harness runs: README.md, CONTRIBUTING.md and docs/**/*.md."""
    found = [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
    found += sorted((ROOT / "docs").rglob("*.md"))
    return [p for p in found if p.exists()]


@dataclass
class Block:
    start: int  # offsets of the body in the page text
    end: int
    language: str
    body: str
    directives: dict[str, str]


DIRECTIVE = re.compile(r"^<!-- ([a-z]+)(?::\s*(.*?))? -->$", re.MULTILINE)


def blocks(text: str) -> list[Block]:
    return [
        Block(
            m.start("body"),
            m.end("body"),
            m.group("language"),
            m.group("body"),
            {d: a or "" for d, a in DIRECTIVE.findall(m.group("directives"))},
        )
        for m in FENCE.finditer(text)
    ]


def data_dir() -> Path:
    env = os.environ.get("ENTITYWORKS_DATA_DIR")
    return Path(env) if env else ROOT.parent / "shared" / "data"


def _private_prefix() -> str:
    from tests.databases import database_prefix

    return database_prefix() + "docs_"  # ENTITYWORKS_TEST_DB_PREFIX, then docs_


PRIVATE = _private_prefix()


def stable(text: str, folder: Path) -> str:
    text = text.replace(str(folder.resolve()), ".").replace(str(folder), ".")
    text = re.sub(PRIVATE + r"[0-9a-f]{12}", "levels", text)
    for pattern, placeholder in VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


SERVERS = {"postgres": "ENTITYWORKS_TEST_POSTGRES_URL", "mariadb": "ENTITYWORKS_TEST_MARIADB_URL"}


def backends(text: str) -> list[str]:
    """The page's ``backends`` directive (``[""]``: none, the commands say ``--db``)."""
    found = re.search(r"^<!-- backends: (.*?) -->$", text, re.MULTILINE)
    return found.group(1).split() if found else [""]


@contextlib.contextmanager
def database(backend: str) -> Iterator[str]:
    """``ENTITYWORKS_DB`` for one backend of a ``backends`` directive."""
    if backend in ("", "sqlite") or backend.startswith("sqlite="):
        yield backend.partition("=")[2]
        return
    from tests.databases import Unreachable, private_database

    url = os.environ.get(SERVERS[backend])
    if not url:
        raise Skip(f"needs {SERVERS[backend]}")
    with contextlib.ExitStack() as stack:
        try:
            private = stack.enter_context(private_database(url, PRIVATE))
        except Unreachable as exc:
            raise Skip(str(exc)) from exc
        yield private


def database_urls() -> dict[str, str]:
    urls = {
        "postgres": os.environ.get("ENTITYWORKS_TEST_POSTGRES_URL", ""),
        "mariadb": os.environ.get("ENTITYWORKS_TEST_MARIADB_URL", ""),
    }
    return {k: v for k, v in urls.items() if v}


def substituted(body: str, argument: str) -> str:
    old, new = (part.strip() for part in argument.split("=>", 1))
    for name in re.findall(r"\{(\w+)\}", new):
        url = database_urls().get(name)
        if url is None:
            raise Skip(f"needs ENTITYWORKS_TEST_{name.upper()}_URL")
        new = new.replace("{" + name + "}", url)
    return body.replace(old, new)


@dataclass
class Run:
    """A page run: the outputs it produced, by block index."""

    outputs: dict[int, str] = field(default_factory=dict)
    namespace: dict[str, object] = field(default_factory=dict)


def _console(
    body: str, folder: Path, env: dict[str, str], replace: str | None, strict: bool
) -> str:
    """Run the ``$`` lines of a console block; the block as the run shows it."""
    produced: list[str] = []
    assert body.startswith("$ "), f"a console block that runs nothing:\n{body}"
    for line in body.splitlines():
        if not line.startswith("$ "):
            continue
        command = line[2:]
        if replace:
            command = substituted(command, replace)
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command],
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=300,
        )
        assert not strict or done.returncode == 0, (command, done.stdout)
        produced.append(line)
        produced += stable(done.stdout, folder).splitlines()
    return "".join(f"{line.rstrip()}\n" for line in produced)


def _doctest(body: str, module: types.ModuleType, page: str) -> None:
    """A ``>>>`` session: every shown result must be what the line gives."""
    import doctest

    test = doctest.DocTestParser().get_doctest(body, module.__dict__, page, page, 0)
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test, out=out.write, clear_globs=False)
    assert runner.failures == 0, out.getvalue()


def _python(body: str, module: types.ModuleType, page: str) -> str:
    if body.startswith(">>> "):
        _doctest(body, module, page)
        return ""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(body, page, "exec", dont_inherit=True), module.__dict__)  # noqa: S102
    return out.getvalue()


def _replace_class(source: str, cls: str, body: str) -> str:
    """``source`` with the class ``cls`` (its decorators included) replaced by ``body``."""
    found = re.search(rf"^((?:@.*\n)*)class {cls}\b.*:\n(?:(?:[ \t]+.*)?\n)*", source, re.MULTILINE)
    assert found, f"no class {cls}"
    rest = source[found.end() :].lstrip("\n")
    return source[: found.start()] + body + ("\n\n" + rest if rest else "")


def run_page(
    path: Path,
    folder: Path,
    checks: dict[str, Callable[[dict[str, object]], None]] | None = None,
    db: str = "",
    strict: bool = False,
) -> Run:
    """Run every example of ``path`` in ``folder``; what each output block should hold.
    ``db``: ``ENTITYWORKS_DB`` for the commands; ``strict``: every command must succeed."""
    text = path.read_text(encoding="utf-8")
    page = str(path.relative_to(ROOT))
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        # the page's own modules, then this checkout (whatever the environment installed)
        "PYTHONPATH": f"{folder}{os.pathsep}{ROOT}",
        "PYTHONUNBUFFERED": "1",
    }
    for size in ("COLUMNS", "LINES"):  # a terminal's size comes from the terminal
        env.pop(size, None)
    env.pop("ENTITYWORKS_TRACEBACK", None)
    env.pop("ENTITYWORKS_DB", None)
    if db:
        env["ENTITYWORKS_DB"] = db
    name = "docs_" + re.sub(r"\W", "_", page)
    module = types.ModuleType(name)
    module.__dict__["__name__"] = name
    run = Run(namespace=module.__dict__)
    sys.modules[name] = module
    sys.path.insert(0, str(folder))
    before = os.getcwd()
    saved_db = os.environ.pop("ENTITYWORKS_DB", None)
    if db:  # the python blocks see it too
        os.environ["ENTITYWORKS_DB"] = db
    os.chdir(folder)
    printed: str | None = None
    try:
        for index, block in enumerate(blocks(text)):
            given = block.directives
            if "skip" in given:
                continue
            if "data" in given:
                source = data_dir() / given["data"]
                if not source.exists():
                    raise Skip(f"{page} needs {source}")
                shutil.copy(source, folder / source.name)
            if "file" in given:
                target, _, cls = given["file"].partition(", class ")
                file = folder / target
                if cls:
                    file.write_text(
                        _replace_class(file.read_text(encoding="utf-8"), cls, block.body),
                        encoding="utf-8",
                    )
                else:
                    file.parent.mkdir(parents=True, exist_ok=True)
                    file.write_text(block.body, encoding="utf-8")
                continue
            if "output" in given:
                assert printed is not None, f"{page}: an output block with no python before"
                run.outputs[index] = printed
                continue
            replace = given.get("replace")
            body = substituted(block.body, replace) if replace else block.body
            if block.language == "python":
                printed = stable(_python(body, module, page), folder)
            elif block.language == "console":
                run.outputs[index] = _console(body, folder, env, replace, strict)
            if "check" in given and checks is not None:
                checks[given["check"]](module.__dict__)
    finally:
        os.chdir(before)
        os.environ.pop("ENTITYWORKS_DB", None)
        if saved_db is not None:
            os.environ["ENTITYWORKS_DB"] = saved_db
        sys.path.remove(str(folder))
        sys.modules.pop(name, None)
        for key in [
            k
            for k, m in sys.modules.items()
            if getattr(m, "__file__", None) and str(folder) in str(m.__file__)
        ]:
            del sys.modules[key]  # a page's own modules (library.py...) do not leak
    return run


def rewritten(path: Path, run: Run) -> str:
    """The page with every output block replaced by what the run produced."""
    text = path.read_text(encoding="utf-8")
    found = blocks(text)
    for index in sorted(run.outputs, reverse=True):
        block = found[index]
        text = text[: block.start] + run.outputs[index] + text[block.end :]
    return text


@contextlib.contextmanager
def temporary_folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="docs-") as name:
        yield Path(name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite outputs from a real run")
    mode.add_argument("--check", action="store_true", help="fail when a page differs")
    parser.add_argument("pages", nargs="*", type=Path)
    args = parser.parse_args(argv)
    from tests.docs.checks import CHECKS

    chosen = [p.resolve() for p in args.pages] or pages()
    failed = 0
    for path in chosen:
        with temporary_folder() as folder:
            try:
                with database(backends(path.read_text(encoding="utf-8"))[0]) as db:
                    run = run_page(path, folder, CHECKS, db)
            except Skip as skip:
                print(f"skipped {path.relative_to(ROOT)}: {skip}")
                continue
        new = rewritten(path, run)
        old = path.read_text(encoding="utf-8")
        if new == old:
            print(f"ok      {path.relative_to(ROOT)}")
        elif args.write:
            path.write_text(new, encoding="utf-8")
            print(f"written {path.relative_to(ROOT)}")
        else:
            failed += 1
            sys.stdout.writelines(
                difflib.unified_diff(old.splitlines(True), new.splitlines(True), str(path), "run")
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
