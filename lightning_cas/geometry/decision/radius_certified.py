"""Every complex critical point of the distance from X0 to a decision boundary whose bottleneck polynomial is a
translated power sum, h(z) = sum_j c_j (z_j + b_j)^d + c0 (a one-hidden-layer network x -> A (W X + b)^d + a
in its first layer's coordinates z = W X), each certified, and the robustness radius read from the real ones.

In w = z + b the critical points solve F(w, l) = (sum c_j w_j^d + c0, w - u - l S grad h(w)) = 0, u = z0 + b.

Why the count is complete (at the given weights, not assumed generic):
* N = d sum_{i<k} (d-1)^i bounds the number of isolated solutions counted with multiplicity: it bounds the ED
  degree of any degree-d hypersurface in C^k (Draisma-Horobet-Ottaviani-Sturmfels-Thomas, Prop. 2.6; S^-1 is a
  linear change of coordinates), and at special parameters there are at most as many isolated solutions as at
  generic ones (Morgan-Sommese coefficient-parameter continuation).
* There is no positive-dimensional component: such a component is unbounded, and along a sequence going to
  infinity either w stays bounded, so D w^(d-1) -> 0, w -> 0 and h -> c0 (excluded by c0 != 0), or w/|w| tends
  to a nonzero v with v = S D v^(d-1) and sum c_j v_j^d = 0 (after scaling). For d = 2 that is an eigenvector
  of S D with v^T D v = 0, impossible when S D has simple eigenvalues (they are real, their eigenvectors real);
  for d >= 3 every solution of v = S D v^(d-1) is found and certified (it has exactly (d-1)^k, none at
  infinity) and sum c_j v_j^d is shown nonzero on each but v = 0.
* So N distinct solutions, each in a box where the Krawczyk operator maps into its interior (a unique, regular
  solution) and the boxes pairwise disjoint, are all of them. A box symmetric about the real space holds a real
  solution (the conjugate is a solution in the same box); one that misses it holds a non-real one.
The solutions come from Macaulay2's MonodromySolver (stopped at N) and a parameter homotopy to X0; the
certificates are computed here in ball arithmetic (python-flint's arb), because NumericalCertification's
krawczykTest takes about 0.15 s a point at k = 6 in interpreted code (hours for the 12285 points of k = 12) and
evaluates F at the midpoint in floating point.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction

PRECISION = 128  # bits of the refinement and of the certificates
REFINE_STEPS = 8
ATTEMPTS = 3


@dataclass(frozen=True)
class PowerSum:
    """h(z) = sum_j c_j (z_j + b_j)^d + c0 exactly, over QQ."""

    d: int
    c: tuple[Fraction, ...]
    b: tuple[Fraction, ...]
    c0: Fraction

    @property
    def k(self) -> int:
        return len(self.c)

    def bound(self) -> int:
        """d sum_{i<k} (d-1)^i: no degree-d hypersurface in C^k has a larger ED degree."""
        return self.d * sum((self.d - 1) ** i for i in range(self.k))


def power_sum(h, r: int) -> PowerSum | None:
    """h (an fmpz_mpoly in z_1..z_r) as a translated power sum of one degree d >= 2 in every variable, or None."""
    terms = {tuple(int(e) for e in exps): Fraction(int(c)) for exps, c in h.to_dict().items()}
    const = terms.pop((0,) * r, Fraction(0))
    per: list[dict[int, Fraction]] = [{} for _ in range(r)]
    for exps, c in terms.items():
        used = [i for i, e in enumerate(exps) if e]
        if len(used) != 1:
            return None
        per[used[0]][exps[used[0]]] = c
    degrees = {max(p) if p else 0 for p in per}
    if len(degrees) != 1 or min(degrees) < 2:
        return None
    d = degrees.pop()
    cs, bs, c0 = [], [], const
    for p in per:
        c = p[d]
        b = p.get(d - 1, Fraction(0)) / (d * c)
        for e in range(1, d):  # the lower coefficients must be those of c (z + b)^d
            if p.get(e, Fraction(0)) != c * math.comb(d, e) * b ** (d - e):
                return None
        cs.append(c)
        bs.append(b)
        c0 -= c * b**d
    return PowerSum(d, tuple(cs), tuple(bs), c0)


def _fmpq(q: Fraction):
    import flint

    return flint.fmpq(q.numerator, q.denominator)


def _acb(x):
    import flint

    return flint.acb(x) if not isinstance(x, Fraction) else flint.acb(flint.fmpq(x.numerator, x.denominator))


class _System:
    """F and its Jacobian in ball arithmetic: the critical system (w, l), or v - S D v^(d-1) (``infinity``)."""

    def __init__(self, ps: PowerSum, S, u=None):
        self.ps, self.k = ps, ps.k
        self.c = [_acb(v) for v in ps.c]
        self.S = [[_acb(Fraction(v)) for v in row] for row in S]
        self.u = None if u is None else [_acb(v) for v in u]
        self.c0 = _acb(ps.c0)

    @property
    def size(self) -> int:
        return self.k if self.u is None else self.k + 1

    def grad(self, w):  # D w^(d-1) times d (the gradient of the power sum), or without d at infinity
        d = self.ps.d
        return [self.c[j] * w[j] ** (d - 1) * (d if self.u is not None else 1) for j in range(self.k)]

    def value(self, x):
        k, S = self.k, self.S
        w = x[:k]
        g = self.grad(w)
        Sg = [sum((S[j][m] * g[m] for m in range(k)), _acb(0)) for j in range(k)]
        if self.u is None:
            return [w[j] - Sg[j] for j in range(k)]
        h = sum((self.c[j] * w[j] ** self.ps.d for j in range(k)), self.c0)
        return [h] + [w[j] - self.u[j] - x[k] * Sg[j] for j in range(k)]

    def jacobian(self, x):
        import flint

        k, S, d = self.k, self.S, self.ps.d
        w = x[:k]
        scale = d if self.u is not None else 1
        dg = [self.c[j] * scale * (d - 1) * w[j] ** (d - 2) for j in range(k)]  # d grad_j / d w_j
        n = self.size
        J = flint.acb_mat(n, n)
        if self.u is None:
            for j in range(k):
                for m in range(k):
                    J[j, m] = (1 if j == m else 0) - S[j][m] * dg[m]
            return J
        g = self.grad(w)
        for m in range(k):
            J[0, m] = self.c[m] * d * w[m] ** (d - 1)
        for j in range(k):
            for m in range(k):
                J[j + 1, m] = (1 if j == m else 0) - x[k] * S[j][m] * dg[m]
            J[j + 1, k] = -sum((S[j][m] * g[m] for m in range(k)), _acb(0))
        return J


def _mid(x):
    import flint

    return flint.acb(x.real.mid(), x.imag.mid())


def _inverse(J):
    """An approximate inverse of the midpoint matrix, in doubles, as an exact acb_mat: any Y serves the
    Krawczyk test (a poor one only makes it fail), and numpy's is 100 times faster than arb's at 128 bits."""
    import flint
    import numpy as np

    n = J.nrows()
    M = np.array([[complex(float(J[i, j].real.mid()), float(J[i, j].imag.mid())) for j in range(n)] for i in range(n)])
    try:
        Y = np.linalg.inv(M)
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.isfinite(Y)):
        return None
    return flint.acb_mat([[flint.acb(float(v.real), float(v.imag)) for v in row] for row in Y])


def _refine(system: _System, x):
    """Newton's method at the midpoints with a double-precision inverse (128-bit residuals): the point, the
    last inverse and the size of the last step in each coordinate."""
    import flint

    Y = None
    for _ in range(REFINE_STEPS):  # until the step is at the working precision (two from Macaulay2's points)
        Y = _inverse(system.jacobian(x))
        if Y is None:
            return x, None, None
        step = Y * flint.acb_mat([[v] for v in system.value(x)])
        x = [_mid(x[i] - step[i, 0]) for i in range(len(x))]
        sizes = [abs(float(step[i, 0].mid().abs_upper())) for i in range(len(x))]
        if max(sizes) <= 2.0**-100 * (1 + max(abs(float(v.mid().abs_upper())) for v in x)):
            break
    return x, Y, sizes


@dataclass(frozen=True)
class Certified:
    """A box (acb components) with one regular solution in it, and whether that solution is real."""

    box: tuple
    real: bool | None  # True: real; False: not real; None: the box meets the real space but is not symmetric


def certify(system: _System, x) -> Certified | None:
    """The Krawczyk test on a small box around the refined point: K(X) inside the interior of X proves one
    regular solution in X (Rump's theorem, the complex box taken as a real one of twice the dimension)."""
    import flint

    n = len(x)
    sizes = [abs(float(v.mid().abs_upper())) for v in x]
    near_real = all(abs(float(v.imag.mid())) < 1e-8 * max(a, 1e-6 * max(sizes), 1e-300) for v, a in zip(x, sizes))
    if near_real:
        x = [flint.acb(v.real.mid()) for v in x]
    x, Y, step = _refine(system, x)
    if step is None or not all(v.is_finite() for v in x):
        return None
    # each coordinate its own radius: the multiplier can be 1e-15 where w is 1e3
    sizes = [abs(float(v.mid().abs_upper())) for v in x]
    floor = 2.0**-60 * max(sizes)
    radii = [max(s * 1e6, 2.0**-100 * max(a, floor), 2.0**-300) for s, a in zip(step, sizes)]
    X = [v + flint.acb(flint.arb(0, r), flint.arb(0, r)) for v, r in zip(x, radii)]
    Fm = flint.acb_mat([[v] for v in system.value(x)])
    JX = system.jacobian(X)
    ident = flint.acb_mat(n, n)
    for i in range(n):
        ident[i, i] = 1
    diff = flint.acb_mat([[X[i] - x[i]] for i in range(n)])
    K = flint.acb_mat([[v] for v in x]) - Y * Fm + (ident - Y * JX) * diff
    for i in range(n):
        if not (X[i].real.contains_interior(K[i, 0].real) and X[i].imag.contains_interior(K[i, 0].imag)):
            return None
    if near_real:
        real: bool | None = True
    elif any(not X[i].imag.contains(0) for i in range(n)):
        real = False
    else:
        real = None
    return Certified(tuple(X), real)


def _edges(v) -> tuple[float, float, float, float]:
    """The box of one component as floats rounded outwards: (re lo, re hi, im lo, im hi)."""
    out = []
    for part in (v.real, v.imag):
        lo, hi = float(part.lower()), float(part.upper())
        out += [math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf)]
    return out[0], out[1], out[2], out[3]


