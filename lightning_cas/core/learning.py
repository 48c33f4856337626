"""Learning coefficients (singular learning theory): the closed forms and the rank rule.

The local learning coefficient λ(w*) of a regression model is the real log canonical threshold of
K(w) = ‖f_w − f_{w*}‖² at w*; for a polynomial network it depends only on the ideal ⟨c(w) − c(w*)⟩ of
the coefficients, so the exact ranks and fibers the rest of the package computes decide it. This module is
the arithmetic: the closed forms known for linear stacks and the equality at points of generic rank. Each
bound carries the theorem it rests on (its reason, and a short name the JSON gives for each end). Upper bounds
must be real statements: a complex fiber dimension bounds nothing (geometry.learning.bracket).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from lightning_cas.errors import InputError


@dataclass(frozen=True)
class Bound:
    """One side of a bracket: the value (an exact rational) and the theorem or computation behind it."""

    value: Fraction
    reason: str
    theorem: str = ""  # the theorem's short name, which the JSON gives for each end of the bracket


def reduced_rank_regression(inputs: int, hidden: int, outputs: int, rank: int) -> tuple[Fraction, int]:
    """(λ, m) of x ↦ B A x, A hidden × inputs, B outputs × hidden, at a true map of rank ``rank``
    (Aoyagi and Watanabe 2005, all four cases; m is the order of the largest pole)."""
    M, H, N, r = (
        _size(v, name) for v, name in ((inputs, "inputs"), (hidden, "hidden"), (outputs, "outputs"), (rank, "rank"))
    )
    if r > min(M, H, N):
        raise InputError(f"the true rank {r} is above min(inputs, hidden, outputs) = {min(M, H, N)}.")
    if N + H < M + r:
        return Fraction(H * N + M * r - H * r, 2), 1
    if M + H < N + r:
        return Fraction(H * M + N * r - H * r, 2), 1
    if M + N < H + r:
        return Fraction(M * N, 2), 1
    core = 2 * (H + r) * (M + N) - (M - N) ** 2 - (H + r) ** 2
    if (M + N + H + r) % 2 == 0:
        return Fraction(core, 8), 1
    return Fraction(core + 1, 8), 2


def deep_linear(widths, rank: int) -> tuple[Fraction, int]:
    """(λ, m) of a stack of linear maps with widths H_1 (input), ..., H_{L+1} (output) at a true map of rank
    ``rank`` (Aoyagi 2024, "Consideration on the learning efficiency of multiple-layered neural networks with
    linear units"). With Δ_i = H_i − r, Σ is the set of the ℓ + 1 smallest Δ_i with max_Σ Δ < min_{not Σ} Δ,
    S = Σ_Σ Δ ≥ ℓ max_Σ Δ and S < ℓ min_{not Σ} Δ; with S = ℓ(M − 1) + a, 1 ≤ a ≤ ℓ:
    λ = (r (H_1 + H_{L+1}) − r²)/2 + Σ_{i<j in Σ} Δ_i Δ_j / 2 − (ℓ − 1) S² / (4ℓ) + a(ℓ − a) / (4ℓ), and the
    order of the pole m = a(ℓ − a) + 1. Two widths give the regular model (λ = H_1 H_2 / 2, m = 1) and three
    the reduced-rank regression: the suite checks both against the independent closed forms."""
    H = [_size(v, "width") for v in widths]
    if len(H) < 2:
        raise InputError("a linear stack needs at least two widths (input and output).")
    r = _size(rank, "rank")
    if r > min(H):
        raise InputError(f"the true rank {r} is above the narrowest width {min(H)}.")
    delta = sorted(h - r for h in H)
    chosen = None
    for size in range(2, len(delta) + 1):  # Σ has ℓ + 1 = size elements: the smallest ones
        ell, inside, outside = size - 1, delta[:size], delta[size:]
        S = sum(inside)
        if outside and not max(inside) < min(outside):
            continue
        if S >= ell * max(inside) and (not outside or S < ell * min(outside)):
            chosen = (ell, inside, S)
            break
    if chosen is None:  # Aoyagi proves Σ exists; reaching here is a bug in this search
        raise AssertionError(f"no index set Σ for widths {H} and rank {r}")
    ell, inside, S = chosen
    a = S - ell * ((S - 1) // ell)  # S = ℓ(M − 1) + a with 1 <= a <= ℓ
    pairs = sum(inside[i] * inside[j] for i in range(len(inside)) for j in range(i + 1, len(inside)))
    value = (
        Fraction(r * (H[0] + H[-1]) - r * r, 2)
        + Fraction(pairs, 2)
        - Fraction((ell - 1) * S * S, 4 * ell)
        + Fraction(a * (ell - a), 4 * ell)
    )
    return value, a * (ell - a) + 1


def regular(rank: int, generic: int, weights: int) -> Bound | None:
    """λ = r/2 at a point of generic rank (J has constant rank near w*, the fiber is smooth of codimension r)."""
    if rank == generic:
        return Bound(
            Fraction(rank, 2),
            f"rank J(w*) = {rank} is the generic rank: the fiber is smooth of "
            f"codimension {rank} at w*, so λ = {rank}/2 with multiplicity 1",
            "constant rank",
        )
    return None


def _size(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"the {name} must be a nonnegative integer, got {value!r}.")
    return value
