"""Benchmark rows that are ratios, each numerator and denominator measured in the same run (so a
loaded machine inflates both): ``run_ratio_bench`` measures, ``ratio_markdown`` renders.

* ``cli_vs_flint``: the whole ``lightning-cas dim`` call on widths 16x5, attention 4x4, t = 3 (1536
  weights; two exact ranks, start-up included) against ONE naive python-flint rank of the same
  Jacobian (the matrix the first run builds, converted to ``nmod_mat``; conversion and rank timed).
  Target: at most 0.5.
* ``rank_vs_matmul``: ``dimension_modp`` on 6144 weights (widths 32x5, attention 8x4, t = 3) in a
  fresh worker, against one 6144 x 6144 float64 product on one BLAS thread (the engine's count) and
  on the default count, in that worker: how far the rank is from the BLAS floor.
* ``startup``: a whole ``lightning-cas dim`` call on widths 2,2 against a bare
  ``python -c "import numpy, flint, click"`` (medians, alternating), the package's bytecode compiled
  first as an installed package has it. Target: at most 1.5.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.workers import worker_failure

BIG_1536 = {"widths": [16] * 5, "attention": [4] * 4, "tokens": 3}
BIG_6144 = {"widths": [32] * 5, "attention": [8] * 4, "tokens": 3}
QUICK_6144 = {"widths": [16] * 5, "attention": [4] * 4, "tokens": 3}  # --quick: the 1536 case instead
TARGET_CLI_FLINT = 0.5
TARGET_STARTUP = 1.5
WORKER_TIMEOUT = 1800.0
ROOT = Path(__file__).resolve().parents[1]


def _arch(case: dict):
    from lightning_cas.core.architecture import Architecture

    return Architecture(tuple(case["widths"]), tuple(case["attention"]), case["tokens"])


def naive_flint_rank(case: dict, seed: int = 0) -> dict:
    """One python-flint rank of a Jacobian of the size the modp backend's first run reaches (same prime,
    same weights, as many token matrices as that run drew, all at once, no streaming): the naive way
    to the same number. The modp run that tells the size is not timed."""
    import flint
    import numpy as np

    from lightning_cas.backends.modp import rank_at_random_point
    from lightning_cas.core.arithmetic import ModP
    from lightning_cas.core.checks import derived_seed
    from lightning_cas.core.forward import jacobian
    from lightning_cas.core.primes import DEFAULT_PRIME

    net = _arch(case)
    q = DEFAULT_PRIME
    modp_rank, modp_rows = rank_at_random_point(net, q, derived_seed(seed, 0))
    rng = np.random.default_rng(derived_seed(seed, 0))
    w = rng.integers(0, q, size=net.parameters, dtype=np.int64)
    ar = ModP(q)
    start = time.perf_counter()
    J = np.asarray(
        jacobian(net, ar, ar.array(w), ar.random(rng, (-(-modp_rows // net.rows_per_sample), net.input, net.tokens)))
    )
    build = time.perf_counter() - start
    start = time.perf_counter()
    M = flint.nmod_mat(J.shape[0], J.shape[1], (J % q).astype(np.int64).reshape(-1).tolist(), q)
    convert = time.perf_counter() - start
    start = time.perf_counter()
    rank = M.rank()
    ranked = time.perf_counter() - start
    return {
        "rows": int(J.shape[0]),
        "columns": int(J.shape[1]),
        "rank": int(rank),
        "modp_rank": int(modp_rank),
        "build_s": round(build, 3),
        "convert_s": round(convert, 3),
        "rank_s": round(ranked, 3),
        "seconds": round(convert + ranked, 3),
    }


def _worker(spec: dict) -> dict:
    if spec["kind"] == "flint":
        return naive_flint_rank(spec["case"], spec.get("seed", 0))
    if spec["kind"] == "modp":
        from benchmarks.bench_rank import _matmul_seconds
        from lightning_cas.backends.modp import dimension_modp

        arch = _arch(spec["case"])
        wall, cpu = time.perf_counter(), time.process_time()
        res = dimension_modp(arch, seed=spec.get("seed", 0))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        P = arch.parameters
        return {
            "parameters": P,
            "dimension": res.dimension,
            "seconds": round(wall, 3),
            "cpu_seconds": round(cpu, 3),
            "matmul_1thread_s": round(_matmul_seconds(P, 1), 7),
            "matmul_default_threads_s": round(_matmul_seconds(P, None), 7),
        }
    raise ValueError(spec["kind"])


def run_worker(spec: dict) -> dict:
    """One measurement in a fresh interpreter; an error becomes a row, not a crash."""
    try:
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.bench_ratios", "--worker", json.dumps(spec)],
            capture_output=True,
            text=True,
            timeout=WORKER_TIMEOUT,
            cwd=ROOT,
        )
    except subprocess.TimeoutExpired:
        return {"status": "timeout"}
    if out.returncode != 0:
        return worker_failure(out.returncode, out.stderr)
    return {"status": "ok", **json.loads(out.stdout.strip().splitlines()[-1])}


def _wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, timeout=WORKER_TIMEOUT, cwd=ROOT)
    return time.perf_counter() - start


def _cli(args: list[str]) -> list[str]:
    exe = os.path.join(os.path.dirname(sys.executable), "lightning-cas")
    return ([exe] if os.path.exists(exe) else [sys.executable, "-m", "lightning_cas"]) + args


def _dim_args(case: dict) -> list[str]:
    return [
        "dim",
        "--widths",
        ",".join(map(str, case["widths"])),
        "--attention",
        ",".join(map(str, case["attention"])),
        "--tokens",
        str(case["tokens"]),
    ]


def cli_vs_flint(repeats: int = 3, seed: int = 0) -> dict:
    load = os.getloadavg()[0]
    cli = [_wall(_cli(_dim_args(BIG_1536))) for _ in range(repeats)]
    flint = run_worker({"kind": "flint", "case": BIG_1536, "seed": seed})
    row = {
        "kind": "cli_vs_flint",
        "case": BIG_1536,
        "cli_s": round(statistics.median(cli), 3),
        "cli_all_s": [round(t, 3) for t in cli],
        "loadavg": round(load, 2),
        "target": TARGET_CLI_FLINT,
        **flint,
    }
    if flint["status"] == "ok":
        row["ratio"] = round(row["cli_s"] / flint["seconds"], 3)
        row["met"] = row["ratio"] <= TARGET_CLI_FLINT
    return row


def rank_vs_matmul(quick: bool = False, seed: int = 0) -> dict:
    load = os.getloadavg()[0]
    case = QUICK_6144 if quick else BIG_6144
    row = {
        "kind": "rank_vs_matmul",
        "case": case,
        "loadavg": round(load, 2),
        **run_worker({"kind": "modp", "case": case, "seed": seed}),
    }
    if row["status"] == "ok":
        row["ratio_1thread"] = round(row["seconds"] / row["matmul_1thread_s"], 2)
        row["ratio_default"] = round(row["seconds"] / row["matmul_default_threads_s"], 2)
    return row


def startup(repeats: int = 8) -> dict:
    """The start-up with the package's bytecode compiled first, as an installed package has it (pip compiles
    on install; a checkout writes __pycache__ on its first run). Where PYTHONDONTWRITEBYTECODE=1 and nothing
    compiled the package, every call compiles it from source (0.32 s against 0.20 s for this call on the
    machine this project is built on, which sets it): that is the set-up, not the start-up."""
    import compileall

    load = os.getloadavg()[0]
    compileall.compile_dir(str(ROOT / "lightning_cas"), quiet=1)  # py_compile writes whatever the env says
    bare_cmd = [sys.executable, "-c", "import numpy, flint, click"]
    dim_cmd = _cli(["dim", "--widths", "2,2", "--attention", "1", "--tokens", "2"])
    bare, dim = [], []
    for _ in range(repeats):  # alternating, so a change in load reaches both
        bare.append(_wall(bare_cmd))
        dim.append(_wall(dim_cmd))
    ratio = statistics.median(dim) / statistics.median(bare)
    return {
        "kind": "startup",
        "status": "ok",
        "bare_s": round(statistics.median(bare), 3),
        "dim_s": round(statistics.median(dim), 3),
        "bare_all_s": [round(t, 3) for t in bare],
        "dim_all_s": [round(t, 3) for t in dim],
        "ratio": round(ratio, 3),
        "target": TARGET_STARTUP,
        "bytecode": "compiled first (compileall)",
        "environment_dont_write_bytecode": bool(os.environ.get("PYTHONDONTWRITEBYTECODE")),
        "met": ratio <= TARGET_STARTUP,
        "loadavg": round(load, 2),
    }


def run_ratio_bench(quick: bool = False, seed: int = 0, progress=print) -> list[dict]:
    rows = [startup(4 if quick else 8)]
    progress(f"[ratios] startup: dim {rows[-1]['dim_s']} s vs bare imports {rows[-1]['bare_s']} s: {rows[-1]['ratio']}")
    rows.append(cli_vs_flint(1 if quick else 3, seed))
    progress(
        f"[ratios] 1536 weights: CLI {rows[-1]['cli_s']} s vs one flint rank {rows[-1].get('seconds')} s: "
        f"{rows[-1].get('ratio')}"
    )
    rows.append(rank_vs_matmul(quick, seed))
    progress(
        f"[ratios] rank vs matmul: {rows[-1].get('seconds')} s vs {rows[-1].get('matmul_1thread_s')} s "
        f"(one thread): {rows[-1].get('ratio_1thread')}"
    )
    return rows


def _yes(flag) -> str:
    return "**MET**" if flag else "**NOT MET**"


def ratio_markdown(rows: list[dict]) -> str:
    by = {r["kind"]: r for r in rows}
    out = ["## Ratios measured in one run", ""]
    s = by.get("startup")
    if s and s.get("status") == "ok":
        out.append(
            f"- start-up: a whole `lightning-cas dim --widths 2,2 --attention 1` call {s['dim_s']:.3f} s "
            f'against a bare `python -c "import numpy, flint, click"` {s["bare_s"]:.3f} s (medians of '
            f"{len(s['dim_all_s'])}, alternating): **{s['ratio']:.2f}x** (target <= {s['target']:g}x): "
            f"{_yes(s['met'])}; load average {s['loadavg']}"
        )
        if "bytecode" in s:
            out.append(
                "  (the package's bytecode compiled first, as an installed package has it"
                + (
                    "; this machine sets PYTHONDONTWRITEBYTECODE=1, under which a package nothing compiled is "
                    "compiled from source on every call"
                    if s.get("environment_dont_write_bytecode")
                    else ""
                )
                + ")"
            )
    c = by.get("cli_vs_flint")
    if c and c.get("ratio") is not None:
        out.append(
            f"- 1536 weights (widths 16x5, attention 4x4, t = 3): the whole CLI call {c['cli_s']:.2f} s "
            f"(median of {len(c['cli_all_s'])}; two exact ranks, start-up included) against ONE naive "
            f"python-flint rank of the same {c['rows']} x {c['columns']} Jacobian {c['seconds']:.2f} s "
            f"(conversion {c['convert_s']:.2f} s + rank {c['rank_s']:.2f} s; building the matrix, "
            f"{c['build_s']:.2f} s, not counted): **{c['ratio']:.2f}** (target <= {c['target']:g}): "
            f"{_yes(c['met'])}; load average {c['loadavg']}"
        )
        if c["rank"] != c["modp_rank"]:
            out.append(f"- **FINDING: the flint rank {c['rank']} differs from the modp rank {c['modp_rank']}**")
    elif c:
        out.append(f"- 1536 weights: the flint rank did not finish ({c.get('status')} {c.get('error', '')})")
    m = by.get("rank_vs_matmul")
    if m and m.get("status") == "ok":
        out.append(
            f"- {m['parameters']} weights (widths {m['case']['widths'][0]}x5): `dimension_modp` (two exact "
            f"ranks) {m['seconds']:.1f} s, CPU {m['cpu_seconds']:.1f} s, against one {m['parameters']} x "
            f"{m['parameters']} float64 product in the same worker: {m['matmul_1thread_s']:.2f} s on one BLAS "
            f"thread (**{m['ratio_1thread']:.1f}x**), {m['matmul_default_threads_s']:.2f} s on the default "
            f"count ({m['ratio_default']:.1f}x); load average {m['loadavg']}"
        )
    elif m:
        out.append(f"- rank vs matmul: {m.get('status')} {m.get('error', '')}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        print(json.dumps(_worker(json.loads(sys.argv[2]))))
    else:
        rows = run_ratio_bench(quick="--quick" in sys.argv)
        print(ratio_markdown(rows))
