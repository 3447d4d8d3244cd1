"""Seeds for every generator: how one is taken, drawn and recorded, and cheap scalar draws.

Every generator accepts ``seed`` as ``None``, a non-negative ``int`` or a ready
``numpy.random.Generator``. An ``int`` is recorded on the result so that a catalog can
rebuild the same map later; ``None`` draws a fresh integer seed from the operating
system *and records it*, so even an unseeded map can be reproduced. A caller-supplied
``Generator`` cannot be recorded, so its result carries ``seed=None``.
"""

from __future__ import annotations

import numpy as np

SeedLike = int | np.random.Generator | None

#: Upper bound (exclusive) for seeds we draw ourselves: fits a signed 64-bit column.
_SEED_LIMIT = 2**63


def make_rng(seed: SeedLike) -> tuple[np.random.Generator, int | None]:
    """Return ``(generator, recorded_seed)`` for ``seed``.

    Raises ``ValueError`` naming ``seed`` for anything that is not a non-negative int,
    ``None`` or a ``numpy.random.Generator`` (booleans are refused: ``True`` is almost
    certainly a mistake, not seed 1).
    """
    if isinstance(seed, np.random.Generator):
        return seed, None
    if seed is None:
        drawn = int(np.random.SeedSequence().generate_state(2, np.uint64)[0]) % _SEED_LIMIT
        return np.random.default_rng(drawn), drawn
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(
            f"seed must be None, a non-negative int or a numpy Generator, got {seed!r}"
        )
    value = int(seed)
    if value < 0:
        raise ValueError(f"seed must be non-negative, got {value}")
    return np.random.default_rng(value), value


class DrawBuffer:
    """Cheap scalar draws for the cell-by-cell builders (corridors, rooms).

    Calling ``Generator.integers`` once per decision costs microseconds; the corridor
    builders make hundreds of thousands of decisions, so they take 32-bit words from the
    generator in blocks and scale them. ``below(n)`` maps a word ``u`` to
    ``(u * n) >> 32``: the bias is below ``n / 2**32``, far under anything a map shows,
    and the stream stays a pure function of the seed.
    """

    __slots__ = ("_rng", "_block", "_words", "_pos")

    def __init__(self, rng: np.random.Generator, block: int = 4096) -> None:
        self._rng = rng
        self._block = block
        self._words: list[int] = []
        self._pos = 0

    def below(self, n: int) -> int:
        """Uniform integer in ``0 .. n - 1`` (``n >= 1``)."""
        pos = self._pos
        if pos >= len(self._words):
            self._words = self._rng.integers(0, 2**32, size=self._block, dtype=np.uint64).tolist()
            pos = 0
        self._pos = pos + 1
        return (self._words[pos] * n) >> 32

    def between(self, low: int, high: int) -> int:
        """Uniform integer in ``low .. high - 1``, like ``System.Random.Next(low, high)``."""
        return low + self.below(high - low) if high > low else low

    def percent(self) -> int:
        """Uniform integer in ``0 .. 99``."""
        return self.below(100)
