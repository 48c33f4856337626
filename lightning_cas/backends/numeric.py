"""Floating-point Jacobian rank: the paper's own protocol, kept as a baseline and for softmax.

float64 Jacobian of W -> (phi_W(X_n))_n over N Gaussian inputs, rank by SVD. The result
reports the tolerance used and the largest relative gap in the singular values, because a fixed
tolerance fails at depth 3 (genuine singular values fall to ~1e-8): judge the number by the gap.
"""

from __future__ import annotations

import time

import numpy as np

from ..architecture import Architecture
from ..errors import UnsupportedError
from ..model import jacobian
from ..results import DimensionResult

PAPER_SAMPLES = 250


def singular_values(arch: Architecture, seed: int, samples: int = PAPER_SAMPLES) -> np.ndarray:
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(arch.parameters)
    X = rng.standard_normal((samples, arch.widths[0], arch.tokens))
    return np.linalg.svd(jacobian(arch, w, X), compute_uv=False)


def dimension_numeric(arch: Architecture, seed: int = 0, samples: int = PAPER_SAMPLES) -> DimensionResult:
    """Rank with numpy's default tolerance (as the paper), plus the largest-gap rank for judgement."""
    if arch.normalization != "none":
        raise UnsupportedError("softmax networks are not supported by the numeric method yet.")
    start = time.perf_counter()
    s = singular_values(arch, seed, samples)
    tol = s.max() * max(samples * arch.widths[-1] * arch.tokens, arch.parameters) * np.finfo(float).eps
    rank = int((s > tol).sum())
    logs = np.log10(np.maximum(s, 1e-300))
    gaps = logs[:-1] - logs[1:]
    gap_rank = int(np.argmax(gaps)) + 1 if len(gaps) else len(s)
    notes = [f"tolerance {tol:.3g}", f"largest gap after singular value {gap_rank}: "
             f"{float(gaps.max()) if len(gaps) else 0:.2f} decades"]
    if gap_rank != rank:
        notes.append(f"tolerance rank {rank} and largest-gap rank {gap_rank} differ: the float rank is unreliable")
    return DimensionResult(
        architecture=arch, dimension=rank, parameters=arch.parameters, ambient_dimension=arch.ambient_dimension,
        method="numeric", certainty="numeric", seed=seed, elapsed_s=time.perf_counter() - start,
        samples=samples, runs=({"seed": seed, "rank": rank, "gap_rank": gap_rank, "tolerance": float(tol)},),
        notes=tuple(notes))
