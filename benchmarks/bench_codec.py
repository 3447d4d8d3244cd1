"""Bit-packing codec speed and size on text-like data, with zlib level 6 as the baseline.

Generates seeded text-like data (Zipf-distributed words of lower-case letters with some
capitals, digits, punctuation and line breaks), then times ``pack`` / ``unpack`` and zlib's
``compress(level=6)`` / ``decompress`` on it and prints speeds, sizes and ratios.

Run: ``python benchmarks/bench_codec.py [--mb 100] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import sys
import zlib
from pathlib import Path
from typing import TypeVar

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_run  # noqa: E402

from generators.bytes import codec  # noqa: E402

T = TypeVar("T")

LOWER = np.frombuffer(b"etaoinshrdlcumwfgypbvkjxqz", dtype=np.uint8)
LETTER_WEIGHTS = np.array(
    [
        12.7,
        9.1,
        8.2,
        7.5,
        7.0,
        6.7,
        6.3,
        6.1,
        6.0,
        4.3,
        4.0,
        2.8,
        2.8,
        2.4,
        2.4,
        2.2,
        2.0,
        2.0,
        1.9,
        1.5,
        1.0,
        0.8,
        0.2,
        0.2,
        0.1,
        0.1,
    ]
)
SEPARATORS = np.frombuffer(b"       ,.\n;:!?-", dtype=np.uint8)


def vocabulary(rng: np.random.Generator, words: int = 20000, longest: int = 14) -> np.ndarray:
    """A padded table of random words (0 = padding); some capitalised, some numbers."""
    lengths = np.clip(rng.poisson(4.5, words) + 1, 1, longest)
    p = LETTER_WEIGHTS / LETTER_WEIGHTS.sum()
    table = LOWER[rng.choice(LOWER.size, size=(words, longest), p=p)]
    table[np.arange(longest)[None, :] >= lengths[:, None]] = 0
    capital = rng.random(words) < 0.1
    table[capital, 0] -= 32
    numbers = rng.random(words) < 0.03
    table[numbers] = np.where(table[numbers] > 0, 48 + table[numbers] % 10, 0)
    return table


def text_like(size: int, seed: int = 5) -> bytes:
    rng = np.random.default_rng(seed)
    table = vocabulary(rng)
    out = bytearray()
    while len(out) < size:
        picks = np.minimum(rng.zipf(1.3, 400_000), table.shape[0]) - 1
        block = np.concatenate(
            (table[picks], SEPARATORS[rng.integers(0, SEPARATORS.size, (picks.size, 1))]),
            axis=1,
        ).ravel()
        out += block[block != 0].tobytes()
    return bytes(out[:size])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100, help="data size in MB (10**6 bytes)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per operation (best kept)")
    args = parser.parse_args()
    size = args.mb * 10**6
    data = text_like(size)
    distinct = len(np.flatnonzero(np.bincount(np.frombuffer(data, np.uint8), minlength=256)))
    print(
        f"{args.mb} MB text-like data, {distinct} distinct bytes, "
        f"width {codec.width_for(distinct)} bits; best of {args.repeat}"
    )
    t_pack, blob = best_run(lambda: codec.pack(data), args.repeat)
    t_unpack, back = best_run(lambda: codec.unpack(blob), args.repeat)
    assert back == data
    t_zc, compressed = best_run(lambda: zlib.compress(data, 6), args.repeat)
    t_zd, restored = best_run(lambda: zlib.decompress(compressed), args.repeat)
    assert restored == data
    mb = size / 1e6
    print(f"{'':<18}{'zlib-6 (baseline)':>18}{'pack/unpack (ours)':>20}{'ratio':>8}")
    print(f"{'compress MB/s':<18}{mb / t_zc:>18.1f}{mb / t_pack:>20.1f}{t_zc / t_pack:>7.1f}x")
    print(
        f"{'decompress MB/s':<18}{mb / t_zd:>18.1f}{mb / t_unpack:>20.1f}{t_zd / t_unpack:>7.1f}x"
    )
    size_z, size_p = len(compressed), len(blob)
    print(f"{'size / original':<18}{size_z / size:>18.3f}{size_p / size:>20.3f}")


if __name__ == "__main__":
    main()
