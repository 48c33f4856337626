"""The normalized (softmax) network: forward pass and Jacobian in float64 and in high precision.

Softmax attention is not polynomial, so none of the exact backends (M2, mod p) apply; the
dimension is the generic rank of the Jacobian of W -> (phi_W(X_n))_n, decided numerically in
``backends.numeric``. This module only evaluates. Conventions follow ``model`` (weights Q_i,
K_i, V_i layer by layer, row-major; Jacobian rows ordered (n, row, token)), and the softmax runs
over the KEY index i (axis -2 of the t x t attention matrix), so each column sums to 1 (docs/mathematics.md §1).

The same forward-mode code runs on float64 arrays and on numpy object arrays of ``flint.arb``
balls (arbitrary precision, C speed per operation): a Jacobian whose small singular values are
genuine but below float64 resolution can then be recomputed at 50+ digits from the same point.
"""

from __future__ import annotations

import math

import numpy as np

from lightning_cas.core.architecture import Architecture
from lightning_cas.core.model import split_heads

# Weight scales for random points. The generic rank is the same at every generic point, but
# the conditioning is not: with unit Gaussians (the paper's PyTorch code) the logits grow like
# sqrt(a) * d per layer, softmax saturates, and genuine derivatives fall like exp(-logit gap).
# "fan_in" (std 1/sqrt(d_{i-1}) per weight) keeps logits O(1).
WEIGHT_SCALES = ("fan_in", "unit")


def random_point(arch: Architecture, seed: int, samples: int, scale: str = "fan_in"):
    """(w, X): weights and ``samples`` Gaussian token matrices, reproducible from ``seed``."""
    if scale not in WEIGHT_SCALES:
        raise ValueError(f"scale must be one of {WEIGHT_SCALES}")
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(arch.parameters)
    if scale == "fan_in":
        pos = 0
        for _, _, a, d, e in arch.head_blocks:
            size = (2 * a + e) * d
            w[pos:pos + size] /= math.sqrt(d)
            pos += size
    X = rng.standard_normal((samples, arch.widths[0], arch.tokens))
    return w, X


# ---------------------------------------------------------------- arithmetic back-ends

class _FloatOps:
    """float64: softmax shifted by the column maximum so exp never overflows."""

    name = "float64"

    @staticmethod
    def softmax(S):
        E = np.exp(S - S.max(axis=-2, keepdims=True))
        return E / E.sum(axis=-2, keepdims=True)

    @staticmethod
    def zeros(shape):
        return np.zeros(shape)


class _ArbOps:
    """flint.arb balls in object arrays: exponent range is unbounded, so no shift is needed
    (comparing overlapping balls would be ambiguous anyway)."""

    def __init__(self, dps: int):
        self.dps = dps
        self.name = f"arb {dps} digits"

    @staticmethod
    def softmax(S):
        E = np.vectorize(lambda x: x.exp(), otypes=[object])(S)
        return E / E.sum(axis=-2, keepdims=True)

    @staticmethod
    def zeros(shape):
        import flint
        out = np.empty(shape, dtype=object)
        out.fill(flint.arb(0))
        return out


def _T(M):
    return np.swapaxes(M, -1, -2)


def _forward(arch: Architecture, w, X, ops, with_tangents: bool):
    """phi_W(X) and, if asked, its tangent per weight (leading axis P), by forward mode.

    A layer's own weights have one-hot tangents, so d(QZ)/dQ_rc is Z's row c placed in row r:
    written by assignment, never multiplied. Only earlier layers' tangents (rows < ``start``)
    go through matrix products, which keeps the object-array (arb) path affordable.
    """
    P = arch.parameters
    Z = X
    dZ = ops.zeros((P,) + X.shape) if with_tangents else None
    start = 0
    for heads, (a, d, e) in zip(split_heads(arch, w), arch.layer_shapes):
        Znew = dZnew = None
        pos = start
        for Q, K, V in heads:  # a layer is the sum of its heads (one head: the paper's layer)
            QZ, KZ, VZ = Q @ Z, K @ Z, V @ Z
            S = _T(KZ) @ QZ  # (N, t, t): S[i, j] = <K z_i, Q z_j>, key i, query j
            Pm = ops.softmax(S)
            term = VZ @ Pm
            Znew = term if Znew is None else Znew + term
            if with_tangents:
                N, t = Z.shape[0], Z.shape[-1]
                dQZ, dKZ, dVZ = ops.zeros((P, N, a, t)), ops.zeros((P, N, a, t)), ops.zeros((P, N, e, t))
                if start:  # tangents of earlier layers flow through Z
                    dQZ[:start] = Q @ dZ[:start]
                    dKZ[:start] = K @ dZ[:start]
                    dVZ[:start] = V @ dZ[:start]
                for dM, rows in ((dQZ, a), (dKZ, a), (dVZ, e)):
                    for r in range(rows):
                        for c in range(d):
                            dM[pos, :, r, :] = Z[:, c, :]
                            pos += 1
                dS = _T(dKZ) @ QZ + _T(KZ) @ dQZ
                # d softmax over keys: dP = P * (dS - sum_i P_ij dS_ij), column by column
                dP = Pm * (dS - (Pm * dS).sum(axis=-2, keepdims=True))
                dterm = dVZ @ Pm + VZ @ dP
                dZnew = dterm if dZnew is None else dZnew + dterm
        if with_tangents:
            dZ = dZnew
            start = pos
        Z = Znew
    return Z, dZ


def evaluate(arch: Architecture, w: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Softmax network phi_W(X) in float64 for a batch X of shape (N, d_0, t); returns (N, d_L, t)."""
    return _forward(arch, np.asarray(w, dtype=float), np.asarray(X, dtype=float), _FloatOps, False)[0]


def jacobian(arch: Architecture, w: np.ndarray, X: np.ndarray) -> np.ndarray:
    """float64 d phi_W(X_n)/dW, shape (N * d_L * t, P), rows ordered (n, row, token) as model.jacobian."""
    _, dZ = _forward(arch, np.asarray(w, dtype=float), np.asarray(X, dtype=float), _FloatOps, True)
    return dZ.reshape(arch.parameters, -1).T


def _to_arb(A: np.ndarray) -> np.ndarray:
    """float64 -> arb exactly (every double is a dyadic rational), as an object array."""
    import flint
    return np.vectorize(lambda x: flint.arb(float(x)), otypes=[object])(A)


def jacobian_arb(arch: Architecture, w: np.ndarray, X: np.ndarray, dps: int = 50):
    """The same Jacobian at ``dps`` decimal digits (arb balls), from the same float64 point.

    Returns an object array of ``flint.arb``; use ``singular_values_high_precision`` on it while
    the precision still matters.
    """
    import flint
    with flint.ctx.workdps(dps):
        _, dZ = _forward(arch, _to_arb(w), _to_arb(X), _ArbOps(dps), True)
    return dZ.reshape(arch.parameters, -1).T


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


def evaluate_arb(arch: Architecture, w: np.ndarray, X: np.ndarray, dps: int = 50) -> np.ndarray:
    """phi_W(X) at ``dps`` digits (object array of arb), to check the float64 forward pass."""
    import flint
    with flint.ctx.workdps(dps):
        Z, _ = _forward(arch, _to_arb(w), _to_arb(X), _ArbOps(dps), False)
    return Z
