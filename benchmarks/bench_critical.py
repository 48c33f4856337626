"""Degree and ED degree timings for `make bench` (section ``critical``).

Targets: the degree of a one-layer variety of dimension 7 and degree 45 (d = 3, d' = 1, a = 1, t = 2:
P^2 times the cubic of singular ternary quadrics, degree C(6, 2) * 3 = 45) in under 60 s, and a generic
ED degree of 14 (d = 2, d' = 1, a = 2, t = 2) in under 10 s. The reach rows try each method on larger
cases with a time limit and record what finished. Every number that two methods reach is computed by
both and a disagreement is flagged in the row. The msolve rows (degree and ED degree on a gauge slice, mod two
primes) run the same cases and, beyond the elimination guard of 14 weights, stacks of linear and power blocks
whose degrees are known (determinantal and Veronese varieties), each within ``--msolve-timeout`` (180 s: the
machine is shared).

    python -m benchmarks.bench_critical [--quick] [--msolve-only [--out bench/critical_msolve.md]] [--timeout S]
        [--msolve-timeout S]
"""

from __future__ import annotations

import argparse
import json
import time
from fractions import Fraction
from math import comb
from pathlib import Path

from lightning_cas.core.architecture import Architecture
from lightning_cas.core.blocks.linear import Linear
from lightning_cas.core.blocks.power import Power
from lightning_cas.core.network import Network
from lightning_cas.errors import LightningError
from lightning_cas.geometry.degree.m2 import degree, ed_degree
from lightning_cas.geometry.solvers import solver

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


MSOLVE_TIMEOUT = 180.0
# one layer (d, d', a) at t = 2, both what; each is also in REACH or TARGETS with another method
MSOLVE_LAYERS = [
    ("degree", 3, 1, 1),
    ("degree", 2, 2, 2),
    ("degree", 3, 1, 2),
    ("degree", 3, 2, 1),
    ("ed", 2, 1, 2),
    ("ed", 2, 2, 1),
    ("ed", 2, 2, 2),
    ("ed", 3, 1, 1),
]


def _sums(k: int, r: int, bias: bool = False) -> Network:
    """sum of r squares of affine forms in k variables: (r x k) linear, squares, one output (with biases)."""
    return Network(k, 1, (Linear(r, bias=bias), Power(2), Linear(1, bias=bias)))


def symmetric_rank_degree(k: int, r: int) -> int:
    """The degree of the symmetric k x k matrices of rank <= r: prod_{i<k-r} C(k+i, k-r-i) / C(2i+1, i)
    (Harris and Tu); what r squares of linear forms in k variables span."""
    value = Fraction(1)
    for i in range(k - r):
        value *= Fraction(comb(k + i, k - r - i), comb(2 * i + 1, i))
    return int(value)


# beyond the elimination guard: (name, network, known degree or None)
MSOLVE_BEYOND = [
    ("sums of 3 squares in 4 variables", _sums(4, 3), symmetric_rank_degree(4, 3)),
    ("sums of 4 squares in 5 variables", _sums(5, 4), symmetric_rank_degree(5, 4)),
    ("sums of 3 squares in 5 variables", _sums(5, 3), symmetric_rank_degree(5, 3)),
    ("sums of 2 squares in 6 variables", _sums(6, 2), symmetric_rank_degree(6, 2)),
    ("sums of 3 affine squares in 4 variables, biases", _sums(4, 3, bias=True), None),
    ("two layers (2,1,1), a = (1,1), t = 2", Architecture((2, 1, 1), (1, 1), tokens=2), None),
    ("two layers (2,2,1), a = (1,1), t = 2", Architecture((2, 2, 1), (1, 1), tokens=2), None),
]


def _row(what: str, method: str, d: int, e: int, a: int, timeout: float) -> dict:
    arch = Architecture((d, e), (a,), tokens=2)
    row = {"bench": f"critical-{what}", "method": method, "d": d, "d_out": e, "a": a, "tokens": 2}
    row["weights"] = arch.parameters
    return _measure(row, arch, what, method, timeout)


