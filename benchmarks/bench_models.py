"""Benchmark rows for the models people train, each in a fresh worker process:

* ``biased_transformer``: the rank at trained weights of a biased causal residual transformer stack
  (d_model 16, 4 heads of 4, 3 layers, d_mlp 32: 6144 weights and 336 biases), trained for a few
  Adam steps by the PyTorch bridge in float64 (target < 60 s, the rank only, training excluded);
* ``from_torch``: converting an ``nn.MultiheadAttention(64, 8)`` and an ``nn.Sequential`` of linear
  layers (16,640 + 8,320 weights) to (network, point), exactly (target < 1 s).

The exact rank of a ReLU MLP on given inputs is not here: lightning_cas has no ReLU block yet.
"""

from __future__ import annotations

import json
import sys
import time

from benchmarks.bench_blocks import worker_row

TARGETS = {"biased_transformer": 60.0, "from_torch": 1.0}
WORKER_TIMEOUT = 1800.0


def _peak_rss() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _worker(kind: str) -> dict:
    import torch
    from torch import nn

    from lightning_cas import api
    from lightning_cas.core.network import Network
    from lightning_cas.torch_bridge import TorchNetwork, from_torch

    if kind == "biased_transformer":
        net = Network.transformer(16, 4, 4, 3, d_mlp=32, causal=True, residual=True, tokens=3, bias=True)
        model = TorchNetwork(net, seed=0)
        gen = torch.Generator().manual_seed(1)
        x = torch.randn(64, 3, 16, generator=gen, dtype=torch.float64)
        y = torch.randn(64, 3, 16, generator=gen, dtype=torch.float64)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        losses = []
        for _ in range(20):
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(float(loss))
        point = model.point()
        start = time.perf_counter()
        r = api.dimension(net, at=point)
        seconds = time.perf_counter() - start
        out = {"parameters": net.parameters, "dimension": r.dimension, "generic": r.generic_dimension,
               "loss_first": round(losses[0], 4), "loss_last": round(losses[-1], 4)}
    elif kind == "from_torch":
        torch.manual_seed(0)
        mha = nn.MultiheadAttention(64, 8, dtype=torch.float64).eval()
        seq = nn.Sequential(nn.Linear(64, 64), nn.Linear(64, 64))
        start = time.perf_counter()
        net, point = from_torch(mha, tokens=4)
        net2, point2 = from_torch(seq, tokens=4)
        seconds = time.perf_counter() - start
        out = {"parameters": net.parameters + net2.parameters, "dimension": None}
    else:
        raise ValueError(kind)
    return {**out, "seconds": round(seconds, 3), "peak_rss_bytes": _peak_rss()}


def run_models_bench(progress=print) -> list[dict]:
    rows = []
    for kind in TARGETS:
        row = worker_row("benchmarks.bench_models", kind, WORKER_TIMEOUT)
        row["target_s"] = TARGETS[kind]
        rows.append(row)
        progress(f"[models] {kind}: {row.get('seconds')} s, dimension {row.get('dimension')} "
                 f"(target < {TARGETS[kind]:g} s)")
    return rows


def models_findings(rows: list[dict]) -> list[str]:
    out = []
    for r in rows:
        if r.get("status") != "ok":
            out.append(f"models {r['case']}: {r.get('status')} {r.get('error', '')}")
        elif r["seconds"] > r["target_s"]:
            out.append(f"models {r['case']}: {r['seconds']} s, above the target {r['target_s']:g} s")
        elif r.get("generic") is not None and r["dimension"] > r["generic"]:
            out.append(f"models {r['case']}: rank {r['dimension']} above the generic {r['generic']}")
    return out


def models_markdown(rows: list[dict]) -> str:
    lines = ["## Models people train", "", "| case | weights | rank | seconds | target | notes |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        notes = f"generic {r['generic']}; loss {r['loss_first']} -> {r['loss_last']}" if r.get("generic") else ""
        lines.append(f"| {r['case']} | {r.get('parameters', '')} | {r.get('dimension', r.get('status'))} | "
                     f"{r.get('seconds', '')} | < {r['target_s']:g} s | {notes} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        print(json.dumps(_worker(sys.argv[2])))
    else:
        rows = run_models_bench()
        print(models_markdown(rows))
        for line in models_findings(rows):
            print("finding:", line)
