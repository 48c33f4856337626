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
