"""The one check that a prime reduces given data faithfully (core.primes.reduces, faithful_primes)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from lightning_cas.core.primes import faithful_primes, is_prime, previous_prime, reduces
from lightning_cas.errors import InputError

P = 32003


@pytest.mark.parametrize(
    "values, ok",
    [
        ([1, -2, Fraction(3, 7), 0], True),  # zero is zero mod every prime: no other data
        ([2 * P], False),  # a multiple of p becomes 0
        ([Fraction(1, P)], False),  # no residue
        ([Fraction(P, 2)], False),
        ([0.5, -1.25], True),  # a float is the rational it stores
    ],
)
def test_reduces_sees_numerators_and_denominators(values, ok):
    assert reduces(values, P) is ok


def test_faithful_primes_skip_the_primes_the_data_spoils():
    below = previous_prime(P)
    assert faithful_primes([1, 2, 3], P) == [P]
    assert faithful_primes([P * below, 5], P) == [previous_prime(below)]
    assert faithful_primes([Fraction(1, P)], P, count=2) == [below, previous_prime(below)]
    got = faithful_primes([7], 32004, count=3)  # a composite start: the primes below it
    assert all(is_prime(q) and q < 32004 for q in got) and len(set(got)) == 3


def test_faithful_primes_run_out_in_one_line():
    every = 1
    for q in range(3, 60):
        if is_prime(q):
            every *= q
    with pytest.raises(InputError) as info:
        faithful_primes([every], 59, what="the inputs")
    assert "the inputs" in str(info.value) and "\n" not in str(info.value)
