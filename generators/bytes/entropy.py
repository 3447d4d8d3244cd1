"""Byte statistics of a file or stream: Shannon entropy and the ``ent`` randomness figures.

:func:`report` streams its input in fixed-size chunks (memory stays bounded whatever the file
size) and returns an :class:`EntropyReport` whose figures equal those of John Walker's ``ent``
program to the digits ``ent`` prints: entropy, optimum compression, chi-square and its
upper-tail probability, arithmetic mean, Monte Carlo estimate of pi and serial correlation.
:meth:`EntropyReport.to_ent` renders the report as ``ent`` would (plain, ``-c``, ``-t``).

To match ``ent`` exactly, the arithmetic follows its definitions rather than textbook ones:
Monte Carlo uses consecutive 6-byte groups as two 24-bit coordinates, the serial correlation
wraps around (last symbol paired with the first), the chi-square tail uses the same classic
series and normal approximation, and floating-point sums run in the same order.

:class:`DataEntropy` is the entropy class of the 2013 posts as an object fed chunk by chunk:
the sorted distribution, each symbol's probability, the most frequent symbol, and the same
report at any point of the stream.

:func:`profile` gives the entropy of every block of a file (packed or encrypted regions stand
out near 8 bits per byte) and :func:`plot_profile` draws it as PNG or SVG.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

Source = bytes | bytearray | memoryview | str | os.PathLike[str] | BinaryIO
"""Data (bytes-like), a path, or a binary stream opened for reading."""

DEFAULT_CHUNK = 1 << 20
_MAX_CHUNK = 1 << 30  # keeps every per-chunk float sum an exact integer (< 2**53)
_LOG2_OF_10 = 3.32192809488736234787  # ent takes log2 as this constant times log10
_PI = 3.14159265358979323846
_INCIRC = float((256**3 - 1) ** 2)  # squared radius of ent's Monte Carlo circle


def _fold_table() -> np.ndarray:
    """ISO-8859-1 upper to lower case, as ``ent -f`` folds (A-Z and 0xC0-0xDE but 0xD7)."""
    table = np.arange(256, dtype=np.uint8)
    upper = [*range(ord("A"), ord("Z") + 1), *(c for c in range(0xC0, 0xDF) if c != 0xD7)]
    table[upper] += 32
    return table


_FOLD = _fold_table()
_BIT_ONES = np.array([bin(v).count("1") for v in range(256)], dtype=np.int64)
# Adjacent pairs of 1 bits inside a byte, read most significant bit first as ent does.
_BIT_PAIRS = np.array([bin(v & (v >> 1)).count("1") for v in range(256)], dtype=np.int64)


@dataclass(frozen=True)
class EntropyReport:
    """Everything ``ent`` reports about a byte (or, with ``bits``, bit) stream.

    ``samples`` is the number of symbols analysed: bytes, or 8 times that in bit mode.
    Figures that ``ent`` prints as ``nan`` or "undefined" (no data, fewer than 6 bytes for
    Monte Carlo, all symbols equal for serial correlation) are None here.
    """

    size: int
    samples: int
    bits: bool
    fold: bool
    distribution: tuple[int, ...]
    probabilities: tuple[float, ...]
    entropy: float
    unique_symbols: int
    optimum_compression: float
    chi_square: float | None
    chi_square_probability: float | None
    mean: float | None
    monte_carlo_pi: float | None
    monte_carlo_error: float | None
    serial_correlation: float | None

    def to_ent(self, *, counts: bool = False, terse: bool = False) -> str:
        """The text ``ent`` prints for this report (``counts`` = ``-c``, ``terse`` = ``-t``)."""
        return format_ent(self, counts=counts, terse=terse)


def _c_float(value: float | None, spec: str, undefined: str = "-nan") -> str:
    """printf-style formatting that shows a missing value the way glibc shows ent's NaNs."""
    return undefined if value is None else format(value, spec)


