"""The generic ED degree by msolve: the critical points of the squared distance, as one zero-dimensional
ideal in the weights of a gauge slice, its degree counted mod two primes that must agree.

The system (docs/critical.md, "msolve"): y = F(w) the coordinates of the neurovariety X (a basis of the
coefficient span of the output column, as for the Lagrange method), m = dim X weights free (chosen so the
differential is onto the tangent space) and the others fixed at random integers, a random data point and
form: phi(s) = |M F(s) - u|^2, and the ideal

    ( d phi / d s_1, ..., d phi / d s_m ) : det(R J(s))^oo,

J = dF/ds (n x m), R a random m x n matrix. The saturation (msolve's f4sat, ``-S``; the same ideal as a
Rabinowitsch variable z det(R J) - 1 would give, measured faster) removes by construction every point
where J has rank < m: the vertex, zero weights, degenerate weights, which otherwise form positive-
dimensional families and isolated spurious solutions. What is left are the points where the slice map is
a local immersion and F(s) a critical point of the distance on X; for generic data each critical point of
X is hit by exactly f of them, f the number of points of the slice over a generic point of X (the same way:
(F(s) - F(s0)) : det(R J)^oo). So ED degree = N / f, N and f the degrees of the two zero-dimensional ideals,
read from the leading monomials of their Groebner bases (the staircase).

Everything is integer data reduced mod each prime: two counts that agree are the counts of the one
system over QQ unless both primes are unlucky, and that system's count is the ED degree unless the random
choices (slice, form, data point) are; wrong only for unlucky choices, as the Lagrange method.
"""

from __future__ import annotations

import random
import time

from lightning_cas.core.network import Network
from lightning_cas.errors import ResultError, TooLargeError, UnsupportedError
from lightning_cas.msolve.runner import msolve_version
from lightning_cas.msolve.solve import leading_ideal
from lightning_cas.results.degrees import EDDegreeResult, Metric

MSOLVE_PRIMES = (1_073_741_789, 1_073_741_783)  # the two largest primes below 2^30 (msolve's fields hold 31 bits)
MAX_WEIGHTS = 40  # the coefficient expansion, as the numerical methods' guard
MAX_FREE = 12  # slice dimension: the determinant has degree m (deg F - 1) in m variables
DATA_RANGE = 2**15  # random integers of the slice, the form and the data point are drawn from +-this


def output_columns(net: Network) -> list[int]:
    """The output tokens whose coefficients are the coordinates (as Macaulay2's lcasOutputColumns with one
    column): the first; in a causal network the last; causal with biases all of them."""
    causal = any(getattr(b, "causal", False) for b in net.blocks)
    if causal and net.biased:
        return list(range(net.tokens))
    return [net.tokens - 1] if causal else [0]


def coordinate_polynomials(arch: Network):
    """The flint context of the weights and a basis of the coefficient span (first come first kept), as
    fmpz_mpoly: the coordinates y = F(w) of the neurovariety."""
    import flint
    import sympy

    from lightning_cas.core.model import coefficient_map, flat_weight_symbols

    net = arch
    symbols = flat_weight_symbols(net)
    names = tuple(f"w{i}" for i in range(len(symbols)))
    ctx = flint.fmpz_mpoly_ctx.get(names, "degrevlex")
    columns = set(output_columns(net))
    polys = []
    for (_row, token, _key), expr in sorted(coefficient_map(net).items()):
        if token in columns:
            terms = sympy.Poly(expr, *symbols).as_dict()
            polys.append(ctx.from_dict({tuple(int(e) for e in k): int(c) for k, c in terms.items()}))
    monomials = sorted({k for p in polys for k in p.to_dict()})
    if not polys or not monomials:
        return ctx, []
    rows = [[p.to_dict().get(k, 0) for k in monomials] for p in polys]
    # the pivot columns of the transposed coefficient matrix: the first independent coefficients, exactly
    reduced, rank = flint.fmpq_mat(
        len(monomials), len(polys), [rows[j][i] for i in range(len(monomials)) for j in range(len(polys))]
    ).rref()
    pivots = []
    for i in range(rank):
        pivots.append(next(j for j in range(len(polys)) if reduced[i, j] != 0))
    return ctx, [polys[j] for j in pivots]


def _rank_mod(rows, p: int) -> int:
    import flint

    return flint.nmod_mat([[int(v) % p for v in r] for r in rows], p).rank() if rows and rows[0] else 0


