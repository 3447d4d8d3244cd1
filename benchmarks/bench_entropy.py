"""Entropy report throughput against the ``ent`` program on the same random file.

Writes a seeded random file (100 MB by default), times ``ent`` and
``generators.bytes.entropy.report`` (best of N runs each, alternating), checks that both print
identical text, and measures the report's peak traced memory to show that it streams (it
should stay near a few chunk sizes).

Run: ``python benchmarks/bench_entropy.py [--mb 100] [--repeat 3] [--chunk BYTES]``
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import alternate, record  # noqa: E402

from generators.bytes import entropy  # noqa: E402

T = TypeVar("T")


def write_random(path: Path, size: int, seed: int = 96) -> None:
    """Seeded random bytes, written in slices so that the writer itself stays small."""
    rng = np.random.default_rng(seed)
    with open(path, "wb") as out:
        left = size
        while left:
            n = min(left, 1 << 23)
            out.write(rng.integers(0, 256, n, dtype=np.uint8).tobytes())
            left -= n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100, help="file size in MB (10**6 bytes)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per contender (best kept)")
    parser.add_argument("--chunk", type=int, default=entropy.DEFAULT_CHUNK, help="chunk bytes")
    args = parser.parse_args()
    ent = shutil.which("ent")
    if ent is None:
        sys.exit("the ent program is not installed (apt-get install ent)")
    size = args.mb * 10**6
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "random.bin"
        write_random(path, size)
        for bits in (False, True):
            flags = ["-b"] if bits else []
            command = [ent, *flags, str(path)]
            outputs: dict[str, Any] = {}
            t_ent, t_ours = alternate(
                lambda c=command, o=outputs: o.__setitem__(
                    "ent", subprocess.run(c, capture_output=True).stdout
                ),
                lambda b=bits, o=outputs: o.__setitem__(
                    "ours", entropy.report(path, args.chunk, bits=b).to_ent()
                ),
                repeat=args.repeat,
            )
            ent_out, ours = outputs["ent"], outputs["ours"]
            same = ours.encode("latin-1") == ent_out
            mode = "bit mode (-b)" if bits else "byte mode"
            print(f"{mode}: {args.mb} MB random file, best of {args.repeat}")
            print(f"  baseline ent : {size / t_ent / 1e6:8.1f} MB/s  ({t_ent:.3f} s)")
            print(f"  ours report  : {size / t_ours / 1e6:8.1f} MB/s  ({t_ours:.3f} s)")
            print(f"  ratio        : {t_ent / t_ours:8.2f}x   identical output: {same}")
            assert same, "the reports differ from ent's"
            record(
                "entropy",
                f"report, {mode}",
                f"{args.mb} MB random file",
                " ".join(["ent", *flags]),
                size / t_ent / 1e6,
                size / t_ours / 1e6,
                "MB/s",
            )
        tracemalloc.start()
        entropy.report(path, args.chunk)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(
            f"peak traced memory of one report: {peak / 2**20:.1f} MiB "
            f"for a {size / 2**20:.0f} MiB file (chunk {args.chunk / 2**20:.2f} MiB)"
        )
        print()
        print(entropy.report(path, args.chunk).to_ent(), end="")


if __name__ == "__main__":
    main()