def format_ent(report: EntropyReport, *, counts: bool = False, terse: bool = False) -> str:
    """Render ``report`` exactly as the ``ent`` program's standard output.

    Non-ASCII characters of the ``Char`` column are ISO-8859-1 code points: encode the result
    as ``latin-1`` to get ``ent``'s bytes.
    """
    unit = "bit" if report.bits else "byte"
    total = report.samples
    scc = report.serial_correlation
    out: list[str] = []
    table: list[str] = []
    if counts:
        for value, count in enumerate(report.distribution):
            fraction = _c_float(count / total if total else None, "f")
            if terse:
                table.append(f"3,{value},{count},{fraction}\n")
            elif count:
                printable = not report.bits and (32 <= value <= 126 or value > 160)
                char = chr(value) if printable else " "
                table.append(f"{value:3d}   {char}   {count:10d}   {fraction}\n")
    if terse:
        out.append(f"0,File-{unit}s,Entropy,Chi-square,Mean,Monte-Carlo-Pi,Serial-Correlation\n")
        out.append(
            f"1,{total},{report.entropy:f},{_c_float(report.chi_square, 'f')},"
            f"{_c_float(report.mean, 'f')},{_c_float(report.monte_carlo_pi, 'f')},"
            f"{-100000.0 if scc is None else scc:f}\n"
        )
        if counts:
            out.append("2,Value,Occurrences,Fraction\n")
            out.extend(table)
        return "".join(out)
    if counts:
        out.append("Value Char Occurrences Fraction\n")
        out.extend(table)
        out.append(f"\nTotal:    {total:10d}   {1.0:f}\n\n")
    out.append(f"Entropy = {report.entropy:f} bits per {unit}.\n\n")
    out.append("Optimum compression would reduce the size\n")
    out.append(f"of this {total} {unit} file by {int(report.optimum_compression)} percent.\n\n")
    out.append(
        f"Chi square distribution for {total} samples is "
        f"{_c_float(report.chi_square, '1.2f')}, and randomly\n"
    )
    p = report.chi_square_probability
    if p is None:
        out.append("would exceed this value nan percent of the times.\n\n")
    elif p < 0.0001:
        out.append("would exceed this value less than 0.01 percent of the times.\n\n")
    elif p > 0.9999:
        out.append("would exceed this value more than than 99.99 percent of the times.\n\n")
    else:
        out.append(f"would exceed this value {p * 100:1.2f} percent of the times.\n\n")
    ideal = "0.5" if report.bits else "127.5"
    out.append(
        f"Arithmetic mean value of data {unit}s is {_c_float(report.mean, '1.4f')} "
        f"({ideal} = random).\n"
    )
    out.append(
        f"Monte Carlo value for Pi is {_c_float(report.monte_carlo_pi, '1.9f')} "
        f"(error {_c_float(report.monte_carlo_error, '1.2f', 'nan')} percent).\n"
    )
    if scc is None:
        out.append("Serial correlation coefficient is undefined (all values equal!).\n")
    else:
        out.append(f"Serial correlation coefficient is {scc:1.6f} (totally uncorrelated = 0.0).\n")
    return "".join(out)


# --- chi-square tail probability ------------------------------------------------------------
# ent computes it with a classic pair of routines (Hill & Pike's chi-square series, with the
# Ibbetson / ACM algorithm 209 polynomial for the normal tail); scipy's exact value can differ
# in the printed digits, so the same approximations are evaluated here, in the same order.

_Z_MAX = 6.0
_BIGX = 20.0
_LOG_SQRT_PI = 0.5723649429247000870717135
_INV_SQRT_PI = 0.5641895835477562869480795
_NEAR = (
    0.000124818987,
    -0.001075204047,
    0.005198775019,
    -0.019198292004,
    0.059054035642,
    -0.151968751364,
    0.319152932694,
    -0.531923007300,
    0.797884560593,
)
_FAR = (
    -0.000045255659,
    0.000152529290,
    -0.000019538132,
    -0.000676904986,
    0.001390604284,
    -0.000794620820,
    -0.002034254874,
    0.006549791214,
    -0.010557625006,
    0.011630447319,
    -0.009279453341,
    0.005353579108,
    -0.002141268741,
    0.000535310849,
    0.999936657524,
)


