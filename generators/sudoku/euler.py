"""Small number-theory helpers for Project Euler work (seed 003's two LINQ posts).

``greatest_common_factor(numerator, denominator)`` and ``reduce_fraction`` bring a fraction
to lowest terms; ``divisors(n)`` lists every divisor of ``n`` in ascending order.

``divisors`` offers the two ways the seed shows. ``method="pairs"`` (the default) tries
candidates up to ``sqrt(n)`` and takes each hit together with its partner ``n // i``:
``O(sqrt n)``. ``method="halving"`` tests every candidate from 1 to ``n // 2`` as the seed
does and then adds ``n``: ``O(n)``, kept as the reference the fast one is checked against.

Deliberate differences from the C# snippets:

* the seed's GCF search scans ``2 .. numerator`` and answers 0 when the terms share no
  factor (so 3/4 has "no" GCF) and is wrong for a negative numerator; ours is Euclid's
  algorithm (``math.gcd``), answers 1 for coprime terms and works for any sign;
* the seed's loop version of the divisors leaves ``n`` itself out while its LINQ version
  puts it in; both our methods return the full list, ``n`` included, sorted ascending;
* zero, negative and non-integer arguments are refused with a ``ValueError`` naming the
  argument (the C# loops silently return empty lists or divide by zero).
"""

from __future__ import annotations

import math

from generators._checks import check_choice, check_int

METHODS = ("pairs", "halving")


def greatest_common_factor(numerator: int, denominator: int) -> int:
    """The largest integer dividing both terms (always >= 1; the denominator must not be 0)."""
    numerator = check_int("numerator", numerator)
    denominator = check_int("denominator", denominator)
    if denominator == 0:
        raise ValueError("denominator must not be 0")
    return math.gcd(numerator, denominator)


def reduce_fraction(numerator: int, denominator: int) -> tuple[int, int]:
    """``numerator / denominator`` in lowest terms, with the sign carried by the numerator.

    >>> reduce_fraction(8, 12)
    (2, 3)
    >>> reduce_fraction(3, -6)
    (-1, 2)
    """
    factor = greatest_common_factor(numerator, denominator)
    if denominator < 0:
        factor = -factor
    return numerator // factor, denominator // factor


def divisors(n: int, method: str = "pairs") -> list[int]:
    """Every positive divisor of ``n`` (``n >= 1``), ascending, ``1`` and ``n`` included.

    >>> divisors(28)
    [1, 2, 4, 7, 14, 28]
    """
    n = check_int("n", n, 1)
    method = check_choice("method", method, METHODS)
    if method == "halving":
        # no divisor but n itself lies above n // 2 (for n = 1 the scan finds nothing)
        return [i for i in range(1, n // 2 + 1) if n % i == 0] + [n]
    small: list[int] = []
    large: list[int] = []
    for i in range(1, math.isqrt(n) + 1):
        if n % i == 0:
            small.append(i)
            partner = n // i
            if partner != i:
                large.append(partner)
    return small + large[::-1]


__all__ = ["METHODS", "divisors", "greatest_common_factor", "reduce_fraction"]
