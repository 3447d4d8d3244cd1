"""Child processes of the reliability tests: ``python -m tests.reliability.child MODE ARGS``.

Modes:

- ``crash-insert DB TARGET SEED`` / ``crash-xml DB FOLDER TARGET SEED``: write batches until
  TARGET rows are committed (0: forever) and wait to be killed;
- ``concurrent URL NAME SECONDS START_AT NAMES``: one concurrent writer, prints a JSON result;
- ``rss KIND PATH [ARG]``: run one large-input job and print a JSON line with the peak
  resident set size before and after (``resource.getrusage``) and the outcome.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from typing import Any

from tests.reliability import workload


def _peak_mb() -> float:
    """Peak resident set size of this process image, in MiB.

    Linux keeps ``getrusage``'s ``ru_maxrss`` across ``exec``, so a child of a large test
    process would report its parent's peak; ``VmHWM`` belongs to this image alone. Elsewhere
    ``ru_maxrss`` is all there is.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


class RepeatingStream:
    """A non-seekable binary stream of ``size`` bytes cycling through ``block``; reads may be
    short (``short``: at most that many bytes per call)."""

    def __init__(self, block: bytes, size: int, short: int | None = None) -> None:
        self.block = block
        self.size = size
        self.pos = 0
        self.short = short

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def read(self, n: int = -1) -> bytes:
        buffer = bytearray(max(0, min(n if n >= 0 else self.size, self.size - self.pos)))
        return bytes(buffer[: self.readinto(buffer)])

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        want = min(len(view), self.size - self.pos)
        if self.short is not None:
            want = min(want, self.short)
        done = 0
        while done < want:
            offset = (self.pos + done) % len(self.block)
            n = min(want - done, len(self.block) - offset)
            view[done : done + n] = self.block[offset : offset + n]
            done += n
        self.pos += done
        return done


def _rss(kind: str, path: str, arg: str | None) -> dict[str, Any]:
    # Import everything a job touches first, so that the baseline covers the libraries.
    import entityworks.xml.table  # noqa: F401
    from entityworks import EntityworksError, Store
    from generators import sudoku
    from generators.bytes import entropy

    baseline = _peak_mb()
    started = time.perf_counter()
    outcome: dict[str, Any] = {}
    try:
        if kind == "xml-iter":
            from entityworks.xml.table import iter_xml
            from tests.reliability.workload import CrashRow

            rows = 0
            for batch in iter_xml(CrashRow, path):
                rows += len(batch)
            outcome["rows"] = rows
        elif kind == "xml-import":
            from tests.reliability.workload import CrashRow

            assert arg is not None
            with Store(arg) as store:
                outcome["rows"] = store.import_xml(CrashRow, path)
                outcome["stored"] = store.count(CrashRow)
        elif kind == "sudoku-lines":
            outcome["puzzles"] = len(sudoku.read_lines(path))
        elif kind == "sudoku-euler":
            outcome["puzzles"] = len(sudoku.read_euler(path))
        elif kind == "entropy-stream":
            import random

            size = int(path)
            block = random.Random(int(arg or 0)).randbytes(1 << 20)
            report = entropy.report(RepeatingStream(block, size))
            one = entropy.report(block)
            outcome.update(
                size=report.size,
                entropy=report.entropy,
                distribution_ok=all(
                    a == b * (size // len(block))
                    for a, b in zip(report.distribution, one.distribution, strict=True)
                ),
            )
        elif kind == "entropy-file":
            outcome["size"] = entropy.report(path).size
        else:
            raise SystemExit(f"unknown rss kind {kind!r}")
    except (EntityworksError, ValueError) as exc:
        outcome["error"] = type(exc).__name__
        outcome["message"] = str(exc)
    outcome.update(
        baseline_mb=round(baseline, 1),
        peak_mb=round(_peak_mb(), 1),
        seconds=round(time.perf_counter() - started, 2),
    )
    return outcome


def main(argv: list[str]) -> None:
    mode, *args = argv
    if mode == "crash-insert":
        workload.crash_insert(args[0], int(args[1]), int(args[2]))
    elif mode == "crash-xml":
        workload.crash_xml(args[0], args[1], int(args[2]), int(args[3]))
    elif mode == "concurrent":
        workload.concurrent_child(
            args[0], args[1], float(args[2]), float(args[3]), args[4].split(",")
        )
    elif mode == "rss":
        print(json.dumps(_rss(args[0], args[1], args[2] if len(args) > 2 else None)), flush=True)
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
