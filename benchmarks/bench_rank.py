"""Benchmark rows for the exact dimension at real sizes, self-contained so the section
can move with the benchmarks: ``run_rank_bench`` measures, ``rank_markdown`` renders,
``rank_findings`` lists what disagrees or misses a target.

* ``growth``: depth 4, t = 3, widths w (x5), attention w / 4, w = 4..32, so P = 6 w^2 = 96..6144.
  Each row is ``dimension_modp`` (two primes, two seeds) in a fresh worker process: time, CPU
  time, the worker's peak RSS measured before anything else is allocated, the dimension next to
  the closed form, the failure bound, and in the same process the time of one P x P float64
  matrix product on one BLAS thread (the thread count the engine uses) and on the default count.
  The log-log slope of time against P is printed per step and fitted over P >= 1536.
* ``prime``: the rank routine on one random 4096 x 4096 matrix of rank 1900 for primes just
  below 2^21, 2^23, 2^24, 2^25 and 2^26, next to python-flint's nmod_mat (list conversion and rank
  timed separately): the measurement behind the default prime.
* ``cli``: the whole ``lightning-cas dim`` call for 16x5 (1536 weights) and the start-up on a tiny
  network (median of 5).
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.workers import worker_failure

GROWTH_WIDTHS = (4, 8, 12, 16, 20, 24, 28, 32)
QUICK_WIDTHS = (4, 8, 16)
TARGET_6144_S = 60.0
TARGET_6144_BYTES = 2 * 2**30
TARGET_CLI_1536_S = 2.0
TARGET_STARTUP_S = 0.3
WORKER_TIMEOUT = 1800.0


def growth_case(w: int) -> dict:
    return {"kind": "growth", "widths": [w] * 5, "attention": [max(1, w // 4)] * 4, "tokens": 3}


def _peak_rss() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


MATMUL_RESOLUTION_S = 1e-4  # a product quicker than this is timer noise, not a denominator


def _matmul_seconds(n: int, threads: int | None) -> float:
    import numpy as np

    from lightning_cas.core.rank_modp import blas_threads

    A = np.random.default_rng(0).random((n, n))
    B = A.T.copy()
    if threads is None:
        start = time.perf_counter()
        A @ B
        return time.perf_counter() - start
    with blas_threads(threads):
        start = time.perf_counter()
        A @ B
        return time.perf_counter() - start


def _ratio(seconds: float, matmul_seconds: float) -> str:
    """seconds / matmul, or '-' when the product was too quick to time (a small P on a quick machine)."""
    return f"{seconds / matmul_seconds:.1f}" if matmul_seconds >= MATMUL_RESOLUTION_S else "-"


def _worker(spec: dict) -> dict:
    if spec["kind"] == "growth":
        from lightning_cas.backends.modp import dimension_modp
        from lightning_cas.core.architecture import Architecture
        from lightning_cas.core.theory import predict_dimension

        arch = Architecture(tuple(spec["widths"]), tuple(spec["attention"]), spec["tokens"])
        base = _peak_rss()
        wall, cpu = time.perf_counter(), time.process_time()
        res = dimension_modp(arch, seed=spec.get("seed", 0))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        peak = _peak_rss()
        P = arch.parameters
        return {
            "parameters": P,
            "dimension": res.dimension,
            "theory": predict_dimension(arch).value,
            "consistent": res.consistent,
            "rows": [r["rows"] for r in res.runs],
            "primes": list(res.primes),
            "failure_bound": res.failure_bound,
            "seconds": round(wall, 3),
            "cpu_seconds": round(cpu, 3),
            "peak_rss_bytes": peak,
            "peak_rss_before_bytes": base,
            "matmul_1thread_s": round(_matmul_seconds(P, 1), 7),
            "matmul_default_threads_s": round(_matmul_seconds(P, None), 7),
        }
    if spec["kind"] == "prime":
        import flint
        import numpy as np

        from lightning_cas.core import gfp, rank_modp
        from lightning_cas.core.primes import previous_prime

        n, r = spec["n"], spec["rank"]
        out = []
        for bits in (21, 23, 24, 25, 26):
            p = previous_prime(2**bits)
            rng = np.random.default_rng(bits)
            A = gfp.matmul(gfp.centred(rng.integers(0, p, (n, r)), p), gfp.centred(rng.integers(0, p, (r, n)), p), p)
            with rank_modp.blas_threads():
                start = time.perf_counter()
                got = rank_modp.rank(gfp.residues(A, p), p)
                t = time.perf_counter() - start
            entry = {"prime": p, "bits": bits, "chunk": gfp.chunk(p), "rank": got, "seconds": round(t, 3)}
            if bits == 24:
                entries = gfp.residues(A, p).reshape(-1)
                start = time.perf_counter()
                M = flint.nmod_mat(n, n, entries.tolist(), p)
                entry["flint_convert_s"] = round(time.perf_counter() - start, 3)
                start = time.perf_counter()
                entry["flint_rank"] = M.rank()
                entry["flint_rank_s"] = round(time.perf_counter() - start, 3)
            out.append(entry)
        return {"n": n, "rank": r, "primes": out, "matmul_1thread_s": round(_matmul_seconds(n, 1), 4)}
    raise ValueError(spec["kind"])


def run_worker(spec: dict) -> dict:
    """One measurement in a fresh interpreter (its own peak RSS); errors become a row, not a crash."""
    try:
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.bench_rank", "--worker", json.dumps(spec)],
            capture_output=True,
            text=True,
            timeout=WORKER_TIMEOUT,
            cwd=Path(__file__).resolve().parents[1],
        )
    except subprocess.TimeoutExpired:
        return {**spec, "status": "timeout"}
    if out.returncode != 0:
        return {**spec, **worker_failure(out.returncode, out.stderr)}
    return {**spec, "status": "ok", **json.loads(out.stdout.strip().splitlines()[-1])}


def _cli_seconds(args: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one CLI call; CPU is the child's user + system time."""
    import resource

    exe = os.path.join(os.path.dirname(sys.executable), "lightning-cas")
    cmd = [exe] if os.path.exists(exe) else [sys.executable, "-m", "lightning_cas"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd + args, check=True, capture_output=True, timeout=WORKER_TIMEOUT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cli_rows() -> list[dict]:
    big = ["dim", "--widths", "16,16,16,16,16", "--attention", "4,4,4,4", "--tokens", "3"]
    tiny = ["dim", "--widths", "2,2", "--attention", "1", "--tokens", "2"]
    rows = []
    for name, args, repeats, target in (
        ("cli_1536", big, 3, TARGET_CLI_1536_S),
        ("startup_tiny", tiny, 5, TARGET_STARTUP_S),
    ):
        load = os.getloadavg()[0]
        runs = [_cli_seconds(args) for _ in range(repeats)]
        times = [w for w, _ in runs]
        rows.append(
            {
                "kind": "cli",
                "name": name,
                "command": "lightning-cas " + " ".join(args),
                "seconds": round(statistics.median(times), 3),
                "all_seconds": [round(t, 3) for t in times],
                "cpu_seconds": round(statistics.median(c for _, c in runs), 3),
                "loadavg": round(load, 2),
                "target_s": target,
                "met": statistics.median(times) < target,
                "status": "ok",
            }
        )
    return rows


def add_slopes(rows: list[dict]) -> None:
    """Log-log slope of time against P from the previous growth row, in place."""
    prev = None
    for r in rows:
        if r.get("kind") != "growth" or r.get("status") != "ok":
            continue
        if prev is not None:
            r["slope"] = round(
                math.log(r["seconds"] / prev["seconds"]) / math.log(r["parameters"] / prev["parameters"]), 2
            )
        prev = r


def fitted_slope(rows: list[dict], min_p: int = 1536, key: str = "seconds") -> float | None:
    pts = [
        (math.log(r["parameters"]), math.log(r[key]))
        for r in rows
        if r.get("kind") == "growth" and r.get("status") == "ok" and r["parameters"] >= min_p
    ]
    if len(pts) < 2:
        return None
    mx, my = statistics.fmean(x for x, _ in pts), statistics.fmean(y for _, y in pts)
    return round(sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts), 2)


