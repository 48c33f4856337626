"""`make bench`: time and peak memory of the dimension backends, implicitization and softmax.

Sections (``--only`` picks one):

* ``dimension`` -- exact ``modp`` vs ``jacobian`` (M2) vs two float64 baselines over N = 250
  Gaussian inputs with an SVD rank: ``paper`` (``benchmarks/paper_baseline.py``: the paper's own
  protocol, torch autograd, one backward pass per output entry, one trial, one thread) and
  ``numeric`` ("fast float (ours)": the same matrix by our vectorized forward mode), on one-layer
  (d, d) widths, the paper's sweep (L = 2, t = 3, a = 2, widths delta = 3..10) and a depth-3 sweep,
  each next to the theory. The sweep speed-up is reported against each baseline separately.
  Every (case, method) runs in a fresh worker process, so its peak RSS is its own: the worker's
  ``ru_maxrss`` for the Python backends, ``RUSAGE_CHILDREN`` (M2 is the worker's only child) for M2.
* ``geometry`` -- ``bench_geometry.run_geometry_bench`` (implicitization).
* ``softmax`` -- ``bench_softmax.run_softmax_bench`` (the paper's softmax sweep).
* ``rank`` -- ``bench_rank.run_rank_bench`` (exact dimension at real sizes).
* ``blocks`` -- ``bench_blocks.run_blocks_bench`` (networks of blocks, ranks at given weights, Konda).
* ``ratios`` -- ``bench_ratios.run_ratio_bench`` (the 1536-weight CLI call against one naive python-flint
  rank, the 6144-weight rank against the BLAS matmul, the start-up against bare imports: each pair in one run).
* ``critical`` -- ``bench_critical.run_critical_bench`` (degree and ED degree).
* ``models`` -- ``bench_models.run_models_bench`` (biased transformer at trained weights, from_torch).
* ``scaling`` -- ``bench_scaling.run_scaling_bench`` (the dense and black-box rank routes from 10^3 weights
  towards 10^5, beside the BLAS floor, and where each stops).
* ``llc`` -- ``bench_llc.run_llc_bench`` (the proved learning coefficient beside devinterp's SGLD estimate;
  also writes bench/llc.csv, llc.md and llc.png).

The JSON is rewritten atomically after every row, so a killed run keeps what it measured; the
table is printed at the end and written as Markdown next to the JSON. Disagreements between
methods are findings: they are flagged in the rows, the table and the summary, never dropped.

This module is the driver (arguments, the sections in turn, the files written); the dimension section
is ``bench_dimension``, the targets and findings ``summary``, the JSON and Markdown ``report``, and the
check for dead workers ``workers``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from benchmarks.bench_dimension import M2_TIMEOUT, _worker, dimension_cases, dimension_row
from benchmarks.report import environment, markdown_path, print_tables, render_markdown, save
from benchmarks.tables import dim_cell, sec
from benchmarks.workers import crashed_workers, worker_failure  # noqa: F401 (worker_failure: its old import path)

SECTIONS = (
    "dimension",
    "geometry",
    "softmax",
    "rank",
    "blocks",
    "ratios",
    "critical",
    "decision",
    "models",
    "llc",
    "relu",
    "scaling",
)
GEOMETRY_TIMEOUT = 900.0
REPEATS = 3


def geometry_with_theory(rows: list[dict]) -> list[dict]:
    """Next to each full-output implicit dimension, the theory's (a second, independent check)."""
    from lightning_cas.core.architecture import Architecture
    from lightning_cas.core.theory import predict_dimension

    for r in rows:
        if r["bench"] == "implicit" and not r["one_coordinate"]:
            r["theory"] = predict_dimension(Architecture((r["d"], r["d_out"]), (r["a"],), r["tokens"])).value
    return rows


