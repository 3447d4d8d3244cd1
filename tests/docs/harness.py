"""The one harness that runs every example in README.md and docs/.

A page's fenced blocks run in order, in one temporary folder, sharing one Python namespace:

* ```python  -- executed as a module of its own (dataclasses find it in ``sys.modules``);
  what it prints is captured.
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
    r"(?:^<!-- (?P<directive>[a-z]+)(?::\s*(?P<argument>.*?))? -->\n)?"
    r"^(?P<indent>[ ]*)```(?P<language>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ ]*$",
    re.MULTILINE | re.DOTALL)

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
    directive: str | None
    argument: str | None


def blocks(text: str) -> list[Block]:
    return [Block(m.start("body"), m.end("body"), m.group("language"), m.group("body"),
                  m.group("directive"), m.group("argument")) for m in FENCE.finditer(text)]


def data_dir() -> Path:
    env = os.environ.get("ENTITYWORKS_DATA_DIR")
    return Path(env) if env else ROOT.parent / "shared" / "data"


def stable(text: str, folder: Path) -> str:
    text = text.replace(str(folder.resolve()), ".").replace(str(folder), ".")
    for pattern, placeholder in VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


def database_urls() -> dict[str, str]:
    urls = {"postgres": os.environ.get("ENTITYWORKS_TEST_POSTGRES_URL", ""),
            "mariadb": os.environ.get("ENTITYWORKS_TEST_MARIADB_URL", "")}
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


def _console(body: str, folder: Path, env: dict[str, str], argument: str | None) -> str:
    """Run the ``$`` lines of a console block; the block as the run shows it."""
    produced: list[str] = []
    for line in body.splitlines():
        if not line.startswith("$ "):
            continue
        command = line[2:]
        if argument:
            command = substituted(command, argument)
        done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=folder, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=600)
        produced.append(line)
        produced += stable(done.stdout, folder).splitlines()
    return "".join(f"{line}\n".replace(" \n", "\n") if line.strip() else "\n"
                   for line in produced)


def _python(body: str, module: types.ModuleType, page: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(body, page, "exec", dont_inherit=True), module.__dict__)  # noqa: S102
    return out.getvalue()


def _replace_class(source: str, cls: str, body: str) -> str:
    """``source`` with the class ``cls`` (with its decorators) replaced by ``body``."""
    start = source.index(f"@dataclass\nclass {cls}:")
    after = source.index("\n", source.index(f"class {cls}:", start)) + 1
    nxt = re.search(r"^(?=[^\s#])", source[after:], re.MULTILINE)
    tail = source[after + nxt.start():] if nxt else ""
    return source[:start] + body + ("\n\n" + tail if tail else "")


def run_page(path: Path, folder: Path,
             checks: dict[str, Callable[[dict[str, object]], None]] | None = None) -> Run:
    """Run every example of ``path`` in ``folder``; what each output block should hold."""
    text = path.read_text(encoding="utf-8")
    page = str(path.relative_to(ROOT))
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
           "COLUMNS": "100", "PYTHONPATH": str(folder), "PYTHONUNBUFFERED": "1"}
    env.pop("ENTITYWORKS_TRACEBACK", None)
    env.pop("ENTITYWORKS_DB", None)
    name = "docs_" + re.sub(r"\W", "_", page)
    module = types.ModuleType(name)
    module.__dict__["__name__"] = name
    run = Run(namespace=module.__dict__)
    sys.modules[name] = module
    sys.path.insert(0, str(folder))
    before = os.getcwd()
    os.chdir(folder)
    printed: str | None = None
    try:
        for index, block in enumerate(blocks(text)):
            directive, argument = block.directive, block.argument
            if directive == "skip":
                continue
            if directive == "data":
                source = data_dir() / (argument or "")
                if not source.exists():
                    raise Skip(f"{page} needs {source}")
                shutil.copy(source, folder / source.name)
                directive = None
            if directive == "file":
                assert argument
                if ", class " in argument:
                    target, cls = argument.split(", class ")
                    file = folder / target
                    file.write_text(_replace_class(file.read_text(encoding="utf-8"), cls,
                                                   block.body), encoding="utf-8")
                else:
                    (folder / argument).parent.mkdir(parents=True, exist_ok=True)
                    (folder / argument).write_text(block.body, encoding="utf-8")
                continue
            if directive == "output":
                assert printed is not None, f"{page}: an output block with no python before"
                run.outputs[index] = printed
                continue
            body = substituted(block.body, argument) if directive == "replace" else block.body
            if block.language == "python":
                printed = stable(_python(body, module, page), folder)
            elif block.language == "console":
                env["ENTITYWORKS_DB"] = os.environ.get("DOCS_ENTITYWORKS_DB", "")
                if not env["ENTITYWORKS_DB"]:
                    env.pop("ENTITYWORKS_DB")
                run.outputs[index] = _console(body, folder, env,
                                              argument if directive == "replace" else None)
            if directive == "check" and checks is not None:
                assert argument
                checks[argument](module.__dict__)
    finally:
        os.chdir(before)
        sys.path.remove(str(folder))
        sys.modules.pop(name, None)
        for key in [k for k, m in sys.modules.items()
                    if getattr(m, "__file__", None) and str(folder) in str(m.__file__)]:
            del sys.modules[key]  # a page's own modules (library.py...) do not leak
    return run


def rewritten(path: Path, run: Run) -> str:
    """The page with every output block replaced by what the run produced."""
    text = path.read_text(encoding="utf-8")
    found = blocks(text)
    for index in sorted(run.outputs, reverse=True):
        block = found[index]
        text = text[:block.start] + run.outputs[index] + text[block.end:]
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
                run = run_page(path, folder, CHECKS)
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
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), new.splitlines(True), str(path), "run"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
