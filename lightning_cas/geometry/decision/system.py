"""The decision boundary's ED degree by msolve, in the fewest coordinates g depends on.

g(X) = <w, f_W(X)> is computed in Python (exact rationals, python-flint), and B = {g = 0} taken reduced
(the squarefree part over QQ). When g is constant along a subspace K of the inputs (a linear bottleneck:
a first block W1 X + b of rank k below the input count makes ker W1 such a subspace), g(X) = h(Q X) with
Q (r x n) a basis of the orthogonal complement of K, found exactly from g itself: K is the common kernel
of the coefficient vectors of dg/dx_i. B is the cylinder H x K over H = {h = 0} in R^r, so

    d(X0, B)^2 = min over z in H of (z - z0)^T S^-1 (z - z0),   S = Q Q^T, z0 = Q X0,

and X - X0 = Q^T S^-1 (z - z0) carries the nearest points back (the K-part of X - X0 is 0 at a critical
point). The critical points of |X - u|^2 on the smooth locus of B are those of that distance on H: the
Lagrange system with one multiplier l,

    h(z) = 0,   z - u - l S grad h(z) = 0,

(X - u = l grad g(X), multiplied by Q) in r + 1 unknowns instead of n + 1. It is saturated by the
singular locus by construction: grad h = 0 forces z = u, and u is drawn off B (h(u) != 0, checked
exactly, so also mod each prime). Its degree, read from msolve's leading monomials mod two primes that
must agree, is the ED degree for generic u (random integers): probabilistic, as the Lagrange method.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from fractions import Fraction

from lightning_cas.errors import InputError, ResultError
from lightning_cas.geometry.degree.msolve import DATA_RANGE, MSOLVE_PRIMES
from lightning_cas.msolve.solve import leading_ideal

MAX_INPUTS = 64  # input coordinates g is expanded in (sympy, then flint)
MAX_REDUCED = 16  # unknowns msolve is asked to solve in (the bottleneck coordinates)


@dataclass(frozen=True)
class BoundarySystem:
    """g and its reduction: h in the r bottleneck coordinates z = Q X, S = Q Q^T (integers)."""

    g: object  # fmpq_mpoly in the n inputs (as given, not reduced)
    reduced: object  # its squarefree part: B's equation
    h: object  # fmpz_mpoly in z: the squarefree part of g through the bottleneck, primitive
    Q: tuple[tuple[int, ...], ...]  # r x n, integer rows
    S: tuple[tuple[int, ...], ...]  # r x r
    n: int
    degree: int
    reduced_degree: int
    factors: int
    homogeneous: bool

    @property
    def r(self) -> int:
        return len(self.Q)


def input_names(n: int) -> tuple[str, ...]:
    return tuple(f"x{i}" for i in range(1, n + 1))


def boundary_polynomial(net, values, w):
    """g = sum_ij w_ij f_W(X)_ij as an fmpq_mpoly in x1..xn (row-major x_(r,j)), and the sympy form."""
    import flint
    import sympy

    from lightning_cas.core.model import network_output, token_symbols

    n = net.input * net.tokens
    if n > MAX_INPUTS:
        raise InputError(f"the msolve method expands g in at most {MAX_INPUTS} input coordinates, got {n}.")
    rat = lambda q: sympy.Rational(q.numerator, q.denominator)
    out = network_output(net, weights=[rat(Fraction(v)) for v in values])
    g = sum(
        (rat(Fraction(w[i][j])) * out[i, j] for i in range(out.shape[0]) for j in range(out.shape[1])),
        sympy.Integer(0),
    )
    symbols = list(token_symbols(net))  # row-major: x_(1,1), x_(1,2), ...
    terms = sympy.Poly(sympy.expand(g), *symbols).as_dict()
    ctx = flint.fmpq_mpoly_ctx.get(input_names(n), "degrevlex")
    return ctx.from_dict(
        {tuple(int(e) for e in k): flint.fmpq(int(c.p), int(c.q)) for k, c in terms.items() if c != 0}
    ), sympy.expand(g)


def _primitive(poly, ctx_z):
    """The polynomial over QQ as an fmpz_mpoly with coprime integer coefficients (the same hypersurface)."""
    import math

    items = poly.to_dict()
    den = math.lcm(*(int(c.q) for c in items.values()))
    ints = {k: int(c.p) * (den // int(c.q)) for k, c in items.items()}
    common = math.gcd(*ints.values())
    return ctx_z.from_dict({k: v // common for k, v in ints.items()}) if ints else ctx_z.from_dict({})


def bottleneck(poly, n: int) -> list[list[Fraction]]:
    """A basis (rows, reduced echelon form) of the span of the gradients of ``poly``: the orthogonal
    complement of the directions it is constant along."""
    import flint

    derivs = [poly.derivative(i).to_dict() for i in range(n)]
    monomials = sorted({k for d in derivs for k in d})
    if not monomials:
        return []
    mat = flint.fmpq_mat(len(monomials), n, [derivs[i].get(m, 0) for m in monomials for i in range(n)])
    reduced, rank = mat.rref()
    return [[Fraction(int(reduced[a, i].p), int(reduced[a, i].q)) for i in range(n)] for a in range(rank)]


def _integer_rows(rows) -> tuple[tuple[int, ...], ...]:
    import math

    out = []
    for row in rows:
        den = math.lcm(*(q.denominator for q in row))
        ints = [int(q * den) for q in row]
        common = math.gcd(*ints)
        out.append(tuple(v // common for v in ints))
    return tuple(out)


def first_layer(net, values) -> tuple[tuple[int, ...], ...] | None:
    """The rows of W1 acting on each token (x_(r,j) row-major), when the first block is linear or an mlp:
    the network's own bottleneck coordinates, used when they span what g depends on."""
    block = net.blocks[0]
    letter = {"linear": "p", "mlp": "u"}.get(block.kind)
    if letter is None:
        return None
    names = net.weight_names()
    entries = {name: Fraction(v) for name, v in zip(names, values) if name.startswith(f"{letter}_(1,")}
    k, d, t = len(entries) // net.input, net.input, net.tokens
    if k * d != len(entries):
        return None
    W = [[entries[f"{letter}_(1,{i},{c})"] for c in range(1, d + 1)] for i in range(1, k + 1)]
    rows = []
    for j in range(t):
        for i in range(k):
            row = [Fraction(0)] * (d * t)
            for c in range(d):
                row[c * t + j] = W[i][c]
            rows.append(row)
    if any(all(v == 0 for v in row) for row in rows):
        return None
    return _integer_rows(rows)