# ---- driver --------------------------------------------------------------------------------
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        default=None,
        help="results JSON (default bench/results.json, "
        "bench/quick.json with --quick); the Markdown table goes next to it",
    )
    parser.add_argument("--quick", action="store_true", help="a small subset, for a smoke test")
    parser.add_argument("--only", choices=SECTIONS, help="run one section, keeping the others from --out")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--m2-timeout",
        type=float,
        default=None,
        help=f"seconds per M2 jacobian case (default {M2_TIMEOUT:g}, 20 with --quick)",
    )
    parser.add_argument("--geometry-timeout", type=float, default=GEOMETRY_TIMEOUT)
    parser.add_argument("--render", action="store_true", help="only re-render the tables from --out")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(_worker(json.loads(args.worker))), flush=True)
        return 0

    if args.m2_timeout is None:
        args.m2_timeout = 20.0 if args.quick else M2_TIMEOUT
    out = Path(args.out or ("bench/quick.json" if args.quick else "bench/results.json"))
    if args.render:
        results = json.loads(out.read_text())
        markdown_path(out).write_text(render_markdown(results))
        print_tables(results)
        return 0
    results: dict = {"sections": {}}
    if args.only and out.exists():
        results = json.loads(out.read_text())  # keep the other sections, re-run this one
        kept = results.setdefault("section_runs", {})
        for name in results.get("sections", {}):  # remember which run measured each kept section
            kept.setdefault(
                name,
                {k: results.get(k) for k in ("started", "finished")}
                | {"run": results.get("started"), "environment": results.get("environment")},
            )
    results.update(
        quick=args.quick,
        only=args.only,
        seed=args.seed,
        m2_timeout=args.m2_timeout,
        started=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        environment=environment(),
    )
    results.pop("finished", None)
    sections = (
        [args.only]
        if args.only
        else [s for s in SECTIONS if not (args.quick and s in ("geometry", "llc", "relu", "decision"))]
    )
    repeats = 1 if args.quick else REPEATS
    for section in sections:
        rows = results["sections"][section] = []
        results.setdefault("section_runs", {})[section] = {
            "run": results["started"],
            "environment": results["environment"],
            "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        }
        if section == "dimension":
            for case in dimension_cases(args.quick):
                row = dimension_row(case, args.seed, repeats, args.m2_timeout)
                rows.append(row)
                save(out, results)
                print(
                    f"[dimension] {case['group']} widths={case['widths']}: modp={dim_cell(row['modp'])} "
                    f"({sec(row['modp'])} s) M2={dim_cell(row['jacobian'])} fast float={dim_cell(row['numeric'])} "
                    f"({sec(row['numeric'])} s) paper={dim_cell(row['paper'])} ({sec(row['paper'])} s) "
                    f"theory={row['theory']}" + ("  FINDING: " + "; ".join(row["findings"]) if row["findings"] else ""),
                    flush=True,
                )
        elif section == "softmax":
            from benchmarks.bench_softmax import PAPER_WIDTHS, run_softmax_bench

            for delta in (3, 4) if args.quick else PAPER_WIDTHS:
                row = run_softmax_bench(widths=(delta,), seed=args.seed)[0]
                rows.append(row)
                save(out, results)
                print(
                    f"[softmax] delta={delta}: {row['softmax_dimension']} (paper {row['expected_softmax']}) "
                    f"{row['softmax_seconds']} s",
                    flush=True,
                )
        elif section == "rank":
            from benchmarks.bench_rank import run_rank_bench

            rows.extend(run_rank_bench(quick=args.quick, seed=args.seed, progress=lambda m: print(m, flush=True)))
            save(out, results)
        elif section == "ratios":
            from benchmarks.bench_ratios import run_ratio_bench

            rows.extend(run_ratio_bench(quick=args.quick, seed=args.seed, progress=lambda m: print(m, flush=True)))
            save(out, results)
        elif section == "blocks":
            from benchmarks.bench_blocks import run_blocks_bench

            rows.extend(run_blocks_bench(progress=lambda m: print(m, flush=True)))
            save(out, results)
        elif section == "critical":
            from benchmarks.bench_critical import run_critical_bench

            rows.extend(run_critical_bench(quick=args.quick, progress=lambda m: print(m, flush=True)))
        elif section == "decision":
            from benchmarks.bench_decision import run_decision_msolve_rows

            rows.extend(run_decision_msolve_rows(progress=lambda m: print(m, flush=True)))
            save(out, results)
        elif section == "models":
            from benchmarks.bench_models import run_models_bench

            rows.extend(run_models_bench(progress=lambda m: print(m, flush=True)))
            save(out, results)
        elif section == "llc":
            from benchmarks.bench_llc import run_llc_bench

            rows.extend(run_llc_bench(progress=lambda m: print(m, flush=True), out_dir=out.parent))
            save(out, results)
        elif section == "relu":
            from benchmarks.bench_relu import run_relu_bench

            rows.extend(run_relu_bench(progress=lambda m: print(m, flush=True), out_dir=out.parent))
            save(out, results)
        elif section == "scaling":
            from benchmarks.bench_scaling import run_scaling_bench

            rows.extend(
                run_scaling_bench(
                    quick=args.quick, progress=lambda m: print(m, flush=True), save=lambda _: save(out, results)
                )
            )
            save(out, results)
        elif section == "geometry":
            from benchmarks.bench_geometry import run_geometry_bench

            print(
                "[geometry] implicitization, singular locus and boundary cases (about 20 min: the full-output "
                "(3,2,2) case runs into its time limit) ...",
                flush=True,
            )
            start = time.perf_counter()
            rows.extend(geometry_with_theory(run_geometry_bench(args.geometry_timeout)))
            results["geometry_total_s"] = round(time.perf_counter() - start, 3)
            save(out, results)
        results["section_runs"][section]["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    results["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    results["environment"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    save(out, results)
    markdown_path(out).write_text(render_markdown(results))
    print_tables(results)
    print(f"wrote {out} and {markdown_path(out)}")
    crashed = crashed_workers(results)
    for where, error in crashed:
        print(f"benchmark code failed: {where}: {error}", file=sys.stderr)
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
