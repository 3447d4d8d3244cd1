"""Start-up time of the command line: ``--version``, ``--help`` and a small ``query``, cold and
warm, with sqlite-utils (``pip install -e ".[bench]"``) as the peer doing the same jobs.

Run: ``python benchmarks/bench_cli.py [--runs 15] [--old PATH]``

- warm: the best (and the median) of ``--runs`` runs after two unmeasured ones (files and
  bytecode cached). ``PYTHONDONTWRITEBYTECODE`` is dropped from the commands' environment:
  with it, an editable install's modules would be compiled again in every run, which no
  installed copy does.
- cold: a run with an empty bytecode cache (``PYTHONPYCACHEPREFIX`` pointed at a new folder,
  so every module of every package is compiled again), as after an install. The page cache
  is left alone: dropping it would slow everything else on a shared machine.

Ours and the peer run interleaved, one after the other in each round, so both see the same
machine load; the load average is printed beside the figures. ``--old PATH`` also times the
entityworks source tree at PATH (e.g. a checkout of v0.1, ``git worktree add /tmp/v01 v0.1``)
through ``python -m entityworks`` with ``PYTHONPATH=PATH``. hyperfine, when installed, times
the warm commands as well (sequentially, so its figures are more exposed to load).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def tool(name: str) -> str | None:
    found = BIN / name
    return str(found) if found.exists() else shutil.which(name)


def run_once(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.decode()[-500:]}")
    return elapsed


def cold(command: list[str], env: dict[str, str]) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-pycache-") as cache:
        return run_once(command, {**env, "PYTHONPYCACHEPREFIX": cache})


def make_catalog(folder: Path) -> Path:
    db = folder / "catalog.db"
    entityworks = tool("entityworks")
    assert entityworks, "install the package first: pip install -e ."
    subprocess.run(
        [
            entityworks,
            "generate",
            "cellular",
            "--count",
            "20",
            "--seed",
            "1",
            "--workers",
            "1",
            "--db",
            str(db),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return db


def cases(
    db: Path, old: str | None
) -> list[tuple[str, list[str], list[str] | None, list[str] | None]]:
    """(job, ours, peer, old tree) command lines."""
    ours = [tool("entityworks") or "entityworks"]
    peer = tool("sqlite-utils")
    old_cmd = [sys.executable, "-m", "entityworks"] if old else None
    sql = "select id, kind, seed, width, height from maps order by id limit 5"
    jobs = [
        (
            "--version",
            ours + ["--version"],
            [peer, "--version"] if peer else None,
            old_cmd + ["--version"] if old_cmd else None,
        ),
        (
            "--help",
            ours + ["--help"],
            [peer, "--help"] if peer else None,
            old_cmd + ["--help"] if old_cmd else None,
        ),
        (
            "query 5 rows",
            ours
            + ["query", "maps", "--limit", "5", "-c", "id,kind,seed,width,height", "--db", str(db)],
            [peer, "query", str(db), sql, "--table"] if peer else None,
            old_cmd
            + ["query", "maps", "--limit", "5", "-c", "id,kind,seed,width,height", "--db", str(db)]
            if old_cmd
            else None,
        ),
    ]
    return jobs


def load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="warm runs per command")
    parser.add_argument(
        "--cold-runs",
        type=int,
        default=3,
        help="cold runs per command (best and worst are printed)",
    )
    parser.add_argument("--old", help="an older entityworks source tree to time as well")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    dropped = ("PYTHONPATH", "ENTITYWORKS_DB", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    old_env = {**env, "PYTHONPATH": args.old} if args.old else env
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as folder:
        db = make_catalog(Path(folder))
        jobs = cases(db, args.old)
        print(f"load average before: {load()}")
        print(f"{'job':<14} {'':<6} {'ours':>9} {'peer':>9} {'ratio':>7} {'v0.1 tree':>10}")
        for job, ours, peer, old in jobs:
            sides = [(ours, env), (peer, env), (old, old_env)]
            for mode in ("warm", "cold"):
                best = [float("inf")] * 3
                taken: list[list[float]] = [[], [], []]
                rounds = args.runs + 2 if mode == "warm" else args.cold_runs
                for round_ in range(rounds):
                    for i, (command, side_env) in enumerate(sides):
                        if command is None:
                            continue
                        took = (
                            run_once(command, side_env)
                            if mode == "warm"
                            else cold(command, side_env)
                        )
                        if mode == "cold" or round_ >= 2:
                            best[i] = min(best[i], took)
                            taken[i].append(took)
                ours_t, peer_t, old_t = best
                ratio = f"{ours_t / peer_t:6.2f}x" if peer else "      -"
                middle = statistics.median(taken[0])
                print(
                    f"{job:<14} {mode:<6} {ours_t:8.3f}s "
                    f"{(f'{peer_t:8.3f}s' if peer else '        -')} {ratio} "
                    f"{(f'{old_t:9.3f}s' if old else '         -')}"
                    f"   (ours, median {middle:.3f}s)"
                )
                figures[f"{job} {mode}"] = {
                    "ours": ours_t,
                    "ours_median": middle,
                    "peer": peer_t if peer else None,
                    "old": old_t if old else None,
                }
        print(
            f"load average after: {load()}  (peer: sqlite-utils "
            f"{'found' if tool('sqlite-utils') else 'not installed'})"
        )
        hyperfine = shutil.which("hyperfine")
        if hyperfine:
            commands = [" ".join(ours) for _, ours, _, _ in jobs]
            commands += [" ".join(peer) for _, _, peer, _ in jobs if peer and "query" not in peer]
            out = Path(folder) / "hyperfine.json"
            subprocess.run(
                [
                    hyperfine,
                    "-N",
                    "--warmup",
                    "2",
                    "--runs",
                    str(args.runs),
                    "--export-json",
                    str(out),
                    *commands,
                ],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
            )
            for result in json.loads(out.read_text())["results"]:
                print(
                    f"hyperfine: {result['mean']:.3f}s +- {result['stddev']:.3f}s "
                    f"(min {result['min']:.3f}s)  {result['command'][:70]}"
                )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
