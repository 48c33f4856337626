"""The local learning coefficient λ(w*) of a polynomial network at given weights, as a sound bracket.

Setting (singular learning theory): regression y = f_{w*}(X) + Gaussian noise, inputs with a density, so
K(w) = E|f_w(X) − f_{w*}(X)|² is comparable near w* to Σ (c_α(w) − c_α(w*))² and λ(w*) is the real log
canonical threshold of K at w*. Every bound below is proved (core.learning names the theorem) from
quantities this package computes exactly or as one-sided bounds:
- lower: the rank of the differential at w* (mod p ≤ over QQ, so a rank mod p is a lower bound too),
  Aoyagi's value for linear stacks (the global coefficient over the fiber is at most the local one);
- upper: (n − dim_{w*} F)/2 with dim_{w*} F bounded from below by the orbit of the named group through w*
  (exact over QQ), by n − r for an upper bound r of the generic rank, or computed exactly by Macaulay2
  (the tangent cone of the fiber ideal at w*) within a size guard;
- equalities: the generic rank, the closed forms of linear stacks at 0 and of one attention layer at points
  where V = 0 or KᵀQ = 0 (a product of disjoint groups: λ = min, orders add).
"""

from __future__ import annotations

import time
from fractions import Fraction

from lightning_cas.backends.local import rank_at_point_modp
from lightning_cas.backends.modp import dimension_modp
from lightning_cas.core import learning
from lightning_cas.core.learning import Bound
from lightning_cas.core.network import Linear, Network
from lightning_cas.core.numbers import rational_text
from lightning_cas.core.symmetry import orbit_dimension, orbit_rank_modp, random_weights
from lightning_cas.errors import M2ParseError, UnsupportedError
from lightning_cas.macaulay2.network import check_fiber_dimension, check_parameters, package_params
from lightning_cas.macaulay2.parse import json_int, json_str
from lightning_cas.options import resolve
from lightning_cas.results.learning import LearningBound, LearningCoefficientResult
from lightning_cas.system.points import WeightPoint, as_point, load_weights

LCT_MAX_WEIGHTS = 6  # Dmodules' lct: 4 weights in a second, 6 in minutes (the 2 -> 1 layer at 0: 194 s)
LOCAL_FIBER_MAX_WEIGHTS = 14  # the tangent cone of the fiber ideal: Macaulay2 finishes in seconds up to here
EXACT_ORBIT_MAX_WEIGHTS = 300  # the orbit through w* over QQ; beyond, its rank mod p (a lower bound)
SETTING = (
    "regression y = f_w*(X) + Gaussian noise, inputs with a density (a positive definite Gram matrix of the "
    "token monomials): λ is the real log canonical threshold of K(w) = E|f_w(X) - f_w*(X)|^2 at w*"
)


def learning_coefficient(
    arch: Network,
    at=None,
    *,
    seed: int = 0,
    timeout: float | None = None,
    m2: str | None = None,
    session=None,
    fiber: bool = True,
    lct: bool = False,
) -> LearningCoefficientResult:
    """λ(w*) at the weights ``at`` (a file, a WeightPoint, the JSON form or flat weights; random integers from
    ``seed`` when None): exact when the bounds meet, else the bracket, each bound with its reason.
    ``fiber`` lets Macaulay2 compute the fiber's dimension at w* when the network is small enough; ``lct`` adds
    the complex log canonical threshold of the fiber ideal (Dmodules, within LCT_MAX_WEIGHTS weights)."""
    opts = resolve("llc", arch, seed=seed, timeout=timeout, m2=m2, session=session)
    net = arch
    if not net.polynomial and "relu" in net.functions:
        raise UnsupportedError(
            "llc: a ReLU network is not analytic, and the learning coefficient here rests on analytic (or "
            "polynomial) models; use a polynomial or a smooth activation (gelu, tanh)."
        )
    start = time.perf_counter()
    with opts.deadline():
        point, source = _point(net, at, opts.seed)
        if not net.polynomial:
            return _analytic(net, point, opts).finish(source=source, elapsed_s=time.perf_counter() - start)
        values = list(point.values)
        if lct and net.parameters > LCT_MAX_WEIGHTS:
            raise UnsupportedError(
                f"llc --lct: Dmodules' lct runs up to {LCT_MAX_WEIGHTS} weights (this network has "
                f"{net.parameters}); leave --lct out for the other bounds."
            )
        result = _bracket(net, values, opts, point, fiber, lct)
    return result.finish(source=source, elapsed_s=time.perf_counter() - start)


