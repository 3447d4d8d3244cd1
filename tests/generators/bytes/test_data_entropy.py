"""The posts' entropy class (``DataEntropy``): sorted distribution, probabilities, the most
frequent symbol and chunk-by-chunk feeding, checked against ``ent`` and ``collections``."""

from __future__ import annotations

import collections
import io
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generators.bytes import entropy
from tests.conftest import require_data
from tests.generators.bytes.test_entropy import generated_files, require_ent

_TERSE_ROW = re.compile(r"^3,(\d+),(\d+),([0-9.]+)$", re.MULTILINE)


def ent_table(text: str) -> tuple[list[int], list[str]]:
    """Counts and printed fractions (``%f``) of ``ent -ct``'s byte table, by byte value."""
    rows = [(int(v), int(c), f) for v, c, f in _TERSE_ROW.findall(text)][:256]
    assert [v for v, _, _ in rows] == list(range(256))
    return [c for _, c, _ in rows], [f for _, _, f in rows]


def expected_order(counts: list[int]) -> list[int]:
    """Most frequent first, ties by ascending byte value: the documented order."""
    return sorted((v for v in range(256) if counts[v]), key=lambda v: (-counts[v], v))


def fed_in_pieces(data: bytes, seed: int) -> entropy.DataEntropy:
    rng = np.random.default_rng(seed)
    counter = entropy.DataEntropy()
    start = 0
    while start < len(data):
        size = int(rng.integers(1, 5000))
        counter.update(data[start : start + size])
        start += size
    return counter


def check_against_table(
    counter: entropy.DataEntropy, counts: list[int], fractions: list[str]
) -> None:
    assert list(counter.counts) == counts
    order = expected_order(counts)
    assert list(counter.distribution()) == order
    assert counter.distribution() == {v: counts[v] for v in order}
    assert list(counter.probabilities()) == order
    for value in range(256):
        assert f"{counter.probability(value):f}" == fractions[value]
        assert counter.count(value) == counts[value]
    assert counter.unique_symbols == len(order)
    top = max(counts)
    assert counter.most_frequent() == counts.index(top) == order[0]


def test_ent_test_vector_table_entropy_and_most_frequent() -> None:
    """ent's own expected output for its test file: the ``-ct`` table and the entropy."""
    data = require_data("ent_entitle.png").read_bytes()
    expected = require_data("ent_entest.mas").read_bytes().decode("latin-1")
    counts, fractions = ent_table(expected)
    counter = fed_in_pieces(data, 1)
    check_against_table(counter, counts, fractions)
    printed = re.search(r"Entropy = ([0-9.]+) bits per byte", expected)
    assert printed is not None and f"{counter.entropy:f}" == printed.group(1)
    assert counter.size == len(data) == sum(counts)
    assert counter.report() == entropy.report(data)


@pytest.mark.parametrize("name", sorted(generated_files()))
def test_against_the_ent_program(name: str, tmp_path: Path) -> None:
    ent = require_ent()
    data = generated_files()[name]
    path = tmp_path / f"{name}.bin"
    path.write_bytes(data)
    table = subprocess.run([ent, "-ct", str(path)], capture_output=True, check=True).stdout
    counter = fed_in_pieces(data, len(name))
    if data:
        counts, fractions = ent_table(table.decode("latin-1"))
        check_against_table(counter, counts, fractions)
    else:
        assert b"3,0,0,-nan" in table or b"3,0,0,nan" in table  # ent: no fractions
        assert counter.distribution() == {} and counter.unique_symbols == 0
        with pytest.raises(ValueError, match="no data"):
            counter.most_frequent()
    for options in ("", "-c"):
        args = [ent, options, str(path)] if options else [ent, str(path)]
        expected = subprocess.run(args, capture_output=True, check=True).stdout
        ours = counter.report().to_ent(counts=bool(options)).encode("latin-1")
        assert ours == expected, options


@settings(max_examples=150)
@given(data=st.binary(max_size=2000), cuts=st.lists(st.integers(0, 2000), max_size=12))
def test_chunked_equals_whole(data: bytes, cuts: list[int]) -> None:
    whole = entropy.DataEntropy()
    whole.update(data)
    pieces = entropy.DataEntropy()
    bounds = sorted({0, len(data), *(c for c in cuts if c <= len(data))})
    for start, stop in zip(bounds, bounds[1:], strict=False):
        pieces.update(data[start:stop])
        pieces.report()  # reading in the middle must not disturb what follows
    assert pieces.report() == whole.report() == entropy.report(data)
    assert pieces.distribution() == whole.distribution()
    assert pieces.probabilities() == whole.probabilities()
    assert pieces.counts == whole.counts
    tally = collections.Counter(data)
    assert whole.distribution() == dict(sorted(tally.items(), key=lambda kv: (-kv[1], kv[0])))
    if data:
        top = max(tally.values())
        assert whole.most_frequent() == min(v for v, c in tally.items() if c == top)
        assert whole.probability(whole.most_frequent()) == top / len(data)


def test_most_frequent_is_what_the_post_meant_not_the_smallest_byte() -> None:
    """The post's GetGreatestDistribution returned the first key of a list sorted by byte
    value (here the space); the most frequent symbol is 'z'."""
    counter = entropy.DataEntropy.of(b"zzzz a z")
    assert min(counter.distribution()) == ord(" ")
    assert counter.most_frequent() == ord("z")
    assert counter.distribution() == {ord("z"): 5, ord(" "): 2, ord("a"): 1}
    assert counter.probability(ord("z")) == 5 / 8 and counter.probability(ord("q")) == 0.0


def test_ties_keep_ascending_byte_order() -> None:
    counter = entropy.DataEntropy.of(b"cabbac")
    assert list(counter.distribution()) == [ord("a"), ord("b"), ord("c")]
    assert counter.most_frequent() == ord("a")


def test_paths_streams_and_arrays_feed_the_same(tmp_path: Path) -> None:
    data = generated_files()["text"]
    path = tmp_path / "t.bin"
    path.write_bytes(data)
    from_path = entropy.DataEntropy.of(path, chunk_size=777)
    stream = entropy.DataEntropy()
    stream.update_from(io.BytesIO(data[:1000]))
    stream.update(np.frombuffer(data[1000:], dtype=np.uint8))
    assert from_path.report() == stream.report() == entropy.report(data)
    assert from_path.size == len(data)


def test_feeding_after_reading_and_clearing() -> None:
    counter = entropy.DataEntropy()
    assert counter.entropy == 0.0 and counter.size == 0
    counter.update(b"aaaa")
    assert counter.entropy == 0.0 and counter.most_frequent() == ord("a")
    counter.update(b"bbbb")
    assert counter.entropy == 1.0 and counter.unique_symbols == 2
    assert "entropy=1.000000" in repr(counter)
    counter.clear()
    assert counter.size == 0 and counter.distribution() == {}


def test_refusals_name_the_problem() -> None:
    counter = entropy.DataEntropy()
    with pytest.raises(TypeError, match="encode"):
        counter.update("text")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="bytes-like"):
        counter.update([1, 2])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="uint8"):
        counter.update(np.zeros(3, dtype=np.int64))
    for bad in (-1, 256, True, 1.0):
        with pytest.raises(ValueError, match="symbol"):
            counter.count(bad)  # type: ignore[arg-type]
