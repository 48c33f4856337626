"""Certified singular-value bands of a Jacobian, from its Gram matrix G = JᵀJ in arb balls.

Floating point cannot say whether a tiny singular value is zero, nor how far the Jacobian is from a lower
rank; arb balls can, with two inequalities that need no eigenvectors:

* **from below**: for a set C of k columns, σ_k(J) ≥ σ_min(J_C) (dropping columns only lowers singular
  values), and σ_min(J_C)² = 1/‖G_CC⁻¹‖₂ ≥ 1/‖G_CC⁻¹‖_∞ (G_CC symmetric), with G_CC⁻¹ enclosed by arb;
* **from above**: the projection of J on the span of J_C has rank k, so (Eckart–Young) σ_{k+1}(J)² ≤
  ‖(I − Π_C)J‖₂² = ‖S‖₂ ≤ min(trace S, ‖S‖_∞), S = G_RR − G_RC G_CC⁻¹ G_CR the Schur complement.

The columns come from a greedy pivoted Cholesky on G's midpoints: its pivots (the largest remaining
Schur-complement diagonal) fall in the same bands as the singular values, so a gap of BAND_DECADES
between consecutive pivots is where a band ends; the two inequalities at that boundary prove it (the
lower end of one band above the upper end of the next). The bounds (log10) are proved; the pivots only
choose the columns and say where to look.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

BAND_DECADES = 2.0  # a gap of this many decades between consecutive pivots starts a new band
NOISE_DIGITS = 8  # pivots below the largest x 10^-(digits - NOISE_DIGITS) are the working precision's noise
SHARE = 0.05  # a weight block carrying less than this share of a near-drop is not named


def _log10(x) -> float:
    """log10 of a nonnegative arb's midpoint (-inf at 0), as a float (no underflow at any precision)."""
    import flint

    if x.is_zero() or not x > 0:
        return -math.inf
    return float((x.log() / flint.arb(10).log()).mid())


@dataclass(frozen=True)
class Pivoting:
    """Greedy pivoted Cholesky on G's midpoints: the chosen columns and log10 of sqrt(pivot) (≈ σ)."""

    columns: tuple[int, ...]
    log_sigma: tuple[float, ...]


def pivoted_cholesky(G, limit: int, digits: int, check=None) -> Pivoting:
    """At most ``limit`` columns of the arb Gram matrix G, largest remaining diagonal first, while the pivot
    stays above the precision's noise. Left-looking, one arb matrix-vector product per step (C speed);
    ``check()`` is called at every step (a caller's deadline)."""
    import flint

    P = G.nrows()
    M = G.mid()
    diag = [M[i, i] for i in range(P)]
    top = max(diag, default=flint.arb(0))
    if not top > 0 or limit <= 0:
        return Pivoting((), ())
    floor = top * flint.arb(10) ** (NOISE_DIGITS - digits)
    L = flint.arb_mat(P, limit)
    chosen: list[int] = []
    logs: list[float] = []
    free = set(range(P))
    while len(chosen) < limit and free:
        if check is not None:
            check()
        p = max(free, key=lambda i: diag[i])
        pivot = diag[p]
        if not pivot > floor:
            break
        k = len(chosen)
        if k:
            lp = flint.arb_mat(limit, 1)
            for j in range(k):
                lp[j, 0] = L[p, j]
            prod = L * lp
        scale = pivot.sqrt()
        for i in free:
            c = M[i, p] - (prod[i, 0] if k else 0)
            value = (c / scale).mid()
            L[i, k] = value
            diag[i] = (diag[i] - value * value).mid()
        free.discard(p)
        chosen.append(p)
        logs.append(_log10(pivot) / 2)
    return Pivoting(tuple(chosen), tuple(logs))


def gram_minor_positive(G, columns) -> bool:
    """det G_CC > 0, proved: the columns C of J are linearly independent (G_CC is positive semidefinite)."""
    import flint

    if not columns:
        return True
    return flint.arb_mat([[G[i, j] for j in columns] for i in columns]).det() > 0