def _analytic(net: Network, point, opts) -> LearningCoefficientResult:
    """An analytic network (softmax, gelu, tanh, LayerNorm): λ = r/2 with m = 1 at a point of generic rank (the
    rank is constant near w*, so the fiber is an analytic manifold of codimension r there); refused elsewhere,
    since no bound here is proved for its singular points. The rank at w* is the certified one (arb balls)."""
    from lightning_cas.api import dimension

    n = net.parameters
    at_point = dimension(net, at=point, seed=opts.seed)
    proved = at_point.certificate.lower if at_point.certificate is not None else at_point.dimension
    orbit = orbit_rank_modp(net, random_weights(net, opts.seed))
    generic_up = n - orbit
    if proved < generic_up:
        raise UnsupportedError(
            f"llc: the rank at w* is proved to be at least {proved}, and the generic rank may be as large as "
            f"{generic_up}; for a network with {net.not_polynomial} the learning coefficient is known only at points "
            "of generic rank (λ = rank/2), so it is not stated here."
        )
    why = Bound(
        Fraction(proved, 2),
        f"rank J(w*) >= {proved} (certified with arb balls) reaches the generic rank's upper bound n - orbit = "
        f"{generic_up}: an analytic map of constant rank near w*, so λ = {proved}/2 with multiplicity 1",
    )
    return LearningCoefficientResult.from_bounds(
        architecture=net,
        parameters=n,
        rank_at_point=proved,
        generic_rank=(proved, generic_up),
        bounds=(LearningBound.of("equal", why, 1),),
        setting=SETTING.replace("(a positive definite Gram matrix of the token monomials)", "(an analytic model)"),
        explanation=(f"w* has the generic rank {proved}: a regular point of the parametrization",),
        notes=tuple(at_point.notes),
        primes=tuple(at_point.primes),
        seed=opts.seed,
        m2_version=None,
    )


def _point(net: Network, at, seed: int):
    if at is None:
        values = tuple(Fraction(v) for v in random_weights(net, seed))
        return WeightPoint(net, values), f"random integers in +-[1, 9] (seed {seed})"
    point = load_weights(net, at) if isinstance(at, str) or hasattr(at, "__fspath__") else as_point(net, at)
    return point, point.source or "given weights"


def _bracket(net: Network, values: list[Fraction], opts, point, fiber: bool, lct: bool) -> LearningCoefficientResult:
    n = net.parameters
    at_point = rank_at_point_modp(net, point, seed=opts.seed)
    rank = at_point.dimension  # mod p: never above the rank over QQ
    generic_low = dimension_modp(net, seed=opts.seed).dimension  # a rank at a random point: never above r
    orbit_generic = orbit_rank_modp(net, random_weights(net, opts.seed))  # never above the generic orbit
    generic_up = min(n - orbit_generic, net.ambient_dimension or n)
    bounds: list[LearningBound] = []
    notes = [
        f"rank of the differential at w*: {rank} (mod {', '.join(map(str, at_point.primes))}; a lower bound of "
        "the rank over QQ)",
        f"generic rank r: {generic_low} <= r <= {generic_up} (a rank at a random point; parameters minus the "
        "named group's orbit there)",
    ]
    regular = learning.regular(rank, generic_up, n) if rank >= generic_up else None
    if regular is not None:
        bounds.append(LearningBound.of("equal", regular, 1))
    else:
        bounds.append(
            LearningBound.of(
                "lower",
                Bound(
                    Fraction(rank, 2),
                    f"rank J(w*)/2 = {rank}/2: the Hessian of K at w* has this rank (splitting lemma)",
                ),
            )
        )
        bounds += _fiber_bounds(net, values, rank, generic_up, opts if fiber else None, notes)
        bounds += _closed_forms(net, values)
        if lct:
            bounds.append(_lct_bound(net, values, opts.macaulay2))
    explanation = _explain(net, values, rank, generic_low, generic_up, at_point.primes[0], opts.seed)
    return LearningCoefficientResult.from_bounds(
        architecture=net,
        parameters=n,
        rank_at_point=rank,
        generic_rank=(generic_low, generic_up),
        bounds=tuple(bounds),
        setting=SETTING,
        explanation=tuple(explanation),
        notes=tuple(notes),
        primes=at_point.primes,
        seed=opts.seed,
        m2_version=None,
    )