def _horner(coefficients: tuple[float, ...], x: float) -> float:
    acc = coefficients[0]
    for c in coefficients[1:]:
        acc = acc * x + c
    return acc


def normal_cdf(z: float) -> float:
    """P(Z <= z) for a standard normal, by the ACM 209 polynomial (about 1e-9 accurate)."""
    if z == 0.0:
        x = 0.0
    else:
        y = 0.5 * abs(z)
        if y >= _Z_MAX * 0.5:
            x = 1.0
        elif y < 1.0:
            x = _horner(_NEAR, y * y) * y * 2.0
        else:
            x = _horner(_FAR, y - 2.0)
    return (x + 1.0) * 0.5 if z > 0.0 else (1.0 - x) * 0.5


def _exp_floor(v: float) -> float:
    return 0.0 if v < -_BIGX else math.exp(v)


def chi_square_upper_tail(x: float, df: int) -> float:
    """P(X >= x) for chi-square with ``df`` degrees of freedom, as ``ent`` computes it."""
    if x <= 0.0 or df < 1:
        return 1.0
    a = 0.5 * x
    even = df % 2 == 0
    y = _exp_floor(-a) if df > 1 else 0.0
    s = y if even else 2.0 * normal_cdf(-math.sqrt(x))
    if df <= 2:
        return s
    half = 0.5 * (df - 1.0)
    z = 1.0 if even else 0.5
    if a > _BIGX:
        e = 0.0 if even else _LOG_SQRT_PI
        c = math.log(a)
        while z <= half:
            e = math.log(z) + e
            s += _exp_floor(c * z - a - e)
            z += 1.0
        return s
    e = 1.0 if even else _INV_SQRT_PI / math.sqrt(a)
    c = 0.0
    while z <= half:
        e = e * (a / z)
        c = c + e
        z += 1.0
    return c * y + s


# --- streaming input ------------------------------------------------------------------------


