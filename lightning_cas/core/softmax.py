"""The normalized (softmax) network at a point: float64 and high-precision (arb) evaluation, spectra.

Softmax attention is not polynomial, so none of the exact backends (M2, mod p) apply; the
dimension is the generic rank of the Jacobian of W -> (phi_W(X_n))_n, decided numerically in
``backends.numeric``. The forward pass and Jacobian are ``core.forward``'s, on ``Float64`` or on
``Balls`` (python-flint arb: arbitrary precision, C speed per operation), so a Jacobian whose small
singular values are genuine but below float64 resolution can be recomputed at 50+ digits from the
same point. The softmax runs over the KEY index i (axis -2 of the t x t attention matrix), so each
column sums to 1 (docs/mathematics.md §1).
"""

from __future__ import annotations

import math

import numpy as np

from lightning_cas.core.arithmetic import Balls, Float64
from lightning_cas.core.forward import forward
from lightning_cas.core.network import Network

# Weight scales for random points. The generic rank is the same at every generic point, but
# the conditioning is not: with unit Gaussians (the paper's PyTorch code) the logits grow like
# sqrt(a) * d per layer, softmax saturates, and genuine derivatives fall like exp(-logit gap).
# "fan_in" (std 1/sqrt(d_{i-1}) per weight) keeps logits O(1).
WEIGHT_SCALES = ("fan_in", "unit")


def random_point(arch: Network, seed: int, samples: int, scale: str = "fan_in"):
    """(w, X): Gaussian weights (each matrix divided by the square root of its column count under
    "fan_in") and ``samples`` Gaussian token matrices, reproducible from ``seed``."""
    if scale not in WEIGHT_SCALES:
        raise ValueError(f"scale must be one of {WEIGHT_SCALES}")
    net = arch
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(net.parameters)
    if scale == "fan_in":
        for m in net.weight_matrices:
            w[m.offset : m.stop] /= math.sqrt(m.cols)
    X = rng.standard_normal((samples, net.input, net.tokens))
    return w, X


def evaluate(arch: Network, w: np.ndarray, X: np.ndarray) -> np.ndarray:
    """phi_W(X) in float64 for a batch X of shape (N, d_0, t); returns (N, d_out, t)."""
    ar = Float64()
    return forward(arch, ar, ar.array(w), ar.array(X))[0]


def jacobian(arch: Network, w: np.ndarray, X: np.ndarray) -> np.ndarray:
    """float64 d phi_W(X_n)/dW, shape (N * d_out * t, P), rows ordered (n, row, token)."""
    ar = Float64()
    _, dY = forward(arch, ar, ar.array(w), ar.array(X), tangents=True)
    return dY.reshape(-1, dY.shape[-1])


def jacobian_arb(arch: Network, w: np.ndarray, X: np.ndarray, dps: int = 50):
    """The same Jacobian at ``dps`` decimal digits (arb balls), from the same float64 (or exact) point.

    Returns an object array of ``flint.arb``; use ``singular_values_high_precision`` on it while
    the precision still matters.
    """
    import flint

    with flint.ctx.workdps(dps):
        ar = Balls(dps)
        _, dY = forward(arch, ar, ar.array(w), ar.array(X), tangents=True)
    return dY.reshape(-1, dY.shape[-1])


def evaluate_arb(arch: Network, w: np.ndarray, X: np.ndarray, dps: int = 50) -> np.ndarray:
    """phi_W(X) at ``dps`` digits (object array of arb), to check the float64 forward pass."""
    import flint

    with flint.ctx.workdps(dps):
        ar = Balls(dps)
        return forward(arch, ar, ar.array(w), ar.array(X))[0]


def singular_values_high_precision(J: np.ndarray, dps: int) -> np.ndarray:
    """Singular values (descending, as float64 magnitudes) of an arb Jacobian.

    Via the eigenvalues of the Gram matrix J^T J, computed at twice the working precision so the
    squaring loses nothing: J's rounding at ``dps`` digits moves singular values by ~s_max 10^(-dps)
    (Weyl), which is where zeros land, the noise floor. Values below 1e-300 are clipped there.
    """
    import flint

    with flint.ctx.workdps(2 * dps):
        M = flint.arb_mat([[x for x in row] for row in J])
        G = M.transpose() * M
        eig = G.eig(algorithm="approx")
        logs = []
        for e in eig:
            lam = abs(e.real.mid())
            logs.append(float((lam.log() / flint.arb(10).log()).mid()) / 2 if lam != 0 else -300.0)
    return 10.0 ** np.clip(np.sort(np.array(logs))[::-1], -300, None)
