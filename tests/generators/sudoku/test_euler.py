"""Project Euler helpers checked against brute force (seed 003's GCF and divisors)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generators.sudoku import euler


def _brute_gcf(a: int, b: int) -> int:
    return max(i for i in range(1, max(abs(a), abs(b)) + 1) if a % i == 0 and b % i == 0)


def _brute_divisors(n: int) -> list[int]:
    return [i for i in range(1, n + 1) if n % i == 0]


@given(st.integers(-500, 500), st.integers(-500, 500).filter(bool))
def test_greatest_common_factor_matches_brute_force(a: int, b: int) -> None:
    assert euler.greatest_common_factor(a, b) == _brute_gcf(a, b)


@given(st.integers(-10_000, 10_000), st.integers(-10_000, 10_000).filter(bool))
def test_reduced_fraction_is_equal_in_lowest_terms(a: int, b: int) -> None:
    n, d = euler.reduce_fraction(a, b)
    assert d > 0
    assert n * b == a * d  # the same value
    assert _brute_gcf(n, d) == 1 if n else d == 1  # nothing left to cancel
    assert euler.reduce_fraction(n, d) == (n, d)


def test_known_answers_from_the_seed() -> None:
    assert euler.greatest_common_factor(8, 12) == 4
    assert euler.reduce_fraction(8, 12) == (2, 3)
    assert euler.greatest_common_factor(3, 4) == 1  # the seed's LINQ answers 0 here
    assert len(euler.divisors(6556)) == 12
    assert euler.divisors(6556)[-1] == 6556


@given(st.integers(1, 5_000))
def test_both_divisor_methods_match_brute_force(n: int) -> None:
    expected = _brute_divisors(n)
    assert euler.divisors(n) == expected
    assert euler.divisors(n, method="halving") == expected


@given(st.integers(1, 10**12))
def test_fast_divisors_divide_and_pair_up(n: int) -> None:
    found = euler.divisors(n)
    assert found == sorted(set(found))
    assert all(n % d == 0 for d in found)
    assert [n // d for d in reversed(found)] == found  # divisors come in pairs d, n/d
    assert found[0] == 1 and found[-1] == n


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: euler.divisors(0), "n must be >= 1"),
        (lambda: euler.divisors(12, method="fast"), "method must be one of"),
        (lambda: euler.divisors(2.0), "n must be an integer"),
        (lambda: euler.reduce_fraction(1, 0), "denominator must not be 0"),
        (lambda: euler.greatest_common_factor(True, 2), "numerator must be an integer"),
    ],
)
def test_bad_arguments_are_named(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
