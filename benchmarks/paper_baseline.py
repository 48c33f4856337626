"""The paper's own float baseline: torch autograd, one backward pass per output entry, SVD rank.

Why this exists next to ``numeric``: the benchmark target ("modp at least 20x faster
than a float64 baseline that follows the paper's protocol") is about what the paper's authors
actually ran, and ``numeric`` is *our* fast forward-mode float Jacobian, which builds the same
matrix in one vectorized pass. Here the cost model is the paper's (NeuroDim, dim_estimator.py):
a torch model is evaluated on N random inputs, the Jacobian is assembled ROW BY ROW (one
``backward(retain_graph=True)`` per output entry, parameter gradients concatenated), its rank is
``torch.linalg.matrix_rank`` (SVD, default tolerance) and the dimension is the largest rank over
independent trials (fresh Gaussian weights and inputs each trial).

Re-implemented for our lightning network and conventions, not copied: tokens are columns
(X is d x t), a layer is Z -> V Z (Z^T K^T Q Z) with Q, K of shape a x d and V of shape d' x d,
parameters in the canonical (Q, K, V) per-layer order, float64 throughout (the paper used torch's
default float32). torch is optional (``pip install '.[bench]'``) and imported only when used.
"""

from __future__ import annotations

import time

import numpy as np

from lightning_cas.core.architecture import Architecture
from lightning_cas.core.arithmetic import Float64
from lightning_cas.core.forward import split
from lightning_cas.errors import InputError, UnsupportedError
from lightning_cas.results.dimension import DimensionResult

PAPER_SAMPLES = 250  # N Gaussian token matrices, as the paper's protocol
PAPER_TRIALS = 5  # the paper's script takes the largest rank over 5 fresh models and inputs


class TorchMissingError(UnsupportedError):
    """The paper baseline needs torch, which is an optional (bench) dependency."""


def _torch():
    try:
        import torch
    except ImportError as exc:
        raise TorchMissingError(
            "the paper-protocol baseline needs PyTorch, which is not installed; "
            "run pip install '.[bench]' (or pip install torch)."
        ) from exc
    return torch


