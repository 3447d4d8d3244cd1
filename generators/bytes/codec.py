"""Fixed-width bit packing: store each byte in ``ceil(log2(distinct symbols))`` bits (at least 1).

Data that uses few distinct byte values (DNA, digits, map grids, sparse text) shrinks to a
fraction of its size with no statistics beyond the symbol set. It is not a general compressor:
when packing would not save space the data is stored raw, so :func:`pack` never grows its input
by more than :data:`HEADER_SIZE` bytes.

Blob layout (integers little-endian)::

    offset  size  field
    0       4     magic b"EWBP"
    4       1     mode: 0 = raw, 1 = packed
    5       8     original length in bytes
    13      4     CRC-32 of the original data (catches corruption of the payload)
    17      4     CRC-32 of bytes 0-16 (a damaged length is caught before any allocation)
    21      ...   raw: the original bytes
                  packed: width (1 byte, 1-7), symbol count - 1 (1 byte), the symbols in
                  ascending order, then the codes, most significant bit first, zero-padded
                  to a whole byte

This is the compressor of the 2013 entropy posts (``BitCompression``), made to stand alone:
the post kept the original length (``decodeLength_Bits``), the width (``entropy_Ceiling``)
and the decompression dictionary in the object that compressed, so its output could not be
decompressed anywhere else; the header above carries the same three. The post's width, the
larger of ``ceil(entropy)`` and ``ceil(log2(symbols))``, is always the latter. It ranked
symbols by frequency; ranking them by byte value gives codes of the same width, and the
table needs no counts. ``entityworks codec compress / decompress`` runs this on files.

A code is the rank of its byte in the symbol table. One distinct symbol still takes one bit
per byte: every blob carries a payload that can hold the length it claims (raw: the bytes
themselves; packed: ``ceil(length * width / 8)`` bytes), so :func:`unpack` checks a claimed
length against the blob's own size before it allocates anything, and a few crafted bytes can
never make it build gigabytes (at most 8 output bytes per payload byte). Blobs of version 0.1
used width 0 for one symbol, with no payload; they are read only with an explicit
``max_length``. Packing and unpacking run on NumPy over bounded chunks: eight codes of ``w``
bits make exactly ``w`` bytes, so chunks of a multiple of eight symbols concatenate cleanly.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

MAGIC = b"EWBP"
RAW, PACKED = 0, 1
_FIELDS = struct.Struct("<4sBQI")
_CHECK = struct.Struct("<I")
HEADER_SIZE = _FIELDS.size + _CHECK.size  # 21: the most pack() ever adds to its input
_CHUNK = 1 << 22  # symbols per vectorised step (a multiple of 8)


class CorruptBlob(ValueError):
    """A blob that :func:`unpack` cannot trust: wrong magic, truncated, or failing checks."""


def _header(mode: int, length: int, crc: int) -> bytes:
    fields = _FIELDS.pack(MAGIC, mode, length, crc)
    return fields + _CHECK.pack(zlib.crc32(fields))


def _as_array(data: bytes | bytearray | memoryview) -> np.ndarray:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"data must be bytes-like, got {type(data).__name__}")
    return np.frombuffer(data, dtype=np.uint8)


def width_for(distinct: int) -> int:
    """Bits per code for ``distinct`` symbols: ``ceil(log2(distinct))`` (0 for one symbol)."""
    if distinct < 1:
        raise ValueError(f"distinct must be >= 1, got {distinct}")
    return (distinct - 1).bit_length()


def _symbol_set(values: np.ndarray) -> np.ndarray:
    """Distinct byte values, ascending. Marks byte pairs in a 65,536-entry table: half the
    scattered writes of a byte table, and no counting (only presence matters here)."""
    even = values.size - values.size % 2
    seen = np.zeros(65536, dtype=bool)
    seen[values[:even].view("<u2")] = True
    grid = seen.reshape(256, 256)  # [second byte, first byte]
    present = grid.any(axis=0) | grid.any(axis=1)
    if even < values.size:
        present[values[-1]] = True  # type: ignore[index]  # any(axis=0) of a 2-D grid: an array
    return np.flatnonzero(present).astype(np.uint8)


def _pair_encoder(symbols: np.ndarray, width: int) -> np.ndarray:
    """Table from two input bytes (read as one little-endian uint16) to their two codes
    joined into ``2 * width`` bits, first byte high: mapping and the first packing step in one
    lookup."""
    rank = np.zeros(256, dtype=np.uint16)
    rank[symbols] = np.arange(symbols.size, dtype=np.uint16)
    both = np.arange(65536)
    table: np.ndarray = (rank[both & 0xFF] << width) | rank[both >> 8]
    return table


def _pair_decoder(symbols: np.ndarray, width: int) -> np.ndarray:
    """Inverse table: ``2 * width``-bit code pair to two bytes as a little-endian uint16.
    Pairs naming a code past the table decode to zeros; the CRC check then rejects them."""
    codes = np.arange(1 << (2 * width))
    first, second = codes >> width, codes & ((1 << width) - 1)
    table = np.zeros(codes.size, dtype=np.uint16)
    valid = (first < symbols.size) & (second < symbols.size)
    sym = symbols.astype(np.uint16)
    table[valid] = sym[first[valid]] | (sym[second[valid]] << 8)
    return table


def _pack_chunk(values: np.ndarray, encoder: np.ndarray, width: int) -> np.ndarray:
    """Pack a multiple of 8 bytes into ``width`` bytes per 8: pairs by table lookup, then
    pairs of pairs (uint32), then groups of eight codes (uint64), written big-endian."""
    pairs = encoder[values.view("<u2")]
    quads = (pairs[0::2].astype(np.uint32) << np.uint32(2 * width)) | pairs[1::2]
    octets = (quads[0::2].astype(np.uint64) << np.uint64(4 * width)) | quads[1::2]
    as_bytes = octets.astype(">u8").view(np.uint8).reshape(-1, 8)
    packed: np.ndarray = as_bytes[:, 8 - width :].ravel()
    return packed


def _unpack_pairs(payload: np.ndarray, width: int) -> np.ndarray:
    """Inverse of :func:`_pack_chunk` up to the table lookup: ``width`` bytes per group
    become four ``2 * width``-bit code pairs, for the decoder table to turn into bytes."""
    groups = payload.reshape(-1, width)
    wide = np.zeros((groups.shape[0], 8), dtype=np.uint8)
    wide[:, 8 - width :] = groups
    octets = wide.view(">u8").ravel().astype(np.uint64)
    quads = np.empty(2 * octets.size, dtype=np.uint32)
    quads[0::2] = octets >> np.uint64(4 * width)
    quads[1::2] = octets & np.uint64((1 << (4 * width)) - 1)
    pairs = np.empty(2 * quads.size, dtype=np.uint16)
    pairs[0::2] = quads >> np.uint32(2 * width)
    pairs[1::2] = quads & np.uint32((1 << (2 * width)) - 1)
    return pairs


def code_width(distinct: int) -> int:
    """Bits per code in a packed blob: :func:`width_for`, but at least 1, so that the payload
    always grows with the length it encodes."""
    return max(1, width_for(distinct))


def packed_size(length: int, distinct: int) -> int:
    """Size of a packed (not raw) blob for ``length`` bytes over ``distinct`` symbols."""
    return HEADER_SIZE + 2 + distinct + (length * code_width(distinct) + 7) // 8


def pack(data: bytes | bytearray | memoryview) -> bytes:
    """Pack ``data``; falls back to a raw copy when packing would not make it smaller."""
    values = _as_array(data)
    length = values.size
    crc = zlib.crc32(values)  # type: ignore[arg-type]  # an ndarray is a buffer
    if length == 0:
        return _header(RAW, 0, crc)
    symbols = _symbol_set(values)
    distinct = symbols.size
    width = code_width(distinct)
    if width >= 8 or packed_size(length, distinct) >= HEADER_SIZE + length:
        return _header(RAW, length, crc) + values.tobytes()
    pieces = [
        _header(PACKED, length, crc),
        bytes((width, distinct - 1)),
        symbols.tobytes(),
    ]
    if width:
        encoder = _pair_encoder(symbols, width)
        for start in range(0, length, _CHUNK):
            chunk = values[start : start + _CHUNK]
            count = chunk.size
            tail = -count % 8
            if tail:  # the lowest symbol has code 0: padding with it adds zero bits
                chunk = np.concatenate((chunk, np.full(tail, symbols[0], dtype=np.uint8)))
            packed = _pack_chunk(chunk, encoder, width)
            # Padding codes may spill whole bytes past the last real bit: drop them.
            pieces.append(packed[: (count * width + 7) // 8].tobytes())
    return b"".join(pieces)


def unpack(blob: bytes | bytearray | memoryview, *, max_length: int | None = None) -> bytes:
    """Restore the bytes given to :func:`pack`; raises :class:`CorruptBlob` on any damage.

    A claimed length the blob cannot hold is refused before any allocation, so the output is
    never larger than 8 times the blob. ``max_length`` refuses blobs that claim a larger
    output still, and admits version 0.1's width-0 blobs (one symbol, no payload) up to it.
    """
    raw = _as_array(blob)
    if raw.size < HEADER_SIZE:
        raise CorruptBlob(f"truncated blob: {raw.size} bytes, the header alone is {HEADER_SIZE}")
    head = bytes(raw[:HEADER_SIZE])
    magic, mode, length, crc = _FIELDS.unpack_from(head)
    if magic != MAGIC:
        raise CorruptBlob(f"not a packed blob: magic {magic!r}, expected {MAGIC!r}")
    if _CHECK.unpack_from(head, _FIELDS.size)[0] != zlib.crc32(head[: _FIELDS.size]):
        raise CorruptBlob("header checksum mismatch: mode, length or CRC field damaged")
    if max_length is not None and length > max_length:
        raise CorruptBlob(f"blob claims {length} bytes, more than max_length={max_length}")
    body = raw[HEADER_SIZE:]
    if mode == RAW:
        if body.size != length:
            raise CorruptBlob(f"raw blob should carry {length} bytes, has {body.size}")
        out = body.tobytes()
    elif mode == PACKED:
        out = _unpack_packed(body, length, max_length)
    else:
        raise CorruptBlob(f"unknown mode byte {mode} (0 = raw, 1 = packed)")
    if zlib.crc32(out) != crc:
        raise CorruptBlob("CRC-32 mismatch: the blob was modified or damaged")
    return out


def _unpack_packed(body: np.ndarray, length: int, max_length: int | None) -> bytes:
    if body.size < 2:
        raise CorruptBlob("truncated blob: packed header misses width and symbol count")
    width, distinct = int(body[0]), int(body[1]) + 1
    legacy = width == 0 and distinct == 1  # version 0.1: one symbol, no payload
    if legacy and max_length is None and length:
        raise CorruptBlob(
            f"blob claims {length} bytes but has no payload to hold them (a "
            f"width-0 blob of version 0.1: pass max_length to read one)"
        )
    if not legacy and (width != code_width(distinct) or width >= 8):
        raise CorruptBlob(f"width {width} does not fit {distinct} symbols")
    if body.size < 2 + distinct:
        raise CorruptBlob(f"truncated blob: symbol table needs {distinct} bytes")
    symbols = body[2 : 2 + distinct]
    if distinct > 1 and not np.all(symbols[1:] > symbols[:-1]):
        raise CorruptBlob("symbol table is not strictly ascending")
    payload = body[2 + distinct :]
    expected = (length * width + 7) // 8
    if payload.size != expected:
        kind = "truncated" if payload.size < expected else "oversized"
        raise CorruptBlob(f"{kind} payload: {payload.size} bytes, expected {expected}")
    if width == 0:
        return symbols.tobytes() * length
    spare = expected * 8 - length * width  # zero bits padding the last byte
    if spare and int(payload[-1]) & ((1 << spare) - 1):
        raise CorruptBlob("padding bits after the last code are not zero")
    decoder = _pair_decoder(symbols, width)
    out = np.empty(length, dtype=np.uint8)
    chunk_bytes = _CHUNK // 8 * width  # payload bytes holding _CHUNK codes
    for k, start in enumerate(range(0, expected, chunk_bytes)):
        part = payload[start : start + chunk_bytes]
        tail = -part.size % width
        if tail:
            part = np.concatenate((part, np.zeros(tail, dtype=np.uint8)))
        pairs = _unpack_pairs(part, width)
        first = k * _CHUNK
        if first + 2 * pairs.size <= length:  # whole chunk: decode straight into the output
            np.take(decoder, pairs, out=out[first : first + 2 * pairs.size].view("<u2"))
        else:
            out[first:] = decoder[pairs].view(np.uint8)[: length - first]
    return out.tobytes()