def _same_span(a, b) -> bool:
    import flint

    def rank(rows):
        return flint.fmpq_mat(len(rows), len(rows[0]), [v for row in rows for v in row]).rank()

    return rank(list(a)) == rank(list(b)) == rank(list(a) + list(b)) == len(a)


def boundary_system(net, values, w) -> BoundarySystem:
    """g, its squarefree part, and that part through the bottleneck (refusing a zero or constant g)."""
    import flint

    g, _ = boundary_polynomial(net, values, w)
    n = net.input * net.tokens
    if g == 0:
        raise InputError(
            "the readout and the weights make <w, f_W(X)> the zero polynomial: there is no decision "
            "boundary (every input is on it)."
        )
    if g.total_degree() == 0:
        raise InputError(
            "the readout and the weights make <w, f_W(X)> a nonzero constant: there is no decision "
            "boundary (every input is classified the same)."
        )
    _, factors = g.factor()
    reduced = g.context().from_dict({(0,) * n: 1})
    for f, _mult in factors:
        reduced = reduced * f
    Q = _integer_rows(bottleneck(reduced, n))
    layer = first_layer(net, values)
    if layer is not None and len(layer) == len(Q) and _same_span(layer, Q):
        Q = layer  # the same space: h in the hidden pre-activations W1 X is sparse (a sum of powers)
    r = len(Q)
    S = tuple(tuple(sum(a * b for a, b in zip(Q[i], Q[j])) for j in range(r)) for i in range(r))
    zctx = flint.fmpq_mpoly_ctx.get(tuple(f"z{i}" for i in range(1, r + 1)), "degrevlex")
    zs = zctx.gens()
    Sinv = flint.fmpq_mat(r, r, [v for row in S for v in row]).inv()
    # X = Q^T S^-1 z is a right inverse of Q; g is constant along ker Q, so h(z) = g(Q^T S^-1 z)
    right = [
        sum((Sinv[a, b] * Q[b][k] * zs[a] for a in range(r) for b in range(r)), zctx.from_dict({})) for k in range(n)
    ]
    h = reduced.compose(*right, ctx=zctx)
    back = h.compose(
        *[sum((Q[a][k] * g.context().gens()[k] for k in range(n)), g.context().from_dict({})) for a in range(r)],
        ctx=g.context(),
    )
    if back != reduced:
        raise ResultError("the bottleneck reduction of g does not give g back: an internal error.")
    hz = _primitive(h, flint.fmpz_mpoly_ctx.get(zctx.names(), "degrevlex"))
    degrees = {sum(k) for k in g.to_dict()}
    return BoundarySystem(
        g=g,
        reduced=reduced,
        h=hz,
        Q=Q,
        S=S,
        n=n,
        degree=int(g.total_degree()),
        reduced_degree=int(reduced.total_degree()),
        factors=len(factors),
        homogeneous=len(degrees) == 1,
    )


