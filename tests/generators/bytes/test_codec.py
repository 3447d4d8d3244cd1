"""Fixed-width bit packing: exact round trips, size guarantees, damage detection."""

from __future__ import annotations

import math
import struct
import time
import tracemalloc
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generators.bytes import codec
from generators.bytes.codec import HEADER_SIZE, CorruptBlob

PACKED_HEADER = HEADER_SIZE + 2  # plus width and symbol count bytes, before the table


def header(blob: bytes) -> tuple[bytes, int, int, int]:
    return struct.unpack_from("<4sBQI", blob)


@st.composite
def over_alphabet(draw: st.DrawFn, distinct: int) -> bytes:
    """Data using exactly ``distinct`` byte values, each at least once, in random order."""
    alphabet = draw(st.permutations(range(256)))[:distinct]
    extra = draw(st.lists(st.sampled_from(alphabet), max_size=600))
    data = list(alphabet) + extra
    order = draw(st.permutations(range(len(data))))
    return bytes(data[i] for i in order)


@given(st.binary(max_size=3000))
def test_round_trip_of_arbitrary_bytes(data: bytes) -> None:
    blob = codec.pack(data)
    assert codec.unpack(blob) == data
    assert len(blob) <= len(data) + HEADER_SIZE


@pytest.mark.parametrize("distinct", [1, 2, 3, 255, 256])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_round_trip_per_symbol_count(distinct: int, data: st.DataObject) -> None:
    payload = data.draw(over_alphabet(distinct))
    blob = codec.pack(payload)
    assert codec.unpack(blob) == payload
    assert len(blob) <= len(payload) + HEADER_SIZE
    assert codec.width_for(distinct) == math.ceil(math.log2(distinct))
    width = max(1, codec.width_for(distinct))  # one symbol still takes a bit per byte
    assert codec.code_width(distinct) == width
    mode = header(blob)[1]
    if mode == codec.PACKED:
        assert blob[HEADER_SIZE] == width
        assert len(blob) == PACKED_HEADER + distinct + math.ceil(len(payload) * width / 8)
        assert sorted(blob[PACKED_HEADER : PACKED_HEADER + distinct]) == sorted(set(payload))
    else:
        assert blob[HEADER_SIZE:] == payload


def test_empty_input() -> None:
    blob = codec.pack(b"")
    assert len(blob) == HEADER_SIZE and codec.unpack(blob) == b""
    assert header(blob) == (codec.MAGIC, codec.RAW, 0, 0)


def test_one_symbol_takes_one_bit_per_byte() -> None:
    blob = codec.pack(b"z" * 100_000)
    assert len(blob) == PACKED_HEADER + 1 + 12_500  # the payload holds the claimed length
    assert blob[HEADER_SIZE] == 1 and codec.unpack(blob) == b"z" * 100_000


def legacy_blob(length: int, symbol: bytes = b"q") -> bytes:
    """A version 0.1 width-0 blob: one symbol, a claimed length, no payload."""
    crc = zlib.crc32(symbol * length) if length <= 1 << 20 else 0
    return codec._header(codec.PACKED, length, crc) + bytes((0, 0)) + symbol


def test_a_claimed_length_the_blob_cannot_hold_is_refused_before_allocating() -> None:
    """24 crafted bytes claiming a terabyte (issue 10 item 13): refused at once, tiny peak."""
    crafted = [
        legacy_blob(1 << 40),  # width 0, no payload
        codec._header(codec.PACKED, 1 << 40, 0) + bytes((1, 1)) + b"ab" + b"\x00" * 8,
        codec._header(codec.PACKED, (1 << 64) - 1, 0) + bytes((7, 127)) + bytes(range(128)),
        codec._header(codec.RAW, 1 << 40, 0) + b"x" * 100,
    ]
    assert len(crafted[0]) == 24
    tracemalloc.start()
    try:
        for blob in crafted:
            started = time.perf_counter()
            with pytest.raises(CorruptBlob, match="no payload|truncated payload|carry"):
                codec.unpack(blob)
            assert time.perf_counter() - started < 5  # a guard against a hang, not a benchmark
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak


def test_version_0_1_width_0_blobs_need_an_explicit_max_length() -> None:
    old = legacy_blob(1000)
    with pytest.raises(CorruptBlob, match="max_length"):
        codec.unpack(old)
    assert codec.unpack(old, max_length=1000) == b"q" * 1000
    with pytest.raises(CorruptBlob, match="max_length"):
        codec.unpack(old, max_length=999)


@settings(max_examples=300, deadline=None)
@given(
    mode=st.sampled_from([codec.RAW, codec.PACKED, 2]),
    length=st.one_of(st.integers(0, 64), st.integers(0, (1 << 64) - 1)),
    width=st.integers(0, 8),
    count=st.integers(0, 255),
    body=st.binary(max_size=300),
)
def test_no_blob_decodes_to_more_than_8_bytes_per_blob_byte(
    mode: int, length: int, width: int, count: int, body: bytes
) -> None:
    """Any header that passes its checksum, any body: refused, or at most 8x the blob."""
    blob = codec._header(mode, length, 0) + bytes((width, count)) + body
    try:
        out = codec.unpack(blob)
    except CorruptBlob:
        return
    assert len(out) <= 8 * len(blob)


