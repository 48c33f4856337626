"""Head mixing: the extra symmetry of a lightning attention block with several heads, a full value map and
a >= d. The block is linear in the pairs (V_h, A_h = K_h^T Q_h), and every A_h ranges over all d x d
matrices, so (V_h, A_h) -> (sum_k g_hk V_k, sum_k (g^-1)_kh A_k) for g in GL(H) leaves it unchanged: the
orbit of the named group (``core.symmetry``) together with these tangents bounds the dimension of such
networks.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from lightning_cas.core.arithmetic import Arithmetic, ModP, Rationals
from lightning_cas.core.checks import derived_seed
from lightning_cas.core.network import Attention, Network
from lightning_cas.core.primes import DEFAULT_PRIME
from lightning_cas.core.symmetry import (
    _Tangents,
    generic_orbit_dimension,
    orbit_rank_modp,
    orbit_tangents,
    random_weights,
)
from lightning_cas.core.weights import flat


def mixing_layers(arch: Network) -> list[int]:
    """Blocks (0-based) whose heads can be mixed: lightning attention with a full value map, H >= 2 and
    a >= d, so every A_h = K^T Q ranges over all d x d matrices and the block, linear in the pairs
    (V_h, A_h), is unchanged by (V_h, A_h) -> (sum_k g_hk V_k, sum_k (g^-1)_kh A_k) for g in GL(H)."""
    net = arch
    widths = net.widths
    return [
        i
        for i, b in enumerate(net.blocks)
        if isinstance(b, Attention)
        and b.normalization == "none"
        and b.value is None
        and b.heads >= 2
        and b.attention >= widths[i]
    ]


def _gram_inverse_lift(K: np.ndarray, ar: Arithmetic):
    """K (K^T K)^-1 in the arithmetic (None when K^T K is singular there)."""
    import flint

    if isinstance(ar, ModP):
        p = ar.prime
        G = flint.nmod_mat([[int(v) for v in row] for row in ar.residues(_gram(K, ar))], p)
        if G.rank() < G.nrows():
            return None
        Gi = G.inv()
        inv = ar.array(
            np.array([[int(Gi[r, c]) for c in range(Gi.ncols())] for r in range(Gi.nrows())], dtype=np.int64)
        )
        return ar.matmul(K, inv)
    Gq = flint.fmpq_mat(_gram(K, ar).tolist())
    if Gq.rank() < Gq.nrows():
        return None
    Gqi = Gq.inv()
    return ar.matmul(K, ar.array([[Gqi[r, c] for c in range(Gqi.ncols())] for r in range(Gqi.nrows())]))


def _gram(K, ar):
    return ar.matmul(np.ascontiguousarray(K.T), K)


def mixing_blocks(arch: Network, w, ar: Arithmetic):
    """Tangents at W of the head mixing, lifted to the weights: dV_h = V_k and dA_k = -A_h for the basis
    element E_hk, realised as dQ_k = -K_k (K_k^T K_k)^-1 A_h (K_k has full column rank when a >= d; a
    block where it does not is skipped, which only weakens the bound)."""
    net = arch
    tb = _Tangents(net, ar, w)
    for i in mixing_layers(net):
        heads = tb.mats[i]
        lifts = [_gram_inverse_lift(h["k"], ar) for h in heads]
        if any(lift is None for lift in lifts):
            continue
        pairs = [(h, k) for h in range(len(heads)) for k in range(len(heads)) if h != k]
        T = tb.new(len(pairs))
        for row, (h, k) in enumerate(pairs):
            v, q = tb.where[(i, h, "v")], tb.where[(i, k, "q")]
            T[row, v.offset : v.stop] = heads[k]["v"].reshape(-1)
            A_h = ar.matmul(np.ascontiguousarray(heads[h]["k"].T), heads[h]["q"])
            T[row, q.offset : q.stop] = ar.scale(ar.matmul(lifts[k], A_h), -1).reshape(-1)
        yield T


def mixing_tangents(arch: Network, point) -> list[list[Fraction]]:
    """The head-mixing tangents at W, exactly."""
    ar = Rationals()
    values = flat(point) if not isinstance(point, (list, np.ndarray)) else list(point)
    return [[Fraction(int(v.p), int(v.q)) for v in row] for T in mixing_blocks(arch, ar.array(values), ar) for row in T]


def extended_orbit_dimension(arch: Network, point) -> int:
    """Rank at W, over QQ, of the named group's action together with the head mixing."""
    from lightning_cas.core.model import rank_over_qq

    return rank_over_qq(orbit_tangents(arch, point) + mixing_tangents(arch, point))


def extended_orbit_rank_modp(arch: Network, w, prime: int = DEFAULT_PRIME) -> int:
    """The same rank mod p (a valid bound at any point and prime, and fast at any size)."""
    ar = ModP(prime)
    wc = ar.array(w)
    return orbit_rank_modp(arch, w, prime, extra=list(mixing_blocks(arch, wc, ar)))


def generic_extended_orbit_dimension(arch: Network, seed: int = 0, tries: int = 3) -> int:
    """The largest extended orbit rank mod p over ``tries`` random points: a point whose K is singular
    loses that block's mixing, so several are tried; each is a valid bound. Without a mixing block it
    is the orbit rank at the first point."""
    if not mixing_layers(arch):
        return generic_orbit_dimension(arch, seed)
    return max(extended_orbit_rank_modp(arch, random_weights(arch, derived_seed(seed, k))) for k in range(tries))
