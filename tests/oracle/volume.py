"""The learning coefficient by volume scaling, by Monte Carlo: an oracle independent of every bound `llc` proves.

With K(w) the loss near w*, vol{w ∈ B : K(w) < ε} ~ c ε^λ (log 1/ε)^(m − 1) as ε → 0 (Watanabe: the volume is the
Mellin partner of ∫ K^z), so λ is the slope of log vol against log ε in the limit, less the slowly varying log
factor. Here B is a box of half-width ``radius`` around w* (small, so that no point of B has a smaller local
coefficient than w*), K is the squared error on fixed random probe inputs (as many as the coefficient space needs,
so comparable to the population loss), and the forward pass is this module's own, batched over weights in numpy,
written from the blocks' definitions (bias-free linear blocks, power mlps, one-head lightning attention).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lightning_cas.core.network import MLP, Attention, Linear, Network


def _forward(net: Network, W: np.ndarray, X: np.ndarray) -> np.ndarray:
    """f_w(X) for weights W (S, n) and inputs X (P, d_0, t): (S, P, d_L, t)."""
    mats = {
        (m.block, m.letter): W[:, m.offset : m.stop].reshape(len(W), 1, m.rows, m.cols) for m in net.weight_matrices
    }
    Y = np.broadcast_to(X, (len(W),) + X.shape)
    for i, block in enumerate(net.blocks):
        if isinstance(block, Linear) and not block.bias and not block.residual:
            Y = mats[i, "p"] @ Y
        elif isinstance(block, MLP) and block.activation == "power" and not block.bias and not block.residual:
            Y = mats[i, "d"] @ (mats[i, "u"] @ Y) ** block.degree
        elif (
            isinstance(block, Attention)
            and (block.heads, block.normalization, block.value, block.residual) == (1, "none", None, 0)
            and not (block.bias or block.causal)
        ):
            S = np.swapaxes(mats[i, "k"] @ Y, -1, -2) @ (mats[i, "q"] @ Y)  # key i, query j
            Y = (mats[i, "v"] @ Y) @ S
        else:
            raise NotImplementedError(f"the volume oracle has no forward for {block}")
    return Y


@dataclass(frozen=True)
class VolumeSlope:
    """The fitted λ (with the order m taken as given) and the range of ε (in units of K's median in the box)."""

    slope: float
    eps: tuple[float, float]


def volume_slope(
    net: Network,
    point,
    *,
    order: int = 1,
    radius: float = 0.3,
    walkers: int = 4000,
    levels: int = 40,
    keep: float = 0.5,
    moves: int = 6,
    probes: int | None = None,
    seed: int = 0,
    fixed: tuple[int, ...] = (),
) -> VolumeSlope:
    """Nested sampling of vol{K < ε}: walkers uniform in the box; at each level ε is the ``keep`` quantile of their
    losses, so vol{K < ε} shrinks by ``keep``; the walkers below ε are copied back to full number and moved within
    {K < ε} by differential-evolution steps (a move along the difference of two walkers adapts to the set's
    elongation along the fiber). The fit log vol = λ log ε + (m − 1) log log(1/ε) + c runs over the deeper half of
    the levels, with ε in units of K's median over the box. The coordinates ``fixed`` stay at w*'s values: a slice
    across a symmetry orbit (chosen by the caller), on which K has the same λ and m and the walkers mix faster."""
    rng = np.random.default_rng(seed)
    n = net.parameters
    star = np.array([float(v) for v in point])
    count = probes or 3 * n + 8
    X = rng.standard_normal((count, net.input, net.tokens))
    target = _forward(net, star[None, :], X)[0]

    def loss(W):
        diff = _forward(net, W, X) - target
        return (diff**2).reshape(len(W), -1).sum(axis=1) / count

    free = np.ones(n)
    free[list(fixed)] = 0.0
    W = star + radius * free * rng.uniform(-1.0, 1.0, (walkers, n))
    K = loss(W)
    unit = float(np.median(K))
    eps_log, vol_log = [], []
    for level in range(levels):
        eps = float(np.quantile(K, keep))
        below = np.flatnonzero(K < eps)
        eps_log.append(math.log(eps / unit))
        vol_log.append((level + 1) * math.log(keep))
        pick = rng.choice(below, walkers)
        W, K = W[pick], K[pick]
        for _ in range(moves):
            a, b = rng.integers(0, walkers, (2, walkers))
            scale = rng.choice([2.38 / math.sqrt(2 * (n - len(fixed))), 1.0], walkers, p=[0.9, 0.1])[:, None]
            trial = W + scale * (W[a] - W[b]) + 1e-12 * free * rng.standard_normal(W.shape)
            inside = np.all(np.abs(trial - star) <= radius, axis=1)
            Kt = np.full(walkers, np.inf)
            Kt[inside] = loss(trial[inside])
            accept = Kt < eps
            W[accept], K[accept] = trial[accept], Kt[accept]
    x = np.array(eps_log[levels // 2 :])
    y = np.array(vol_log[levels // 2 :]) - (order - 1) * np.log(-x)
    slope = float(np.polyfit(x, y, 1)[0])
    return VolumeSlope(slope, (math.exp(x[-1]), math.exp(x[0])))


def slope_tolerance(value: float) -> float:
    """How far a Monte Carlo slope may sit from the truth at these sample sizes (measured on the suite's exact
    cases: nested sampling's bias, the box's and the log factor's corrections)."""
    return 0.05 + 0.05 * value
