"""Decision-boundary ED degrees for `make bench`: both Macaulay2 methods (exact mod p, homotopy) per case, the
time, and how far each reaches (the size guard refuses what the homotopy would not finish); and the msolve
method (`decision` section): the count mod two primes and the certified radius, as far as msolve finishes."""

from __future__ import annotations

import time

from lightning_cas.core.architecture import Architecture
from lightning_cas.errors import LightningError
from lightning_cas.geometry.decision.m2 import boundary_ed

# (d, d', a, t); (2,2,2,2) is the ED-degree-15 case the speed target names (under 30 s)
CASES = [(2, 1, 1, 2), (2, 1, 2, 2), (2, 2, 1, 2), (2, 2, 2, 2), (3, 1, 1, 2), (2, 2, 2, 3)]
TARGET = (2, 2, 2, 2)


def run_decision_rows(timeout: float = 600, cases=CASES) -> list[dict]:
    rows = []
    for d, e, a, t in cases:
        row = {"bench": "decision-ed", "d": d, "d_out": e, "a": a, "tokens": t}
        start = time.perf_counter()
        try:
            res = boundary_ed(Architecture((d, e), (a,), t), seed=0, timeout=timeout, method="m2")
            row.update(
                status="ok",
                ed_exact=res.ed_degree_exact,
                ed_numeric=list(res.ed_degree_numeric),
                agree=res.agree,
                degree=res.degree,
                variables=res.variables,
            )
        except LightningError as exc:
            row.update(status="error", error=str(exc))
        row["elapsed_s"] = round(time.perf_counter() - start, 3)
        rows.append(row)
    return rows


def bench_decision_target() -> dict:
    """The speed target: a decision-boundary ED degree of 15 in under 30 s."""
    row = run_decision_rows(cases=[TARGET])[0]
    row["target_s"] = 30
    row["met"] = row.get("status") == "ok" and row.get("ed_exact") == 15 and row["elapsed_s"] < 30
    return row


# ---------------------------------------------------------------- msolve (boundary_ed(method="msolve"))

# (label, network, readout or None, point: True draws X0 = ((3i + 2j) mod 7 - 3) / 2); the held-out pair
# first (target under 30 s each, with the radius), then beyond the Macaulay2 guard (9 coordinates,
# 20000 paths), then the robustness paper's shape [16, 12, 2] (boundary f1 - f2) in its 12 bottleneck
# coordinates
MSOLVE_TARGET_S = 30
MSOLVE_HELD_OUT = ("(2,1) a=2 t=3", "(3,1) a=1 t=2")


def msolve_cases():
    from lightning_cas.core.network import MLP, Network

    paper = lambda d, e, a, t: Architecture((d, e), (a,), t)  # noqa: E731
    return [
        ("(2,1) a=2 t=3", paper(2, 1, 2, 3), None),
        ("(3,1) a=1 t=2", paper(3, 1, 1, 2), None),
        ("(2,2) a=2 t=3", paper(2, 2, 2, 3), None),
        ("(2,1) a=2 t=5", paper(2, 1, 2, 5), None),
        ("(3,1) a=2 t=4", paper(3, 1, 2, 4), None),
        ("(4,1) a=1 t=3", paper(4, 1, 1, 3), None),
        ("(4,1) a=2 t=3", paper(4, 1, 2, 3), None),
        ("(3,3) a=3 t=2", paper(3, 3, 3, 2), None),
        ("(2,2) a=2 t=5", paper(2, 2, 2, 5), None),
        ("(3,1) a=2 t=5", paper(3, 1, 2, 5), None),
        ("(4,1) a=3 t=3", paper(4, 1, 3, 3), None),
        ("(3,2) a=2 t=3", paper(3, 2, 2, 3), None),
        ("(4,2) a=2 t=3", paper(4, 2, 2, 3), None),
        ("[16,12,2] p2", Network(16, 1, (MLP(12, degree=2, out=2),)), [[1], [-1]]),
        ("[16,12,2] p3", Network(16, 1, (MLP(12, degree=3, out=2),)), [[1], [-1]]),
    ]


def _point(arch):
    from fractions import Fraction

    return [[Fraction((3 * i + 2 * j) % 7 - 3, 2) for j in range(arch.tokens)] for i in range(arch.input)]