def distinct(found: list) -> list:
    """A greedy subset of pairwise disjoint boxes (a sweep over the first coordinate's real part): a box that
    meets one kept is dropped, so the kept ones hold distinct solutions and a path that jumped to a solution
    another path reached is counted once."""
    order = sorted(range(len(found)), key=lambda i: _edges(found[i].box[0])[0])
    edges = {i: tuple(_edges(v) for v in found[i].box) for i in order}
    kept, active = [], []
    for i in order:
        e = edges[i]
        active = [a for a in active if a[0][1] >= e[0][0]]
        if any(
            all(
                a[j][0] <= e[j][1] and e[j][0] <= a[j][1] and a[j][2] <= e[j][3] and e[j][2] <= a[j][3]
                for j in range(len(e))
            )
            for a in active
        ):
            continue
        active.append(e)
        kept.append(found[i])
    return kept


def _fraction(x) -> Fraction:
    m, e = x.man_exp()
    return Fraction(int(m)) * Fraction(2) ** int(e)


def real_interval(v) -> tuple[Fraction, Fraction]:
    return _fraction(v.real.lower()), _fraction(v.real.upper())


def _parse(points) -> list:
    import flint

    return [[flint.acb(float(re), float(im)) for re, im in coords] for status, coords in points]


def infinity_clear(ps: PowerSum, S, macaulay2) -> tuple[bool, str]:
    """Whether the critical points cannot escape to infinity (see the module docstring), and why."""
    import flint

    k, d = ps.k, ps.d
    if d == 2:
        SD = flint.fmpq_mat(k, k, [_fmpq(Fraction(S[i][j]) * ps.c[j]) for i in range(k) for j in range(k)])
        p = SD.charpoly()
        ok = p.gcd(p.derivative()).degree() == 0
        return ok, "S D has simple eigenvalues" if ok else "S D has a repeated eigenvalue"
    # v = s y turns v = S D v^(d-1) into y = s^(d-2) S D y^(d-1): the same question with coefficients near 1
    # (the homotopy loses every path at the network's scale, S D near 1e9)
    top = max(abs(Fraction(S[i][j]) * ps.c[j]) for i in range(k) for j in range(k))
    S = [[Fraction(v) * Fraction(2) ** -round(math.log2(top)) for v in row] for row in S]
    _, rec = macaulay2.run("power_sum_infinity", {"weights": list(ps.c), "exponent": d, "metric": S})
    system = _System(ps, S)
    good = distinct([c for c in (certify(system, x) for x in _parse(rec["solutions"])) if c is not None])
    total = (d - 1) ** k
    if len(good) != total:
        return False, f"{len(good)} of the {total} solutions of v = S D v^(d-1) certified distinct"
    cs = [_acb(v) for v in ps.c]
    for c in good:
        if all(v.real.contains(0) and v.imag.contains(0) for v in c.box):
            continue  # the box holding v = 0 (unique in it)
        val = sum((cs[j] * c.box[j] ** d for j in range(k)), _acb(0))
        if val.real.contains(0) and val.imag.contains(0):
            return False, "sum c_j v_j^d may vanish at a solution of v = S D v^(d-1)"
    return True, f"all {total} solutions of v = S D v^(d-1) certified, sum c_j v_j^d nonzero on each but 0"