def _check_positive(name: str, value: int, upper: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if upper is not None and value > upper:
        raise ValueError(f"{name} must be at most {upper}, got {value!r}")
    return value


def iter_chunks(source: Source, chunk_size: int = DEFAULT_CHUNK) -> Iterator[np.ndarray]:
    """Yield the input as ``uint8`` arrays of at most ``chunk_size`` bytes.

    Bytes-like input is sliced without copying; paths are opened and closed here; streams are
    read with ``readinto`` into one reused buffer (so each chunk is valid until the next one).
    """
    _check_positive("chunk_size", chunk_size, _MAX_CHUNK)
    if isinstance(source, bytes | bytearray | memoryview):
        view = np.frombuffer(source, dtype=np.uint8)
        for start in range(0, len(view), chunk_size):
            yield view[start : start + chunk_size]
        return
    if isinstance(source, str | os.PathLike):
        with open(source, "rb") as stream:
            yield from _stream_chunks(stream, chunk_size)
        return
    if hasattr(source, "read"):
        if isinstance(source, io.TextIOBase):
            raise TypeError("source is a text stream; open the file in binary mode ('rb')")
        yield from _stream_chunks(source, chunk_size)
        return
    raise TypeError(f"source must be bytes, a path or a binary stream, got {type(source).__name__}")


def _stream_chunks(stream: BinaryIO, chunk_size: int) -> Iterator[np.ndarray]:
    buffer = bytearray(chunk_size)
    view = memoryview(buffer)
    readinto = getattr(stream, "readinto", None)
    while True:
        if readinto is not None:
            n = readinto(view)
            if not n:
                return
            yield np.frombuffer(buffer, dtype=np.uint8, count=n)
        else:
            data = stream.read(chunk_size)
            if not data:
                return
            if not isinstance(data, bytes | bytearray):
                raise TypeError("source stream returned text; open it in binary mode ('rb')")
            yield np.frombuffer(data, dtype=np.uint8)


# --- the report -----------------------------------------------------------------------------


def _monte_carlo_classes() -> np.ndarray:
    """Class of a Monte Carlo group by its two leading bytes (x high byte, y high byte).

    0: the whole 2**16 x 2**16 square of possible points lies outside the circle, 1: inside,
    2: the circle crosses it and the exact test is needed. Only ~1 % of groups are class 2,
    so most of the work is one table lookup per group.
    """
    hi = np.arange(256, dtype=np.float64)
    low_x, low_y = np.meshgrid(hi * 65536.0, hi * 65536.0, indexing="ij")
    high_x, high_y = low_x + 65535.0, low_y + 65535.0
    classes = np.full((256, 256), 2, dtype=np.uint8)
    classes[high_x * high_x + high_y * high_y <= _INCIRC] = 1
    classes[low_x * low_x + low_y * low_y > _INCIRC] = 0
    return classes.ravel()


_MC_CLASS = _monte_carlo_classes()
_ROW = 256  # products per float32 row sum: 256 * 255**2 < 2**24 keeps every sum exact


def _serial_products(chunk: np.ndarray) -> int:
    """Sum of ``chunk[i] * chunk[i + 1]``, exact, without a float64 copy of the chunk.

    Rows of 256 products are summed in float32 (exact below 2**24), then rows in float64.
    """
    pairs = chunk.size - 1
    rows = pairs // _ROW
    total = 0
    if rows:
        values = np.empty(rows * _ROW + 1, dtype=np.float32)
        np.copyto(values, chunk[: rows * _ROW + 1], casting="unsafe")
        left = values[:-1].reshape(rows, _ROW)
        right = values[1:].reshape(rows, _ROW)
        total = int(np.einsum("ij,ij->i", left, right).sum(dtype=np.float64))
    rest = chunk[rows * _ROW :].astype(np.int64)
    return total + int(rest[:-1] @ rest[1:])


def _byte_counts(chunk: np.ndarray) -> np.ndarray:
    """Histogram of the bytes; pairs are counted in 65,536 bins, which is about twice as
    fast as 256 bins (consecutive increments of one small table stall each other)."""
    even = chunk.size - chunk.size % 2
    pairs = np.bincount(chunk[:even].view("<u2"), minlength=65536).reshape(256, 256)
    counts = pairs.sum(axis=0) + pairs.sum(axis=1)
    if even < chunk.size:
        counts[chunk[-1]] += 1
    total: np.ndarray = counts
    return total


class _Accumulator:
    """Running sums over the stream, including what must carry across chunk borders."""

    def __init__(self, bits: bool, fold: bool) -> None:
        self.bits = bits
        self.fold = fold
        self.counts = np.zeros(256, dtype=np.int64)
        self.size = 0
        self.first = -1  # first byte value, for the wrap-around serial pair
        self.last = -1  # last byte value seen so far
        self.pairs = 0  # sum of products of consecutive samples (bits: cross-byte 1-1 pairs)
        self.carry = np.empty(0, dtype=np.uint8)  # bytes of an unfinished Monte Carlo group
        self.groups = 0
        self.inside = 0

    def add(self, chunk: np.ndarray) -> None:
        if chunk.size == 0:
            return
        if self.fold:
            chunk = _FOLD[chunk]
        self.size += chunk.size
        self.counts += _byte_counts(chunk)
        head = int(chunk[0])
        if self.first < 0:
            self.first = head
        if self.bits:
            if self.last >= 0:
                self.pairs += (self.last & 1) & (head >> 7)
            self.pairs += int(np.count_nonzero(chunk[:-1] & (chunk[1:] >> 7) & 1))
        else:
            if self.last >= 0:
                self.pairs += self.last * head
            self.pairs += _serial_products(chunk)
        self.last = int(chunk[-1])
        self._monte_carlo(chunk)

    def _monte_carlo(self, chunk: np.ndarray) -> None:
        data = np.concatenate((self.carry, chunk)) if self.carry.size else chunk
        whole = data.size - data.size % 6
        self.carry = data[whole:].copy()
        if not whole:
            return
        groups = data[:whole].reshape(-1, 6)
        key = (groups[:, 0].astype(np.uint16) << 8) | groups[:, 3]
        classes = _MC_CLASS[key]
        self.groups += groups.shape[0]
        self.inside += int(np.count_nonzero(classes == 1))
        near = groups[classes == 2].astype(np.int64)
        if near.size:
            x = (near[:, 0] << 16) | (near[:, 1] << 8) | near[:, 2]
            y = (near[:, 3] << 16) | (near[:, 4] << 8) | near[:, 5]
            self.inside += int(np.count_nonzero(x * x + y * y <= _INCIRC))

    def finish(self) -> EntropyReport:
        byte_counts = self.counts
        if self.bits:
            ones = int(byte_counts @ _BIT_ONES)
            total = 8 * self.size
            distribution: tuple[int, ...] = (total - ones, ones)
            # Sums for the serial correlation of the bit sequence: 1-1 pairs inside bytes,
            # across byte borders (accumulated while streaming) and the wrap-around pair.
            pairs = int(byte_counts @ _BIT_PAIRS) + self.pairs
            if self.size:
                pairs += (self.last & 1) & (self.first >> 7)
            linear, square = float(ones), float(ones)
        else:
            total = self.size
            distribution = tuple(int(c) for c in byte_counts)
            pairs = self.pairs + (self.last * self.first if self.size else 0)
            values = np.arange(256, dtype=np.int64)
            linear = float(int(byte_counts @ values))
            square = float(int(byte_counts @ (values * values)))
        return _finish(self, tuple(distribution), total, float(pairs), linear, square)


def _finish(
    acc: _Accumulator,
    distribution: tuple[int, ...],
    total: int,
    pairs: float,
    linear: float,
    square: float,
) -> EntropyReport:
    """Turn the sums into ent's figures, with ent's operation order for identical doubles."""
    bins = len(distribution)
    n = float(total)
    entropy = 0.0
    chi: float | None = None
    mean: float | None = None
    probabilities: tuple[float, ...]
    if total:
        probabilities = tuple(c / total for c in distribution)
        expected = total / float(bins)
        chi = 0.0
        datasum = 0.0
        for value, count in enumerate(distribution):
            diff = count - expected
            chi += (diff * diff) / expected
            datasum += float(value) * count
        for p in probabilities:
            if p > 0.0:
                entropy += p * (_LOG2_OF_10 * math.log10(1 / p))
        mean = datasum / total
    else:
        probabilities = (0.0,) * bins
    chi_p = chi_square_upper_tail(chi, bins - 1) if chi is not None else None
    top = 1.0 if acc.bits else 8.0
    compression = 100 * (top - entropy) / top
    pi: float | None = None
    pi_error: float | None = None
    if acc.groups:
        pi = 4.0 * (acc.inside / acc.groups)
        pi_error = 100.0 * (abs(_PI - pi) / _PI)
    linear_sq = linear * linear
    denominator = n * square - linear_sq
    scc = None if denominator == 0.0 else (n * pairs - linear_sq) / denominator
    return EntropyReport(
        size=acc.size,
        samples=total,
        bits=acc.bits,
        fold=acc.fold,
        distribution=distribution,
        probabilities=probabilities,
        entropy=entropy,
        unique_symbols=sum(1 for c in distribution if c),
        optimum_compression=compression,
        chi_square=chi,
        chi_square_probability=chi_p,
        mean=mean,
        monte_carlo_pi=pi,
        monte_carlo_error=pi_error,
        serial_correlation=scc,
    )


def report(
    source: Source,
    chunk_size: int = DEFAULT_CHUNK,
    bits: bool = False,
    *,
    fold: bool = False,
) -> EntropyReport:
    """Analyse ``source`` chunk by chunk; figures match ``ent`` (``bits`` = ``-b``,
    ``fold`` = ``-f``). Memory use is a few times ``chunk_size`` whatever the input size.
    """
    acc = _Accumulator(bool(bits), bool(fold))
    for chunk in iter_chunks(source, chunk_size):
        acc.add(chunk)
    return acc.finish()


# --- the posts' entropy class ---------------------------------------------------------------

Bytes = bytes | bytearray | memoryview


class DataEntropy:
    """Byte statistics fed chunk by chunk: the entropy class of the 2013 posts
    (``DataEntropyUTF8``), with ``ent``'s figures on demand.

    ``update(chunk)`` is the posts' ``ExamineChunk``: feed the data in pieces of any size,
    in order, and every figure equals the one-shot figure for the concatenated bytes
    (:meth:`report` included: Monte Carlo groups and serial pairs carry across chunks).
    Figures may be read at any point and feeding may go on afterwards.

    The posts' members and ours:

    ======================================  ===============================================
    ``DataSampleSize``                      :attr:`size`
    ``UniqueSymbols``                       :attr:`unique_symbols`
    ``Entropy``                             :attr:`entropy` (bits per byte, ``ent``'s digits)
    ``Distribution`` (sorted)               :meth:`distribution`
    ``Probability`` (sorted)                :meth:`probabilities`
    ``GetSymbolDistribution(b)``            :meth:`count`
    ``GetSymbolEntropy(b)`` (a probability) :meth:`probability`
    ``GetGreatestDistribution()``           :meth:`most_frequent`
    ``GetGreatestProbability()``            :meth:`most_frequent` (the same symbol)
    ``ExamineChunk(data)``                  :meth:`update` (bytes-like), :meth:`update_from`
                                            (a path or a binary stream, streamed)
    ======================================  ===============================================

    The sorted order is most frequent first; symbols of equal count come by ascending byte
    value. ``GetGreatestDistribution`` in the post returns ``distributionDict.Keys[0]``, the
    first key of a ``SortedList`` ordered by *byte value*: the smallest byte present, not
    the most frequent one its name promises. :meth:`most_frequent` does what the name
    means: the symbol with the highest count (the first of :meth:`distribution`).
    Text is not taken: encode it first (the post's ``ExamineChunk(string)`` turned each
    ``char`` into a byte with ``Cast<byte>()``, which fails at run time on boxed chars).
    """

    __slots__ = ("_acc", "_report")

    def __init__(self) -> None:
        self._acc = _Accumulator(False, False)
        self._report: EntropyReport | None = None

    @classmethod
    def of(cls, source: Source, chunk_size: int = DEFAULT_CHUNK) -> DataEntropy:
        """A new instance fed the whole of ``source`` (data, a path or a binary stream)."""
        counter = cls()
        counter.update_from(source, chunk_size)
        return counter

    def update(self, chunk: Bytes | np.ndarray) -> None:
        """Examine the next ``chunk`` of the data (bytes-like or a 1-D ``uint8`` array)."""
        if isinstance(chunk, np.ndarray):
            if chunk.dtype != np.uint8 or chunk.ndim != 1:
                raise TypeError(
                    f"an array chunk must be 1-D uint8, got {chunk.ndim}-D {chunk.dtype}"
                )
            values = chunk
        elif isinstance(chunk, bytes | bytearray | memoryview):
            values = np.frombuffer(chunk, dtype=np.uint8)
        elif isinstance(chunk, str):
            raise TypeError("chunk is text; encode it to bytes first (e.g. chunk.encode())")
        else:
            raise TypeError(f"chunk must be bytes-like, got {type(chunk).__name__}")
        if values.size:
            self._acc.add(values)
            self._report = None

    def update_from(self, source: Source, chunk_size: int = DEFAULT_CHUNK) -> None:
        """Examine all of ``source`` (data, a path or a binary stream), ``chunk_size`` bytes
        at a time, after what was examined before."""
        for chunk in iter_chunks(source, chunk_size):
            self.update(chunk)

    def clear(self) -> None:
        """Forget everything examined so far."""
        self._acc = _Accumulator(False, False)
        self._report = None

    def report(self) -> EntropyReport:
        """Everything ``ent`` reports about the bytes examined so far (computed once per
        state, like the post's ``isDirty`` cache)."""
        if self._report is None:
            self._report = self._acc.finish()
        return self._report

    @property
    def size(self) -> int:
        """Bytes examined so far."""
        return self._acc.size

    @property
    def counts(self) -> tuple[int, ...]:
        """Occurrences of every byte value, indexed by the value (256 entries)."""
        return tuple(int(c) for c in self._acc.counts)

    @property
    def unique_symbols(self) -> int:
        """How many distinct byte values occur."""
        return int(np.count_nonzero(self._acc.counts))

    @property
    def entropy(self) -> float:
        """Shannon entropy in bits per byte, as ``ent`` computes it (0.0 before any data)."""
        return self.report().entropy

    def count(self, symbol: int) -> int:
        """Occurrences of the byte value ``symbol`` (0 when absent)."""
        return int(self._acc.counts[_symbol(symbol)])

    def probability(self, symbol: int) -> float:
        """Share of the data that is ``symbol`` (0.0 when absent or before any data)."""
        count = self.count(symbol)
        return count / self.size if count else 0.0

    def _order(self) -> list[int]:
        counts = self._acc.counts
        present = np.flatnonzero(counts)
        # stable sort by descending count keeps ascending byte order among equal counts
        order = present[np.argsort(-counts[present], kind="stable")]
        return [int(v) for v in order]

    def distribution(self) -> dict[int, int]:
        """``{byte value: count}`` of the symbols present, most frequent first."""
        counts = self._acc.counts
        return {v: int(counts[v]) for v in self._order()}

    def probabilities(self) -> dict[int, float]:
        """``{byte value: probability}`` of the symbols present, most probable first."""
        counts, size = self._acc.counts, self.size
        return {v: int(counts[v]) / size for v in self._order()}

    def most_frequent(self) -> int:
        """The byte value that occurs most often (the smallest such value on a tie).

        Raises ``ValueError`` before any data, where there is none.
        """
        if not self.size:
            raise ValueError("no data examined yet: there is no most frequent symbol")
        # argmax returns the first (smallest) index among equal maxima
        return int(np.argmax(self._acc.counts))

    def __repr__(self) -> str:
        return (
            f"DataEntropy(size={self.size}, unique_symbols={self.unique_symbols}, "
            f"entropy={self.entropy:.6f})"
        )


def _symbol(symbol: int) -> int:
    if (
        isinstance(symbol, bool)
        or not isinstance(symbol, int | np.integer)
        or not 0 <= symbol <= 255
    ):
        raise ValueError(f"symbol must be a byte value 0..255, got {symbol!r}")
    return int(symbol)


# --- block profile --------------------------------------------------------------------------


@dataclass(frozen=True)
class EntropyProfile:
    """Shannon entropy (bits per byte) of consecutive blocks; the last block may be short."""

    block_size: int
    size: int
    entropy: np.ndarray

    @property
    def offsets(self) -> np.ndarray:
        """Byte offset where each block starts."""
        return np.arange(len(self.entropy), dtype=np.int64) * self.block_size


def _block_entropy(blocks: np.ndarray) -> np.ndarray:
    """Entropy of each row of a 2-D uint8 array, all rows at once through one bincount."""
    rows, width = blocks.shape
    keys = (np.arange(rows, dtype=np.int64)[:, None] << 8) + blocks
    counts = np.bincount(keys.ravel(), minlength=rows * 256).reshape(rows, 256)
    p = counts / float(width)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(counts > 0, -p * np.log2(p), 0.0)
    sums: np.ndarray = terms.sum(axis=1)
    return sums


def profile(source: Source, block_size: int = 4096) -> EntropyProfile:
    """Entropy of every ``block_size``-byte block, streamed: spots packed or encrypted parts."""
    _check_positive("block_size", block_size, _MAX_CHUNK)
    chunk = max(block_size, (DEFAULT_CHUNK // block_size) * block_size)
    parts: list[np.ndarray] = []
    pending = np.empty(0, dtype=np.uint8)
    size = 0
    for data in iter_chunks(source, chunk):
        size += data.size
        if pending.size:
            data = np.concatenate((pending, data))
        whole = data.size - data.size % block_size
        if whole:
            parts.append(_block_entropy(data[:whole].reshape(-1, block_size)))
        pending = data[whole:].copy()
    if pending.size:
        parts.append(_block_entropy(pending.reshape(1, -1)))
    values = np.concatenate(parts) if parts else np.empty(0, dtype=np.float64)
    return EntropyProfile(block_size, size, values)


def _columns(values: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Per pixel column min and max of the profile (many blocks share a column when long)."""
    n = len(values)
    columns = min(width, n)
    which = (np.arange(n) * columns) // n
    low = np.full(columns, np.inf)
    high = np.full(columns, -np.inf)
    np.minimum.at(low, which, values)
    np.maximum.at(high, which, values)
    return low, high


def plot_profile(
    prof: EntropyProfile,
    path: str | os.PathLike[str],
    *,
    width: int = 800,
    height: int = 200,
) -> Path:
    """Draw the profile (0 to 8 bits per byte) as PNG or SVG, chosen by the file suffix.

    Each pixel column is a bar up to the lowest entropy of its blocks (steel blue) topped by
    the range up to the highest (navy), so long files keep their spikes. A dashed red line
    marks 7.5 bits per byte, above which data is usually compressed, encrypted or random.
    """
    _check_positive("width", width, 20000)
    _check_positive("height", height, 20000)
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in (".png", ".svg"):
        raise ValueError(f"path must end in .png or .svg, got {target.name!r}")
    margin = 4
    inner_w, inner_h = width - 2 * margin, height - 2 * margin
    if inner_w < 1 or inner_h < 1:
        raise ValueError(f"width and height must exceed {2 * margin}, got {width}x{height}")
    if len(prof.entropy):
        low, high = _columns(prof.entropy, inner_w)
    else:
        low = high = np.empty(0)
    step = inner_w / max(len(low), 1)

    def y_of(bits: float) -> float:
        return margin + inner_h * (1.0 - bits / 8.0)

    threshold = y_of(7.5)
    if suffix == ".png":
        from PIL import Image, ImageDraw

        image = Image.new("RGB", (width, height), "white")
        draw = ImageDraw.Draw(image)
        draw.rectangle([margin - 1, margin - 1, width - margin, height - margin], outline="gray")
        for x in range(margin, width - margin, 8):
            draw.line([x, threshold, x + 3, threshold], fill="red")
        floor = y_of(0.0)
        for i, (lo, hi) in enumerate(zip(low, high, strict=True)):
            x0 = margin + i * step
            x1 = max(x0, margin + (i + 1) * step - 1)
            if lo > 0.0:
                draw.rectangle([x0, y_of(lo), x1, floor], fill="steelblue")
            draw.rectangle([x0, y_of(hi), x1, y_of(lo)], fill="navy")
        image.save(target, format="PNG")
        return target
    fills, bands = [], []
    for i, (lo, hi) in enumerate(zip(low, high, strict=True)):
        x0 = margin + i * step
        if lo > 0.0:
            fills.append(
                f'<rect x="{x0:.2f}" y="{y_of(lo):.2f}" width="{step:.2f}" '
                f'height="{y_of(0.0) - y_of(lo):.2f}"/>'
            )
        bands.append(
            f'<rect x="{x0:.2f}" y="{y_of(hi):.2f}" width="{step:.2f}" '
            f'height="{max(y_of(lo) - y_of(hi), 1.0):.2f}"/>'
        )
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">',
        f"<title>entropy per {prof.block_size}-byte block, {prof.size} bytes</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
        f'<rect x="{margin}" y="{margin}" width="{inner_w}" height="{inner_h}" '
        'fill="none" stroke="gray"/>',
        '<g fill="steelblue">',
        *fills,
        "</g>",
        '<g fill="navy">',
        *bands,
        "</g>",
        f'<line x1="{margin}" y1="{threshold:.2f}" x2="{width - margin}" y2="{threshold:.2f}" '
        'stroke="red" stroke-dasharray="4 4"/>',
        "</svg>",
    ]
    svg = "\n".join(parts) + "\n"
    target.write_text(svg, encoding="utf-8")
    return target
