"""The local learning coefficient λ(w*) of a polynomial network at given weights, as a sound bracket.

Setting (singular learning theory): regression y = f_{w*}(X) + Gaussian noise, inputs with a density, so
K(w) = E|f_w(X) − f_{w*}(X)|² is comparable near w* to Σ (c_α(w) − c_α(w*))² and λ(w*) is the real log
canonical threshold of K at w*. Every bound below is proved (core.learning names the theorem) from
quantities this package computes exactly or as one-sided bounds:
- lower: the rank of the differential at w* (mod p ≤ over QQ, so a rank mod p is a lower bound too),
  Aoyagi's value for linear stacks (the global coefficient over the fiber is at most the local one);
- upper: only real ones: (n − dim)/2 for the named group's real orbit through w* (exact over QQ), and the Newton
  polyhedron's 1/(2τ) (learning.newton); a complex fiber dimension bounds nothing over ℝ;
- equalities: the generic rank, a fiber smooth at w* (Macaulay2's tangent cone), a non-degenerate Newton
  polyhedron, the closed forms of linear stacks at their least-rank points and of one attention layer where
  V = 0 or KᵀQ = 0 (a product of disjoint groups: λ = min, orders add).
"""

from __future__ import annotations

import time
from dataclasses import replace
from fractions import Fraction

from lightning_cas.backends.local import rank_at_point_modp
from lightning_cas.backends.modp import dimension_modp
from lightning_cas.core import learning
from lightning_cas.core.learning import Bound
from lightning_cas.core.network import Network
from lightning_cas.core.numbers import rational_text
from lightning_cas.core.symmetry import orbit_dimension, orbit_rank_modp, random_weights
from lightning_cas.errors import M2ParseError, M2TimeoutError, UnsupportedError
from lightning_cas.geometry.learning.closed_forms import closed_forms, one_layer_stratum
from lightning_cas.geometry.learning.data import SPAN_MAX, span_ranks
from lightning_cas.geometry.learning.newton import newton_bounds
from lightning_cas.macaulay2.network import check_fiber_dimension, check_parameters, package_params
from lightning_cas.macaulay2.parse import json_int, json_str
from lightning_cas.options import resolve
from lightning_cas.results.learning import LearningBound, LearningCoefficientResult, Side
from lightning_cas.system.deadline import Deadline, current
from lightning_cas.system.points import WeightPoint, as_point, load_weights

LCT_MAX_WEIGHTS = 6  # Dmodules' lct: 4 weights in a second, 6 in minutes (the 2 -> 1 layer at 0: 194 s)
LOCAL_FIBER_SECONDS = 60.0  # at most this much of a call's time for the tangent cone
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
    inputs=None,
    layout: str | None = None,
) -> LearningCoefficientResult:
    """λ(w*) at the weights ``at`` (a file, a WeightPoint, the JSON form or flat weights; random integers from
    ``seed`` when None): exact when the bounds meet, else the bracket, each bound with its reason.
    ``fiber`` lets Macaulay2 compute the fiber's dimension at w* when the network is small enough; ``lct`` adds
    the complex log canonical threshold of the fiber ideal (Dmodules, within LCT_MAX_WEIGHTS weights); ``inputs``
    (token matrices, a path or an InputData; ``layout`` as for ``dimension``) puts the loss on that data: its own
    Gram matrix, and the note says whether it is degenerate on the coefficient span (data)."""
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
        data = None if inputs is None else _data(net, inputs, layout)
        if data is not None and not net.polynomial:
            raise UnsupportedError("llc --inputs: the data's own Gram matrix is read for polynomial networks only.")
        if not net.polynomial:
            return _analytic(net, point, opts).finish(source=source, elapsed_s=time.perf_counter() - start)
        values = list(point.values)
        if lct and net.parameters > LCT_MAX_WEIGHTS:
            raise UnsupportedError(
                f"llc --lct: Dmodules' lct runs up to {LCT_MAX_WEIGHTS} weights (this network has "
                f"{net.parameters}); leave --lct out for the other bounds."
            )
        result = _bracket(net, values, opts, point, fiber, lct, data)
    return result.finish(source=source, elapsed_s=time.perf_counter() - start)