def _fiber_bounds(net: Network, values, rank: int, generic_up: int, opts, notes: list[str]) -> list[LearningBound]:
    """Upper bounds from lower bounds of the fiber's dimension at w*, and the exact one from Macaulay2."""
    n = net.parameters
    out = [
        LearningBound.of(
            "upper",
            Bound(
                Fraction(generic_up, 2),
                f"r/2 <= {generic_up}/2: every component of every fiber has dimension at least n - r",
            ),
        )
    ]
    if n <= EXACT_ORBIT_MAX_WEIGHTS:
        orbit = orbit_dimension(net, values)
        out.append(
            LearningBound.of(
                "upper",
                Bound(
                    Fraction(n - orbit, 2),
                    f"(n - {orbit})/2: the named group's "
                    f"orbit through w* (dimension {orbit}, over QQ) lies in the fiber",
                ),
            )
        )
    if n <= LOCAL_FIBER_MAX_WEIGHTS and opts is not None:
        local = _local_fiber_dimension(net, values, opts.macaulay2)
        notes.append(
            f"the fiber through w* has dimension {local} at w* (Macaulay2: the tangent cone of the fiber "
            "ideal at w*, over QQ)"
        )
        if n - local < rank:
            raise AssertionError(f"the fiber's codimension {n - local} at w* is below the rank {rank} there")
        out.append(
            LearningBound.of(
                "upper",
                Bound(
                    Fraction(n - local, 2),
                    f"(n - dim F)/2 = {n - local}/2: the fiber has dimension {local} at w* (Macaulay2, exact)",
                ),
            )
        )
        if n - local == rank:
            out.append(
                LearningBound.of(
                    "equal",
                    Bound(Fraction(rank, 2), f"rank J(w*) = codim F = {rank}: the fiber is smooth at w*, λ = rank/2"),
                    1,
                )
            )
    return out


def _local_fiber_dimension(net: Network, values, m2) -> int:
    columns = 1 if net.paper is not None else net.tokens  # a causal or biased network: every output token
    params = {**package_params(net), "weightPoint": values, "columns": columns}
    script, rec = m2.run("local_fiber", params)
    check_parameters(net, rec, script)
    return check_fiber_dimension(net, json_int(rec, "local_fiber_dimension", script), script)


def _lct_bound(net: Network, values, m2) -> LearningBound:
    """λ >= lct/2: the real threshold of a sum of squares is at least half the complex log canonical threshold of
    the ideal (Saito 2007); Dmodules' lct is global, at most the one at w*."""
    columns = 1 if net.paper is not None else net.tokens
    script, rec = m2.run("lct", {**package_params(net), "weightPoint": values, "columns": columns})
    check_parameters(net, rec, script)
    text = json_str(rec, "lct", script)
    value = rational_text(text.replace(" ", ""))
    if value is None or not 0 < value <= net.parameters:
        raise M2ParseError(
            f"Macaulay2 reported the log canonical threshold {text!r}; expected a rational in (0, {net.parameters}]",
            script,
        )
    return LearningBound.of(
        "lower",
        Bound(
            value / 2,
            f"lct/2 = {_fraction(value)}/2: half the complex log canonical "
            "threshold of the fiber ideal (Dmodules; Saito 2007)",
        ),
    )