def run_rank_bench(quick: bool = False, seed: int = 0, progress=print) -> list[dict]:
    rows: list[dict] = []
    for w in QUICK_WIDTHS if quick else GROWTH_WIDTHS:
        load = os.getloadavg()[0]
        row = run_worker({**growth_case(w), "seed": seed})
        row["loadavg"] = round(load, 2)
        rows.append(row)
        add_slopes(rows)
        progress(
            f"[rank] widths {w}x5: "
            + (
                f"P={row['parameters']} dim={row['dimension']} (theory {row['theory']}) "
                f"{row['seconds']} s, {row['peak_rss_bytes'] / 2**20:.0f} MiB, matmul "
                f"{row['matmul_1thread_s']} s"
                if row["status"] == "ok"
                else row["status"]
            )
        )
    row = run_worker({"kind": "prime", "n": 1024 if quick else 4096, "rank": 475 if quick else 1900})
    rows.append(row)
    progress(f"[rank] prime choice: {row.get('primes', row['status'])}")
    rows += cli_rows()
    progress(f"[rank] cli: {[(r['name'], r['seconds']) for r in rows if r['kind'] == 'cli']}")
    return rows


# ---- presentation ----------------------------------------------------------------------------
def _yes(flag) -> str:
    return "**MET**" if flag else "**NOT MET**"