def write_chart_data(net: Network, result: LearningCoefficientResult, at, path, *, seed: int = 0, m2=None) -> str:
    """Write the Newton polyhedron's chart data (learning.newton.chart_data) for ``result``'s point to ``path``,
    where a non-degenerate polyhedron decides λ; a line saying what was written, or why nothing was."""
    import json
    from pathlib import Path

    from lightning_cas.geometry.learning.newton import NONDEGENERATE, chart_data

    if not any(b.theorem == NONDEGENERATE for b in result.bounds):
        return "no chart data: no non-degenerate Newton polyhedron decides λ at this point"
    opts = resolve("llc", net, seed=seed, timeout=None, m2=m2, session=None)
    point, _ = _point(net, at, opts.seed)
    with opts.deadline():
        data = chart_data(net, list(point.values), opts.macaulay2)
    if data is None:
        return "no chart data: the Newton polyhedron is degenerate in these coordinates"
    Path(path).write_text(json.dumps(data, indent=1) + "\n")
    return f"chart data written to {path}"


def _analytic(net: Network, point, opts) -> LearningCoefficientResult:
    """An analytic network (softmax, gelu, tanh, LayerNorm): λ = r/2 with m = 1 at a point of generic rank (the
    rank is constant near w*, so the fiber is an analytic manifold of codimension r there); refused elsewhere,
    since no bound here is proved for its singular points. The rank at w* is the certified one (arb balls)."""
    from lightning_cas.backends.certified import rank_at_point_softmax

    n = net.parameters
    at_point = rank_at_point_softmax(net, point, seed=opts.seed)
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
        "constant rank",
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


def _data(net: Network, inputs, layout):
    from lightning_cas.system.inputs import InputData, inputs_from_array, load_inputs

    if isinstance(inputs, InputData):
        return inputs
    if isinstance(inputs, (str, bytes)) or hasattr(inputs, "__fspath__"):
        return load_inputs(net, inputs, layout)
    return inputs_from_array(net, inputs, "the inputs", layout)


def _point(net: Network, at, seed: int):
    if at is None:
        values = tuple(Fraction(v) for v in random_weights(net, seed))
        return WeightPoint(net, values), f"random integers in +-[1, 9] (seed {seed})"
    point = load_weights(net, at) if isinstance(at, str) or hasattr(at, "__fspath__") else as_point(net, at)
    return point, point.source or "given weights"


def _bracket(
    net: Network, values: list[Fraction], opts, point, fiber: bool, lct: bool, data=None
) -> LearningCoefficientResult:
    n = net.parameters
    at_point = rank_at_point_modp(net, point, inputs=data, seed=opts.seed)
    rank = at_point.dimension  # mod p: never above the rank over QQ (on data: of the data's Jacobian)
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
    population = True  # every bound of the population loss holds for this loss
    if data is not None:
        population = _data_note(net, data, opts.seed, notes)
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
                    "splitting lemma",
                ),
            )
        )
        population_bounds = closed_forms(net, values)
        # Macaulay2's fiber and Newton runs only where no closed form already decides λ (they can take a minute)
        decided = population and any(b.side == "equal" for b in population_bounds)
        bounds += _fiber_bounds(net, values, rank, opts if fiber and not decided else None, notes)
        if fiber and not any(b.side == "equal" for b in bounds + population_bounds):
            population_bounds += newton_bounds(net, values, opts, notes)  # where nothing cheaper decides λ
        if lct:
            population_bounds.append(_lct_bound(net, values, opts.macaulay2))
        bounds += population_bounds if population else on_degenerate_data(population_bounds)
    explanation = _explain(net, values, rank, generic_low, generic_up, at_point.primes[0], opts.seed)
    return LearningCoefficientResult.from_bounds(
        architecture=net,
        parameters=n,
        rank_at_point=rank,
        generic_rank=(generic_low, generic_up),
        bounds=tuple(bounds),
        setting=SETTING
        if data is None
        else SETTING.replace(
            "inputs with a density (a positive definite Gram matrix of the token monomials)",
            f"the {data.count} given inputs (their own Gram matrix)",
        ),
        explanation=tuple(explanation),
        notes=tuple(notes),
        primes=at_point.primes,
        seed=opts.seed,
        m2_version=None,
    )


def _data_note(net: Network, data, seed: int, notes: list[str]) -> bool:
    """Whether the data's form is non-degenerate on the coefficient span (then every population bound holds), with
    a note saying which; unknown (too many coefficients to measure) counts as degenerate."""
    ranks = span_ranks(net, data.values, seed)
    if ranks is None:
        notes.append(
            f"the data's Gram matrix on the coefficient span is not measured (more than {SPAN_MAX} coefficients): "
            "only the bounds that hold for every data set are used"
        )
        return False
    span, seen = ranks
    if seen == span:
        notes.append(
            f"the data's Gram matrix is non-degenerate on the {span}-dimensional coefficient span ({data.count} "
            "inputs, mod p): the loss on the data is comparable to the population loss, every bound holds"
        )
        return True
    notes.append(
        f"the data's Gram matrix is degenerate: the evaluation on the {data.count} inputs has a {span - seen}-"
        f"dimensional kernel on the {span}-dimensional coefficient span; the population's closed forms are upper "
        "bounds only here (the loss on the data is at most the population loss)"
    )
    return False


