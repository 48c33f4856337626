"""Theory for networks of blocks: proved upper bounds, and the published formulas inside their regimes.

Every network's dimension is at most

* parameters minus the orbit dimension of the named group (``core.symmetry``; its rank mod p at a
  random point, a valid bound at any point and prime): the *expected dimension* when nothing
  sharper applies;
* the ambient dimension (polynomial maps with the network's degrees; for a network without
  attention one token's maps, since every token goes through the same map);
* for every interface k a network without residual across splits into prefix and suffix, phi =
  g o f: f lies in the space A_k of maps with the prefix's degrees, GL (or the torus) at k acts on
  it, so dim <= dim A_k + params(suffix) - (orbit of that group on a generic F in A_k) - (orbit of
  the suffix's own group). It catches prefixes that fill their space (a polynomial network whose
  first layers already give every tuple of quadrics, say).

Inside their regimes the published formulas give the value (claims until a computation confirms
them; a disagreement is a finding): Henry (2026) for causal softmax attention with merged weights
(a = d), with and without residual connections; Henry (2026) for one factored multi-head softmax
layer, 4kda - 2ka^2; the Alexander-Hirschowitz theorem for shallow polynomial networks with one
output (sums of r-th powers of linear forms: the secant varieties of the Veronese variety, with
their exceptions).
"""

from __future__ import annotations

import math

from lightning_cas.core.network import MLP, Attention, Linear, Network, Power
from lightning_cas.core.predictions import Prediction
from lightning_cas.core.symmetry import generic_orbit_dimension

# (d_0, r, m): the Alexander-Hirschowitz exceptions beyond r = 2, where m generic r-th powers of linear
# forms in d_0 variables span one dimension less than expected
AH_EXCEPTIONS = {(3, 4, 5), (4, 4, 9), (5, 3, 7), (5, 4, 14)}


def alexander_hirschowitz(d0: int, r: int, m: int) -> tuple[int, str]:
    """Affine dimension of the m-th secant of the r-th Veronese of K^{d_0} (sums of m r-th powers of linear
    forms), and the case it falls under."""
    full = math.comb(d0 + r - 1, r)
    if r == 2:
        if m < d0:
            return m * d0 - m * (m - 1) // 2, "r = 2: symmetric matrices of rank <= m (defective for 2 <= m < d_0)"
        return full, "r = 2: every quadric"
    expected = min(m * d0, full)
    if (d0, r, m) in AH_EXCEPTIONS:
        return expected - 1, f"exception (d_0, r, m) = {(d0, r, m)}: one less than expected"
    return expected, "min(m d_0, C(d_0 + r - 1, r)) (Alexander-Hirschowitz)"


def _shallow_one_output(net: Network) -> tuple[int, int, int] | None:
    """(d_0, r, m) for a network x -> c . (W x)^{o r} with one output, else None."""
    b = net.blocks
    if len(b) == 1 and isinstance(b[0], MLP) and not b[0].residual and b[0].out == 1 and not b[0].bias:
        return net.input, b[0].degree, b[0].hidden
    if (len(b) == 3 and isinstance(b[0], Linear) and isinstance(b[1], Power) and isinstance(b[2], Linear)
            and b[2].out == 1 and not b[2].bias):
        # a first-layer bias: powers of affine forms, the Veronese in d_0 + 1 variables dehomogenized
        return net.input + b[0].bias, b[1].degree, b[0].out
    return None


def _shallow_output_bias(net: Network) -> tuple[int, int, int] | None:
    """(d_0, r, m) for x -> c . (W x)^{o r} + b (a bias on the output only), else None."""
    b = net.blocks
    if (len(b) == 3 and isinstance(b[0], Linear) and not b[0].bias and isinstance(b[1], Power)
            and isinstance(b[2], Linear) and b[2].out == 1 and b[2].bias):
        return net.input, b[1].degree, b[0].out
    return None


def _attention_only(net: Network) -> bool:
    return all(isinstance(b, Attention) for b in net.blocks)


