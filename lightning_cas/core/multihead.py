"""Upper bounds for the dimension of multi-head lightning networks (no closed form is known).

One layer with H heads computes sum_h V_h X (X^T A_h X): a sum of H points of the one-head
variety, so its dimension is at most H times the one-head dimension (a secant-type variety,
which can be defective) and at most the dimension of the linear span of one-layer functions,
a closed form. Every network is also bounded by parameters minus the orbit dimension of the named
symmetry group (its rank mod p at a random point: a valid bound at any point and prime, and fast
at any size), and by the ambient dimension.
"""

from __future__ import annotations

import math

from lightning_cas.core.architecture import check_architecture
from lightning_cas.core.checks import as_int
from lightning_cas.core.head_mixing import generic_extended_orbit_dimension
from lightning_cas.core.network import Network
from lightning_cas.core.paper import MAX_HEADS, MAX_TOKENS, MAX_WIDTH
from lightning_cas.core.predictions import Prediction, rho
from lightning_cas.core.symmetry import generic_orbit_dimension
from lightning_cas.errors import InputError


def symmetric_rank_dimension(r: int, d: int) -> int:
    """Dimension of symmetric d x d matrices of rank <= r (r <= d): r d - r (r - 1) / 2."""
    r = min(r, d)
    return r * d - r * (r - 1) // 2


def one_head_bound(a: int, d: int, e: int, tokens: int) -> tuple[int, str]:
    """(bound, formula) for one head: d'd + rho(a, d) - 1 for t >= 2; with one token only
    sym(A) is seen, a symmetric matrix of rank <= min(2a, d): d'd + sigma(min(2a, d), d) - 1."""
    if tokens >= 2:
        return e * d + rho(a, d) - 1, "d'd + rho(a,d) - 1"
    return e * d + symmetric_rank_dimension(2 * a, d) - 1, "d'd + sigma(min(2a,d),d) - 1 (t = 1: only sym(A))"


def _sizes(**sizes) -> list[int]:
    """The integer sizes a public helper takes, each positive and within the paper's caps."""
    caps = {"tokens": MAX_TOKENS, "heads": MAX_HEADS}
    out = []
    for name, value in sizes.items():
        number, cap = as_int(value, name), caps.get(name, MAX_WIDTH)
        if not 1 <= number <= cap:
            raise InputError(f"{name} must be an integer between 1 and {cap}, got {number}.")
        out.append(number)
    return out


def span_dimension(d: int, e: int, tokens: int) -> int:
    """Exact dimension of the linear span of one-layer functions X -> V X (X^T A X).

    The function is linear in T = V (x) A, and T ranges over all of K^{d'} (x) K^{d x d} (rank <= a
    matrices span every matrix), so the span is d' copies of the span of the cubics
    f_qrs = sum_i x_{q,i} x_{r,i} x_{s,1} (output token 1 suffices: token j of phi(X) is token 1 of
    phi(X pi)). f_qrs = f_rqs; with t >= 2 the terms i >= 2 have distinct monomials for distinct
    ({q, r}, s), so the d^2 (d + 1) / 2 of them are independent; with one token f_qrs = x_q x_r x_s,
    symmetric in all three: C(d + 2, 3). (The exact rank of the linear map agrees: a test.)
    """
    d, e, tokens = _sizes(d=d, e=e, tokens=tokens)
    per_output = d * d * (d + 1) // 2 if tokens >= 2 else math.comb(d + 2, 3)
    return e * per_output


