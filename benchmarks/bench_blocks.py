"""Benchmark rows for networks of blocks and ranks at given weights, each in a fresh worker process:

* ``transformer_6144``: a causal residual transformer stack with mlp blocks (d_model 16, 4 heads of 4,
  3 layers, d_mlp 32: 6144 weights), the generic dimension by the exact engine (target < 60 s, 2 GiB);
* ``cli_1536``: the whole ``lightning-cas dim`` call on a 1536-weight transformer layer (target < 2 s);
* ``local_6144``: the rank at a float point of the plain 6144-weight network (widths 32 x 5,
  attention 8 x 4, t = 3), generic rank included (target < 60 s);
* ``konda``: the certified softmax rank at Konda's point (96 weights; target < 30 s), with float64's rank;
* ``explain_6144``: the defect split (``core.defects``) of a 6144-weight transformer stack with an
  embedding and a readout, against the time of its dimension by the exact engine (target: under twice
  that time).
* ``softmax_transformer_144``: the certified rank at a trained point of a softmax transformer with an mlp
  (embedding, two factored causal heads, an mlp on the residual stream, a readout: 144 weights; trained by
  40 steps of plain gradient descent on the squared loss to random targets on 64 random inputs; target < 30 s).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.workers import worker_failure

TARGETS = {
    "transformer_6144": 60.0,
    "cli_1536": 2.0,
    "local_6144": 60.0,
    "konda": 30.0,
    "explain_6144": 120.0,
    "softmax_transformer_144": 30.0,
}
MEMORY_TARGET_BYTES = 2 * 2**30
WORKER_TIMEOUT = 1800.0
CASES = ("transformer_6144", "cli_1536", "local_6144", "konda", "explain_6144", "softmax_transformer_144")


def _peak_rss() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _worker(kind: str) -> dict:
    import numpy as np

    from lightning_cas import api
    from lightning_cas.core.architecture import Architecture
    from lightning_cas.core.network import Network

    start = time.perf_counter()
    if kind == "transformer_6144":
        net = Network.transformer(16, 4, 4, 3, d_mlp=32, causal=True, residual=True, tokens=3)
        r = api.dimension(net)
        out = {"parameters": net.parameters, "dimension": r.dimension, "failure_bound": r.failure_bound}
    elif kind == "local_6144":
        arch = Architecture((32,) * 5, (8,) * 4, 3)
        w = np.random.default_rng(0).standard_normal(arch.parameters) * 0.1  # a float point
        r = api.dimension(arch, at=w)
        out = {"parameters": arch.parameters, "dimension": r.dimension, "generic": r.generic_dimension}
    elif kind == "konda":
        from lightning_cas.core.softmax import jacobian
        from lightning_cas.system.examples import konda_point

        point, inputs = konda_point()
        X = np.vectorize(float, otypes=[float])(inputs.values)
        float_rank = int(np.linalg.matrix_rank(jacobian(point.network, point.floats(), X)))
        r = api.dimension(point.network, at=point, inputs=inputs)
        out = {
            "parameters": point.network.parameters,
            "dimension": r.dimension,
            "float64_rank": float_rank,
            "certified": r.certificate.certified,
            "digits": r.certificate.digits,
        }
    elif kind == "explain_6144":
        out = explain_6144()
    elif kind == "softmax_transformer_144":
        net, w, loss = trained_softmax_transformer()
        start = time.perf_counter()  # the certificate only, not the training
        r = api.dimension(net, at=w)
        out = {
            "parameters": net.parameters,
            "dimension": r.dimension,
            "certified": r.certificate.certified,
            "upper": r.certificate.upper,
            "digits": r.certificate.digits,
            "upper_by": r.certificate.upper_by,
            "loss": loss,
            "float64": r.notes[0] if r.notes else "",
        }
    else:
        raise ValueError(kind)
    return {**out, "seconds": round(time.perf_counter() - start, 3), "peak_rss_bytes": _peak_rss()}


def defective_6144():
    """A 6144-weight stack with a defect to split: an embedding 8 -> 16 (a bottleneck for the first block),
    three residual layers of causal attention (4 heads of 4, value dim 4) and an mlp (hidden 30), a readout
    16 -> 4 (the last block's output is partly invisible)."""
    from lightning_cas.core.network import MLP, Attention, Linear, Network

    layers = [Attention(4, heads=4, value=4, causal=True, residual=True), MLP(30, residual=True)] * 3
    return Network(8, 3, (Linear(16), *layers, Linear(4)))


def explain_6144() -> dict:
    """The defect split of the 6144-weight stack next to its dimension (both timed, same process)."""
    from lightning_cas.backends.modp import dimension_modp
    from lightning_cas.core.defects import explain

    net = defective_6144()
    start = time.perf_counter()
    dim = dimension_modp(net)
    dim_s = time.perf_counter() - start
    start = time.perf_counter()
    split = explain(net, dim.dimension, prime=dim.primes[0])
    split_s = time.perf_counter() - start
    return {
        "parameters": net.parameters,
        "dimension": dim.dimension,
        "dim_seconds": round(dim_s, 3),
        "explain_seconds": round(split_s, 3),
        "ratio": round(split_s / dim_s, 3),
        "named_group": split.named_group,
        "causes": [[c.block, c.mechanism, c.count] for c in split.causes],
        "unexplained": split.unexplained,
    }


def trained_softmax_transformer(steps: int = 40, rate: float = 0.05, seed: int = 0):
    """(network, trained float weights, (initial, final) loss): plain gradient descent in numpy on
    0.5 |phi_W(X) - Y|^2 / N, X and Y Gaussian, from Gaussian weights / 2."""
    import numpy as np

    from lightning_cas.core.network import MLP, Attention, Linear, Network
    from lightning_cas.core.softmax import evaluate, jacobian

    net = Network(
        2,
        3,
        (
            Linear(4),
            Attention(2, heads=2, value=2, causal=True, residual=True, normalization="softmax"),
            MLP(8, residual=True),
            Linear(2),
        ),
    )
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(net.parameters) / 2
    X, Y = rng.standard_normal((64, 2, 3)), rng.standard_normal((64, 2, 3))
    losses = []
    for _ in range(steps):
        r = (evaluate(net, w, X) - Y).reshape(-1)
        losses.append(0.5 * float(r @ r) / len(X))
        w = w - rate * jacobian(net, w, X).T @ r / len(X)
    return net, w, (round(losses[0], 4), round(losses[-1], 4))


def _cli_1536() -> dict:
    exe = os.path.join(os.path.dirname(sys.executable), "lightning-cas")
    cmd = ([exe] if os.path.exists(exe) else [sys.executable, "-m", "lightning_cas"]) + [
        "dim",
        "--d-model",
        "16",
        "--n-heads",
        "4",
        "--d-head",
        "4",
        "--n-layers",
        "1",
        "--d-mlp",
        "16",
        "--json",
    ]
    times, dim = [], None
    for _ in range(3):
        start = time.perf_counter()
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=WORKER_TIMEOUT)
        times.append(time.perf_counter() - start)
        rec = json.loads(out.stdout)
        dim = rec["dimension"]
    times.sort()
    return {
        "parameters": rec["parameters"],
        "dimension": dim,
        "seconds": round(times[1], 3),
        "all_seconds": [round(t, 3) for t in times],
    }