def _measure(row: dict, arch, what: str, method: str, timeout: float) -> dict:
    start = time.perf_counter()
    try:
        if what == "degree":
            res = degree(arch, method=method, timeout=timeout)
            row.update(
                status="ok",
                value=res.degree,
                dimension=res.dimension,
                coordinates=res.coordinates,
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
                coordinates=res.coordinates,
                lower_bound=res.lower_bound,
                certainty=res.certainty,
            )
    except LightningError as exc:
        row.update(status="error", error=str(exc)[:200])
    row["elapsed_s"] = round(time.perf_counter() - start, 3)
    return row


def run_msolve_rows(timeout: float = MSOLVE_TIMEOUT, progress=print) -> list[dict]:
    """msolve on the one-layer cases of the other methods, then beyond the guard (a known degree checked)."""
    rows = []
    for what, d, e, a in MSOLVE_LAYERS:
        rows.append(_row(what, "msolve", d, e, a, timeout))
        progress(json.dumps(rows[-1]))
    for name, net, known in MSOLVE_BEYOND:
        row = {"bench": "critical-degree", "method": "msolve", "case": name, "weights": net.parameters}
        row.update(elimination_guard=solver("degree", "implicit").refusal(net) is None, expected=known)
        _measure(row, net, "degree", "msolve", timeout)
        row["met"] = known is None or row.get("value") == known
        rows.append(row)
        progress(json.dumps(row))
    return rows


def run_critical_bench(
    timeout: float = 600.0, quick: bool = False, progress=print, msolve_timeout: float = MSOLVE_TIMEOUT
) -> list[dict]:
    """The two targets (each by two methods where two apply), then the reach rows and the msolve rows (not
    with ``quick``)."""
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
        rows.extend(run_msolve_rows(msolve_timeout, progress))
    return flag_disagreements(rows)


def flag_disagreements(rows: list[dict]) -> list[dict]:
    """Each one-layer row says whether two methods reached different exact values for its case."""
    key = lambda r: (r["bench"], r.get("d"), r.get("d_out"), r.get("a"), r.get("case"))
    values: dict = {}
    for r in rows:
        if r.get("status") == "ok" and not r.get("lower_bound"):
            values.setdefault(key(r), set()).add(r["value"])
    for r in rows:
        r["disagreement"] = len(values.get(key(r), set())) > 1
    return rows


def msolve_markdown(rows: list[dict], timeout: float) -> str:
    """The msolve rows as a table (bench/critical_msolve.md), each beside what the other methods give."""
    out = [
        "# Degree and ED degree by msolve: measured (benchmarks/bench_critical.py --msolve-only)",
        "",
        f"Written by the script; {timeout:g} s per case on the shared two-core machine (other jobs running), "
        "seed 0; the s column is the wall time to the row's end, which can pass the limit (the command stops "
        "at the next point the limit can cut). The implicit elimination's guard is 14 weights.",
        "",
        "| what | case | weights | coordinates | dim | msolve | expected | s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        case = r.get("case") or f"one layer ({r['d']},{r['d_out']},{r['a']}), t = 2"
        value = r.get("value") if r.get("status") == "ok" else r.get("error", r.get("status"))
        if r.get("status") == "error" and "time limit" in str(value):
            value = "time limit"
        out.append(
            f"| {r['bench'].removeprefix('critical-')} | {case} | {r.get('weights', '')} | "
            f"{r.get('coordinates', '')} | {r.get('dimension', '')} | {value} | {r.get('expected') or ''} | "
            f"{r['elapsed_s']} |"
        )
    return "\n".join(out) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the two targets")
    parser.add_argument("--msolve-only", action="store_true", help="only the msolve rows")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--msolve-timeout", type=float, default=MSOLVE_TIMEOUT)
    parser.add_argument("--out", type=Path, default=None, help="with --msolve-only: the table's markdown file")
    args = parser.parse_args(argv)
    show = lambda m: print(m, flush=True)
    if args.msolve_only:
        rows = run_msolve_rows(args.msolve_timeout, show)
        if args.out is not None:
            args.out.write_text(msolve_markdown(rows, args.msolve_timeout))
    else:
        run_critical_bench(args.timeout, args.quick, show, args.msolve_timeout)


if __name__ == "__main__":
    main()