def _fraction(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def _closed_forms(net: Network, values) -> list[LearningBound]:
    stack = _linear_stack(net)
    if stack is not None:
        return _linear_bounds(net, values, stack)
    paper = net.paper
    if (
        paper is not None
        and paper.depth == 1
        and not paper.multihead
        and paper.tokens >= 2
        and paper.normalization == "none"
    ):
        return _one_layer_bounds(paper, values)
    return []


def _linear_stack(net: Network) -> list[int] | None:
    """The widths of a stack of bias-free linear blocks, else None."""
    if not all(isinstance(b, Linear) and not b.bias and not b.residual for b in net.blocks):
        return None
    return list(net.widths)


def _matrices(net: Network, values) -> list[list[list[Fraction]]]:
    out = []
    for m in net.weight_matrices:
        flat = values[m.offset : m.stop]
        out.append([list(flat[r * m.cols : (r + 1) * m.cols]) for r in range(m.rows)])
    return out


def _rank(rows) -> int:
    import flint

    if not rows or not rows[0]:
        return 0
    return flint.fmpq_mat(
        len(rows), len(rows[0]), [flint.fmpq(v.numerator, v.denominator) for r in rows for v in r]
    ).rank()


def _product(mats):
    out = mats[0]
    for M in mats[1:]:
        out = [
            [sum((M[i][k] * out[k][j] for k in range(len(out))), Fraction(0)) for j in range(len(out[0]))]
            for i in range(len(M))
        ]
    return out


def _linear_bounds(net: Network, values, widths: list[int]) -> list[LearningBound]:
    """Aoyagi's value at the true map's rank: exact at w* = 0 (K is homogeneous, so 0 is the deepest point of
    its fiber), a lower bound elsewhere (the global coefficient over the fiber is the least local one)."""
    r = _rank(_product(_matrices(net, values)))
    lam, m = learning.deep_linear(widths, r)
    where = f"Aoyagi's formula for linear stacks, widths {'-'.join(map(str, widths))}, true rank {r}"
    if not any(values):
        return [
            LearningBound.of(
                "equal",
                Bound(lam, f"{where}, at w* = 0 (the origin is the deepest point of the fiber of a homogeneous K)"),
                m,
            )
        ]
    return [
        LearningBound.of("lower", Bound(lam, f"{where}: the coefficient over the whole fiber, at most the local one"))
    ]


def _one_layer_bounds(paper, values) -> list[LearningBound]:
    """One lightning layer f = V X (Xᵀ KᵀQ X), t >= 2: the coefficients are linear and injective on the rank-one
    tensors V ⊗ A (A = KᵀQ; docs/learning.md), so where V* ⊗ A* = 0, K ≍ |V|²·|KᵀQ|², a product of disjoint
    groups of weights: λ = min(λ_V, λ_A), the orders adding when they are equal."""
    ((a, d, e),) = paper.layer_shapes
    Q = [values[i * d : (i + 1) * d] for i in range(a)]
    K = [values[a * d + i * d : a * d + (i + 1) * d] for i in range(a)]
    V = values[2 * a * d :]
    A = _product([Q, [list(col) for col in zip(*K)]])  # Kᵀ Q, d x d
    v_zero, a_zero = not any(V), not any(v for row in A for v in row)
    if not (v_zero or a_zero):
        return []
    # each factor: (value, order, exact, why); a factor that does not vanish at w* is a unit and drops out
    parts: list[tuple[Fraction, int, bool, str]] = []
    if v_zero:
        parts.append((Fraction(d * e, 2), 1, True, f"V = 0: |V|^2 in {d * e} weights, λ_V = {d * e}/2"))
    if a_zero:
        zero = Fraction(0)
        if all(v == zero for row in Q + K for v in row):
            lam, m = learning.reduced_rank_regression(d, a, d, 0)
            parts.append(
                (
                    lam,
                    m,
                    True,
                    f"K = Q = 0: |KᵀQ|^2 is reduced-rank regression ({d} -> {a} -> {d}, rank 0), "
                    f"λ_A = {lam} (Aoyagi-Watanabe)",
                )
            )
        elif _rank(K) == a or _rank(Q) == a:
            other = "Q" if _rank(K) == a else "K"
            parts.append(
                (
                    Fraction(a * d, 2),
                    1,
                    True,
                    f"KᵀQ = 0 with {'K' if other == 'Q' else 'Q'} of full rank "
                    f"{a}: |KᵀQ|^2 is comparable to |{other}|^2 in {a * d} weights, λ_A = {a * d}/2",
                )
            )
        else:
            lam, _ = learning.reduced_rank_regression(d, a, d, 0)
            parts.append(
                (
                    lam,
                    0,
                    False,
                    f"KᵀQ = 0: λ_A is at least {lam}, the coefficient of |KᵀQ|^2 over its "
                    "whole zero set (Aoyagi-Watanabe at 0)",
                )
            )
    why = "; ".join(p[3] for p in parts)
    where = "one attention layer where V ⊗ KᵀQ = 0 (t >= 2), K ≍ |V|^2 |KᵀQ|^2"
    lam = min(p[0] for p in parts)
    if all(p[2] for p in parts):
        m = sum(p[1] for p in parts if p[0] == lam)
        return [LearningBound.of("equal", Bound(lam, f"{where}: {why}; λ = {lam}, the least"), m)]
    out = [LearningBound.of("lower", Bound(lam, f"{where}: {why}; λ is the least of the factors'"))]
    exact = [p for p in parts if p[2]]
    if exact:
        out.append(LearningBound.of("upper", Bound(exact[0][0], f"{where}: λ = min(λ_V, λ_A) <= λ_V = {exact[0][0]}")))
    return out


def _explain(net: Network, values, rank: int, generic_low: int, generic_up: int, prime: int, seed: int) -> list[str]:
    """Where w* sits: regular, or which weights carry the rank drop (kernel directions beyond the named orbit,
    grouped by the weight matrices they move) and, for one layer, its weight stratum (docs/mathematics.md §5)."""
    if rank >= generic_up:
        return [f"w* has the generic rank {rank}: a regular point of the parametrization"]
    from lightning_cas.geometry.network_fibers import extra_directions

    out = [
        f"the rank at w* ({rank}) is below the generic rank ({generic_low}"
        + ("" if generic_low == generic_up else f" to {generic_up}")
        + "): w* is a critical point of the "
        "parametrization, where λ can fall below r/2"
    ]
    paper = net.paper
    if paper is not None and paper.depth == 1 and not paper.multihead:
        out.append(f"weight stratum: {_one_layer_stratum(paper, values)}")
    moved = extra_directions(net, values, prime, seed)
    if moved:
        out.append(
            "directions along which f stays fixed to first order beyond the named symmetries: "
            + "; ".join(f"{d.count} moving {', '.join(d.matrices)}" for d in moved)
        )
    return out


def _one_layer_stratum(paper, values) -> str:
    ((a, d, e),) = paper.layer_shapes
    Q = [values[i * d : (i + 1) * d] for i in range(a)]
    K = [values[a * d + i * d : a * d + (i + 1) * d] for i in range(a)]
    V = [values[2 * a * d + i * d : 2 * a * d + (i + 1) * d] for i in range(e)]
    A = _product([Q, [list(col) for col in zip(*K)]])
    rank_v, rank_a = _rank(V), _rank(A)
    words = f"rank V = {rank_v}, rank KᵀQ = {rank_a} (generic: {min(e, d)} and {min(a, d)})"
    if rank_v == 0 or rank_a == 0:
        return words + ": the vertex (f = 0)"
    if rank_a < a:
        words += "; rank A < a"
    if rank_v == rank_a == 1:
        together = _rank(V + [list(col) for col in zip(*A)])  # the row space of V and the column space of A
        words += "; rank V = rank A = 1" + (", row space of V = column space of A" if together == 1 else "")
    return words