def worker_row(module: str, kind: str, timeout: float) -> dict:
    """One case run in a fresh ``python -m module --worker kind``: its last stdout line (JSON) as the row,
    or the status (error with the last stderr line, timeout)."""
    try:
        out = subprocess.run(
            [sys.executable, "-m", module, "--worker", kind],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=Path(__file__).resolve().parents[1],
        )
    except subprocess.TimeoutExpired:
        return {"case": kind, "status": "timeout"}
    if out.returncode == 0:
        return {"case": kind, "status": "ok", **json.loads(out.stdout.strip().splitlines()[-1])}
    return {"case": kind, **worker_failure(out.returncode, out.stderr)}


def run_blocks_bench(progress=print) -> list[dict]:
    rows = []
    for kind in CASES:
        if kind == "cli_1536":
            row = {"case": kind, "status": "ok", **_cli_1536()}
        else:
            row = worker_row("benchmarks.bench_blocks", kind, WORKER_TIMEOUT)
        row["target_s"] = TARGETS[kind]
        rows.append(row)
        progress(
            f"[blocks] {kind}: {row.get('seconds')} s, dimension {row.get('dimension')}, "
            f"peak {row.get('peak_rss_bytes', 0) / 2**20:.0f} MiB (target < {TARGETS[kind]:g} s)"
        )
    return rows


