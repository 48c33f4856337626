"""Degree and ED degree timings for `make bench` (section ``critical``).

Targets: the degree of a one-layer variety of dimension 7 and degree 45 (d = 3, d' = 1, a = 1, t = 2:
P^2 times the cubic of singular ternary quadrics, degree C(6, 2) * 3 = 45) in under 60 s, and a generic
ED degree of 14 (d = 2, d' = 1, a = 2, t = 2) in under 10 s. The reach rows try each method on larger
cases with a time limit and record what finished. Every number that two methods reach is computed by
both and a disagreement is flagged in the row.

    python -m benchmarks.bench_critical [--quick] [--timeout S]
"""

from __future__ import annotations

import argparse
import json
import time

from lightning_cas.core.architecture import Architecture
from lightning_cas.errors import LightningError
from lightning_cas.geometry.degrees import degree, ed_degree

TARGETS = [  # (what, d, d', a, expected, limit_s)
    ("degree", 3, 1, 1, 45, 60.0),
    ("ed", 2, 1, 2, 14, 10.0),
]
REACH = [  # (what, method, d, d', a)
    ("degree", "implicit", 2, 2, 2),
    ("degree", "numerical", 2, 2, 2),
    ("degree", "implicit", 3, 1, 2),
    ("degree", "numerical", 3, 1, 2),
    ("degree", "numerical", 3, 2, 1),
    ("ed", "lagrange", 3, 1, 1),
    ("ed", "lagrange", 2, 2, 1),
    ("ed", "lagrange", 2, 2, 2),
    ("ed", "monodromy", 2, 1, 1),
]


def _row(what: str, method: str, d: int, e: int, a: int, timeout: float) -> dict:
    arch = Architecture((d, e), (a,), tokens=2)
    row = {"bench": f"critical-{what}", "method": method, "d": d, "d_out": e, "a": a, "tokens": 2}
    start = time.perf_counter()
    try:
        if what == "degree":
            res = degree(arch, method=method, timeout=timeout)
            row.update(
                status="ok",
                value=res.degree,
                dimension=res.dimension,
                lower_bound=res.lower_bound,
                trace_residual=res.trace_residual,
                certainty=res.certainty,
            )
        else:
            res = ed_degree(arch, method=method, timeout=timeout)
            row.update(
                status="ok",
                value=res.ed_degree,
                dimension=res.dimension,
                lower_bound=res.lower_bound,
                certainty=res.certainty,
            )
    except LightningError as exc:
        row.update(status="error", error=str(exc)[:200])
    row["elapsed_s"] = round(time.perf_counter() - start, 3)
    return row


def run_critical_bench(timeout: float = 600.0, quick: bool = False, progress=print) -> list[dict]:
    """The two targets (each by two methods where two apply), then the reach rows (not with ``quick``)."""
    rows = []
    for what, d, e, a, expected, limit in TARGETS:
        methods = ("implicit", "numerical") if what == "degree" else ("lagrange",)
        for method in methods:
            row = _row(what, method, d, e, a, timeout)
            row.update(expected=expected, limit_s=limit, met=row.get("value") == expected and row["elapsed_s"] < limit)
            rows.append(row)
            progress(json.dumps(row))
    if not quick:
        for what, method, d, e, a in REACH:
            rows.append(_row(what, method, d, e, a, timeout))
            progress(json.dumps(rows[-1]))
    values = {}
    for r in rows:
        if r.get("status") == "ok" and not r.get("lower_bound"):
            values.setdefault((r["bench"], r["d"], r["d_out"], r["a"]), set()).add(r["value"])
    for r in rows:
        got = values.get((r["bench"], r["d"], r["d_out"], r["a"]), set())
        r["disagreement"] = len(got) > 1
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the two targets")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args(argv)
    run_critical_bench(args.timeout, args.quick, progress=lambda m: print(m, flush=True))


if __name__ == "__main__":
    main()