def gauge(ctx, coords, rng: random.Random, p: int) -> tuple[int, list[int]]:
    """dim X (the Jacobian's rank at a random point mod p) and m weights, in a random order, whose columns
    of the Jacobian there are independent: the free weights of the slice."""
    nweights = ctx.nvars()
    point = [rng.randrange(-DATA_RANGE, DATA_RANGE + 1) for _ in range(nweights)]
    columns = [[int(f.derivative(i)(*point)) % p for f in coords] for i in range(nweights)]
    dim = _rank_mod(columns, p)
    order = list(range(nweights))
    rng.shuffle(order)
    free: list[int] = []
    for i in order:
        if len(free) < dim and _rank_mod([columns[c] for c in free + [i]], p) > len(free):
            free.append(i)
    return dim, sorted(free)


def _determinant(matrix):
    """det of a square matrix of fmpz_mpoly by fraction-free (Bareiss) elimination, with row swaps."""
    a = [row[:] for row in matrix]
    n = len(a)
    one = a[0][0].context().from_dict({(0,) * a[0][0].context().nvars(): 1})
    prev, sign = one, 1
    for k in range(n - 1):
        pivot = next((i for i in range(k, n) if a[i][k] != 0), None)
        if pivot is None:
            return one - one
        if pivot != k:
            a[k], a[pivot], sign = a[pivot], a[k], -sign
        for i in range(k + 1, n):
            for j in range(k + 1, n):
                a[i][j] = (a[i][j] * a[k][k] - a[i][k] * a[k][j]) / prev
        prev = a[k][k]
    return sign * a[n - 1][n - 1]


def critical_systems(arch, seed: int, p: int):
    """The variables, the critical system and the fiber system (each with det(R J) last, to saturate by), and
    (n, m): the coordinates and the dimension. Integer data from ``seed``, the same for every prime."""
    return slice_systems(*coordinate_polynomials(arch), seed, p)


def slice_systems(ctx, coords, seed: int, p: int):
    """:func:`critical_systems` of any variety given as the closure of the image of ``coords`` (fmpz_mpoly in
    the variables of ``ctx``, linearly independent): the ED problem of every parametrized variety."""
    import flint

    n = len(coords)
    rng = random.Random(seed)
    m, free = gauge(ctx, coords, rng, p)
    if m > MAX_FREE:
        raise TooLargeError(
            f"the msolve method would solve in {m} free weights (limit {MAX_FREE}: the determinant "
            "of the Rabinowitsch equation grows with their number); choose a smaller architecture "
            "or --method monodromy (a lower bound)."
        )
    if m == n or m == 0:  # the variety fills its space, or is a point: one critical point, nothing to solve
        return None, None, None, (n, m)
    names = tuple(f"s{i}" for i in range(m))
    sctx = flint.fmpz_mpoly_ctx.get(names, "degrevlex")
    gens = sctx.gens()
    const = lambda c: sctx.from_dict({(0,) * m: c}) if c else sctx.from_dict({})
    draw = lambda: rng.randrange(-DATA_RANGE, DATA_RANGE + 1)
    args = [gens[free.index(i)] if i in free else const(draw() or 1) for i in range(ctx.nvars())]
    F = [f.compose(*args, ctx=sctx) for f in coords]
    zero = const(0)
    M = [[draw() for _ in range(n)] for _ in range(n)]
    u = [draw() for _ in range(n)]
    residuals = [sum((M[r][k] * F[k] for k in range(n)), zero) - u[r] for r in range(n)]
    phi = sum((q * q for q in residuals), zero)
    gradient = [phi.derivative(i) for i in range(m)]
    R = [[draw() for _ in range(n)] for _ in range(m)]
    J = [[F[k].derivative(i) for i in range(m)] for k in range(n)]
    RJ = [[sum((R[a][k] * J[k][i] for k in range(n)), zero) for i in range(m)] for a in range(m)]
    det = _determinant(RJ)
    if det == 0:
        raise ResultError(
            "the random m x m part of the slice's Jacobian is singular everywhere: an unlucky choice; "
            "rerun with another seed."
        )
    s0 = [draw() for _ in range(m)]
    fiber = [f - int(f(*s0)) for f in F]
    as_dicts = lambda polys: [q.to_dict() for q in polys if q != 0]
    return list(names), as_dicts(gradient) + [det.to_dict()], as_dicts(fiber) + [det.to_dict()], (n, m)


