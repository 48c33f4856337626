"""A certified enclosure of the robustness radius when its critical points are out of reach (msolve's real
isolation over QQ, geometry.decision.radius_exact, does not finish): an interval that contains the distance from X0 to
B, proved in exact rational arithmetic, wider than the isolation's but a promise all the same.

Lower end. Write g(X0 + v) = g(X0) + sum_k g_k(v), g_k homogeneous of degree k in v. For |v| <= r,
|g_k(v)| <= N_k r^k with N_k = sqrt(sum_a c_a^2 a!/k!) the Frobenius norm of g_k's symmetric tensor (for
k = 1 the gradient's length). While |g(X0)| > sum_k N_k r^k, g has no zero in the closed ball: the largest
such r found by bisection over the rationals (N_k rounded up) is a lower bound on the distance to B.

Upper end. An exact point of B: in floats, where random rays from X0 first meet B, the nearest few refined
by Newton's method on the Lagrange equations; then, exactly, the ray X0 + t d through each with d rational:
g along it is a polynomial in t with rational coefficients, and a sign change between t_lo and t_hi puts a
point of B within t_hi |d|: the squared upper end t_hi^2 |d|^2 is exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

RAYS = 256  # random directions from X0 (and the gradient's two): where each first meets B, in floats
REFINED = 6  # the nearest of those hits, refined by Newton's method to critical points of the distance
STARTS = 16  # when few rays meet B: Newton's method from random points at 2^k times the lower end
NEWTON_STEPS = 60
BISECTIONS = 60  # on t along a ray, and on r for the lower end


@dataclass(frozen=True)
class Enclosure:
    """The squared radius in [squared_lower, squared_upper] (exact rationals) and the point of B it is at."""

    squared_lower: Fraction
    squared_upper: Fraction | None  # None: no point of B was found on any ray
    point: tuple[Fraction, ...] | None  # a rational point within the squared upper end of B
    rays: int


def _shifted(poly, x0):
    """g(X0 + v) as a dict exponent tuple -> Fraction in v."""
    import flint

    ctx = poly.context()
    gens = ctx.gens()
    args = [g + ctx.from_dict({(0,) * ctx.nvars(): flint.fmpq(c.numerator, c.denominator)}) for g, c in zip(gens, x0)]
    shifted = poly.compose(*args) if ctx.nvars() else poly
    return {tuple(int(e) for e in exps): Fraction(int(c.p), int(c.q)) for exps, c in shifted.to_dict().items()}


def _sqrt_up(q: Fraction) -> Fraction:
    """A rational at least sqrt(q), to about 64 bits, in integers only (q may be far beyond a float)."""
    a, b = q.numerator, q.denominator
    return Fraction(math.isqrt(a * b * 4**64) + 1, b * 2**64)


def taylor_norms(terms: dict) -> list[Fraction]:
    """N_k (k = 1..degree), rounded up: |g_k(v)| <= N_k |v|^k."""
    degree = max((sum(e) for e in terms), default=0)
    squares = [Fraction(0)] * (degree + 1)
    for exps, c in terms.items():
        k = sum(exps)
        if k:
            squares[k] += c * c * math.prod(math.factorial(a) for a in exps) / math.factorial(k)
    return [_sqrt_up(s) for s in squares[1:]]


def lower_bound(g0: Fraction, norms: list[Fraction]) -> Fraction:
    """The largest r found with |g0| > sum_k N_k r^k (0 when g0 = 0): g has no zero within r of X0."""
    bound = lambda r: sum(n * r ** (k + 1) for k, n in enumerate(norms))
    if g0 == 0 or not any(norms):
        return Fraction(0) if g0 == 0 else Fraction(-1)  # -1: a nonzero constant, no boundary at all
    lo, hi = Fraction(0), Fraction(1)
    while bound(hi) < abs(g0):
        lo, hi = hi, hi * 2
    for _ in range(BISECTIONS):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if bound(mid) < abs(g0) else (lo, mid)
    return lo


class _Numeric:
    """g(X0 + v), its gradient and its restriction to rays in floats, from the exact expansion: the search
    for a near point of B only proposes; every bound is proved in exact arithmetic afterwards."""

    def __init__(self, terms: dict, n: int):
        items = list(terms.items())
        self.n = n
        self.exps = np.array([e for e, _ in items], dtype=int).reshape(len(items), n)
        self.coefs = np.array([float(c) for _, c in items])
        self.degrees = self.exps.sum(axis=1)
        self.top = int(self.degrees.max(initial=0))
        # d/dv_i: coefficients c a_i on the exponents a - e_i
        self.dcoefs = self.coefs[None, :] * self.exps.T
        self.dexps = np.maximum(self.exps[None, :, :] - np.eye(n, dtype=int)[:, None, :], 0)
        self.rows = np.arange(n)

    def _powers(self, v):
        return v[:, None] ** np.arange(self.top + 1)[None, :]  # n x (degree + 1): v_i^k

    def value(self, v) -> float:
        return float(self.coefs @ np.prod(self._powers(v)[self.rows, self.exps], axis=1))

    def grad(self, v):
        return np.einsum("it,it->i", self.dcoefs, np.prod(self._powers(v)[self.rows, self.dexps], axis=2))

    def hessian(self, v):
        """By central differences of the exact-form gradient (a proposal, refined by Newton only)."""
        h = 1e-6 * (1 + np.linalg.norm(v))
        cols = [(self.grad(v + h * e) - self.grad(v - h * e)) / (2 * h) for e in np.eye(self.n)]
        H = np.array(cols)
        return (H + H.T) / 2

    def ray_root(self, d) -> float | None:
        """The smallest t > 0 with g(X0 + t d) = 0 in floats, or None."""
        monomials = np.prod(self._powers(d)[self.rows, self.exps], axis=1)
        poly = np.bincount(self.degrees, weights=self.coefs * monomials)
        top = np.max(np.abs(poly))
        if not np.isfinite(top) or top == 0:
            return None
        roots = np.roots((poly / top)[::-1])
        real = [z.real for z in roots if z.real > 0 and abs(z.imag) <= 1e-7 * (1 + abs(z))]
        return min(real) if real else None


def _lagrange_newton(numeric: _Numeric, v):
    """Newton's method on v = l grad g(v), g(v) = 0 (a critical point of |v|^2 on B) from a point v of B;
    None when it does not settle."""
    v = np.array(v, dtype=float)
    grad = numeric.grad(v)
    lam = float(v @ grad) / float(grad @ grad) if grad @ grad else 0.0
    n = len(v)
    for _ in range(NEWTON_STEPS):
        grad = numeric.grad(v)
        residual = np.concatenate([v - lam * grad, [numeric.value(v)]])
        jac = np.zeros((n + 1, n + 1))
        jac[:n, :n] = np.eye(n) - lam * numeric.hessian(v)
        jac[:n, n] = -grad
        jac[n, :n] = grad
        try:
            step = np.linalg.solve(jac, -residual)
        except np.linalg.LinAlgError:
            return None
        v, lam = v + step[:n], lam + step[n]
        if not np.all(np.isfinite(v)):
            return None
        if np.linalg.norm(step[:n]) <= 1e-13 * (1 + np.linalg.norm(v)):
            return v
    return None


def _ray_root(terms: dict, d: list[Fraction]) -> Fraction | None:
    """A t_hi > 0 with a zero of g(X0 + t d) in (t_lo, t_hi), proved by the signs at both ends in exact
    arithmetic (the candidates from the roots in floats, smallest first); None when no candidate crosses."""
    import flint

    poly = [Fraction(0)] * (max((sum(e) for e in terms), default=0) + 1)
    for exps, c in terms.items():
        poly[sum(exps)] += c * math.prod(di**a for di, a in zip(d, exps))
    while len(poly) > 1 and poly[-1] == 0:
        poly.pop()
    if len(poly) < 2:
        return None
    phi = flint.fmpq_poly([flint.fmpq(c.numerator, c.denominator) for c in poly])
    sign = lambda t: (lambda v: (v > 0) - (v < 0))(phi(flint.fmpq(t.numerator, t.denominator)))
    top = max(abs(c) for c in poly)
    roots = np.roots([float(c / top) for c in reversed(poly)])
    candidates = sorted(float(z.real) for z in roots if z.real > 0 and abs(z.imag) <= 1e-7 * (1 + abs(z)))
    for t in candidates:
        for width in (2.0**-40, 2.0**-20, 2.0**-8):
            lo, hi = Fraction(t) * (1 - Fraction(width)), Fraction(t) * (1 + Fraction(width))
            if sign(lo) * sign(hi) < 0:
                for _ in range(BISECTIONS):
                    mid = (lo + hi) / 2
                    lo, hi = (lo, mid) if sign(mid) * sign(lo) < 0 else (mid, hi)
                return hi
    return None


def enclose(poly, x0, seed: int = 0) -> Enclosure:
    """The enclosure of the distance from X0 to {poly = 0} (``poly`` an fmpq_mpoly in the inputs)."""
    x0 = [Fraction(v) for v in x0]
    n = len(x0)
    terms = _shifted(poly, x0)
    g0 = terms.get((0,) * n, Fraction(0))
    low = lower_bound(g0, taylor_norms(terms))
    if g0 == 0:
        return Enclosure(Fraction(0), Fraction(0), tuple(x0), 0)
    if low < 0:
        return Enclosure(Fraction(0), None, None, 0)  # a nonzero constant: the caller has refused it already
    top = max(abs(c) for c in terms.values())
    numeric = _Numeric({e: c / top for e, c in terms.items()}, n)  # the same zeros, floats that cannot overflow
    rng = np.random.default_rng(seed)
    gradient = numeric.grad(np.zeros(n))
    directions = [gradient, -gradient] + list(rng.standard_normal((RAYS, n)))
    hits = []
    for d in directions:
        t = numeric.ray_root(np.asarray(d, dtype=float))
        if t is not None:
            hits.append(t * np.asarray(d, dtype=float))
    hits.sort(key=np.linalg.norm)
    starts = hits[:REFINED]
    if len(starts) < REFINED:  # B is small as seen from X0: Newton from random points at growing distances
        scales = [float(min(max(low, Fraction(1, 2**20)), Fraction(2**512))) * 2**k for k in range(STARTS)]
        starts += [rng.standard_normal(n) * s for s in scales]
    candidates = [v for v in (_lagrange_newton(numeric, h) for h in starts) if v is not None]
    candidates += hits[:REFINED]
    best, best_point = None, None
    for v in sorted(candidates, key=np.linalg.norm):
        d = [Fraction(float(c)) for c in v]
        t = _ray_root(terms, d) if any(d) else None
        if t is None:
            continue
        squared = t * t * sum(c * c for c in d)
        if best is None or squared < best:
            best, best_point = squared, tuple(a + t * c for a, c in zip(x0, d))
    return Enclosure(low * low, best, best_point, len(directions))
