"""Benchmark rows for the models people train, each in a fresh worker process:

* ``biased_transformer``: the rank at trained weights of a biased causal residual transformer stack
  (d_model 16, 4 heads of 4, 3 layers, d_mlp 32: 6144 weights and 336 biases), trained for a few
  Adam steps by the PyTorch bridge in float64 (target < 60 s, the rank only, training excluded);
* ``post_ln_layer``: the certified rank at trained weights of a post-LN ``nn.TransformerEncoderLayer`` (d_model 8,
  2 heads, ReLU mlp 8 -> 16 -> 8: 600 weights) after 300 Adam steps on a toy task, on 200 Gaussian inputs of 4
  tokens, beside numpy's matrix_rank of the float64 Jacobian (target < 60 s, the certificate only, training
  excluded; it must close);
* ``from_torch``: converting an ``nn.MultiheadAttention(64, 8)``, an ``nn.Sequential`` of linear
  layers (16,640 + 8,320 weights) and a LayerNorm-GELU block to (network, point), exactly (target < 1 s);
* ``relu_mlp``: the exact rank of a 1001-weight ReLU MLP (10 -> 45 -> 11, biases) on 200 given inputs,
  proved from both sides (target < 10 s);
* ``trained_relu``: a ReLU MLP (2 -> 16 -> 16 -> 1) trained on 200 points, its exact batch functional
  dimension beside numpy's matrix_rank of the autograd Jacobian at relative tolerances (``trained_relu``;
  no target: the comparison is the point).
"""

from __future__ import annotations

import json
import sys
import time

from benchmarks.bench_blocks import worker_row

TARGETS = {"biased_transformer": 60.0, "post_ln_layer": 60.0, "from_torch": 1.0, "relu_mlp": 10.0, "trained_relu": None}
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
        out = {
            "parameters": net.parameters,
            "dimension": r.dimension,
            "generic": r.generic_dimension,
            "loss_first": round(losses[0], 4),
            "loss_last": round(losses[-1], 4),
        }
    elif kind == "post_ln_layer":
        out, seconds = _post_ln_layer()
    elif kind == "from_torch":
        torch.manual_seed(0)
        mha = nn.MultiheadAttention(64, 8, dtype=torch.float64).eval()
        seq = nn.Sequential(nn.Linear(64, 64), nn.Linear(64, 64))
        block = nn.Sequential(nn.LayerNorm(64), nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 64))
        start = time.perf_counter()
        net, point = from_torch(mha, tokens=4)
        net2, point2 = from_torch(seq, tokens=4)
        net3, point3 = from_torch(block, tokens=4)
        seconds = time.perf_counter() - start
        out = {"parameters": net.parameters + net2.parameters + net3.parameters, "dimension": None}
    elif kind == "relu_mlp":
        import numpy as np

        from lightning_cas.core.network import MLP

        net = Network(10, 1, (MLP(45, activation="relu", bias=True, out=11),))
        X = np.random.default_rng(0).standard_normal((200, 10, 1))
        out, seconds = _timed_rank(net, None, X)
    elif kind == "trained_relu":
        from benchmarks.trained_relu import main

        row = main()
        return {
            **row,
            "parameters": row["weights"],
            "dimension": row["exact"],
            "seconds": row["exact_s"],
            "peak_rss_bytes": _peak_rss(),
        }
    else:
        raise ValueError(kind)
    return {**out, "seconds": round(seconds, 3), "peak_rss_bytes": _peak_rss()}


def _post_ln_layer() -> tuple[dict, float]:
    """A post-LN encoder layer trained a little (two of its 16 ReLU units end dead on the inputs), its
    certified rank at the trained weights and float64's rank."""
    import numpy as np
    import torch
    from torch import nn

    from lightning_cas.backends.certified import float_rank_at
    from lightning_cas.torch_bridge import from_torch

    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, dtype=torch.float64)
    opt = torch.optim.Adam(layer.parameters(), 1e-2)
    for _ in range(300):
        x = torch.randn(64, 4, 8, dtype=torch.float64)
        loss = ((layer(x) - torch.flip(x, dims=[1]).cumsum(1) * 0.5) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    net, point = from_torch(layer.eval(), tokens=4)
    X = np.random.default_rng(1).standard_normal((200, 8, 4))
    out, seconds = _timed_rank(net, point, X)
    out.update(float64=float_rank_at(net, point.values, X)[0], loss_last=round(loss.item(), 4))
    return out, seconds


def _timed_rank(net, point, X) -> tuple[dict, float]:
    """The certified rank on inputs X (at ``point``, or random weights when None) and its wall time."""
    from lightning_cas import api

    start = time.perf_counter()
    r = api.dimension(net, at=point, inputs=X)
    seconds = time.perf_counter() - start
    out = {"parameters": net.parameters, "dimension": r.dimension, "certainty": r.certainty}
    return {**out, "upper": r.certificate.upper}, seconds


def run_models_bench(progress=print) -> list[dict]:
    rows = []
    for kind in TARGETS:
        row = worker_row("benchmarks.bench_models", kind, WORKER_TIMEOUT)
        row["target_s"] = TARGETS[kind]
        rows.append(row)
        target = f"target < {TARGETS[kind]:g} s" if TARGETS[kind] else "no target"
        progress(f"[models] {kind}: {row.get('seconds')} s, dimension {row.get('dimension')} ({target})")
    return rows


def models_findings(rows: list[dict]) -> list[str]:
    out = []
    for r in rows:
        if r.get("status") != "ok":
            out.append(f"models {r['case']}: {r.get('status')} {r.get('error', '')}")
        elif r.get("certainty") not in (None, "exact"):
            out.append(f"models {r['case']}: the certificate is open (rank {r['dimension']} to {r.get('upper')})")
        elif r["target_s"] and r["seconds"] > r["target_s"]:
            out.append(f"models {r['case']}: {r['seconds']} s, above the target {r['target_s']:g} s")
        elif r.get("generic") is not None and r["dimension"] > r["generic"]:
            out.append(f"models {r['case']}: rank {r['dimension']} above the generic {r['generic']}")
    return out


def models_markdown(rows: list[dict]) -> str:
    lines = [
        "## Models people train",
        "",
        "| case | weights | rank | seconds | target | notes |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        notes = f"generic {r['generic']}; loss {r['loss_first']} -> {r['loss_last']}" if r.get("generic") else ""
        if r.get("relative_tolerance_ranks"):
            notes = (
                f"numpy matrix_rank {r['numpy_matrix_rank']}; at relative tolerances "
                + ", ".join(f"{t}: {k}" for t, k in r["relative_tolerance_ranks"].items())
                + f"; float SVD {r['float_s']} s"
            )
        if r.get("float64") is not None:
            notes = f"certified {r['certainty'] == 'exact'} (upper {r['upper']}); float64 matrix_rank {r['float64']}"
        target = f"< {r['target_s']:g} s" if r["target_s"] else "-"
        lines.append(
            f"| {r['case']} | {r.get('parameters', '')} | {r.get('dimension', r.get('status'))} | "
            f"{r.get('seconds', '')} | {target} | {notes} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        print(json.dumps(_worker(sys.argv[2])))
    else:
        rows = run_models_bench()
        print(models_markdown(rows))
        for line in models_findings(rows):
            print("finding:", line)