def rank_findings(rows: list[dict]) -> list[str]:
    out = []
    for r in rows:
        if r.get("status") != "ok":
            out.append(
                f"rank bench {r.get('kind')} {r.get('widths', r.get('name', ''))}: {r.get('status')} "
                f"{r.get('error', '')}".strip()
            )
        elif r["kind"] == "growth":
            if r["theory"] is not None and r["dimension"] != r["theory"]:
                out.append(f"rank bench widths {r['widths']}: dimension {r['dimension']} != closed form {r['theory']}")
            if not r["consistent"]:
                out.append(f"rank bench widths {r['widths']}: the two primes disagree")
    return out


def rank_markdown(rows: list[dict]) -> str:
    growth = [r for r in rows if r.get("kind") == "growth" and r.get("status") == "ok"]
    big = next((r for r in growth if r["parameters"] == 6144), None)
    cli = {r["name"]: r for r in rows if r.get("kind") == "cli"}
    out = ["## Exact dimension at real sizes", ""]
    if big:
        out.append(
            f"- widths 32x5, attention 8x4, t = 3 (6144 weights): dimension {big['dimension']} (closed form "
            f"{big['theory']}) in {big['seconds']:.1f} s, CPU {big['cpu_seconds']:.1f} s, load average "
            f"{big.get('loadavg')} (target < {TARGET_6144_S:g} s): "
            f"{_yes(big['seconds'] < TARGET_6144_S)}; peak RSS {big['peak_rss_bytes'] / 2**20:.0f} MiB "
            f"(target < 2 GiB): {_yes(big['peak_rss_bytes'] < TARGET_6144_BYTES)}"
        )
    else:
        out.append("- 6144 weights: not measured")
    for name, label in (
        ("cli_1536", "whole `lightning-cas dim` call, widths 16x5, attention 4x4, t = 3 (1536 weights)"),
        ("startup_tiny", "`lightning-cas dim` start-up on widths 2,2 (whole call)"),
    ):
        c = cli.get(name)
        out.append(
            f"- {label}: {c['seconds']:.2f} s (median of {len(c['all_seconds'])}; "
            f"target < {c['target_s']:g} s): "
            f"{_yes(c['met'])}; CPU {c['cpu_seconds']:.2f} s, load average {c['loadavg']}"
            if c
            else f"- {label}: not measured"
        )
    out += [
        "",
        f"Fitted log-log slope against P over P >= 1536: wall time {fitted_slope(growth)}, CPU time "
        f"{fitted_slope(growth, key='cpu_seconds')} (the CPU time is the steadier measure on this shared machine: "
        "the wall time includes waiting for the cores). "
        "`ratio` = modp time (two primes) / one P x P float64 product on one BLAS thread, in the same worker.",
        "",
        "| widths | a | P | dim | theory | rows (per run) | s | CPU s | slope | peak MiB | matmul 1T s | "
        "matmul default s | ratio | failure bound | load |",
        "|" + "---|" * 15,
    ]
    for r in growth:
        out.append(
            f"| {r['widths'][0]}x5 | {r['attention'][0]} | {r['parameters']} | {r['dimension']} | "
            f"{r['theory']} | {', '.join(map(str, r['rows']))} | {r['seconds']:.2f} | {r['cpu_seconds']:.2f} | "
            f"{r.get('slope', '-')} | {r['peak_rss_bytes'] / 2**20:.0f} | {r['matmul_1thread_s']:.3f} | "
            f"{r['matmul_default_threads_s']:.3f} | {_ratio(r['seconds'], r['matmul_1thread_s'])} | "
            f"{r['failure_bound']:.2g} | {r.get('loadavg', '-')} |"
        )
    prime = next((r for r in rows if r.get("kind") == "prime" and r.get("status") == "ok"), None)
    if prime:
        out += [
            "",
            f"Prime choice: rank of one random {prime['n']} x {prime['n']} matrix of rank {prime['rank']} "
            f"(one float64 product of that size: {prime['matmul_1thread_s']:.2f} s on one thread).",
            "",
            "| prime | bits | residues per reduction | rank | s | flint convert s | flint rank s |",
            "|---|---|---|---|---|---|---|",
        ]
        for e in prime["primes"]:
            out.append(
                f"| {e['prime']} | {e['bits']} | {e['chunk']} | {e['rank']} | {e['seconds']:.2f} | "
                f"{e.get('flint_convert_s', '-')} | {e.get('flint_rank_s', '-')} |"
            )
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        print(json.dumps(_worker(json.loads(sys.argv[2]))))
    else:
        rows = run_rank_bench(quick="--quick" in sys.argv)
        print(rank_markdown(rows))