@dataclass(frozen=True)
class CertifiedPoints:
    """What the certified route reached at X0."""

    bound: int  # N: the count that proves completeness
    certified: int  # distinct certified solutions (== bound: all of them)
    complete: bool  # certified == bound and nothing escapes to infinity
    reason: str
    real: tuple  # real solutions' boxes in z (exact rational intervals), each a tuple of (lo, hi)
    # boxes (their real parts, in z) neither proved real nor proved non-real: their lower ends bound the radius too
    unclassified: tuple
    monodromy_s: float
    homotopy_s: float
    certify_s: float
    infinity_s: float  # wall clock of the check at infinity (its homotopy and certificates)


def _pow2(q: Fraction) -> Fraction:
    return Fraction(2) ** round(math.log2(abs(q))) if q else Fraction(1)


def _scaled(ps: PowerSum, S):
    """The same critical points in w = a y with a a power of 2 that makes c near 1, h divided by |c0| and S by
    a power of 2 near its size (the multiplier absorbs it): coefficients near 1, which the homotopy needs at
    the weights of trained or random networks (S near 1e6, c near 1e3). Exact, so the certificates on the
    scaled system are certificates of the original one."""
    a = _pow2(Fraction((abs(ps.c0) / max(abs(c) for c in ps.c)) ** (1 / ps.d)))
    norm = abs(ps.c0)
    scaled = PowerSum(ps.d, tuple(c * a**ps.d / norm for c in ps.c), (Fraction(0),) * ps.k, ps.c0 / norm)
    top = _pow2(max(abs(Fraction(v)) for row in S for v in row))
    return a, scaled, [[Fraction(v) / top for v in row] for row in S]


