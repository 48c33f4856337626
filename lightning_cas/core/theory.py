"""Closed-form predictions from docs/mathematics.md, each with the regime it relies on.

A prediction is a number only inside a regime where a formula is established (or explicitly
conjectured); outside, it is ``None`` with the reason, never a guess. The backends compute; this
module only predicts, so the two can be compared honestly. Each prediction is plain data (a
``Prediction``); ``results.theory.theory_report`` gathers them into a result.
"""

from __future__ import annotations

from lightning_cas.core.block_theory import predict_network_dimension
from lightning_cas.core.multihead import multihead_bound
from lightning_cas.core.network import Network
from lightning_cas.core.predictions import Prediction, no_prediction, rho
from lightning_cas.core.symmetry import group_dimension, group_factors


def dimension_obstruction(arch: Network) -> str | None:
    """Why the closed-form dimension does not apply to ``arch``, or None if it does."""
    d0 = arch.widths[0]
    if arch.tokens == 1:
        return "one token (t = 1): only the symmetric part of each A_i is seen, so the formula over-counts"
    bottleneck = [d for d in arch.widths[1:-1] if d < d0]
    if bottleneck:
        return f"a hidden width ({bottleneck[0]}) is below the input width d_0 = {d0} (bottleneck)"
    if arch.normalization == "none":
        collapse = [i + 1 for i, a in enumerate(arch.attention[:-1]) if a == 1]
        if collapse:
            return (
                f"attention dim a_{collapse[0]} = 1 before the last layer: all tokens collapse onto a "
                "line and later layers see only sym(A)"
            )
    return None


def predict_dimension(arch: Network) -> Prediction:
    """dim = d_0 d_L + sum_i rho(min(a_i, d_0), d_0) - L (lightning); softmax drops the - L.
    Several heads: upper bounds only (``multihead_bound``). A network of blocks that is the paper's plain
    stack is predicted as such; any other network by ``core.block_theory``.

    >>> predict_dimension(Network.from_paper((3, 3, 3), (2, 2), tokens=2)).value
    23
    >>> predict_dimension(Network.from_paper((3, 2, 3), (2, 2), tokens=2)).value is None  # a bottleneck
    True
    """
    if arch.paper is None:
        return predict_network_dimension(arch)
    if arch.multihead:
        return multihead_bound(arch)
    if arch.normalization == "softmax" and arch.tokens == 1:
        # softmax over a single key is identically 1: phi(x) = V_L ... V_1 x, a product of matrices
        r = min(arch.widths)
        return Prediction(
            "dimension",
            r * (arch.widths[0] + arch.widths[-1] - r),
            "r(d_0 + d_L - r), r = min width",
            "softmax, one token (the network is the linear map V_L...V_1)",
            "derived",
        )
    reason = dimension_obstruction(arch)
    if reason:
        return no_prediction("dimension", reason)
    d0, dL, L = arch.widths[0], arch.widths[-1], arch.depth
    value = d0 * dL + sum(rho(min(a, d0), d0) for a in arch.attention)
    if arch.normalization == "none":
        value -= L
        formula = "d_0*d_L + sum_i rho(min(a_i, d_0), d_0) - L"
        if L == 1:
            regime, status = "one layer, t >= 2", "claim"
        else:
            regime, status = "d_0 <= every hidden width, a_i >= 2 for i < L, t >= 2", "claim"
    else:
        formula = "d_0*d_L + sum_i rho(min(a_i, d_0), d_0)"
        if L == 1:
            regime, status = "softmax, one layer, t >= 2", "proved"
        else:
            regime, status = (
                (
                    "softmax, d_0 <= every hidden width, t >= 2 (conjectured in the paper; "
                    "proved in the analytic case by Konda 2026)"
                ),
                "conjecture",
            )
            if len(set(arch.widths)) == 1:
                regime, status = (
                    (
                        f"softmax, equal widths d = {d0}, one head per layer, t >= 2 (Konda 2026: rank "
                        "d^2 + sum_i r_i (2d - r_i), kernel (L - 1) d^2 + sum_i r_i^2)"
                    ),
                    "claim",
                )
    return Prediction("dimension", value, formula, regime, status)


def predict_parameters(arch: Network) -> Prediction:
    if arch.paper is None:
        return Prediction(
            "parameters", arch.parameters, "sum of the blocks' weight matrices", "every network", "definition"
        )
    if arch.multihead:
        return Prediction(
            "parameters", arch.parameters, "sum_i H_i (2 a_i d_{i-1} + d_i d_{i-1})", "every architecture", "definition"
        )
    return Prediction(
        "parameters", arch.parameters, "sum_i 2 a_i d_{i-1} + d_i d_{i-1}", "every architecture", "definition"
    )


def predict_symmetry_dimension(arch: Network) -> Prediction:
    """Dimension of the named symmetry group: GL(a_i) per head, scalings, GL(d_i) per hidden width (a
    network of blocks: its factors, listed in ``bounds``)."""
    if arch.paper is None:
        factors = group_factors(arch)
        return Prediction(
            "symmetry_group_dimension",
            group_dimension(arch),
            " + ".join(f"{f.name}" for f in factors) or "0",
            "every network (group, not orbit; head and neuron permutations are finite)",
            "definition",
            bounds=tuple((f.name, f.dimension, f.where) for f in factors),
        )
    scal = arch.normalization == "none"
    if arch.multihead:
        formula = "sum_i H_i a_i^2 + sum_hidden d_i^2" + (" + sum_i H_i" if scal else "")
        regime = "every architecture (group, not orbit; head permutations are finite and add nothing)"
    else:
        formula = "sum_i a_i^2 + sum_hidden d_i^2" + (" + L" if scal else "")
        regime = "every architecture (group, not orbit)"
    return Prediction("symmetry_group_dimension", group_dimension(arch), formula, regime, "definition")


def predict_fiber_dimension(arch: Network, dim: Prediction | None = None) -> Prediction:
    """Generic fiber dimension = parameters - dimension wherever the dimension is predicted."""
    dim = predict_dimension(arch) if dim is None else dim
    if dim.kind == "upper bound" and dim.value is not None:
        return Prediction(
            "fiber_dimension",
            arch.parameters - dim.value,
            "parameters - dimension bound",
            dim.regime,
            dim.status,
            kind="lower bound",
        )
    if dim.value is None:
        return no_prediction("fiber_dimension", dim.reason or "no dimension prediction")
    return Prediction("fiber_dimension", arch.parameters - dim.value, "parameters - dimension", dim.regime, dim.status)


def generic_ed_degree(e: int, n: int, cone: bool = False) -> int:
    """The ED degree of a generic hypersurface of degree e in K^n, e sum_{i<n} (e-1)^i, or, for a cone (g
    homogeneous: a generic hypersurface of P^(n-1)), e sum_{i<n-1} (e-1)^i (what a decision boundary's count is
    measured against)."""
    return e * sum((e - 1) ** i for i in range(n - 1 if cone else n))
