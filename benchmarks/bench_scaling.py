"""The scaling table: each exact rank route's time and peak memory from 10^3 weights towards 10^5, beside the
dense floor measured in the same worker, and where each route stops.

Families (P weights): lightning stacks (depth 4, t = 3, widths w, attention w / 4: P = 6 w^2), polynomial
networks 3 -> w^4 -> 3 with x^6 (P = 3 w^2 + 6 w), polynomial transformers (d_model w, t = 3, two layers of
one-head attention (attention dim w / 4, value dim w / 2) and an x^2 mlp of width w, residual stream). Routes:
``modp`` (dense exact rank mod p, its default primes) and ``blackbox`` (Wiedemann over GF(p^2),
``backends.blackbox``). Each (case, route) runs in a fresh worker process (its own peak RSS, VmHWM), and
the same worker times one P x P float64 matrix product and one LU factorization (numpy's solve) on one BLAS
thread: the floor, what one dense pass over a P x P Jacobian costs at best. A route stops at the first size whose
estimate (``blackbox.estimates``) exceeds the budget, or after a size that failed or ran out of time; the reason
is in the table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.workers import worker_failure

FAMILIES = {
    "lightning": (13, 20, 32, 45, 64, 90, 128),
    "polynomial x^6": (16, 24, 40, 56, 80, 128, 180),
    "poly transformer": (8, 12, 16, 24, 32, 48, 64, 96, 128),
}
QUICK = {"lightning": (13,), "polynomial x^6": (16,), "poly transformer": (8,)}
ROUTES = ("modp", "blackbox")
BUDGET_S = 900.0


def network(family: str, w: int):
    from lightning_cas.core.blocks import MLP, Attention, Linear, Power
    from lightning_cas.core.network import Network

    if family == "lightning":
        return Network.from_paper((w,) * 5, (max(1, w // 4),) * 4, 3)
    if family == "polynomial x^6":
        return Network(3, 1, (Linear(w), Power(6)) * 4 + (Linear(3),))
    layer = (Attention(max(1, w // 4), value=max(1, w // 2), residual=1), MLP(w, degree=2, residual=1))
    return Network(w, 3, layer + layer)


def _floor(P: int) -> dict:
    import numpy as np

    from lightning_cas.core.rank_modp import blas_threads

    A = np.random.default_rng(0).random((P, P))
    with blas_threads(1):
        start = time.perf_counter()
        A @ A
        mm = time.perf_counter() - start
        start = time.perf_counter()
        np.linalg.solve(A, A[:, 0])  # LAPACK gesv: one LU factorization and two triangular solves
        lu = time.perf_counter() - start
    return {"matmul_s": round(mm, 4), "lu_s": round(lu, 4)}


def _peak_bytes() -> int:
    """VmHWM, the resident peak of this process image: unlike ru_maxrss it starts afresh at exec, so a worker
    does not report the peak of the driver that spawned it."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _worker(spec: dict) -> dict:
    import os

    from lightning_cas.backends.blackbox import dimension_blackbox, estimates
    from lightning_cas.backends.modp import dimension_modp

    net = network(spec["family"], spec["w"])
    wall, cpu = time.perf_counter(), time.process_time()
    run = dimension_modp if spec["route"] == "modp" else dimension_blackbox
    res = run(net, seed=spec.get("seed", 0))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = _peak_bytes()
    est = estimates(net)[spec["route"]]
    return {
        "parameters": net.parameters,
        "dimension": res.dimension,
        "runs": len(res.runs),
        "failure_bound": res.failure_bound,
        "seconds": round(wall, 2),
        "cpu_seconds": round(cpu, 2),
        "peak_rss_bytes": peak,
        "loadavg": round(os.getloadavg()[0], 2),
        "estimate_s": round(est["seconds"], 2),
        "estimate_bytes": est["bytes"],
        **_floor(net.parameters),
    }


