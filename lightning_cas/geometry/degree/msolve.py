"""The ED degree by msolve (generic, standard and data metrics): the critical points of the squared distance,
as one zero-dimensional ideal in the weights of a gauge slice, its degree counted mod two primes that must agree.

The system (docs/critical.md, "msolve"): y = F(w) the coordinates of the neurovariety X (a basis of the
coefficient span of the output column, as for the Lagrange method), m = dim X weights free (chosen so the
differential is onto the tangent space) and the others fixed at random integers, a random data point and
form: phi(s) = |M F(s) - u|^2 (standard: M the identity on Macaulay2's coordinates; data: y a basis of
the evaluations f(X_n), M their coordinates in it, u in its image; geometry.degree.forms), and the ideal

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

from lightning_cas.core.methods import ED_METRICS
from lightning_cas.core.network import Network
from lightning_cas.errors import InputError, ResultError, TooLargeError, UnsupportedError
from lightning_cas.geometry.degree.forms import coefficient_polynomials, data_form, output_columns, pivots
from lightning_cas.msolve.runner import msolve_version
from lightning_cas.msolve.solve import leading_ideal
from lightning_cas.results.degrees import EDDegreeResult, Metric

MSOLVE_PRIMES = (1_073_741_789, 1_073_741_783)  # the two largest primes below 2^30 (msolve's fields hold 31 bits)
MAX_WEIGHTS = 40  # the coefficient expansion, as the numerical methods' guard
MAX_FREE = 12  # slice dimension: the determinant has degree m (deg F - 1) in m variables
DATA_RANGE = 2**15  # random integers of the slice, the form and the data point are drawn from +-this


def coordinate_polynomials(arch: Network):
    """The flint context of the weights and a basis of the coefficient span of the output column (first come
    first kept, in Macaulay2's order: ed_forms), as fmpz_mpoly: the coordinates y = F(w) of the neurovariety."""
    import flint

    net = arch
    names = tuple(f"w{i}" for i in range(net.parameters))
    ctx = flint.fmpz_mpoly_ctx.get(names, "degrevlex")
    columns = set(output_columns(net))
    polys = [poly for (_row, token, _exps), poly in coefficient_polynomials(net) if token in columns and poly]
    return ctx, [ctx.from_dict(polys[j]) for j in pivots(polys)]


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


def critical_systems(arch, seed: int, p: int, metric: str = "generic", inputs=None):
    """The variables, the critical system and the fiber system (each with det(R J) last, to saturate by), and
    (n, m): the coordinates and the dimension. Integer data from ``seed``, the same for every prime. The
    ``metric``'s form: generic (random), standard (the identity on Macaulay2's coordinates), data (the
    evaluations at ``inputs``, exact rationals (N, d_0, t), with their Gram form)."""
    ctx, coords, form = metric_coordinates(arch, metric, inputs)
    return slice_systems(ctx, coords, seed, p, form)


def metric_coordinates(arch, metric: str, inputs=None):
    """The weights' context, the coordinates (fmpz_mpoly) and the form A (rows of integers, residuals
    A (y - u); None: a random square one) of the ``metric``."""
    if metric != "data":
        ctx, coords = coordinate_polynomials(arch)
        n = len(coords)
        identity = [[int(i == j) for j in range(n)] for i in range(n)]
        return ctx, coords, identity if metric == "standard" else None
    import flint

    basis, form = data_form(arch, inputs)
    ctx = flint.fmpz_mpoly_ctx.get(tuple(f"w{i}" for i in range(arch.parameters)), "degrevlex")
    return ctx, [ctx.from_dict(b) for b in basis], form


def slice_systems(ctx, coords, seed: int, p: int, form=None, section: bool = False):
    """:func:`critical_systems` of any variety given as the closure of the image of ``coords`` (fmpz_mpoly in
    the variables of ``ctx``, linearly independent): the ED problem of every parametrized variety. ``form``:
    the residuals' matrix A (|A (y - u)|^2, k x n integers), or None for a random n x n one. ``section``:
    instead of the critical equations, m random affine equations in y (a generic linear space of codimension
    m = dim X: its points on X count the degree, geometry.degree.msolve_degree)."""
    import flint

    n = len(coords)
    rng = random.Random(seed)
    m, free = gauge(ctx, coords, rng, p)
    if m > MAX_FREE:
        raise TooLargeError(
            f"the msolve method would solve in {m} free weights (limit {MAX_FREE}: the determinant "
            "of the saturation grows with their number); choose a smaller architecture, or a "
            + ("numerical method (degree --method numerical)." if section else "--method monodromy (a lower bound).")
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
    if section:
        L = [[draw() for _ in range(n + 1)] for _ in range(m)]
        equations = [sum((row[k] * F[k] for k in range(n)), zero) - row[n] for row in L]
    elif form is None:  # a random form; the data point drawn in its image
        M, target = [[draw() for _ in range(n)] for _ in range(n)], [draw() for _ in range(n)]
    else:
        M, u = form, [draw() for _ in range(n)]
        target = [sum(a * b for a, b in zip(row, u)) for row in M]
    if not section:
        residuals = [sum((M[r][k] * F[k] for k in range(n)), zero) - target[r] for r in range(len(M))]
        phi = sum((q * q for q in residuals), zero)
        equations = [phi.derivative(i) for i in range(m)]
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
    return list(names), as_dicts(equations) + [det.to_dict()], as_dicts(fiber) + [det.to_dict()], (n, m)


def saturated_degree(names, system, prime, msolve, threads, what: str) -> tuple[int | None, float, str]:
    """The degree of the saturation of the system by its last polynomial mod ``prime`` (None: not finite)."""
    stem = what if what.startswith("msolve-") else f"msolve-ed-{what}"
    ideal = leading_ideal(names, system, prime, saturate=True, msolve=msolve, threads=threads, stem=stem)
    return (
        (ideal.degree if ideal.dimension == 0 else 0 if ideal.dimension < 0 else None),
        ideal.elapsed_s,
        ideal.input_file,
    )


def check_size(arch, what: str, hint: str = "") -> None:
    """The msolve routes' refusals before any work: a polynomial network of at most MAX_WEIGHTS weights."""
    if not arch.polynomial:
        raise UnsupportedError(f"the msolve method needs a polynomial network (softmax has no {what}).")
    if arch.parameters > MAX_WEIGHTS:
        raise TooLargeError(
            f"the msolve method would expand {arch.parameters} weights (limit {MAX_WEIGHTS}); choose a "
            f"smaller architecture{hint}."
        )


def msolve_ed(
    arch,
    *,
    metric: str = "generic",
    inputs=None,
    source=None,
    seed: int = 0,
    timeout: float | None = None,
    msolve=None,
    threads: int = 1,
    primes: tuple[int, int] = MSOLVE_PRIMES,
) -> EDDegreeResult:
    """The ED degree of the neurovariety by msolve (see the module docstring), within ``timeout``, for the
    ``metric``'s form; the data metric's ``inputs`` are exact rationals (N, d_0, t), ``source`` their Source."""
    from lightning_cas.system.deadline import stoppable, time_limit

    if metric not in ED_METRICS:
        raise UnsupportedError(f"the msolve method counts the {', '.join(ED_METRICS)} ED degrees, not {metric!r}.")
    if (metric == "data") != (inputs is not None):
        raise InputError("the data metric needs inputs, and inputs go with the data metric only.")
    check_size(arch, "ED degree")
    start = time.perf_counter()
    with time_limit(timeout):
        counts, fibers, sources, spent = [], [], [], 0.0
        # the slice's determinant is long C calls an alarm cannot interrupt: built in a child the deadline kills
        names, system, fiber, (n, m) = stoppable(critical_systems, arch, seed, primes[0], metric, inputs)
        for prime in primes if system is not None else ():
            crit, t1, src = saturated_degree(names, system, prime, msolve, threads, "critical")
            fib, t2, _ = saturated_degree(names, fiber, prime, msolve, threads, "fiber")
            counts.append(crit), fibers.append(fib), sources.append(src)
            spent += t1 + t2
        version = msolve_version(msolve)
        span = len(coordinate_polynomials(arch)[1]) if metric == "data" else None
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
        method_detail=f"msolve {version}: critical points of {FORMS[metric]} on a gauge slice of {m} free "
        "weights, saturated by det(R dF/ds) (no rank-deficient point), its degree over "
        f"GF(p) for p = {primes[0]} and {primes[1]}; ED degree = critical points / points "
        "of the slice over a generic point",
        certainty_detail="the two primes agree; random integer slice, form and data point: wrong only "
        "for unlucky choices",
        notes=tuple(metric_notes(metric, n, m, span, source)),
    )
    if metric == "data":
        common.update(degenerate=n < span, span=span, inputs=source)
    if system is None:
        return EDDegreeResult(
            **{
                **common,
                "notes": common["notes"]
                + (
                    f"the variety fills its {n} coordinates: the data point itself is the one critical point"
                    if m == n
                    else "the network is constant: its variety is a point, the one critical point",
                ),
            },
            ed_degree=1,
            solutions=1,
        )
    return _counted(common, counts, fibers, sources, spent, primes)


FORMS = {
    "generic": "|M F(s) - u|^2 (M random)",
    "standard": "|F(s) - u|^2 (F: Macaulay2's coordinates)",
    "data": "sum_n |f(X_n) - Y_n|^2 (Y in the evaluations' span)",
}


def metric_notes(metric: str, n: int, m: int, span, source) -> list[str]:
    """The words ed_records gives the Lagrange route's data and standard metrics, for the same facts."""
    if metric == "standard":
        return [
            "standard form: the Euclidean form in the coordinates y_i, a basis of the coefficient span "
            "(coefficients of token monomials of output token 1 in Macaulay2's order, first come first kept; "
            "`lightning-cas implicit --coordinates` lists them)"
        ]
    if metric != "data":
        return []
    count = source.count if source is not None else "the"
    notes = [
        f"the data metric of {count} inputs "
        + (
            f"is degenerate: the evaluation map has a {span - n}-dimensional kernel on the {span}-dimensional "
            f"coefficient span, so the critical points are counted on the projection of the neurovariety "
            f"(dimension {m} in {n} coordinates)"
            if n < span
            else "is non-degenerate on the coefficient span (the count is that of the neurovariety for this form)"
        )
    ]
    if m == n:
        notes.append(
            "the projection fills its space: every data point is reached with zero loss (a zero-loss fiber), "
            "one critical point"
        )
    return notes


def agreed(counts, fibers, primes, what: str) -> tuple:
    """The count and the slice's fiber count, the same mod both primes, or a one-line refusal: two primes
    that disagree mean an unlucky prime or choice, never a number to print."""
    if counts[0] != counts[1] or fibers[0] != fibers[1]:
        raise ResultError(
            f"msolve's counts mod {primes[0]} and {primes[1]} disagree ({what} {counts[0]} and {counts[1]}, "
            f"slice fibers {fibers[0]} and {fibers[1]}): an unlucky prime or choice; rerun with another seed."
        )
    return counts[0], fibers[0]


def _counted(common: dict, counts, fibers, sources, spent, primes) -> EDDegreeResult:
    """The result from msolve's counts mod both primes: they must agree, the fiber degree divide the count."""
    crit, fib = agreed(counts, fibers, primes, "critical points")
    notes = list(common.pop("notes"))
    notes.append(f"msolve took {spent:.3g} s on the critical and fiber systems mod both primes; input: {sources[0]}")
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