def critical_points(ps: PowerSum, S, targets, macaulay2) -> list[CertifiedPoints]:
    """Monodromy to the bound, a parameter homotopy to each point z0 of ``targets`` (bottleneck coordinates),
    and the certificates (module docstring): one monodromy serves every target."""
    import flint

    old = flint.ctx.prec
    flint.ctx.prec = PRECISION
    try:
        start = time.perf_counter()
        clear, why = infinity_clear(ps, S, macaulay2)
        infinity_s = time.perf_counter() - start
        unit, scaled, S1 = _scaled(ps, S)
        us = [[(Fraction(z) + b) / unit for z, b in zip(z0, ps.b)] for z0 in targets]
        systems = [_System(scaled, S1, u) for u in us]
        found: list[list] = [[] for _ in targets]
        good: list[list] = [[] for _ in targets]
        spent = [0.0, 0.0, 0.0]
        runs = 0
        while runs < ATTEMPTS and any(len(g) < ps.bound() for g in good):
            # monodromy can stall short of the bound: again from another seed, for the targets still short
            short = [i for i, g in enumerate(good) if len(g) < ps.bound()]
            _, rec = macaulay2.run(
                "power_sum_critical",
                {
                    "weights": list(scaled.c),
                    "exponent": ps.d,
                    "metric": S1,
                    "targets": [us[i] + [scaled.c0] for i in short],
                    "count": ps.bound(),
                    "seed": runs,
                },
            )
            runs += 1
            solved = time.perf_counter()
            for i, points in zip(short, rec["targets"]):
                found[i] += [c for c in (certify(systems[i], x) for x in _parse(points)) if c is not None]
                good[i] = distinct(found[i])
            spent = [
                spent[0] + rec["monodromy_cpu_ms"] / 1000,
                spent[1] + rec["homotopy_cpu_ms"] / 1000,
                spent[2] + time.perf_counter() - solved,
            ]
        out = []
        for kept in good:
            count = len(kept)
            zbox = lambda c: tuple(
                (unit * lo - b, unit * hi - b) for (lo, hi), b in zip((real_interval(v) for v in c.box[: ps.k]), ps.b)
            )
            real = tuple(zbox(c) for c in kept if c.real)
            maybe = tuple(zbox(c) for c in kept if c.real is None)
            reason = why if clear else f"not proved complete: {why}"
            if count < ps.bound():
                reason = f"{count} of {ps.bound()} critical points certified in {runs} monodromy run(s); {why}"
            out.append(
                CertifiedPoints(
                    bound=ps.bound(),
                    certified=count,
                    complete=clear and count == ps.bound(),
                    reason=reason,
                    real=real,
                    unclassified=maybe,
                    monodromy_s=spent[0],
                    homotopy_s=spent[1] / max(len(targets), 1),
                    certify_s=spent[2] / max(len(targets), 1),
                    infinity_s=infinity_s,
                )
            )
        return out
    finally:
        flint.ctx.prec = old
