"""Macaulay2's ED-degree record (``edDegreeRecord``) read into an EDDegreeResult with its notes: apart from
geometry.degree.m2, which plans and runs the computation."""

from __future__ import annotations

import time

from lightning_cas.geometry.degree.monodromy import reconcile
from lightning_cas.macaulay2.network import check_parameters
from lightning_cas.macaulay2.parse import json_get, json_int, json_str
from lightning_cas.results.degrees import EDDegreeResult, Metric

ED_PRIME = 32003  # the Lagrange ideal's first characteristic: Groebner bases mod p are fast, u and the form random


def ed_result(arch, metric, method, rec, script, seed, source, start, exact=None, why: str = "") -> EDDegreeResult:
    """The result of an ``ed_degree`` run from its record: the count, its certainty, and notes in words;
    ``exact``: msolve's count that monodromy was told to stop at (``geometry.degree.monodromy``), or None and
    ``why``."""
    check_parameters(arch, rec, script)
    n, dim = json_int(rec, "coordinates", script), json_int(rec, "dimension", script)
    value = json_get(rec, "ed_degree", script)
    value = None if value is None else json_int(rec, "ed_degree", script)
    notes, extra = [], {}
    span = degenerate = None
    if metric == "data":
        span = json_int(rec, "span", script)
        degenerate = n < span
        notes.append(
            f"the data metric of {source.count} inputs "
            + (
                f"is degenerate: the evaluation map has a {span - n}-dimensional kernel on the {span}-dimensional "
                f"coefficient span, so the critical points are counted on the projection of the neurovariety "
                f"(dimension {dim} in {n} coordinates)"
                if degenerate
                else "is non-degenerate on the coefficient span (the count is that of the neurovariety for this form)"
            )
        )
        if dim == n:
            notes.append(
                "the projection fills its space: every data point is reached with zero loss (a zero-loss "
                "fiber), one critical point"
            )
    if metric == "standard":
        notes.append(
            "standard form: the Euclidean form in the coordinates y_i, a basis of the coefficient span "
            "(coefficients of token monomials of output token 1, chosen first come first kept; "
            "`lightning-cas implicit --coordinates` lists them)"
        )
    if method == "lagrange":
        if json_int(rec, "prime", script) != ED_PRIME:
            notes.append(
                f"{ED_PRIME} divides an entry or a denominator of the inputs (the data mod {ED_PRIME} "
                f"would be other data), so the Lagrange ideal runs mod {json_int(rec, 'prime', script)}"
            )
        if value is None:
            notes.append(
                f"the critical ideal has dimension {json_int(rec, 'critical_dimension', script)}, not 0: "
                "the data point was not generic; rerun with another seed"
            )
        common = dict(
            method="lagrange",
            certainty="probabilistic",
            prime=json_int(rec, "prime", script),
            method_detail="degree of the Lagrange ideal I + minors(c+1, [Jac I | G(y - u)]) saturated by "
            "the singular locus, over ZZ/p at a random data point u",
            certainty_detail="mod p with a random form and data point: wrong only for unlucky choices",
        )
    else:
        extra = dict(solutions=json_int(rec, "solutions", script), stable_loops=json_int(rec, "repeats", script))
        notes.append(
            f"monodromy found {value} distinct regular critical images ({extra['solutions']} critical "
            f"points on the gauge slice)"
            + (
                f", stopping at the {exact.solutions} that msolve counts on its slice"
                if exact is not None and json_int(rec, "target", script)
                else f" and no new one in {extra['stable_loops']} successive monodromy steps"
            )
        )
        value, lower, said = reconcile(value, exact, why)
        notes.append(said if exact is not None else f"{said}; a lower bound until an exact method confirms it")
        common = dict(
            method="monodromy",
            certainty="numeric" if lower else "probabilistic",
            lower_bound=lower,
            method_detail="MonodromySolver on the critical equations of q(F(w0 + L s) - u), s the m free "
            "weights of a gauge (the others fixed at random values)"
            + ("" if exact is None else "; its target and the count: msolve's, mod two primes that agree"),
        )
        if exact is not None:
            extra["primes"] = exact.primes
    return EDDegreeResult(
        architecture=arch,
        metric=Metric(metric),
        ed_degree=value,
        dimension=dim,
        coordinates=n,
        degenerate=degenerate,
        span=span,
        inputs=source,
        **extra,
        **common,
        seed=seed,
        m2_version=json_str(rec, "m2_version", script),
        script=script,
        notes=tuple(notes),
        elapsed_s=time.perf_counter() - start,
    )