def run_worker(spec: dict, budget: float) -> dict:
    try:
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.bench_scaling", "--worker", json.dumps(spec)],
            capture_output=True,
            text=True,
            timeout=budget * 1.5,
            cwd=Path(__file__).resolve().parents[1],
        )
    except subprocess.TimeoutExpired:
        return {**spec, "status": "timeout"}
    if out.returncode != 0:
        return {**spec, **worker_failure(out.returncode, out.stderr)}
    return {**spec, "status": "ok", **json.loads(out.stdout.strip().splitlines()[-1])}


def run_scaling_bench(
    quick: bool = False, budget: float = BUDGET_S, families=None, progress=print, save=lambda rows: None
) -> list[dict]:
    from lightning_cas.backends.blackbox import estimates
    from lightning_cas.backends.modp import available_bytes

    rows = []
    for family, widths in (QUICK if quick else FAMILIES).items():
        if families and family not in families:
            continue
        stopped: dict[str, str] = {}  # route -> the failure that stopped it
        for w in widths:
            net = network(family, w)
            est = estimates(net)
            for route in ROUTES:
                spec = {"kind": "scaling", "family": family, "w": w, "route": route, "parameters": net.parameters}
                seconds, need = est[route]["seconds"], est[route]["bytes"]
                spec |= {"estimate_s": round(seconds, 2), "estimate_bytes": need}
                if route in stopped:
                    rows.append({**spec, "status": "stopped", "why": stopped[route]})
                    continue
                if seconds > budget or need > available_bytes():
                    why = (
                        f"estimate {seconds:.3g} s, {need / 2**30:.2g} GiB: over the budget {budget:g} s or free memory"
                    )
                    rows.append({**spec, "status": "stopped", "why": why})
                    continue
                progress(f"scaling: {family} w={w} ({net.parameters} weights), {route}")
                row = run_worker(spec, budget)
                rows.append(row)
                save(rows)
                if row["status"] != "ok":
                    stopped[route] = f"{row['status']} at {net.parameters} weights"
    return rows


def scaling_markdown(rows: list[dict]) -> str:
    lines = [
        "## Exact rank routes at scale (time, peak memory, the BLAS floor, where each route stops)",
        "",
        "| family | weights | route | dimension | runs | time (s) | estimate (s) | peak RSS (GiB) | "
        "floor matmul / LU (s) | failure bound | load | status |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r.get("kind") != "scaling":
            continue
        ok = r["status"] == "ok"
        cells = [
            r["family"],
            str(r["parameters"]),
            r["route"],
            str(r.get("dimension", "-")),
            str(r.get("runs", "-")),
            f"{r['seconds']:.1f}" if ok else "-",
            f"{r['estimate_s']:.3g}" if "estimate_s" in r else "-",
            f"{r['peak_rss_bytes'] / 2**30:.2f}" if ok else "-",
            f"{r['matmul_s']:.2f} / {r['lu_s']:.2f}" if ok else "-",
            f"{r['failure_bound']:.2g}" if ok and r.get("failure_bound") is not None else "-",
            f"{r['loadavg']:.1f}" if "loadavg" in r else "-",
            "ok" if ok else f"{r['status']}: {r.get('why') or r.get('error', '')}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_scaling", description=__doc__.splitlines()[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--budget", type=float, default=BUDGET_S, help="seconds per (case, route)")
    parser.add_argument("--family", action="append", choices=sorted(FAMILIES))
    parser.add_argument("--out", default="bench/scaling.json")
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(_worker(json.loads(args.worker))))
        return 0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)

    def save(rows):  # after every row, atomically: a killed run keeps what it measured
        for path, text in ((out, json.dumps(rows, indent=1)), (out.with_suffix(".md"), scaling_markdown(rows))):
            tmp = path.with_suffix(path.suffix + ".tmp")
            tmp.write_text(text)
            tmp.replace(path)

    rows = run_scaling_bench(
        quick=args.quick, budget=args.budget, families=args.family, progress=lambda m: print(m, flush=True), save=save
    )
    save(rows)
    print(scaling_markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