def _check(arch: Architecture, samples, trials) -> None:
    if arch.normalization != "none":
        raise UnsupportedError(
            "the paper baseline is implemented for lightning networks only; for softmax use --method numeric."
        )
    for name, v in (("samples", samples), ("trials", trials)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InputError(f"{name} must be a positive integer, got {v!r}.")


def forward(torch, weights, Z):
    """phi_W(Z) for a batch Z of shape (N, d_0, t): Z <- V Z (Z^T K^T Q Z) per layer."""
    for Q, K, V in weights:
        scores = (K @ Z).transpose(-1, -2) @ (Q @ Z)  # (N, t, t): entry (i, j) = <K z_i, Q z_j>
        Z = (V @ Z) @ scores
    return Z


def jacobian_rows(arch: Architecture, w: np.ndarray, X: np.ndarray) -> np.ndarray:
    """The Jacobian at (w, X) assembled the paper's way: one backward pass per output entry.

    Rows are ordered (sample, output row, token), columns by the canonical weight order: the
    same matrix as ``forward.jacobian(arch, Float64(), w, X)``, which is how this
    re-implementation is checked (one head per layer, as the paper's network).
    """
    torch = _torch()
    net = arch
    if any(h != 1 for h in arch.heads):
        raise UnsupportedError("the paper baseline is implemented for one head per layer.")
    letters = [m.letter for m in net.weight_matrices[:3]]
    if letters != ["q", "k", "v"]:  # forward() below and _rows' column order both take Q, K, V
        raise UnsupportedError(f"the paper baseline expects each layer's weights in the order Q, K, V, not {letters}.")
    weights = [
        tuple(
            torch.tensor(np.ascontiguousarray(heads[0][letter]), dtype=torch.float64, requires_grad=True)
            for letter in "qkv"
        )
        for heads in split(net, Float64(), np.asarray(w, dtype=np.float64))
    ]
    return _rows(torch, weights, torch.tensor(np.asarray(X, dtype=np.float64))).numpy()


def _rows(torch, weights, X):
    params = [M for layer in weights for M in layer]
    y = forward(torch, weights, X).reshape(-1)
    rows = []
    for j in range(y.shape[0]):
        for p in params:
            p.grad = None  # what Module.zero_grad() does
        y[j].backward(retain_graph=True)
        rows.append(
            torch.cat(
                [p.grad.reshape(-1) if p.grad is not None else torch.zeros(p.numel(), dtype=p.dtype) for p in params]
            )
        )
    return torch.stack(rows)


def _random_weights(torch, arch: Architecture, gen):
    return [
        tuple(torch.randn(rows, d, generator=gen, dtype=torch.float64, requires_grad=True) for rows in (a, a, e))
        for a, d, e in arch.paper.layer_shapes
    ]


def spectrum_diagnostics(torch, J, rank: int) -> dict:
    """Why a float rank can be wrong: where matrix_rank's tolerance sits in the spectrum.

    Not part of the protocol (the paper looked only at the rank); computed after it and timed
    separately (``diagnostics_s``) so a benchmark can leave it out.
    """
    s = torch.linalg.svdvals(J).numpy()
    tol = float(s[0] * max(J.shape) * np.finfo(np.float64).eps) if len(s) else 0.0  # matrix_rank's default
    logs = np.log10(np.maximum(s, s[0] * 1e-300 if len(s) and s[0] > 0 else 1e-300))
    gaps = logs[:-1] - logs[1:]
    return {
        "s_max": float(s[0]) if len(s) else 0.0,
        "tolerance": tol,
        "smallest_kept": float(s[rank - 1]) if rank else 0.0,
        "largest_dropped": float(s[rank]) if rank < len(s) else 0.0,
        "kept_decades": round(float(logs[0] - logs[rank - 1]), 2) if rank else 0.0,
        "largest_gap_rank": int(np.argmax(gaps)) + 1 if len(gaps) else len(s),
    }


def dimension_paper(
    arch: Architecture,
    seed: int = 0,
    samples: int = PAPER_SAMPLES,
    trials: int = PAPER_TRIALS,
    diagnostics: bool = True,
) -> DimensionResult:
    """Largest float64 Jacobian rank over ``trials`` fresh Gaussian points, the paper's way.

    ``diagnostics`` adds each trial's spectrum summary (an extra SVD, timed apart as
    ``diagnostics_s``); the protocol itself is the row-by-row Jacobian and ``matrix_rank``.
    """
    _check(arch, samples, trials)
    torch = _torch()
    start = time.perf_counter()
    runs = []
    for k in range(trials):
        gen = torch.Generator().manual_seed(seed + k)
        weights = _random_weights(torch, arch, gen)
        X = torch.randn(samples, arch.widths[0], arch.tokens, generator=gen, dtype=torch.float64)
        t0 = time.perf_counter()
        J = _rows(torch, weights, X)
        t1 = time.perf_counter()
        rank = int(torch.linalg.matrix_rank(J))
        t2 = time.perf_counter()
        run = {
            "seed": seed + k,
            "precision": "float64",
            "samples": samples,
            "rows": int(J.shape[0]),
            "rank": rank,
            "backward_passes": int(J.shape[0]),
            "jacobian_s": round(t1 - t0, 4),
            "rank_s": round(t2 - t1, 4),
            "torch_threads": torch.get_num_threads(),
        }
        if diagnostics:
            run.update(spectrum_diagnostics(torch, J, rank), diagnostics_s=time.perf_counter() - t2)
        runs.append(run)
    ranks = [r["rank"] for r in runs]
    notes = [
        f"paper protocol: torch {torch.__version__}, one backward pass per output entry, "
        f"torch.linalg.matrix_rank, largest of {trials} trial ranks {ranks}"
    ]
    if len(set(ranks)) > 1:
        notes.append(f"trial ranks differ: {ranks}")
    return DimensionResult(
        architecture=arch,
        dimension=max(ranks),
        parameters=arch.parameters,
        ambient_dimension=arch.ambient_dimension,
        method="paper",
        certainty="numeric",
        seed=seed,
        elapsed_s=time.perf_counter() - start,
        samples=samples,
        runs=tuple(runs),
        consistent=len(set(ranks)) == 1,
        notes=tuple(notes),
    )