def blocks_findings(rows: list[dict]) -> list[str]:
    out = []
    for r in rows:
        if r.get("status") != "ok":
            out.append(f"blocks {r['case']}: {r.get('status')} {r.get('error', '')}")
        elif r["seconds"] > r["target_s"]:
            out.append(f"blocks {r['case']}: {r['seconds']} s, above the target {r['target_s']:g} s")
        elif r.get("peak_rss_bytes", 0) > MEMORY_TARGET_BYTES:
            out.append(f"blocks {r['case']}: peak {r['peak_rss_bytes'] / 2**30:.2f} GiB, above 2 GiB")
        if r["case"] == "explain_6144" and r.get("status") == "ok" and r["ratio"] >= 2:
            out.append(f"blocks explain_6144: the split took {r['ratio']} times the dimension's time (target < 2)")
        if r["case"] == "softmax_transformer_144" and r.get("status") == "ok" and not r["certified"]:
            out.append(f"blocks softmax_transformer_144: not certified ({r['dimension']} <= rank <= {r['upper']})")
        if r["case"] == "konda" and r.get("status") == "ok" and (r["dimension"], r["float64_rank"]) != (52, 40):
            out.append(f"blocks konda: certified {r['dimension']}, float64 {r['float64_rank']} (expected 52, 40)")
    return out


def blocks_markdown(rows: list[dict]) -> str:
    lines = [
        "## Networks of blocks and ranks at given weights",
        "",
        "| case | weights | dimension | seconds | peak RSS | target | notes |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        notes = ""
        if r["case"] == "konda" and r.get("status") == "ok":
            notes = f"float64 rank {r['float64_rank']}; certified at {r['digits']} digits"
        elif r["case"] == "softmax_transformer_144" and r.get("status") == "ok":
            notes = (
                f"{'certified' if r['certified'] else 'not certified, <= ' + str(r['upper'])} at {r['digits']} "
                f"digits; trained loss {r['loss'][0]} -> {r['loss'][1]}"
            )
        elif r["case"] == "local_6144" and r.get("status") == "ok":
            notes = f"generic {r['generic']}"
        elif r["case"] == "explain_6144" and r.get("status") == "ok":
            notes = (
                f"split {r['explain_seconds']} s against dim {r['dim_seconds']} s (ratio {r['ratio']}, target "
                f"< 2); unexplained {r['unexplained']}"
            )
        elif r["case"] == "cli_1536" and r.get("status") == "ok":
            notes = f"median of {r['all_seconds']}"
        peak = f"{r['peak_rss_bytes'] / 2**20:.0f} MiB" if r.get("peak_rss_bytes") else ""
        lines.append(
            f"| {r['case']} | {r.get('parameters', '')} | {r.get('dimension', r.get('status'))} | "
            f"{r.get('seconds', '')} | {peak} | < {r['target_s']:g} s | {notes} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        print(json.dumps(_worker(sys.argv[2])))
    else:
        for row in run_blocks_bench():
            print(json.dumps(row))
