"""Named points the docs, tests and benchmarks share: Konda's softmax point, critical points of one layer."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from lightning_cas.core.network import Network
from lightning_cas.system.points import InputData, WeightPoint

KONDA = Network.from_paper((4, 4, 4, 4), (2, 2, 2), 3, "softmax")


def konda_point(t: float = 0.06, seed: int = 0, samples: int = 40) -> tuple[WeightPoint, InputData]:
    """Konda's three-layer softmax point (d = 4, a = 2, V = I, Q = t U, K = t W with Gaussian U, W) and
    Gaussian inputs: its singular values fall in bands of order 1, t, t^5, t^17, and the t^17 band is
    below float64 resolution at t = 0.06 (float64 sees rank 40, the certified rank is 52)."""
    rng = np.random.default_rng(seed)
    values: list[float] = []
    for _ in range(3):
        U, W = rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
        values += list((t * U).reshape(-1)) + list((t * W).reshape(-1)) + list(np.eye(4).reshape(-1))
    X = rng.standard_normal((samples, 4, 3))
    point = WeightPoint(KONDA, tuple(Fraction(float(v)) for v in values), f"konda t={t} seed={seed}")
    return point, InputData(np.vectorize(lambda v: Fraction(float(v)), otypes=[object])(X), f"gaussian seed={seed}")