def run_decision_msolve_rows(timeout: float = 300, cases=None, progress=print) -> list[dict]:
    """Each case: the ED degree alone, then with X0 (real critical points, singular locus, radius)."""
    rows = []
    for label, arch, readout in cases or msolve_cases():
        for point in (None, _point(arch)):
            row = {"bench": "decision-msolve", "case": label, "point": point is not None}
            start = time.perf_counter()
            try:
                res = boundary_ed(arch, readout=readout, point=point, seed=0, timeout=timeout, method="msolve")
                row.update(
                    status="ok",
                    variables=res.variables,
                    bottleneck=res.bottleneck,
                    degree=res.degree,
                    ed_degree=res.ed_degree,
                    beyond_m2_guard=res.variables > 9 or res.degree ** (res.variables + 1) > 20000,
                )
                if point is not None:
                    rad = res.radius
                    row.update(
                        real_critical_points=res.real_critical_points,
                        singular_dimension=res.singular_dimension,
                        radius_lower=rad.lower if rad else None,
                        radius_upper=rad.upper if rad else None,
                        certified=bool(rad and rad.certified),
                    )
            except LightningError as exc:
                row.update(status="error", error=str(exc))
            row["elapsed_s"] = round(time.perf_counter() - start, 3)
            if label in MSOLVE_HELD_OUT:
                row["target_s"] = MSOLVE_TARGET_S
                row["met"] = row["status"] == "ok" and row["elapsed_s"] < MSOLVE_TARGET_S
            rows.append(row)
            progress(f"[decision] {label} {'with X0' if point is not None else 'ED degree'}: {row}")
            if row["status"] != "ok":
                break  # with the point: the same count and more, so it would not finish either
    return rows


def render_msolve(rows: list[dict], timeout: float) -> str:
    """The rows as a Markdown table (bench/decision.md)."""
    out = [
        "# Decision boundaries by msolve: measured (benchmarks/bench_decision.py)",
        "",
        "`python -m benchmarks.bench_decision --msolve --out bench/decision.json` (also `make bench`, section",
        f"`decision`); seed 0, X0 = ((3i + 2j) mod 7 - 3) / 2, {timeout:g} s per case, wall clock on the shared",
        "2-core machine. n: input coordinates, r: the bottleneck coordinates solved in; beyond the M2 guard:",
        "more than 9 coordinates or 20000 homotopy paths. Radius: the certified interval.",
        "",
        "| case | n | r | ED degree | with X0 | real critical points | singular locus dim | radius | wall s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if row["status"] != "ok":
            why = "time limit" if "time limit" in row["error"] else row["error"][:60]
            out.append(
                f"| {row['case']} | | | {'(above)' if row['point'] else 'not finished'} | "
                f"{'yes' if row['point'] else 'no'} | | | not finished ({why}) | {row['elapsed_s']} |"
            )
            continue
        radius = ""
        if row["point"]:
            low, high = row.get("radius_lower"), row.get("radius_upper")
            radius = (
                f"[{low:.6g}, {high:.6g}]" + ("" if row["certified"] else " not certified")
                if low is not None and high is not None
                else "none"
            )
        guard = " (beyond M2 guard)" if row["beyond_m2_guard"] else ""
        target = f" (target {row['target_s']} s: {'met' if row['met'] else 'MISSED'})" if "target_s" in row else ""
        out.append(
            f"| {row['case']}{guard} | {row['variables']} | {row['bottleneck']} | {row['ed_degree']} | "
            f"{'yes' if row['point'] else 'no'} | {row.get('real_critical_points', '')} | "
            f"{row.get('singular_dimension', '')} | {radius} | {row['elapsed_s']}{target} |"
        )
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_decision")
    parser.add_argument("--msolve", action="store_true", help="the msolve cases (else the Macaulay2 target)")
    parser.add_argument("--out", default=None, help="write the rows as JSON here")
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    rows = run_decision_msolve_rows(args.timeout) if args.msolve else [bench_decision_target()]
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
        if args.msolve:
            Path(args.out).with_suffix(".md").write_text(render_msolve(rows, args.timeout))
    else:
        print(rows)