def _count(names, system, prime, msolve, threads, what: str) -> tuple[int | None, float, str]:
    """The degree of the saturation of the system by its last polynomial mod ``prime`` (None: not finite)."""
    ideal = leading_ideal(names, system, prime, saturate=True, msolve=msolve, threads=threads, stem=f"msolve-ed-{what}")
    return (
        (ideal.degree if ideal.dimension == 0 else 0 if ideal.dimension < 0 else None),
        ideal.elapsed_s,
        ideal.input_file,
    )


def msolve_ed(
    arch,
    *,
    metric: str = "generic",
    seed: int = 0,
    timeout: float | None = None,
    msolve=None,
    threads: int = 1,
    primes: tuple[int, int] = MSOLVE_PRIMES,
) -> EDDegreeResult:
    """The generic ED degree of the neurovariety by msolve (see the module docstring), within ``timeout``."""
    from lightning_cas.system.deadline import time_limit

    if metric != "generic":
        raise UnsupportedError(f"the msolve method counts the generic ED degree, not the {metric} one.")
    net = arch
    if not net.polynomial:
        raise UnsupportedError("the msolve method needs a polynomial network (softmax has no ED degree).")
    if net.parameters > MAX_WEIGHTS:
        raise TooLargeError(
            f"the msolve method would expand {net.parameters} weights (limit {MAX_WEIGHTS}); choose a "
            "smaller architecture."
        )
    start = time.perf_counter()
    with time_limit(timeout):
        counts, fibers, sources, spent = [], [], [], 0.0
        names, system, fiber, (n, m) = critical_systems(arch, seed, primes[0])
        for prime in primes if system is not None else ():
            crit, t1, src = _count(names, system, prime, msolve, threads, "critical")
            fib, t2, _ = _count(names, fiber, prime, msolve, threads, "fiber")
            counts.append(crit), fibers.append(fib), sources.append(src)
            spent += t1 + t2
        version = msolve_version(msolve)
    common = dict(
        architecture=arch,
        metric=Metric(metric),
        dimension=m,
        coordinates=n,
        method="msolve",
        certainty="probabilistic",
        seed=seed,
        m2_version=None,
        prime=primes[0],
        primes=tuple(primes),
        elapsed_s=time.perf_counter() - start,
        method_detail=f"msolve {version}: critical points of |M F(s) - u|^2 on a gauge slice of {m} free "
        "weights, saturated by det(R dF/ds) (no rank-deficient point), its degree over "
        f"GF(p) for p = {primes[0]} and {primes[1]}; ED degree = critical points / points "
        "of the slice over a generic point",
        certainty_detail="the two primes agree; random integer slice, form and data point: wrong only "
        "for unlucky choices",
    )
    if system is None:
        return EDDegreeResult(
            **common,
            ed_degree=1,
            solutions=1,
            notes=(
                f"the variety fills its {n} coordinates: the data point itself is the one critical point"
                if m == n
                else "the network is constant: its variety is a point, the one critical point",
            ),
        )
    if counts[0] != counts[1] or fibers[0] != fibers[1]:
        raise ResultError(
            f"msolve's counts mod {primes[0]} and {primes[1]} disagree (critical points {counts[0]} "
            f"and {counts[1]}, slice fibers {fibers[0]} and {fibers[1]}): an unlucky prime or "
            "choice; rerun with another seed."
        )
    crit, fib = counts[0], fibers[0]
    notes = [f"msolve took {spent:.3g} s on the critical and fiber systems mod both primes; input: {sources[0]}"]
    if crit is None or not fib:
        notes.append(
            "the critical system has infinitely many solutions (or the slice misses a generic fiber): "
            "the random choices were not generic; rerun with another seed"
        )
        return EDDegreeResult(**common, ed_degree=None, solutions=crit, notes=tuple(notes), script=sources[0])
    if crit % fib:
        raise ResultError(
            f"{crit} critical points on the slice are not a multiple of its {fib} points over a "
            "generic point of the variety: the random choices were not generic; rerun with another "
            "seed."
        )
    notes.insert(0, f"{crit} critical points on the gauge slice, {fib} over each point of the variety")
    return EDDegreeResult(**common, ed_degree=crit // fib, solutions=crit, notes=tuple(notes), script=sources[0])