def variable_names(bs: BoundarySystem) -> list[str]:
    return [f"z{i}" for i in range(1, bs.r + 1)] + ["l"]


def lagrange_system(bs: BoundarySystem, u) -> list[dict]:
    """h(z) = 0 and z - u - l S grad h(z) = 0 in (z, l), as {exponents: coefficient} (u rational)."""
    r = bs.r
    lift = lambda d, e=0: {tuple(int(x) for x in k) + (e,): int(c) for k, c in d.items()}
    grads = [bs.h.derivative(i).to_dict() for i in range(r)]
    system = [lift(bs.h.to_dict())]
    for i in range(r):
        eq: dict = {}
        for j in range(r):
            if bs.S[i][j]:
                for k, c in grads[j].items():
                    key = tuple(int(x) for x in k) + (1,)
                    eq[key] = eq.get(key, 0) - bs.S[i][j] * int(c)
        unit = tuple(1 if a == i else 0 for a in range(r)) + (0,)
        eq[unit] = eq.get(unit, 0) + 1
        const = (0,) * (r + 1)
        eq[const] = eq.get(const, 0) - Fraction(u[i])
        system.append({k: v for k, v in eq.items() if v != 0})
    return system


def singular_system(bs: BoundarySystem) -> list[dict]:
    """h = 0 and grad h = 0 in z: the singular locus of H (B's is the cylinder over it)."""
    polys = [bs.h] + [bs.h.derivative(i) for i in range(bs.r)]
    return [{tuple(int(x) for x in k): int(c) for k, c in p.to_dict().items()} for p in polys if p != 0]


def generic_point(bs: BoundarySystem, seed: int) -> list[int]:
    """A random integer u in the bottleneck coordinates off H (h(u) != 0 exactly)."""
    rng = random.Random(seed)
    for _ in range(100):
        u = [rng.randrange(-DATA_RANGE, DATA_RANGE + 1) for _ in range(bs.r)]
        if bs.h(*u) != 0:
            return u
    raise ResultError("100 random points all lie on the boundary: an internal error.")


def count_ed(bs: BoundarySystem, seed: int, msolve=None, threads: int = 1, primes=MSOLVE_PRIMES) -> dict:
    """The degree of the Lagrange system at a random u mod each prime; they must agree."""
    u = generic_point(bs, seed)
    system = lagrange_system(bs, u)
    names = variable_names(bs)
    counts, spent, source = [], 0.0, None
    start = time.perf_counter()
    for p in primes:
        ideal = leading_ideal(names, system, p, msolve=msolve, threads=threads, stem="msolve-boundary-ed")
        counts.append(ideal.degree if ideal.dimension == 0 else 0 if ideal.dimension < 0 else None)
        spent += ideal.elapsed_s
        source = source or ideal.input_file
    if counts[0] != counts[1]:
        raise ResultError(
            f"msolve's counts of the boundary's critical points mod {primes[0]} and {primes[1]} disagree "
            f"({counts[0]} and {counts[1]}): an unlucky prime or point; rerun with another seed."
        )
    if counts[0] is None:
        raise ResultError(
            "the Lagrange system at a random point has infinitely many solutions: an unlucky point; rerun "
            "with another seed."
        )
    return {"ed_degree": counts[0], "msolve_s": spent, "input": source, "elapsed_s": time.perf_counter() - start}
