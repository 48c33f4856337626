"""The ``dimension`` section of ``make bench``: exact ``modp`` vs ``jacobian`` (M2) vs two float64 baselines
(``paper``: the paper's own protocol, ``numeric``: our fast float) on one case at a time, each (case, method)
in a fresh worker process so its peak RSS is its own (see ``benchmarks.bench``)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.workers import worker_failure

METHODS = ("modp", "numeric", "paper", "jacobian")
LABELS = {
    "modp": "modp (worker process peak RSS)",
    "numeric": "fast float (ours) (worker peak RSS)",
    "paper": "paper-protocol float (worker peak RSS, torch included)",
    "jacobian": "M2 jacobian (M2 child peak RSS)",
}
# The paper-protocol baseline: one trial (the paper's script takes the best of 5, so this is the
# cheapest version of it) and one torch thread: in a pilot on this shared 2-core machine, torch's
# two intra-op threads made its many tiny backward passes 1.5-15x slower and erratic, which would
# flatter modp.
PAPER_TRIALS_IN_BENCH = 1
# On the paper sweep the float baseline also runs with one BLAS thread: on a shared 2-core
# machine a multi-threaded SVD can lose more to contention than it gains, which would flatter modp.
ONE_THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
M2_TIMEOUT = 120.0
WORKER_TIMEOUT = 900.0


# ---- the cases ------------------------------------------------------------------------------
def dimension_cases(quick: bool) -> list[dict]:
    """(group, widths, attention, tokens) of every dimension row, in run order."""
    cases = []
    for a in (2, 1):
        for d in (2, 3) if quick else range(2, 9):
            cases.append({"group": f"one layer a={a}", "widths": [d, d], "attention": [a], "tokens": 2})
    for delta in (3, 4) if quick else range(3, 11):
        cases.append({"group": "paper L=2 t=3 a=2", "widths": [delta] * 3, "attention": [2, 2], "tokens": 3})
    for delta in (2,) if quick else range(2, 7):
        cases.append({"group": "depth 3 a=2 t=2", "widths": [delta] * 4, "attention": [2, 2, 2], "tokens": 2})
    return cases


# ---- worker: one (case, method) in a fresh process -------------------------------------------
def _maxrss_bytes(who) -> int:
    import resource

    return resource.getrusage(who).ru_maxrss * 1024  # Linux reports KiB


def _worker(spec: dict) -> dict:
    """Run one method on one case; report dimension, times and this process's peak memory."""
    import resource
    import tracemalloc

    from benchmarks.paper_baseline import dimension_paper
    from lightning_cas.backends.m2 import dimension_jacobian
    from lightning_cas.backends.modp import dimension_modp
    from lightning_cas.backends.numeric import dimension_numeric
    from lightning_cas.core.architecture import Architecture
    from lightning_cas.errors import LightningError, M2TimeoutError, TooLargeError
    from lightning_cas.macaulay2.connection import Macaulay2
    from lightning_cas.system.deadline import Deadline

    arch = Architecture(spec["widths"], spec["attention"], spec["tokens"])
    method, repeats = spec["method"], spec["repeats"]
    out: dict = {"method": method}
    if method == "jacobian":
        run = lambda: dimension_jacobian(arch, Macaulay2(deadline=Deadline(spec["m2_timeout"])), seed=spec["seed"])  # noqa: E731
        repeats = 1  # M2 is slow; its start-up is part of what a user pays
    elif method == "paper":
        run = lambda: dimension_paper(arch, seed=spec["seed"], trials=spec.get("trials", PAPER_TRIALS_IN_BENCH))  # noqa: E731
        try:
            dimension_paper(Architecture((2, 2), (1,), 2), seed=0, trials=1)  # import torch, warm autograd
        except LightningError as exc:
            return {**out, "status": "error", "error": str(exc)}
    else:
        fn = dimension_modp if method == "modp" else dimension_numeric
        run = lambda: fn(arch, seed=spec["seed"])  # noqa: E731
        fn(Architecture((2, 2), (1,), 2), seed=0)  # warm the code paths before the baseline
    base = _maxrss_bytes(resource.RUSAGE_SELF)
    times = []
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            res = run()
            # the paper baseline's spectrum diagnostics are not part of its protocol: not timed
            times.append(time.perf_counter() - start - sum(r.get("diagnostics_s", 0.0) for r in res.runs))
    except TooLargeError as exc:
        return {**out, "status": "refused (too large)", "error": str(exc)}
    except M2TimeoutError:
        return {
            **out,
            "status": "timeout",
            "timeout_s": spec["m2_timeout"],
            "m2_peak_rss_bytes": _maxrss_bytes(resource.RUSAGE_CHILDREN),
        }
    except LightningError as exc:
        return {**out, "status": "error", "error": str(exc)}
    out.update(
        status="ok",
        dimension=res.dimension,
        time_s=statistics.median(times),
        times_s=[round(t, 4) for t in times],
        certainty=res.certainty,
        consistent=res.consistent,
        peak_rss_bytes=_maxrss_bytes(resource.RUSAGE_SELF),
        peak_rss_delta_bytes=_maxrss_bytes(resource.RUSAGE_SELF) - base,
        samples=res.samples,
    )
    if method == "jacobian":
        out.update(
            m2_peak_rss_bytes=_maxrss_bytes(resource.RUSAGE_CHILDREN),
            m2_version=res.m2_version,
            primes=list(res.primes),
        )
    elif method == "paper":  # tracemalloc cannot see torch's allocator: no traced peak
        info = res.runs[0]
        out.update(
            rows=info["rows"],
            trials=len(res.runs),
            ranks=[r["rank"] for r in res.runs],
            backward_passes=sum(r["backward_passes"] for r in res.runs),
            jacobian_s=info["jacobian_s"],
            rank_s=info["rank_s"],
            torch_threads=info["torch_threads"],
            spectra=[
                {
                    k: r[k]
                    for k in (
                        "seed",
                        "rank",
                        "s_max",
                        "tolerance",
                        "smallest_kept",
                        "largest_dropped",
                        "kept_decades",
                        "largest_gap_rank",
                    )
                }
                for r in res.runs
            ],
        )
    else:
        tracemalloc.start()  # a separate, untimed run: numpy + Python allocations (not flint's)
        run()
        out["traced_peak_bytes"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    if method == "modp":
        out.update(primes=list(res.primes), ranks=[r["rank"] for r in res.runs], rows=res.runs[0]["rows"])
    if method == "numeric":
        info = res.runs[0]
        out.update(
            rows=info["rows"],
            gap_rank=info["gap_rank"],
            gap_decades=info["gap_decades"],
            reliable=info["gap_rank"] == info["rank"],
        )
    return out


def run_worker(
    case: dict, method: str, seed: int, repeats: int, m2_timeout: float, env: dict | None = None, **extra
) -> dict:
    """Start a fresh interpreter for one measurement; a dead or hung worker becomes a status."""
    spec = {
        **{k: case[k] for k in ("widths", "attention", "tokens")},
        "method": method,
        "seed": seed,
        "repeats": repeats,
        "m2_timeout": m2_timeout,
        **extra,
    }
    limit = (m2_timeout + 120) if method == "jacobian" else WORKER_TIMEOUT
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks.bench", "--worker", json.dumps(spec)],
            capture_output=True,
            text=True,
            timeout=limit,
            cwd=Path(__file__).resolve().parents[1],
            env={**os.environ, **env} if env else None,
        )
    except subprocess.TimeoutExpired:
        return {"method": method, "status": "timeout", "timeout_s": limit}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"method": method, **worker_failure(proc.returncode, proc.stderr or proc.stdout)}
    result = json.loads(lines[-1])
    result["worker_wall_s"] = round(time.perf_counter() - start, 3)
    return result