@dataclass(frozen=True)
class Boundary:
    """At k chosen columns: σ_k ≥ 10^log_lower and σ_{k+1} ≤ 10^log_upper (proved), and the share of the
    remainder (the Schur complement's diagonal: what the other columns add) per weight column."""

    k: int
    log_lower: float  # -inf: not proved (k = 0, or G_CC not invertible at this precision)
    log_upper: float
    residual: tuple[float, ...]  # per column of J, its squared distance to span(J_C) (midpoints, >= 0)


def boundary(G, columns, k: int) -> Boundary:
    """The two inequalities of the module docstring at the first k pivot columns."""
    import flint

    P = G.nrows()
    C = list(columns[:k])
    R = [i for i in range(P) if i not in set(C)]
    if not C:
        S = G
        log_lower = -math.inf
        Ri = list(range(P))
    else:
        GCC = flint.arb_mat([[G[i, j] for j in C] for i in C])
        try:
            inv = GCC.inv()
        except ZeroDivisionError:
            return Boundary(k, -math.inf, math.inf, ())
        # the largest row sum's upper end (max over upper ends: overlapping balls do not compare)
        norm = max(sum((abs(inv[i, j]) for j in range(k)), flint.arb(0)).upper() for i in range(k))
        log_lower = -_log10(norm) / 2
        if not R:
            return Boundary(k, log_lower, -math.inf, tuple(0.0 for _ in range(P)))
        GRC = flint.arb_mat([[G[i, j] for j in C] for i in R])
        GRR = flint.arb_mat([[G[i, j] for j in R] for i in R])
        S = GRR - GRC * inv * GRC.transpose()
        Ri = R
    n = S.nrows()
    trace = sum((S[i, i] for i in range(n)), flint.arb(0))
    row = max(sum((abs(S[i, j]) for j in range(n)), flint.arb(0)).upper() for i in range(n))
    bound = min(trace.upper(), row)
    residual = [0.0] * P
    for pos, i in enumerate(Ri):
        residual[i] = max(float(S[pos, pos].mid()), 0.0) if S[pos, pos].mid() > 0 else 0.0
    return Boundary(k, log_lower, _log10(bound) / 2 if bound > 0 else -math.inf, tuple(residual))


@dataclass(frozen=True)
class CertifiedBand:
    """``count`` singular values, all in [10^log_lower, 10^log_upper] (proved)."""

    count: int
    log_lower: float
    log_upper: float


def band_boundaries(piv: Pivoting, rank: int) -> list[int]:
    """Where the pivots (the first ``rank``) jump by BAND_DECADES or more: the ends of the bands."""
    logs = piv.log_sigma[:rank]
    ends = [k for k in range(1, len(logs)) if logs[k - 1] - logs[k] >= BAND_DECADES]
    return ends + ([len(logs)] if logs else [])


def certified_bands(G, piv: Pivoting, rank: int, check=None) -> tuple[list[CertifiedBand], dict[int, Boundary]]:
    """The bands of the first ``rank`` singular values (rank: proved by ``gram_minor_positive``), each
    boundary proved; a boundary whose two bounds overlap is dropped (its bands merge)."""
    ends = band_boundaries(piv, rank)
    bounds = {}
    for k in ends + [0]:
        if check is not None:
            check()
        bounds[k] = boundary(G, piv.columns, k)
    top = bounds[0]
    ends = [k for k in ends if k == rank or bounds[k].log_lower > bounds[k].log_upper]
    bands, start, upper = [], 0, top.log_upper
    for k in ends:
        bands.append(CertifiedBand(k - start, bounds[k].log_lower, upper))
        start, upper = k, bounds[k].log_upper
    return bands, {**bounds, 0: top}


def largest_lower(G) -> float:
    """log10 of a proved lower bound on σ_1: the largest column norm."""
    import flint

    best = flint.arb(0)
    for i in range(G.nrows()):
        if G[i, i].lower() > best:
            best = G[i, i].lower()
    return _log10(best) / 2


def block_shares(residual, labels) -> list[tuple[str, float]]:
    """The share of the total residual per label (one label per weight column), the largest first, those
    above SHARE only."""
    total = sum(residual)
    if total <= 0:
        return []
    acc: dict = {}
    for r, lab in zip(residual, labels):
        acc[lab] = acc.get(lab, 0.0) + r
    return sorted(((lab, v / total) for lab, v in acc.items() if v / total >= SHARE), key=lambda x: -x[1])
