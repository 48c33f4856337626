"""msolve's computations, each one call: solve (parametrization / real roots), the leading ideal (and from
it the dimension and degree of any ideal), and the saturation of an ideal by a polynomial.

The dimension and degree come from the leading monomials of a degree reverse lexicographic Groebner
basis (``-g 1``): the ideal and its initial ideal have the same Hilbert function, so the Krull dimension
is that of the monomial ideal (the variables minus the fewest variables meeting every leading monomial)
and, when it is 0, the degree is the number of standard monomials (the staircase).
"""

from __future__ import annotations

from dataclasses import dataclass

from lightning_cas.errors import InputError, MsolveParseError, TooLargeError
from lightning_cas.msolve.parse import Solution, read_polynomials, read_solution
from lightning_cas.msolve.runner import run
from lightning_cas.msolve.writer import check_characteristic, check_variables, system_text

SATURATION_MIN_PRIME = 2**16  # msolve's f4sat: "not implemented yet (prime field of too low characteristic)"
MAX_STAIRCASE_STEPS = 5 * 10**6  # subproblems of the staircase count at most (a bound on work, not on the degree)


@dataclass(frozen=True)
class IdealSummary:
    """The dimension of an ideal (-1: the unit ideal, no solution) and, when zero-dimensional, its degree."""

    dimension: int
    degree: int | None
    leading_monomials: tuple[tuple[int, ...], ...]
    input_file: str
    elapsed_s: float


def solve(
    variables,
    polynomials,
    characteristic: int,
    *,
    parametrization: bool = True,
    real_roots: bool = True,
    timeout: float | None = None,
    msolve: str | None = None,
    threads: int = 1,
    stem: str = "msolve",
    precision: int | None = None,
) -> tuple[Solution, float, str]:
    """msolve on the system: over GF(p) its parametrization; over QQ its real roots, with ``parametrization``
    the parametrization too. Returns the Solution, the seconds msolve took and the input file."""
    names = check_variables(variables)
    char = check_characteristic(characteristic)
    flags = ["-P", "1" if (parametrization and char == 0) else "0"]
    if char == 0 and precision is not None:
        flags += ["-p", str(int(precision))]
    if char == 0 and not real_roots and not parametrization:
        parametrization = True
    res = run(system_text(names, polynomials, char), flags, timeout=timeout, msolve=msolve, threads=threads, stem=stem)
    return read_solution(res.output, names, char, res.input_file), res.elapsed_s, res.input_file


def leading_ideal(
    variables,
    polynomials,
    characteristic: int,
    *,
    saturate: bool = False,
    timeout: float | None = None,
    msolve: str | None = None,
    threads: int = 1,
    stem: str = "msolve",
) -> IdealSummary:
    """The leading monomials (grevlex) of the ideal, with its dimension and degree. ``saturate``: of the
    saturation of the ideal of all polynomials but the last by the last (msolve's f4sat, GF(p) only)."""
    names = check_variables(variables)
    char = check_characteristic(characteristic)
    if saturate and char < SATURATION_MIN_PRIME:
        raise InputError(f"msolve saturates over prime fields of characteristic above 2^16 only, got {char}.")
    flags = ["-g", "1"] + (["-S"] if saturate else [])
    res = run(system_text(names, polynomials, char), flags, timeout=timeout, msolve=msolve, threads=threads, stem=stem)
    polys = read_polynomials(res.output, names, res.input_file)
    leads = []
    for p in polys:
        if len(p) != 1:
            raise MsolveParseError(
                "msolve's leading ideal has a polynomial that is not one monomial", res.input_file, res.output
            )
        leads.append(next(iter(p)))
    leads = minimal_generators(leads)
    dim = monomial_dimension(leads, len(names))
    return IdealSummary(
        dim, staircase_size(leads, len(names)) if dim == 0 else None, tuple(leads), res.input_file, res.elapsed_s
    )


def minimal_generators(monomials) -> list[tuple[int, ...]]:
    """The minimal generators of the monomial ideal (no one divisible by another), sorted."""
    ms = sorted(set(map(tuple, monomials)), key=lambda m: (sum(m), m))
    out: list[tuple[int, ...]] = []
    for m in ms:
        if not any(all(a <= b for a, b in zip(g, m)) for g in out):
            out.append(m)
    return out


def monomial_dimension(monomials, nvars: int) -> int:
    """The Krull dimension of k[x]/(monomials): nvars minus the fewest variables meeting every support
    (-1 for the unit ideal)."""
    supports = [frozenset(i for i, e in enumerate(m) if e) for m in monomials]
    if any(not s for s in supports):
        return -1
    if not supports:
        return nvars

    def cover(sets: list[frozenset], budget: int) -> bool:  # a hitting set of size <= budget exists
        if not sets:
            return True
        if budget == 0:
            return False
        first = min(sets, key=len)
        return any(cover([s for s in sets if v not in s], budget - 1) for v in first)

    for size in range(nvars + 1):
        if cover(supports, size):
            return nvars - size
    return 0


def staircase_size(monomials, nvars: int) -> int:
    """The number of monomials outside a zero-dimensional monomial ideal (its degree). The count is
    memoized over the ideal's slices, so its work follows their number, not the degree: 12285 points in
    13 variables take seconds; a budget of subproblems refuses a staircase that would not."""
    gens = [tuple(g) for g in minimal_generators(monomials)]
    powers = {i: g[i] for g in gens for i in range(nvars) if g[i] and sum(1 for e in g if e) == 1}
    if len(powers) != nvars:
        raise ValueError("the monomial ideal is not zero-dimensional")
    return _count(tuple(gens), {}, [MAX_STAIRCASE_STEPS])


def _count(gens: tuple, memo: dict, budget: list) -> int:
    """Standard monomials in the remaining variables: for each exponent e of the first one, those of the
    rest outside the generators whose first exponent is at most e (it stops where one of them is 1)."""
    if any(not any(g) for g in gens):
        return 0
    if not gens or len(gens[0]) == 0:
        return 1
    key = gens
    if key in memo:
        return memo[key]
    total, e = 0, 0
    while True:
        budget[0] -= 1
        if budget[0] < 0:
            raise TooLargeError(
                f"counting the standard monomials of msolve's leading ideal ({len(gens)} generators) took more "
                f"than {MAX_STAIRCASE_STEPS:,} steps; the system is beyond what this count handles."
            )
        rest = tuple(sorted({g[1:] for g in gens if g[0] <= e}))
        if any(not any(r) for r in rest):
            break
        total += _count(rest, memo, budget)
        e += 1
    memo[key] = total
    return total
