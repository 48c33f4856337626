"""The degree of the neurovariety by msolve: the points of X on a generic linear space L of complementary
dimension, counted in the weights of a gauge slice, mod two primes that must agree.

X is the closure of the image of y = F(w) (the coordinates of ed_msolve: a basis of the coefficient span of
the output column), of dimension m. On a gauge slice of m free weights (the others fixed at random integers)
the m affine equations a_i . F(s) = b_i (random integers) cut the points of the slice over X cap L; the
ideal is saturated by det(R J(s)) (msolve's f4sat), which removes every point where the slice map is not a
local immersion (the vertex, zero weights, the positive-dimensional families of degenerate weights). A
generic L meets X in deg X points, all in the dense open set over which the slice map is finite and
unramified; each is hit by the f points of the slice over a generic point of X (the fiber system of
ed_msolve), so deg X = N / f. For a cone (no biases) this is the degree of the projectivization, as
Macaulay2's ``degree`` of the homogeneous implicit ideal; with biases, the degree of the affine variety
(its projective closure's), as ``degree`` of the inhomogeneous ideal.

Probabilistic as ed_msolve: two primes that agree, random integer slice, section and fiber point.
"""

from __future__ import annotations

import time

from lightning_cas.errors import ResultError
from lightning_cas.geometry.degree.msolve import (
    MSOLVE_PRIMES,
    agreed,
    check_size,
    coordinate_polynomials,
    saturated_degree,
    slice_systems,
)
from lightning_cas.msolve.runner import msolve_version
from lightning_cas.results.degrees import DegreeResult


def section_systems(arch, seed: int, p: int):
    """The slice's variables, the section system and the fiber system (each with det(R J) last), and (n, m)."""
    ctx, coords = coordinate_polynomials(arch)
    return slice_systems(ctx, coords, seed, p, section=True)


def msolve_degree(
    arch,
    *,
    seed: int = 0,
    timeout: float | None = None,
    msolve=None,
    threads: int = 1,
    primes: tuple[int, int] = MSOLVE_PRIMES,
) -> DegreeResult:
    """The degree of the neurovariety by msolve (see the module docstring), within ``timeout``."""
    from lightning_cas.system.deadline import stoppable, time_limit

    check_size(arch, "degree", " or --method numerical")
    start = time.perf_counter()
    with time_limit(timeout):
        counts, fibers, sources, spent = [], [], [], 0.0
        # the slice's determinant is long C calls an alarm cannot interrupt: built in a child the deadline kills
        names, section, fiber, (n, m) = stoppable(section_systems, arch, seed, primes[0])
        for prime in primes if section is not None else ():
            points, t1, src = saturated_degree(names, section, prime, msolve, threads, "msolve-degree-section")
            fib, t2, _ = saturated_degree(names, fiber, prime, msolve, threads, "msolve-degree-fiber")
            counts.append(points), fibers.append(fib), sources.append(src)
            spent += t1 + t2
        version = msolve_version(msolve)
    common = dict(
        architecture=arch,
        dimension=m,
        coordinates=n,
        method="msolve",
        certainty="probabilistic",
        seed=seed,
        m2_version=None,
        primes=tuple(primes),
        elapsed_s=time.perf_counter() - start,
        method_detail=f"msolve {version}: the points of X on a random linear space of codimension {m}, on a "
        f"gauge slice of {m} free weights saturated by det(R dF/ds), over GF(p) for p = {primes[0]} and "
        f"{primes[1]}; degree = section points / points of the slice over a generic point",
        certainty_detail="the two primes agree; random integer slice, section and point: wrong only for "
        "unlucky choices",
    )
    if section is None:
        what = f"the variety fills its {n} coordinates" if m == n else "the network is constant: a point"
        return DegreeResult(**common, degree=1, notes=(f"{what}: degree 1",))
    points, fib = agreed(counts, fibers, primes, "section points")
    if points is None or not fib or points % fib:
        raise ResultError(
            f"{points} section points on the slice, {fib} over a generic point of the variety (not finite, "
            "or not a multiple): the random choices were not generic; rerun with another seed."
        )
    notes = (
        f"{points} points of the slice over X cap L, {fib} over each point of the variety",
        f"msolve took {spent:.3g} s on the section and fiber systems mod both primes; input: {sources[0]}",
    )
    return DegreeResult(**common, degree=points // fib, notes=notes, script=sources[0])
