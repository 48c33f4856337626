"""A trained ReLU MLP: its exact batch functional dimension against the float-tolerance practice.

Trains Linear(2, 16) - ReLU - Linear(16, 16) - ReLU - Linear(16, 1) in float64 on 200 points of
sin(3 x_1) cos(2 x_2), then ranks the Jacobian of the 200 outputs by the 337 weights: exactly (lightning_cas)
and as the literature does, numpy's matrix_rank of the autograd Jacobian at several relative tolerances.
Prints one JSON line. Needs the torch extra.
"""

from __future__ import annotations

import json
import time

import numpy as np
import torch
from torch import nn

from lightning_cas import dimension
from lightning_cas.torch_bridge import from_torch


def main(steps: int = 3000, seed: int = 0) -> dict:
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1)).double()
    x = torch.rand(200, 1, 2, dtype=torch.float64) * 2 - 1  # (N, tokens, features): PyTorch's layout
    y = torch.sin(3 * x[..., 0]) * torch.cos(2 * x[..., 1])
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x)[..., 0] - y) ** 2).mean()
        loss.backward()
        opt.step()
    net, point = from_torch(model, tokens=1)
    start = time.perf_counter()
    result = dimension(net, at=point, inputs=x.numpy(), layout="tokens-features")
    exact_s = time.perf_counter() - start
    names = [n for n, _ in model.named_parameters()]
    start = time.perf_counter()
    jac = torch.autograd.functional.jacobian(
        lambda *ps: torch.func.functional_call(model, dict(zip(names, ps)), (x,)), tuple(model.parameters())
    )
    J = np.concatenate([j.reshape(200, -1).numpy() for j in jac], axis=1)
    s = np.linalg.svd(J, compute_uv=False)
    float_s = time.perf_counter() - start
    ranks = {f"{tol:g}": int((s > tol * s[0]).sum()) for tol in (1e-3, 1e-6, 1e-9, 1e-12)}
    return {
        "weights": net.parameters,
        "loss": float(loss.detach()),
        "exact": result.dimension,
        "certainty": result.certainty,
        "upper": result.certificate.upper,
        "notes": list(result.notes),
        "numpy_matrix_rank": int(np.linalg.matrix_rank(J)),
        "relative_tolerance_ranks": ranks,
        "smallest_nonzero": float(s[result.dimension - 1]),
        "next": float(s[result.dimension]),
        "exact_s": round(exact_s, 3),
        "float_s": round(float_s, 3),
    }


if __name__ == "__main__":
    print(json.dumps(main()))
