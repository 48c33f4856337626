"""The robustness radius at X0 certified from msolve's real root isolation over QQ.

msolve isolates every real solution of a zero-dimensional system in a box with dyadic rational endpoints
(one solution per box, no solution outside them). The Lagrange system at z0 = Q X0 (geometry.decision.system)
gives every real critical point of |X - X0|^2 on the smooth locus of B; h = grad h = 0 the singular
locus of H (B's is the cylinder over it). On each box the nearest point X = X0 + Q^T S^-1 (z - z0) and
|X - X0|^2 are evaluated in exact rational interval arithmetic; the distance from X0 to B(R) is attained
(B is closed) at a smooth critical point or a singular point, so the squared radius lies in
[min of the lower ends, min of the upper ends]: certified when both systems are zero-dimensional. A
positive-dimensional singular locus leaves the upper end only (the bound covers the smooth locus).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from lightning_cas.geometry.decision.system import BoundarySystem, lagrange_system, singular_system, variable_names
from lightning_cas.msolve.solve import solve

PRECISION = 64  # bits of msolve's isolating boxes


@dataclass(frozen=True)
class Box:
    """One real solution: its box in z (and l), its nearest point's box in X, |X - X0|^2's interval."""

    z: tuple[tuple[Fraction, Fraction], ...]
    x: tuple[tuple[Fraction, Fraction], ...]
    squared: tuple[Fraction, Fraction]


def _mul(a, b):
    products = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
    return min(products), max(products)


def _square(a):
    lo, hi = a
    if lo <= 0 <= hi:
        return Fraction(0), max(lo * lo, hi * hi)
    return min(lo * lo, hi * hi), max(lo * lo, hi * hi)


def _linear(coeffs, intervals, const: Fraction = Fraction(0)):
    lo = hi = const
    for c, (a, b) in zip(coeffs, intervals):
        lo += min(c * a, c * b)
        hi += max(c * a, c * b)
    return lo, hi


def pullback(bs: BoundarySystem) -> list[list[Fraction]]:
    """Q^T S^-1 (n x r): z - z0 to X - X0 at a critical point."""
    import flint

    r = bs.r
    Sinv = flint.fmpq_mat(r, r, [v for row in bs.S for v in row]).inv()
    inv = [[Fraction(int(Sinv[a, b].p), int(Sinv[a, b].q)) for b in range(r)] for a in range(r)]
    return [[sum(bs.Q[b][k] * inv[b][a] for b in range(r)) for a in range(r)] for k in range(bs.n)]


def bottleneck_point(bs: BoundarySystem, x0) -> list[Fraction]:
    return [sum((Fraction(q) * Fraction(v) for q, v in zip(row, x0)), Fraction(0)) for row in bs.Q]


def box(bs: BoundarySystem, P, x0, z0, zbox) -> Box:
    """The box of X - X0 = P (z - z0) and the interval of |X - X0|^2 over the box ``zbox``."""
    shifted = [(lo - c, hi - c) for (lo, hi), c in zip(zbox, z0)]
    diffs = [_linear(P[k], shifted) for k in range(bs.n)]
    squared = (sum(_square(d)[0] for d in diffs), sum(_square(d)[1] for d in diffs))
    xs = tuple((Fraction(v) + lo, Fraction(v) + hi) for v, (lo, hi) in zip(x0, diffs))
    return Box(tuple(zbox), xs, squared)


def real_boxes(names, system, *, timeout, msolve, threads, stem):
    """msolve over QQ: ("empty" | "finite" | "positive", the real boxes, seconds)."""
    sol, elapsed, source = solve(
        names,
        system,
        0,
        parametrization=False,
        timeout=timeout,
        msolve=msolve,
        threads=threads,
        stem=stem,
        precision=PRECISION,
    )
    return sol.status, tuple(sol.real_roots or ()), elapsed, source


def radius_at(bs: BoundarySystem, x0, *, timeout=None, msolve=None, threads: int = 1) -> dict:
    """Every real critical point (boxes), the real singular points, and the certified radius interval."""
    x0 = [Fraction(v) for v in x0]
    z0 = bottleneck_point(bs, x0)
    P = pullback(bs)
    import flint

    at0 = [flint.fmpq(v.numerator, v.denominator) for v in x0]
    if bs.g(*at0) == 0:  # a singular point of the reduced B (grad g vanishes on a repeated factor)
        singular = all(bs.reduced.derivative(i)(*at0) == 0 for i in range(bs.n))
        here = Box(tuple((z, z) for z in z0), tuple((v, v) for v in x0), (Fraction(0), Fraction(0)))
        return dict(
            on_boundary=True,
            smooth=(here,) if not singular else (),
            singular=(here,) if singular else (),
            status="finite",
            singular_status="finite",
            squared=(Fraction(0), Fraction(0)),
            at="singular" if singular else "smooth",
            certified=True,
            msolve_s=0.0,
            inputs=(),
        )
    names = variable_names(bs)
    status, roots, t1, src1 = real_boxes(
        names, lagrange_system(bs, z0), timeout=timeout, msolve=msolve, threads=threads, stem="msolve-radius"
    )
    smooth = tuple(box(bs, P, x0, z0, root[:-1]) for root in roots)  # the last variable is the multiplier
    sing_status, sroots, t2, src2 = real_boxes(
        names[:-1], singular_system(bs), timeout=timeout, msolve=msolve, threads=threads, stem="msolve-singular"
    )
    singular = tuple(box(bs, P, x0, z0, root) for root in sroots)
    lowers = [b.squared[0] for b in smooth + singular]
    uppers = [(b.squared[1], "smooth") for b in smooth] + [(b.squared[1], "singular") for b in singular]
    cover, spent = (True, None), 0.0
    if sing_status == "positive":  # below it: a hypersurface through the singular locus, recursively
        runs = [
            covering_bound(bs, bs.h, x0, z0, P, timeout=timeout, msolve=msolve, threads=threads, salt=salt)
            for salt in range(COVERS)
        ]
        spent = sum(t for _, t in runs)
        bounds = [c for c, _ in runs if c[0]]  # each one that ended is a bound: the largest is kept
        cover = max(bounds, key=lambda c: math.inf if c[1] is None else c[1]) if bounds else (False, None)
        if cover[1] is not None:
            lowers.append(cover[1])
    squared = None
    if uppers or lowers:
        squared = (min(lowers), min(uppers)[0] if uppers else None)
    certified = status in ("finite", "empty") and cover[0]
    return dict(
        on_boundary=False,
        smooth=tuple(sorted(smooth, key=lambda b: b.squared)),
        singular=tuple(sorted(singular, key=lambda b: b.squared)),
        status=status,
        singular_status=sing_status,
        squared=squared,
        at=min(uppers)[1] if uppers else None,
        certified=certified,
        covering=cover[1] if sing_status == "positive" else None,
        msolve_s=t1 + t2 + spent,
        inputs=(src1, src2),
    )


MAX_COVER_DEPTH = 8
COVERS = 3  # random hypersurfaces through the singular locus: each bounds its distance, the best is kept


def covering_bound(bs, h, x0, z0, P, *, timeout, msolve, threads, depth: int = 0, salt: int = 0):
    """((bounded, a lower bound of |X - X0|^2 on V(h)'s singular locus, None if it has no real point), s).

    The singular locus lies in V(p), p = l . grad h for a random integer l, of degree one less. The
    nearest real point of V(p) is attained (a closed set): where grad p != 0 it is a real solution of
    the Lagrange system of p (real implicit functions: no reducedness needed), else it lies in V(p)'s
    own singular locus, bounded the same way; the degree falls at each step, so this ends (at a
    hyperplane at the latest). Any lower bound for V(p) is one for the smaller set."""
    import random
    from dataclasses import replace

    rng = random.Random(1000 * salt + depth + 1)
    derivs = [h.derivative(i) for i in range(bs.r)]
    for _ in range(10):
        p = sum((rng.randrange(1, 2**10) * d for d in derivs), h - h)
        if p != 0:
            break
    else:
        return (False, None), 0.0
    if p.total_degree() == 0:  # grad h is a nonzero constant: V(h) has no singular point
        return (True, None), 0.0
    sub = replace(bs, h=p)
    status, roots, t1, _ = real_boxes(
        variable_names(sub),
        lagrange_system(sub, z0),
        timeout=timeout,
        msolve=msolve,
        threads=threads,
        stem="msolve-cover",
    )
    sstatus, sroots, t2, _ = real_boxes(
        variable_names(sub)[:-1],
        singular_system(sub),
        timeout=timeout,
        msolve=msolve,
        threads=threads,
        stem="msolve-cover-singular",
    )
    if status == "positive" or depth >= MAX_COVER_DEPTH:
        return (False, None), t1 + t2
    lowers = [box(bs, P, x0, z0, root[:-1]).squared[0] for root in roots]
    lowers += [box(bs, P, x0, z0, root).squared[0] for root in sroots]
    ok, spent = True, t1 + t2
    if sstatus == "positive":
        (ok, low), more = covering_bound(
            bs, p, x0, z0, P, timeout=timeout, msolve=msolve, threads=threads, depth=depth + 1, salt=salt
        )
        spent += more
        if low is not None:
            lowers.append(low)
    return (ok, min(lowers) if lowers else None), spent


def sqrt_down(q: Fraction) -> float:
    """The largest float whose square is at most q (q >= 0)."""
    x = math.sqrt(float(q))
    while x > 0 and Fraction(x) ** 2 > q:
        x = math.nextafter(x, 0.0)
    while Fraction(math.nextafter(x, math.inf)) ** 2 <= q:
        x = math.nextafter(x, math.inf)
    return x


def sqrt_up(q: Fraction) -> float:
    """The smallest float whose square is at least q (q >= 0)."""
    x = math.sqrt(float(q))
    while Fraction(x) ** 2 < q:
        x = math.nextafter(x, math.inf)
    while x > 0 and Fraction(math.nextafter(x, 0.0)) ** 2 >= q:
        x = math.nextafter(x, 0.0)
    return x