def dimension_row(case: dict, seed: int, repeats: int, m2_timeout: float) -> dict:
    from lightning_cas.core.architecture import Architecture
    from lightning_cas.core.theory import predict_dimension

    arch = Architecture(case["widths"], case["attention"], case["tokens"])
    pred = predict_dimension(arch)
    row = {
        "section": "dimension",
        **case,
        "parameters": arch.parameters,
        "seed": seed,
        "theory": pred.value,
        "theory_status": pred.status,
        "theory_reason": pred.reason,
    }
    for method in METHODS:
        if method != "paper":
            row[method] = run_worker(case, method, seed, repeats, m2_timeout)
    measured = list(METHODS)
    row["paper"] = run_worker(case, "paper", seed, repeats, m2_timeout, env=ONE_THREAD_ENV)
    if case["group"].startswith("paper"):
        row["numeric_1thread"] = run_worker(case, "numeric", seed, repeats, m2_timeout, env=ONE_THREAD_ENV)
        measured.append("numeric_1thread")
    dims = {m: row[m]["dimension"] for m in measured if row[m].get("status") == "ok"}
    row["agree"] = len(set(dims.values())) <= 1 if dims else None
    findings = []
    if len(set(dims.values())) > 1:
        findings.append("methods disagree: " + ", ".join(f"{m}={v}" for m, v in dims.items()))
    exact = dims.get("modp", dims.get("jacobian"))
    if "paper" in dims and exact is not None and dims["paper"] != exact:
        sp = row["paper"]["spectra"][0]
        findings.append(
            f"paper protocol (1 trial) rank {dims['paper']} != exact {exact}: matrix_rank tolerance "
            f"{sp['tolerance']:.3g} against singular values from {sp['s_max']:.3g} down, smallest kept "
            f"{sp['smallest_kept']:.3g}, largest dropped {sp['largest_dropped']:.3g}"
        )
        # the paper's script takes the best of PAPER_TRIALS: does its full protocol recover? (untimed)
        from benchmarks.paper_baseline import PAPER_TRIALS

        full = row["paper_full_trials"] = run_worker(
            case, "paper", seed, 1, m2_timeout, env=ONE_THREAD_ENV, trials=PAPER_TRIALS
        )
        if full.get("status") == "ok":
            findings.append(
                f"with the paper's {PAPER_TRIALS} trials (ranks {full['ranks']}) its protocol gives "
                f"{full['dimension']}" + (" (recovers)" if full["dimension"] == exact else "")
            )
    for m in measured:  # a refusal (too large for M2) is by design; an error or a time limit is a finding
        if row[m].get("status") in ("error", "timeout"):
            findings.append(f"{m}: {row[m].get('error') or row[m]['status']}")
    if row["modp"].get("status") == "ok" and not row["modp"]["consistent"]:
        findings.append(f"modp repetitions disagree: ranks {row['modp']['ranks']}")
    if row["numeric"].get("status") == "ok" and not row["numeric"]["reliable"]:
        findings.append(
            f"float baseline: tolerance rank {row['numeric']['dimension']} != largest-gap rank "
            f"{row['numeric']['gap_rank']}"
        )
    if pred.value is None:
        row["theory_verdict"] = "no prediction"
    elif exact is None:
        row["theory_verdict"] = "not computed"
    else:
        row["theory_verdict"] = "agree" if exact == pred.value else "disagree"
        if exact != pred.value:
            findings.append(f"theory predicts {pred.value}, exact computation gives {exact} ({pred.status})")
    row["findings"] = findings
    return row
