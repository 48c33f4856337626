"""The named symmetry group of the parametrization and its orbits (exact rationals).

Per head: GL(a_i) on (Q, K) and, for lightning networks, the scaling (A, V) -> (c A, V / c); per
hidden width d_i: GL(d_i), acting on every head of layer i on the left and every head of layer
i + 1 on the right. Head permutations are finite and add no dimension. The orbit dimension at W
is the rank of the infinitesimal action there; since the orbit of W lies in the fiber of W and
the generic fiber contains the generic orbit, ``parameters - orbit_dimension(W)`` bounds the
dimension of the neurovariety from above for every W (a special W only weakens the bound).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from lightning_cas.core.architecture import Architecture
from lightning_cas.core.model import rank_over_qq
from lightning_cas.core.weights import Point, layer_heads, random_point


def group_dimension(arch: Architecture) -> int:
    """sum_i H_i (a_i^2 [+ 1 scaling, lightning]) + sum over hidden widths d_i^2."""
    scal = 1 if arch.normalization == "none" else 0
    return (sum(h * (a * a + scal) for h, a in zip(arch.heads, arch.attention))
            + sum(d * d for d in arch.widths[1:-1]))


def orbit_tangents(arch: Architecture, point: Point) -> list[list[Fraction]]:
    """One tangent vector per Lie algebra basis element at W, in the canonical weight order.

    GL(a) on a head: dQ = E Q, dK = -E^T K.  Scaling of a head: dQ = Q, dV = -V.
    GL(d_i), hidden i: dV_ih = E V_ih for the heads of layer i; dQ, dK, dV = -(.) E for the heads of layer i+1.
    """
    layers = [[tuple(np.array(M, dtype=object) for M in head) for head in layer_heads(layer)] for layer in point]

    def zero_like():
        return [[[np.zeros_like(M) for M in head] for head in heads] for heads in layers]

    def vector(parts):
        return [v for heads in parts for head in heads for M in head for v in M.reshape(-1)]

    def unit(n, r, c):
        E = np.array([[Fraction(0)] * n for _ in range(n)], dtype=object)
        E[r, c] = Fraction(1)
        return E

    out = []
    for i, heads in enumerate(layers):
        for h, (Q, K, V) in enumerate(heads):
            a = Q.shape[0]
            for r in range(a):
                for c in range(a):
                    E = unit(a, r, c)
                    parts = zero_like()
                    parts[i][h][0] = E.dot(Q)
                    parts[i][h][1] = -E.T.dot(K)
                    out.append(vector(parts))
            if arch.normalization == "none":
                parts = zero_like()
                parts[i][h][0] = Q.copy()
                parts[i][h][2] = -V
                out.append(vector(parts))
    for i in range(arch.depth - 1):  # hidden width d_{i+1} between layer i and layer i+1 (0-based)
        n = arch.widths[i + 1]
        for r in range(n):
            for c in range(n):
                E = unit(n, r, c)
                parts = zero_like()
                for h, (_, _, Vi) in enumerate(layers[i]):
                    parts[i][h][2] = E.dot(Vi)
                for h, (Qn, Kn, Vn) in enumerate(layers[i + 1]):
                    parts[i + 1][h][0] = -Qn.dot(E)
                    parts[i + 1][h][1] = -Kn.dot(E)
                    parts[i + 1][h][2] = -Vn.dot(E)
                out.append(vector(parts))
    return [[Fraction(v) for v in vec] for vec in out]


def orbit_dimension(arch: Architecture, point: Point) -> int:
    """Dimension of the named group's orbit through W = rank of its infinitesimal action at W."""
    return rank_over_qq(orbit_tangents(arch, point))


def head_permutations(arch: Architecture) -> int:
    """Order of the finite group permuting the heads within each layer: prod_i H_i!."""
    return math.prod(math.factorial(h) for h in arch.heads)


def generic_orbit_dimension(arch: Architecture, seed: int = 0) -> int:
    """The orbit dimension at a random nonzero integer point (reproducible from ``seed``); the
    generic value unless the point is special, and a valid bound either way (module docstring)."""
    return orbit_dimension(arch, random_point(arch, seed))


def mixing_layers(arch: Architecture) -> list[int]:
    """Layers (0-based) whose heads can be mixed: lightning, H_i >= 2 and a_i >= d_{i-1}, so every
    A_ih = K^T Q ranges over all d_{i-1} x d_{i-1} matrices and the layer, linear in the pairs
    (V_h, A_h), is unchanged by (V_h, A_h) -> (sum_k g_hk V_k, sum_k (g^-1)_kh A_k) for g in GL(H_i)."""
    if arch.normalization != "none":
        return []  # softmax is not linear in A: mixing changes the function
    return [i for i, (a, d, _) in enumerate(arch.layer_shapes) if arch.heads[i] >= 2 and a >= d]


def mixing_tangents(arch: Architecture, point: Point) -> list[list[Fraction]]:
    """Tangents at W of the head mixing (module docstring), lifted to the weights: dV_h = V_k and
    dA_k = -A_h for the basis element E_hk, realised as dQ_k = K_k (K_k^T K_k)^-1 dA_k (K_k has full
    column rank when a >= d; a layer where it does not is skipped, which only weakens the bound)."""
    import flint

    def inv_gram(K):
        M = flint.fmpq_mat([[flint.fmpq(v.numerator, v.denominator) for v in row] for row in K])
        G = M.transpose() * M
        if G.rank() < G.nrows():
            return None
        Gi = G.inv()
        return [[Fraction(int(Gi[r, c].p), int(Gi[r, c].q)) for c in range(Gi.ncols())] for r in range(Gi.nrows())]

    layers = [[tuple(np.array(M, dtype=object) for M in head) for head in layer_heads(layer)] for layer in point]
    out = []
    for i in mixing_layers(arch):
        heads = layers[i]
        lifts = []
        for _, K, _ in heads:
            Gi = inv_gram(K.tolist())
            if Gi is None:
                break
            lifts.append(K.dot(np.array(Gi, dtype=object)))  # a x d: K (K^T K)^-1
        if len(lifts) != len(heads):
            continue
        for h in range(len(heads)):
            for k in range(len(heads)):
                if h == k:
                    continue  # the diagonal is the per-head scaling, already in the group
                parts = [[[np.zeros_like(M) for M in head] for head in hs] for hs in layers]
                Qh, Kh, Vh = heads[h]
                Qk, Kk, Vk = heads[k]
                parts[i][h][2] = Vk.copy()  # dV_h = V_k
                A_h = Kh.T.dot(Qh)
                parts[i][k][0] = -lifts[k].dot(A_h)  # dA_k = K_k^T dQ_k = -A_h
                out.append([Fraction(v) for hs in parts for head in hs for M in head for v in M.reshape(-1)])
    return out


def extended_orbit_dimension(arch: Architecture, point: Point) -> int:
    """Rank at W of the named group's action together with the head mixing: the fiber through W
    contains a family of this dimension, so parameters minus it bounds the dimension from above."""
    return rank_over_qq(orbit_tangents(arch, point) + mixing_tangents(arch, point))
