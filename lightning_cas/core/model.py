"""The network itself: symbolic parametrization (sympy) and fast numeric evaluation.

The symbolic side exists for users and for small exact work; the numeric side (float64 or
GF(p), with forward-mode derivatives) is what the fast backends use, so it never expands
polynomials. Weights are ordered layer by layer, head by head, as Q_ih, K_ih, V_ih, each row-major
(one head per layer: Q_i, K_i, V_i); the Macaulay2 package (``m2/LightningCAS.m2``, ``lightningWeights``) uses
the same order. A layer with H heads maps Z to sum_h V_h Z (Z^T K_h^T Q_h Z).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from lightning_cas.core.architecture import Architecture
from lightning_cas.core.names import token_name, weight_name

if TYPE_CHECKING:  # sympy is imported where it is used: `dim` never pays for it
    import sympy

# sympy is imported inside the symbolic functions: it takes longer to import (0.6 s) than the
# numeric half of this module takes to compute a dimension, and `dim` never needs it.

# ---------------------------------------------------------------- symbolic parametrization


def head_symbols(arch: Architecture) -> list[list[list[sympy.Matrix]]]:
    """Per layer, per head [Q, K, V] as sympy matrices of symbols named by core.names: q_(i,r,c) in a
    one-head layer, q_(i,h,r,c) in a layer with several heads (the Macaulay2 package's names)."""
    import sympy

    layers = []
    for i, (a, d, e) in enumerate(arch.layer_shapes, start=1):
        heads = []
        for h in range(1, arch.heads[i - 1] + 1):
            head = None if arch.heads[i - 1] == 1 else h
            heads.append([sympy.Matrix(rows, d, lambda r, c, n=name: sympy.Symbol(weight_name(n, i, r + 1, c + 1,
                                                                                                  head)))
                          for name, rows in (("q", a), ("k", a), ("v", e))])
        layers.append(heads)
    return layers


def weight_symbols(arch: Architecture) -> list[list[sympy.Matrix]]:
    """Per layer [Q, K, V] of a one-head-per-layer network (symbols q_(i,r,c), k_(i,r,c), v_(i,r,c))."""
    if arch.multihead:
        raise ValueError("weight_symbols is for one head per layer; use head_symbols")
    return [heads[0] for heads in head_symbols(arch)]


def flat_weight_symbols(arch: Architecture) -> list[sympy.Symbol]:
    """All weight symbols in the canonical order (the order of every Jacobian column)."""
    return [s for heads in head_symbols(arch) for head in heads for m in head for s in m]


def token_symbols(arch: Architecture) -> sympy.Matrix:
    """The d_0 x t token matrix X of symbols x_(r,j) (row r, token j; tokens are columns)."""
    import sympy

    return sympy.Matrix(arch.widths[0], arch.tokens, lambda r, j: sympy.Symbol(token_name(r + 1, j + 1)))


def _as_heads(arch: Architecture, layers):
    """Per layer a list of heads: accepts head_symbols' shape, or [Q, K, V] per layer (one head)."""
    if layers is None:
        return head_symbols(arch)
    return [[layer] if isinstance(layer[0], sympy.MatrixBase) else list(layer) for layer in layers]


def _network_in_ring(arch: Architecture, layers=None, X=None):
    """phi_W(X) computed in a sparse polynomial ring (DomainMatrix): (matrix, generators, ring).

    Expr arithmetic with expand is orders of magnitude slower already at depth 2.
    """
    import sympy
    from sympy.polys.matrices import DomainMatrix

    layers = _as_heads(arch, layers)
    Z = token_symbols(arch) if X is None else X
    gens = tuple(sorted(set().union(Z.free_symbols, *(M.free_symbols for heads in layers for head in heads
                                                      for M in head)), key=str))
    ring = sympy.ZZ[gens] if gens else sympy.ZZ
    dm = lambda M: DomainMatrix.from_list_sympy(*M.shape, M.tolist()).convert_to(ring)  # noqa: E731
    Zd = dm(Z)
    for heads in layers:
        out = None
        for Q, K, V in heads:
            Qd, Kd, Vd = dm(Q), dm(K), dm(V)
            term = Vd * Zd * (Zd.transpose() * Kd.transpose() * Qd * Zd)
            out = term if out is None else out + term
        Zd = out
    return Zd, gens, ring


def network_output(arch: Architecture, layers=None, X=None) -> sympy.Matrix:
    """phi_W(X) as a d_L x t matrix of expanded polynomials."""
    return _network_in_ring(arch, layers, X)[0].to_Matrix()


def coefficient_map(arch: Architecture) -> dict[tuple[int, int, tuple[int, ...]], sympy.Expr]:
    """Coefficients of phi as polynomials in the weights.

    Keys are (output row p, output token j, exponent vector over the tokens x_(r,j) in row-major
    order); only monomials with a non-zero coefficient appear. Cached per architecture (the
    expansion is the expensive part; point tests ask for it many times); callers get a copy.
    """
    return dict(_coefficient_map(arch))


@functools.lru_cache(maxsize=32)
def _coefficient_map(arch: Architecture) -> dict:
    import sympy

    Zd, gens, ring = _network_in_ring(arch)
    xs = list(token_symbols(arch))
    x_pos = [gens.index(x) for x in xs]
    w_pos = [k for k in range(len(gens)) if k not in set(x_pos)]
    rows = Zd.to_list()
    coeffs: dict = {}
    for p, row in enumerate(rows):
        for j, poly in enumerate(row):
            grouped: dict = {}
            for monom, c in poly.terms():
                key = tuple(monom[k] for k in x_pos)
                wmon = sympy.Integer(int(c))
                for k in w_pos:
                    if monom[k]:
                        wmon *= gens[k] ** monom[k]
                grouped.setdefault(key, []).append(wmon)
            for key, terms in grouped.items():
                coeffs[(p, j, key)] = sympy.Add(*terms)
    return coeffs


# ---------------------------------------------------------------- numeric evaluation


@dataclass(frozen=True)
class Field:
    """Arithmetic for the numeric forward pass: float64, or GF(p) on int64 without overflow."""

    prime: int | None = None  # None means float64

    def matmul(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        if self.prime is None:
            return np.matmul(A, B)
        p = self.prime
        # Entries are < p < 2^31. Split B into 16-bit halves so each partial product is < 2^47
        # and a sum over fewer than 2^16 terms stays below 2^63.
        hi = np.matmul(A, B >> 16) % p
        lo = np.matmul(A, B & 0xFFFF) % p
        return ((hi << 16) + lo) % p

    def add(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return A + B if self.prime is None else (A + B) % self.prime

    def mul(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """Entrywise product (residues < 2^31, so the int64 product stays below 2^62)."""
        return A * B if self.prime is None else (A * B) % self.prime

    def random(self, rng: np.random.Generator, shape) -> np.ndarray:
        if self.prime is None:
            return rng.standard_normal(shape)
        return rng.integers(0, self.prime, size=shape, dtype=np.int64)


def rank_over_qq(rows) -> int:
    """Exact rank of a matrix of rationals (Fraction, int or sympy Rational) with flint fmpq_mat."""
    import flint
    import sympy

    rows = [list(r) for r in rows]
    if not rows or not rows[0]:
        return 0
    entries = [sympy.Rational(v) for r in rows for v in r]
    return flint.fmpq_mat(len(rows), len(rows[0]), [flint.fmpq(int(q.p), int(q.q)) for q in entries]).rank()


def split_heads(arch: Architecture, w: np.ndarray) -> list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """Cut a flat weight vector (canonical order) into per-layer lists of per-head (Q, K, V) arrays."""
    if w.shape != (arch.parameters,):
        raise ValueError(f"expected {arch.parameters} weights, got shape {w.shape}")
    layers, pos = [[] for _ in range(arch.depth)], 0
    for i, _, a, d, e in arch.head_blocks:
        mats = []
        for rows in (a, a, e):
            mats.append(w[pos:pos + rows * d].reshape(rows, d))
            pos += rows * d
        layers[i].append(tuple(mats))
    return layers


def split_weights(arch: Architecture, w: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Cut a flat weight vector (canonical order) into per-layer (Q, K, V) arrays (one head per layer)."""
    if arch.multihead:
        raise ValueError("split_weights is for one head per layer; use split_heads")
    return [heads[0] for heads in split_heads(arch, w)]


def evaluate(arch: Architecture, w: np.ndarray, X: np.ndarray, field: Field = Field()) -> np.ndarray:
    """phi_W(X) for a batch X of shape (N, d_0, t); returns (N, d_L, t)."""
    Z = X
    for heads in split_heads(arch, w):
        out = None
        for Q, K, V in heads:
            QZ = field.matmul(Q, Z)
            KZ = field.matmul(K, Z)
            att = field.matmul(np.swapaxes(KZ, -1, -2), QZ)
            term = field.matmul(field.matmul(V, Z), att)
            out = term if out is None else field.add(out, term)
        Z = out
    return Z



def jacobian(arch: Architecture, w: np.ndarray, X: np.ndarray, field: Field = Field()) -> np.ndarray:
    """d phi_W(X_n) / dW by forward mode; returns (N * d_L * t, P), rows ordered (n, row, token).

    Tangents are stored as (N, width, t, weights so far), so a weight matrix acts on all of them
    with one matrix product and the result is already the Jacobian's row layout: memory is a
    few (rows x P) arrays. A layer's own weights enter through closed forms (outer products of
    the layer's intermediate values), never one-hot tensors; a layer's heads add up. ``field``
    is any object with ``matmul``, ``add`` and ``mul`` (float64, int64 mod p, float64 mod p).
    """
    n, _, t = X.shape
    T = lambda M: np.swapaxes(M, -1, -2)  # noqa: E731  (transpose the last two axes)
    mm, add, mul = field.matmul, field.add, field.mul
    Z, dZ = X, None  # dZ: (n, d, t, weights of the earlier layers)
    for heads in split_heads(arch, w):
        d, out, dout, own = Z.shape[1], None, None, []
        flat = None if dZ is None else dZ.reshape(n, d, -1)
        for Q, K, V in heads:
            a, e = Q.shape[0], V.shape[0]
            QZ, KZ, VZ = mm(Q, Z), mm(K, Z), mm(V, Z)
            att = mm(T(KZ), QZ)  # (n, t, t): Zᵀ Kᵀ Q Z
            out = mm(VZ, att) if out is None else add(out, mm(VZ, att))
            # Own weights, d out[e', u] by: Q_rc = (VZ KZᵀ)[e', r] Z[c, u]; K_rc = (VZ Zᵀ)[e', c] QZ[r, u];
            # V_rc = [e' = r] (Z att)[c, u].
            own.append(mul(mm(VZ, T(KZ))[:, :, None, :, None], T(Z)[:, None, :, None, :]).reshape(n, e, t, a * d))
            own.append(mul(mm(VZ, T(Z))[:, :, None, None, :], T(QZ)[:, None, :, :, None]).reshape(n, e, t, a * d))
            dV = np.zeros((n, e, t, e, d), dtype=Z.dtype)
            idx = np.arange(e)
            dV[:, idx, :, idx, :] = T(mm(Z, att))  # advanced indices first: (e, n, t, d) <- (n, t, d)
            own.append(dV.reshape(n, e, t, e * d))
            if dZ is None:
                continue
            # Earlier weights: d out = V (dZ att) + (VZ KZᵀ)(Q dZ) + VZ (dZᵀ Kᵀ QZ).
            dZ_att = np.ascontiguousarray(T(mm(T(dZ), att[:, None])))  # (n, d, t, P')
            term = add(mm(V, dZ_att.reshape(n, d, -1)), mm(mm(VZ, T(KZ)), mm(Q, flat)))
            G = mm(T(mm(T(K), QZ)), flat).reshape(n, t, t, -1)  # [u, s]: sum_c (Kᵀ QZ)[c, u] dZ[c, s]
            term = add(term, mm(VZ, np.ascontiguousarray(np.swapaxes(G, 1, 2)).reshape(n, t, -1)))
            dout = term if dout is None else add(dout, term)
        e = out.shape[1]
        parts = ([] if dZ is None else [dout.reshape(n, e, t, -1)]) + own
        Z, dZ = out, np.concatenate(parts, axis=-1)
    return dZ.reshape(-1, dZ.shape[-1])
