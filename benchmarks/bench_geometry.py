"""Implicitization timings for `make bench`: the small one-layer cases, and the one-coordinate
(d = 3, t = 2, a = 3) case that plain `ker` over (Q, K, V) does not finish in 15 minutes; then the
singular locus, the Zariski closure of the real boundary and one certified boundary verdict of the small
cases (G-orbit slices)."""

from __future__ import annotations

import time

from lightning_cas.core.architecture import Architecture
from lightning_cas.errors import LightningError
from lightning_cas.geometry.one_layer.boundary import boundary
from lightning_cas.geometry.one_layer.implicit import implicit
from lightning_cas.geometry.one_layer.singular import singular_locus
from lightning_cas.geometry.one_layer.strata import stratum_samples

CASES = [  # (d, d', a, one_coordinate)
    (2, 1, 1, False),
    (2, 1, 2, False),
    (2, 2, 1, False),
    (2, 2, 2, False),
    (3, 1, 1, False),
    (3, 3, 3, True),
]


def _timed(row: dict, compute) -> dict:
    """Fill ``row`` with what ``compute()`` returns (a dict), or the error, and the wall time."""
    start = time.perf_counter()
    try:
        row.update(compute())
    except LightningError as exc:
        row.update(status="error", error=str(exc))
    row["elapsed_s"] = round(time.perf_counter() - start, 3)
    return row


# 1 < a < d, the ideal from (V, A) modulo minors(a+1, A), or (V, sym A) at one token
RANK_CONDITION_CASES = [  # (d, d', a, tokens, one_coordinate)
    (3, 1, 2, 1, False),
    (3, 1, 2, 2, False),
    (3, 2, 2, 2, True),
    (3, 2, 2, 2, False),
]


def run_rank_condition_rows(timeout: float, cases=RANK_CONDITION_CASES) -> list[dict]:
    """Implicit ideal rows for 1 < a < d, self-contained so the rows move with the bench code."""
    rows = []
    for d, e, a, t, one in cases:

        def compute(d=d, e=e, a=a, t=t, one=one):
            res = implicit(Architecture((d, e), (a,), t), one_coordinate=one, generators=False, timeout=timeout)
            return dict(
                status="ok",
                dimension=res.dimension,
                degree=res.degree,
                ambient=res.ambient,
                generators=len(res.generator_degrees),
                generator_degrees=sorted(set(res.generator_degrees)),
                parametrization=res.parametrization,
                m2_version=res.m2_version,
            )

        rows.append(
            _timed({"bench": "implicit", "d": d, "d_out": e, "a": a, "tokens": t, "one_coordinate": one}, compute)
        )
    return rows


def one_layer_sweep_cases() -> list[tuple]:
    """Every one-layer case with d <= 3, d' <= 2, a <= d, t <= 3 (one coordinate only when d' = 2), cheap first."""
    cases = [
        (d, e, a, t, one)
        for d in (1, 2, 3)
        for t in (1, 2, 3)
        for e in (1, 2)
        for a in range(1, d + 1)
        for one in ((False,) if e == 1 else (True, False))
    ]
    return sorted(cases, key=lambda c: (c[0], c[1] * (1 if c[4] else 2), c[3], c[2]))


def run_geometry_bench(timeout: float) -> list[dict]:
    """Rows: implicit ideal per case; singular locus, boundary closure and one boundary verdict per small
    case (G-orbit slices); the numerical degree of the hardest case."""
    rows = []
    small = [(d, e, a) for d, e, a, one in CASES if not one]

    def row(bench, d, e, a, one=False):
        return {"bench": bench, "d": d, "d_out": e, "a": a, "tokens": 2, "one_coordinate": one}

    def implicit_row(arch, one):
        res = implicit(arch, one_coordinate=one, generators=False, timeout=timeout)
        return dict(
            status="ok",
            dimension=res.dimension,
            degree=res.degree,
            ambient=res.ambient,
            generators=len(res.generator_degrees),
            generator_degrees=sorted(set(res.generator_degrees)),
            parametrization=res.parametrization,
            m2_version=res.m2_version,
        )

    def singular_row(arch):
        res = singular_locus(arch, timeout=timeout)
        return dict(
            status="ok" if res.complete else "incomplete",
            dimension=res.singular_dimension,
            pieces="; ".join(s for c in res.pieces for s in c.contained_in) or "vertex only",
            m2_version=res.m2_version,
        )

    def closure_row(arch):
        res = boundary(arch, timeout=timeout)
        return dict(
            status="ok" if res.closure_complete else "incomplete",
            dimension=res.boundary_closure_dimension,
            critical_image_dimension=res.critical_image_dimension,
            candidates="; ".join(f"{c.stratum}: {c.verdict}" for c in res.components),
            m2_version=res.m2_version,
        )

    def verdict_row(arch):
        (point,) = stratum_samples(arch, "parallel", 0, 1)
        res = boundary(arch, point, timeout=timeout, closure=False)
        return dict(
            status="ok" if res.boundary is not None else "undecided",
            boundary=res.boundary,
            certificate=res.certificate.kind if res.certificate else None,
            m2_version=res.m2_version,
        )

    for d, e, a, one in CASES:
        rows.append(_timed(row("implicit", d, e, a, one), lambda: implicit_row(Architecture((d, e), (a,), 2), one)))
    rows.extend(run_rank_condition_rows(timeout))
    # the singular locus by G-orbit strata (the whole-ideal minors do not finish for the last three)
    for d, e, a in small:
        rows.append(_timed(row("singular_strata", d, e, a), lambda: singular_row(Architecture((d, e), (a,), 2))))
    # the Zariski closure of the real boundary (singular and critical loci on slices, certified verdicts),
    # and one certified verdict at a point of the claimed boundary
    for d, e, a in small:
        rows.append(_timed(row("boundary_closure", d, e, a), lambda: closure_row(Architecture((d, e), (a,), 2))))
        rows.append(_timed(row("boundary_verdict", d, e, a), lambda: verdict_row(Architecture((d, e), (a,), 2))))

    # the numerical degree (monodromy, repeated) of the hardest case, next to its exact degree
    def numeric_row():
        res = implicit(
            Architecture((3, 3), (3,), tokens=2),
            one_coordinate=True,
            ideal=False,
            numerical_degree_runs=3,
            timeout=timeout,
        )
        nd = res.numerical_degree
        return dict(status="ok", degree=nd.value, consensus=nd.consensus, certainty="numeric")

    rows.append(_timed(row("numerical_degree", 3, 3, 3, True), numeric_row))
    return rows


if __name__ == "__main__":
    import json
    import sys

    # `python -m lightning_cas.bench_geometry [timeout] [rank|sweep]`: the whole section, only the issue-18
    # rows, or every small one-layer case (one_layer_sweep_cases), printed as each finishes
    limit = float(sys.argv[1]) if len(sys.argv) > 1 else 900.0
    which = sys.argv[2] if len(sys.argv) > 2 else ""
    batches = (
        [[c] for c in RANK_CONDITION_CASES]
        if which == "rank"
        else [[c] for c in one_layer_sweep_cases()]
        if which == "sweep"
        else None
    )
    runs = [run_geometry_bench(limit)] if batches is None else (run_rank_condition_rows(limit, b) for b in batches)
    for rows in runs:
        for r in rows:
            print(json.dumps(r), flush=True)