def on_degenerate_data(bounds: list[LearningBound]) -> list[LearningBound]:
    """Population bounds on data that may not see the whole span: K_N <= C K, so an equality or an upper bound
    stays an upper bound, and a lower bound is dropped."""
    out = []
    for b in bounds:
        if b.side == "lower":
            continue
        out.append(LearningBound(Side.UPPER, b.value, b.reason + " (an upper bound on this data)", None, b.theorem))
    return out


def _fiber_bounds(net: Network, values, rank: int, opts, notes: list[str]) -> list[LearningBound]:
    """Upper bounds from real families inside the fiber, and the equality where the fiber is smooth at w*.

    Only real statements bound λ from above: near a smooth piece of the real fiber F_ℝ of codimension c,
    K ≤ C·dist(w, F_ℝ)², so λ ≤ c/2. The complex fiber's dimension (n − r for every fiber, Macaulay2's tangent
    cone) can exceed the real one (Σ D_i U_i² at U = 0, D = 1: 5 over ℂ, 3 over ℝ), so it bounds nothing alone;
    it decides λ only where it equals n − rank J(w*): then the fiber ideal is smooth at w* (Jacobian criterion),
    its real points near w* are a manifold of codimension rank J(w*), and λ = rank/2."""
    n = net.parameters
    out = []
    if n <= EXACT_ORBIT_MAX_WEIGHTS:
        orbit = orbit_dimension(net, values)
        out.append(
            LearningBound.of(
                "upper",
                Bound(
                    Fraction(n - orbit, 2),
                    f"(n - {orbit})/2: the real orbit of the named group through w* (dimension {orbit}, over QQ) "
                    "is a smooth real family in the fiber",
                    "real orbit in the fiber",
                ),
            )
        )
    if n <= LOCAL_FIBER_MAX_WEIGHTS and opts is not None:
        # the tangent cone can take long where the fiber is complicated (a biased 2-2-1 mlp: over 600 s at some
        # points): it gets its own share of the time, and without it the other bounds stand
        left = current().left("before the fiber's dimension at w*")
        budget = LOCAL_FIBER_SECONDS if left is None else min(LOCAL_FIBER_SECONDS, left / 2)
        try:
            local = _local_fiber_dimension(net, values, replace(opts.macaulay2, deadline=Deadline(budget)))
        except M2TimeoutError:
            notes.append(
                f"the fiber's dimension at w* (Macaulay2's tangent cone) did not finish in {budget:.0f} s; the "
                "equality from it is left out"
            )
            return out
        if n - local < rank:
            raise AssertionError(f"the fiber's codimension {n - local} at w* is below the rank {rank} there")
        if n - local == rank:
            out.append(
                LearningBound.of(
                    "equal",
                    Bound(
                        Fraction(rank, 2),
                        f"the complex fiber has dimension {local} = n - rank J(w*) at w* (Macaulay2's tangent "
                        f"cone): smooth there, its real points a manifold of codimension {rank}, λ = {rank}/2",
                        "smooth fiber (Jacobian criterion)",
                    ),
                    1,
                )
            )
        else:
            notes.append(
                f"the complex fiber through w* has dimension {local} at w* (Macaulay2's tangent cone); the real "
                "fiber's may be smaller, so (n - dim)/2 is no bound over ℝ and is not used"
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
            "Saito 2007 (lct)",
        ),
    )


def _fraction(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def _explain(net: Network, values, rank: int, generic_low: int, generic_up: int, prime: int, seed: int) -> list[str]:
    """Where w* sits: regular, or which weights carry the rank drop (kernel directions beyond the named orbit,
    grouped by the weight matrices they move) and, for one layer, its weight stratum (docs/mathematics.md §5)."""
    if rank >= generic_up:
        return [f"w* has the generic rank {rank}: a regular point of the parametrization"]
    from lightning_cas.geometry.fibers.network import extra_directions

    out = [
        f"the rank at w* ({rank}) is below the generic rank ({generic_low}"
        + ("" if generic_low == generic_up else f" to {generic_up}")
        + "): w* is a critical point of the "
        "parametrization, where λ can fall below r/2"
    ]
    paper = net.paper
    if paper is not None and paper.depth == 1 and not paper.multihead:
        out.append(f"weight stratum: {one_layer_stratum(paper, values)}")
    moved = extra_directions(net, values, prime, seed)
    if moved:
        out.append(
            "directions along which f stays fixed to first order beyond the named symmetries: "
            + "; ".join(f"{d.count} moving {', '.join(d.matrices)}" for d in moved)
        )
    return out