def published(net: Network) -> Prediction | None:
    """The published formula whose regime this network is in, or None."""
    shallow = _shallow_one_output(net)
    if shallow is not None:
        d0, r, m = shallow
        value, case = alexander_hirschowitz(d0, r, m)
        affine = " (affine forms in the d_0 - 1 inputs: homogenized)" if net.biased else ""
        return Prediction("dimension", value, "dim of sums of m r-th powers of linear forms in d_0 variables",
                          f"shallow polynomial network, one output{affine}: d_0 = {d0}, r = {r}, m = {m}; {case}",
                          "proved")
    shifted = _shallow_output_bias(net)
    if shifted is not None:  # the constant is a coordinate of its own (degree 0, the powers have degree r)
        d0, r, m = shifted
        value, case = alexander_hirschowitz(d0, r, m)
        return Prediction("dimension", value + 1, "dim of sums of m r-th powers of linear forms, + 1 (the bias)",
                          f"shallow polynomial network, one output, output bias: d_0 = {d0}, r = {r}, m = {m}; "
                          f"{case}", "proved")
    if net.biased:
        return None  # the published attention formulas are for bias-free weights
    if not _attention_only(net) or any(b.normalization != "softmax" for b in net.blocks):
        return None
    d, L, blocks = net.input, len(net.blocks), net.blocks
    k = blocks[0].heads
    same = all(b.heads == k and b.out == d for b in blocks)
    if same and all(b.causal and b.value is None and b.attention == d for b in blocks) and net.tokens >= 3:
        if all(b.residual for b in blocks) and d >= max(2, k * L + 1):
            return Prediction("dimension", 2 * L * k * d * d, "2 L k d^2",
                              f"causal softmax, merged weights (a = d), residual, k = {k} heads, L = {L}, "
                              f"T >= 3, d >= max(2, kL + 1) (Henry 2026, Lean-checked: fiber = head permutations)",
                              "claim")
        if not any(b.residual for b in blocks) and d >= max(2, k * (L + 1)):
            return Prediction("dimension", 2 * L * k * d * d - (L - 1) * d * d, "2 L k d^2 - (L - 1) d^2",
                              f"causal softmax, merged weights (a = d), no residual, k = {k} heads, L = {L}, "
                              f"T >= 3, d >= max(2, k(L + 1)) (Henry 2026, Lean-checked: head permutations x "
                              "the GL(d) chain)", "claim")
    if L == 1:
        b = blocks[0]
        if (b.value is not None and b.value == b.attention and b.attention <= d and b.out == d and not b.causal
                and not b.residual and net.tokens >= 2):
            a = b.attention
            return Prediction("dimension", 4 * k * d * a - 2 * k * a * a, "4 k d a - 2 k a^2",
                              f"one softmax layer, k = {k} heads, factored Q, K, W, O with a = b = {a} <= d "
                              "(Henry 2026)", "claim")
    return None


def _ambient_per_row(net: Network, prefix: Network) -> int:
    """The dimension of one output row's space of the prefix network (for the split bounds)."""
    return prefix.ambient_dimension // prefix.output


def split_bounds(net: Network, seed: int = 0) -> list[tuple[str, int, str]]:
    """The split bounds of the module docstring, one per interface where the network splits."""
    out = []
    blocks = net.blocks
    for k in range(1, len(blocks)):
        if getattr(blocks[k - 1], "residual", False) or getattr(blocks[k], "residual", False):
            continue
        prefix = Network(net.input, net.tokens, blocks[:k])
        suffix = Network(prefix.output, net.tokens, blocks[k:])
        if not prefix.polynomial or suffix.parameters == 0:
            continue
        m, w = _ambient_per_row(net, prefix), prefix.output
        producer, consumer = blocks[k - 1], blocks[k]
        if isinstance(producer, Power) or isinstance(consumer, Power):
            acting = w if not isinstance(producer, Power) and isinstance(consumer, Power) else 0
        else:
            acting = w * min(w, m)
        bound = w * m + suffix.parameters - acting - generic_orbit_dimension(suffix, seed)
        out.append((f"split after block {k}", bound,
                    f"the first {k} block(s) give {w} polynomials in a space of dimension {m} each; the rest has "
                    f"{suffix.parameters} weights"))
    return out


def expected(net: Network, seed: int = 0) -> Prediction:
    """The least proved upper bound, with every bound it is the least of."""
    orbit = generic_orbit_dimension(net, seed)
    bounds = [("parameters - orbit", net.parameters - orbit,
               "the named group's orbit (rank of its action mod p at a random integer point) lies in the fiber")]
    if net.ambient_dimension is not None:
        bounds.append(("ambient", net.ambient_dimension, "all polynomial maps with the network's degrees"))
        bounds += split_bounds(net, seed)
    value = min(b[1] for b in bounds)
    tight = [b[0] for b in bounds if b[1] == value]
    polynomial_stack = all(isinstance(b, (Linear, Power)) or (isinstance(b, MLP) and not b.residual)
                           for b in net.blocks)
    if polynomial_stack:
        regime = ("polynomial network: the expected dimension sum d_i d_(i-1) - sum_hidden d_i, capped by the "
                  "ambient and split bounds; an upper bound (Alexander-Hirschowitz and deep defects fall below it)")
    else:
        regime = "network of blocks: no closed form known; the least of proved upper bounds"
    return Prediction("dimension", value, "min(" + ", ".join(b[0] for b in bounds) + ")", regime, "derived",
                      reason=f"attained by: {', '.join(tight)}", kind="upper bound", bounds=tuple(bounds))


def predict_network_dimension(net: Network, seed: int = 0) -> Prediction:
    """A published formula inside its regime (with the proved bounds next to it), else the expected dimension."""
    bound = expected(net, seed)
    claim = published(net)
    if claim is None:
        return bound
    return Prediction(claim.quantity, claim.value, claim.formula, claim.regime, claim.status, bounds=bound.bounds)