@pytest.mark.parametrize("length", [1, 2, 3, 5, 7, 9, 13, 1001])
@pytest.mark.parametrize("distinct", [2, 3, 5, 9, 17, 33, 65])
def test_lengths_that_leave_a_partial_last_byte(length: int, distinct: int) -> None:
    rng = np.random.default_rng(length * 1000 + distinct)
    symbols = rng.choice(256, size=distinct, replace=False).astype(np.uint8)
    data = symbols[rng.integers(0, distinct, length)].tobytes()
    blob = codec.pack(data)
    assert codec.unpack(blob) == data
    used = len(set(data))
    if header(blob)[1] == codec.PACKED:
        width = codec.width_for(used)
        assert len(blob) - PACKED_HEADER - used == math.ceil(length * width / 8)


def test_falls_back_to_raw_when_packing_does_not_shrink() -> None:
    everything = bytes(range(256)) * 3  # 256 symbols: 8 bits each, nothing to gain
    blob = codec.pack(everything)
    assert header(blob)[1] == codec.RAW and len(blob) == len(everything) + HEADER_SIZE
    tiny = b"ab"  # packable, but the symbol table would cost more than it saves
    assert header(codec.pack(tiny))[1] == codec.RAW
    assert codec.unpack(codec.pack(tiny)) == tiny


def test_packing_shrinks_small_alphabets() -> None:
    rng = np.random.default_rng(5)
    dna = np.frombuffer(b"ACGT", dtype=np.uint8)[rng.integers(0, 4, 100_000)].tobytes()
    blob = codec.pack(dna)
    assert len(blob) == PACKED_HEADER + 4 + 25_000
    assert codec.unpack(blob) == dna


@settings(max_examples=60, deadline=None)
@given(st.binary(min_size=0, max_size=2000), st.sampled_from([8, 16, 24, 64]))
def test_chunk_boundaries(data: bytes, chunk: int) -> None:
    """Small internal chunks: packing and unpacking must stitch chunks bit-exactly.

    ``_CHUNK`` is swapped by hand (not monkeypatch): hypothesis runs many examples per call.
    """
    old = codec._CHUNK
    codec._CHUNK = chunk
    try:
        blob = codec.pack(data)
        assert codec.unpack(blob) == data
    finally:
        codec._CHUNK = old
    assert codec.pack(data) == blob  # the chunk size never changes the format


# --- damaged input -----------------------------------------------------------------------


def sample_blobs() -> dict[str, bytes]:
    rng = np.random.default_rng(9)
    text = np.frombuffer(b"etaoin shrdlu", dtype=np.uint8)[rng.integers(0, 13, 301)].tobytes()
    return {
        "packed": codec.pack(text),
        "raw": codec.pack(rng.integers(0, 256, 300, dtype=np.uint8).tobytes()),
        "single": codec.pack(b"q" * 50),
    }


@pytest.mark.parametrize("kind", sorted(sample_blobs()))
def test_every_truncation_is_detected(kind: str) -> None:
    blob = sample_blobs()[kind]
    for size in range(len(blob)):
        with pytest.raises(CorruptBlob):
            codec.unpack(blob[:size])
    with pytest.raises(CorruptBlob, match="oversized|carry"):
        codec.unpack(blob + b"\x00")


@pytest.mark.parametrize("kind", sorted(sample_blobs()))
def test_every_single_bit_flip_is_detected(kind: str) -> None:
    blob = bytearray(sample_blobs()[kind])
    for position in range(len(blob) * 8):
        blob[position // 8] ^= 1 << (position % 8)
        with pytest.raises(CorruptBlob):
            codec.unpack(bytes(blob))
        blob[position // 8] ^= 1 << (position % 8)
    assert header(bytes(blob))[0] == codec.MAGIC


def test_corruption_messages_are_specific() -> None:
    blob = sample_blobs()["packed"]
    assert issubclass(CorruptBlob, ValueError)
    with pytest.raises(CorruptBlob, match="header alone"):
        codec.unpack(blob[:5])
    with pytest.raises(CorruptBlob, match="magic"):
        codec.unpack(b"ZZZZ" + blob[4:])
    with pytest.raises(CorruptBlob, match="header checksum"):
        codec.unpack(blob[:4] + b"\x07" + blob[5:])
    with pytest.raises(CorruptBlob, match="unknown mode byte 7"):
        codec.unpack(codec._header(7, 0, 0))
    with pytest.raises(CorruptBlob, match="truncated payload"):
        codec.unpack(blob[:-1])
    with pytest.raises(CorruptBlob, match="CRC"):
        codec.unpack(blob[:-2] + bytes([blob[-2] ^ 0x10]) + blob[-1:])
    with pytest.raises(CorruptBlob, match="max_length"):
        codec.unpack(codec.pack(b"q" * 1000), max_length=999)
    assert codec.unpack(codec.pack(b"q" * 1000), max_length=1000) == b"q" * 1000


def test_wrong_types_are_rejected() -> None:
    with pytest.raises(TypeError, match="bytes-like"):
        codec.pack("text")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="bytes-like"):
        codec.unpack([1, 2, 3])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="distinct"):
        codec.width_for(0)
