"""Implicitization timings for `make bench`: the small one-layer cases, and the one-coordinate
(d = 3, t = 2, a = 3) case that plain `ker` over (Q, K, V) does not finish in 15 minutes; then the
singular locus of the small cases by G-orbit strata."""

from __future__ import annotations

import time

from .architecture import Architecture
from .errors import LightningError
from .geometry import implicit, singular_locus

CASES = [  # (d, d', a, one_coordinate)
    (2, 1, 1, False), (2, 1, 2, False), (2, 2, 1, False), (2, 2, 2, False), (3, 1, 1, False), (3, 3, 3, True),
]


def run_geometry_bench(timeout: float) -> list[dict]:
    """One row per case: dimension, degree, generator degrees and wall time, or the error."""
    rows = []
    for d, e, a, one in CASES:
        arch = Architecture((d, e), (a,), tokens=2)
        row = {"bench": "implicit", "d": d, "d_out": e, "a": a, "tokens": 2, "one_coordinate": one}
        start = time.perf_counter()
        try:
            res = implicit(arch, one_coordinate=one, generators=False, timeout=timeout)
            row.update(status="ok", dimension=res.dimension, degree=res.degree, ambient=res.ambient,
                       generators=len(res.generator_degrees), generator_degrees=sorted(set(res.generator_degrees)),
                       parametrization=res.parametrization, m2_version=res.m2_version)
        except LightningError as exc:
            row.update(status="error", error=str(exc))
        row["elapsed_s"] = round(time.perf_counter() - start, 3)
        rows.append(row)
    # the singular locus by G-orbit strata (the whole-ideal minors do not finish for the last three)
    for d, e, a, one in CASES:
        if one:
            continue
        row = {"bench": "singular_strata", "d": d, "d_out": e, "a": a, "tokens": 2, "one_coordinate": False}
        start = time.perf_counter()
        try:
            res = singular_locus(Architecture((d, e), (a,), tokens=2), timeout=timeout)
            row.update(status="ok" if res.complete else "incomplete", dimension=res.singular_dimension,
                       pieces="; ".join(s for c in res.components for s in c["contained_in"]) or "vertex only",
                       m2_version=res.m2_version)
        except LightningError as exc:
            row.update(status="error", error=str(exc))
        row["elapsed_s"] = round(time.perf_counter() - start, 3)
        rows.append(row)
    # the numerical degree (monodromy, repeated) of the hardest case, next to its exact degree
    row = {"bench": "numerical_degree", "d": 3, "d_out": 3, "a": 3, "tokens": 2, "one_coordinate": True}
    start = time.perf_counter()
    try:
        res = implicit(Architecture((3, 3), (3,), tokens=2), one_coordinate=True, ideal=False,
                       numerical_degree_runs=3, timeout=timeout)
        nd = res.numerical_degree
        row.update(status="ok", degree=nd["value"], consensus=nd["consensus"], certainty="numeric")
    except LightningError as exc:
        row.update(status="error", error=str(exc))
    row["elapsed_s"] = round(time.perf_counter() - start, 3)
    rows.append(row)
    return rows


if __name__ == "__main__":
    import json
    import sys

    for r in run_geometry_bench(float(sys.argv[1]) if len(sys.argv) > 1 else 900.0):
        print(json.dumps(r), flush=True)