def multihead_bound(arch: Network):
    """The least justified upper bound on the dimension, with every bound it is the least of."""
    check_architecture(arch, "multihead_bound", networks=False)
    paper = arch.paper
    assert paper is not None  # check_architecture refused every other network
    orbit = generic_orbit_dimension(arch)
    bounds = [
        (
            "parameters - orbit",
            arch.parameters - orbit,
            "the named group's orbit (rank of its action mod p at a random integer point) lies in the fiber",
        )
    ]
    if arch.depth == 1:
        (a, d, e), H, t = paper.layer_shapes[0], arch.heads[0], arch.tokens
        one, one_formula = one_head_bound(a, d, e, t)
        if arch.normalization == "softmax":
            one, one_formula = one + 1, one_formula.replace(" - 1", "") + " (softmax: no scaling)"
        bounds.insert(0, ("heads x one head", H * one, f"H ({one_formula}): a sum of H points of the one-head variety"))
        if arch.normalization == "none":
            bounds.insert(1, ("span", span_dimension(d, e, t), "linear span of one-layer functions (closed form)"))
    bounds.append(("ambient", paper.ambient_dimension, "all maps with entries homogeneous of degree 3^L"))
    value = min(b[1] for b in bounds)
    tight = [b[0] for b in bounds if b[1] == value]
    if arch.depth == 1 and arch.normalization == "none":
        formula = (
            "min(H (d'd + rho(a,d) - 1), span)" if arch.tokens >= 2 else "min(H (d'd + sigma(min(2a,d),d) - 1), span)"
        )
        regime = (
            "one layer with several heads: the expected dimension, an upper bound (sums of heads form a "
            "secant-type variety, which can be defective)"
        )
    else:
        formula = "min(" + ", ".join(b[0] for b in bounds) + ")"
        regime = (
            "several heads"
            + (f", depth {arch.depth}" if arch.depth > 1 else "")
            + (", softmax" if arch.normalization == "softmax" else "")
            + ": no closed form known; only upper bounds"
        )
    refined = min(value, refined_bound(arch))
    return Prediction(
        "dimension",
        value,
        formula,
        regime,
        "derived",
        reason=f"attained by: {', '.join(tight)}",
        kind="upper bound",
        bounds=tuple(bounds),
        refined=refined,
    )


def refined_bound(arch: Network, seed: int = 0) -> int:
    """The head-mixing bound: parameters minus the orbit of the named group together with the mixing of
    heads (its rank mod p, core.head_mixing.generic_extended_orbit_dimension), and for one layer the rank bound of
    ``head_mixing_bound``. Proved upper bounds, sharper than the expected dimension; all one-layer
    cases of the heads table attain the least of them and the expected dimension."""
    # any point gives a valid bound; a point whose K_ih is singular loses that layer's mixing, so take
    # the best of three points
    value = arch.parameters - generic_extended_orbit_dimension(arch, seed)
    paper = arch.paper  # the rank bound is stated in the paper's numbers (a network of other blocks has none)
    if arch.depth == 1 and arch.normalization == "none" and paper is not None:
        (a, d, e), H = paper.layer_shapes[0], arch.heads[0]
        value = min(value, head_mixing_bound(a, d, e, H, arch.tokens))
    return value


def _rank_variety(m: int, n: int, r: int) -> int:
    """Dimension of m x n matrices of rank <= r."""
    return m * n if r >= min(m, n) else r * (m + n - r)


def head_mixing_bound(a: int, d: int, e: int, heads: int, tokens: int) -> int:
    """A sharper upper bound for one layer: the function is a linear image of
    T = sum_h V_h (x) A_h, a matrix of rank <= H between K^{d'd} and K^{d x d} (t >= 2) or
    K^{d'd} and Sym^2 K^d (t = 1: only sym(A) is seen); rank <= H matrices have dimension
    H(m + n - H). The heads can be mixed by GL(H) inside it, which H (one-head bound) ignores.
    For d' = 1 and t >= 2 the sum sum_h v_h o A_h (v o a = v a^T + a v^T per column of A) lies in
    (W o K^d) (x) K^d for W = span(v_h): d (H d - H(H-1)/2) + H (d - H). Each term is proved;
    that the minimum with min(H one-head, span) is the dimension is what the table observes."""
    a, d, e, heads, tokens = _sizes(a=a, d=d, e=e, heads=heads, tokens=tokens)
    n = d * d if tokens >= 2 else d * (d + 1) // 2
    bounds = [_rank_variety(e * d, n, heads)]
    if e == 1 and tokens >= 2 and heads <= d:
        bounds.append(d * (heads * d - heads * (heads - 1) // 2) + heads * (d - heads))
    return min(bounds)
