"""Primes: a deterministic primality test (no sympy at start-up), the one check of a modulus, and the one
check that a prime reduces given data faithfully.

Every method that works mod p takes its prime through ``check_prime``; each adds its own range
(the float64 rank routine needs p < 2^26, Macaulay2 and python-flint p < 2^31). Every method that
reduces the user's rationals (weights, inputs, targets, a readout, a point) mod p chooses its primes
after the data is known, through ``faithful_primes``: a prime dividing a denominator leaves an entry
without a residue, one dividing a nonzero numerator turns the data into other data (a multiple of p
becomes 0), and either way the answer mod p is the answer for something else.
"""

from __future__ import annotations

from fractions import Fraction

from lightning_cas.errors import InputError

# The largest prime below 2^24: the modp rank routine multiplies 127 residues per delayed reduction
# (measured in `make bench`: 2^23 and 2^24 cost the same, 2^25 half again, 2^26 three times as much)
# and the failure bound halves with every bit.
DEFAULT_PRIME = 16_777_213
EXTENSION_PRIME = 16_777_199  # the largest prime below 2^24 that is 3 mod 4: GF(p^2) = GF(p)[i]
PRIME_LIMIT = 2**31  # the int64 arithmetic of the GF(p) forward pass holds products of residues below this

_WITNESSES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)


def is_prime(n: int) -> bool:
    """Deterministic Miller-Rabin for n < 3.3e24."""
    if n < 2:
        return False
    for q in _WITNESSES:
        if n % q == 0:
            return n == q
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in _WITNESSES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def next_prime(n: int) -> int:
    """The smallest prime above n."""
    n = max(int(n), 2) + 1
    while not is_prime(n):
        n += 1
    return n


def previous_prime(n: int) -> int:
    """The largest prime below n (n > 3)."""
    n -= 1
    while not is_prime(n):
        n -= 1
    return n


def second_primes(p: int, count: int) -> list[int]:
    """p and the primes just below it (above it when p is 3 or 5), ``count`` in all."""
    primes = [p]
    while len(primes) < count:
        q = previous_prime(min(primes))
        if q < 3:
            q = max(primes) + 2
            while not is_prime(q):
                q += 2
        primes.append(q)
    return primes


def check_prime(p, name: str = "prime", *, below: int = PRIME_LIMIT, why: str = "") -> int:
    """The one prime check: an integer (numpy ints too), 3 <= p < 2^31 (python-flint and Macaulay2 abort on a
    composite modulus, int64 holds products of residues below 2^31) and below ``below`` when a method needs
    a smaller one (``why``, with ``{p}`` for the prime, says which and what to use instead)."""
    from lightning_cas.core.checks import integer_value

    value = integer_value(p)
    if value is None:
        raise InputError(f"the {name} must be an integer, got {p!r}.")
    if value < 3 or value >= PRIME_LIMIT:
        raise InputError(f"the {name} must be between 3 and 2^31 - 1, got {value}.")
    if not is_prime(value):
        raise InputError(f"the modulus {value} is not prime; use a prime such as {DEFAULT_PRIME}.")
    if value >= below:
        raise InputError(why.format(p=value))
    return value


def reduces(values, p: int) -> bool:
    """p reduces the rationals ``values`` faithfully: no denominator is divisible by p and no nonzero entry
    vanishes mod p (ints, Fractions and finite floats; a float is the rational it stores)."""
    for v in values:
        q = v if isinstance(v, Fraction) else Fraction(v)
        if q.denominator % p == 0 or (q and q.numerator % p == 0):
            return False
    return True


def faithful_primes(values, start: int = DEFAULT_PRIME, count: int = 1, what: str = "the data") -> list[int]:
    """The first ``count`` primes, from ``start`` (included when prime) downwards, that reduce ``values``
    faithfully (``reduces``). Only finitely many primes divide the data, so the search ends; it runs out
    only for entries with thousands of digits, refused in one line naming ``what``."""
    values = [v if isinstance(v, Fraction) else Fraction(v) for v in values]
    out: list[int] = []
    q = start if is_prime(start) else previous_prime(start)
    while len(out) < count:
        if reduces(values, q):
            out.append(q)
        if q <= 3:
            raise InputError(
                f"{what}: every prime from {start} down to 3 divides an entry or a denominator, so no "
                "prime reduces it faithfully; use entries with fewer digits."
            )
        q = previous_prime(q)
    return out
