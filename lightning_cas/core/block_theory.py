"""Theory for networks of blocks: proved upper bounds, and the published formulas inside their regimes.

Every network's dimension is at most

* parameters minus the orbit dimension of the named group (``core.symmetry``; its rank mod p at a
  random point, a valid bound at any point and prime): the *expected dimension* when nothing
  sharper applies;
* the ambient dimension (polynomial maps with the network's degrees; for a network without
  attention one token's maps, since every token goes through the same map);
* for every interface k the network splits into prefix and suffix, phi = g o f: f lies in the
  space A_k of maps with the prefix's degrees, and a group acts on A_k x (suffix weights) keeping
  g o f only when the suffix absorbs it: GL(width) when block k is linear in its input and not
  residual, the diagonal torus across a power chain ending in such a block, nothing before a
  residual block (Y + b(Y) absorbs no change of Y). So dim <= dim A_k + params(suffix) - (orbit of
  that group on a generic F in A_k) - (orbit of the suffix's own group). It catches prefixes that
  fill their space (a polynomial network whose first layers already give every tuple of quadrics);
* for every block whose own map space is smaller than its weights (an mlp of degree r, hidden m on
  width w gives at most out C(w + r - 1, r) dimensions), the filling bound (``filling_bounds``).

A residual group of several blocks (a pre-LN layer) carries an interface past others, so no split bound is
given and no published formula applies: parameters - orbit, the ambient and the filling bounds remain.

Inside their regimes the published formulas give the value (claims until a computation confirms
them; a disagreement is a finding): Henry (2026) for causal softmax attention with merged weights
(a = d), with and without residual connections; Henry (2026) for one factored multi-head softmax
layer, 4kda - 2ka^2; the Alexander-Hirschowitz theorem for shallow polynomial networks with one
output (sums of r-th powers of linear forms: the secant varieties of the Veronese variety, with
their exceptions).
"""

from __future__ import annotations

import math

import numpy as np

from lightning_cas.core.arithmetic import ModP
from lightning_cas.core.network import MLP, Attention, Block, Linear, Network, Position, Power
from lightning_cas.core.predictions import Prediction
from lightning_cas.core.primes import DEFAULT_PRIME
from lightning_cas.core.rank_modp import RowEchelon, blas_threads
from lightning_cas.core.residual_groups import largest, skip_in, skip_out, token_degrees
from lightning_cas.core.symmetry import generic_orbit_dimension, random_weights, tangent_blocks

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
    if (
        len(b) == 3
        and isinstance(b[0], Linear)
        and isinstance(b[1], Power)
        and isinstance(b[2], Linear)
        and b[2].out == 1
        and not b[2].bias
    ):
        # a first-layer bias: powers of affine forms, the Veronese in d_0 + 1 variables dehomogenized
        return net.input + b[0].bias, b[1].degree, b[0].out
    return None


def _shallow_output_bias(net: Network) -> tuple[int, int, int] | None:
    """(d_0, r, m) for x -> c . (W x)^{o r} + b (a bias on the output only), else None."""
    b = net.blocks
    if (
        len(b) == 3
        and isinstance(b[0], Linear)
        and not b[0].bias
        and isinstance(b[1], Power)
        and isinstance(b[2], Linear)
        and b[2].out == 1
        and b[2].bias
    ):
        return net.input, b[1].degree, b[0].out
    return None


def published(net: Network) -> Prediction | None:
    """The published formula whose regime this network is in, or None (none speaks of residual groups of
    several blocks, nor of shallow networks with a residual)."""
    if largest(net.blocks) > 1:
        return None
    plain = not any(b.residual for b in net.blocks)
    shallow = _shallow_one_output(net) if plain else None
    if shallow is not None:
        d0, r, m = shallow
        value, case = alexander_hirschowitz(d0, r, m)
        affine = " (affine forms in the d_0 - 1 inputs: homogenized)" if net.biased else ""
        return Prediction(
            "dimension",
            value,
            "dim of sums of m r-th powers of linear forms in d_0 variables",
            f"shallow polynomial network, one output{affine}: d_0 = {d0}, r = {r}, m = {m}; {case}",
            "proved",
        )
    shifted = _shallow_output_bias(net) if plain else None
    if shifted is not None:  # the constant is a coordinate of its own (degree 0, the powers have degree r)
        d0, r, m = shifted
        value, case = alexander_hirschowitz(d0, r, m)
        return Prediction(
            "dimension",
            value + 1,
            "dim of sums of m r-th powers of linear forms, + 1 (the bias)",
            f"shallow polynomial network, one output, output bias: d_0 = {d0}, r = {r}, m = {m}; {case}",
            "proved",
        )
    if net.biased:
        return None  # the published attention formulas are for bias-free weights
    blocks = [b for b in net.blocks if isinstance(b, Attention) and b.normalization == "softmax"]
    if len(blocks) != len(net.blocks):
        return None  # the published attention formulas are for softmax attention blocks only
    d, L = net.input, len(blocks)
    k = blocks[0].heads
    same = all(b.heads == k and b.out == d for b in blocks)
    if same and all(b.causal and b.value is None and b.attention == d for b in blocks) and net.tokens >= 3:
        if all(b.residual for b in blocks) and d >= max(2, k * L + 1):
            return Prediction(
                "dimension",
                2 * L * k * d * d,
                "2 L k d^2",
                f"causal softmax, merged weights (a = d), residual, k = {k} heads, L = {L}, "
                f"T >= 3, d >= max(2, kL + 1) (Henry 2026, Lean-checked: fiber = head permutations)",
                "claim",
            )
        if not any(b.residual for b in blocks) and d >= max(2, k * (L + 1)):
            return Prediction(
                "dimension",
                2 * L * k * d * d - (L - 1) * d * d,
                "2 L k d^2 - (L - 1) d^2",
                f"causal softmax, merged weights (a = d), no residual, k = {k} heads, L = {L}, "
                f"T >= 3, d >= max(2, k(L + 1)) (Henry 2026, Lean-checked: head permutations x "
                "the GL(d) chain)",
                "claim",
            )
    if L == 1:
        b = blocks[0]
        if (
            b.value is not None
            and b.value == b.attention
            and b.attention <= d
            and b.out == d
            and not b.causal
            and not b.residual
            and net.tokens >= 2
        ):
            a = b.attention
            return Prediction(
                "dimension",
                4 * k * d * a - 2 * k * a * a,
                "4 k d a - 2 k a^2",
                f"one softmax layer, k = {k} heads, factored Q, K, W, O with a = b = {a} <= d (Henry 2026)",
                "claim",
            )
    return None


def _degrees(blocks) -> frozenset[int]:
    return token_degrees(blocks)


def row_space(net: Network, blocks) -> int:
    """The dimension of one output row's space of maps of the first blocks (polynomial): all maps with
    their degrees, on one token when they contain no attention (every token goes through the same map)."""
    degrees = _degrees(blocks)
    if not any(b.mixes_tokens for b in blocks):
        return sum(math.comb(net.input + k - 1, k) for k in degrees)
    n = net.input * net.tokens
    return net.tokens * sum(math.comb(n + k - 1, k) for k in degrees)


def _weights(net: Network, blocks) -> int:
    width, total = net.input, 0
    for b in blocks:
        total += sum(r * c for _, _, r, c in b.matrices(width))
        width = b.output_width(width)
    return total


def interface_acting(blocks, k: int, w: int, m: int) -> int:
    """The orbit dimension, on a generic tuple F of w maps in a space of dimension m each, of the group
    that acts at interface k with the rest absorbing it: GL(w) (orbit w min(w, m)) when block k is linear
    in its input and not residual; the diagonal torus (orbit w) when a chain of power blocks starts there
    and a non-residual block linear in its input absorbs it (diag(c) F -> diag(c^R) F^R); else nothing (a
    residual block Y + b(Y) absorbs no change of Y)."""
    j = k
    while j < len(blocks) and isinstance(blocks[j], Power) and not skip_in(blocks, j) and not skip_out(blocks, j):
        j += 1
    if j == len(blocks) or skip_in(blocks, j) or isinstance(blocks[j], Position):  # Y + E absorbs nothing
        return 0
    return w * min(w, m) if j == k else w


def split_bounds(net: Network, seed: int = 0) -> list[tuple[str, int, str]]:
    """The split bounds of the module docstring, one per interface with weights on both sides."""
    out: list[tuple[str, int, str]] = []
    blocks = net.blocks
    if largest(blocks) > 1:
        return out  # a group's skip crosses some interface: the rest is not a function of the interface alone
    for k in range(1, len(blocks)):
        prefix, rest = blocks[:k], blocks[k:]
        if not _weights(net, prefix) or not _weights(net, rest):
            continue
        if any(b.normalization != "none" for b in prefix):
            continue
        w = net.widths[k]
        m = row_space(net, prefix)
        suffix = Network(w, net.tokens, rest)
        acting = interface_acting(blocks, k, w, m)
        bound = w * m + suffix.parameters - acting - generic_orbit_dimension(suffix, seed)
        out.append(
            (
                f"split after block {k - 1}",
                bound,
                f"blocks 0..{k - 1} give {w} polynomials in a space of dimension {m} each; the rest has "
                f"{suffix.parameters} weights and a group of orbit {acting} acts at the interface",
            )
        )
    return out


def filling_bounds(net: Network, seed: int = 0) -> list[tuple[str, int, str]]:
    """Per block i whose own map space B_i (the maps the block alone gives) has dimension below its
    weights: the network factors through B_i x (the other blocks' weights), on which the named group
    still acts (GL at an interface composes with B_i on either side); so dim <= P - |theta_i| + dim B_i -
    (rank of the named tangents with block i's coordinates deleted: the projection of the orbit onto
    the other weights, a lower bound of the orbit's dimension there). dim B_i <= its ambient
    dimension, and for an mlp with one output the Alexander-Hirschowitz value (sums of m r-th powers
    of linear forms). The same holds for several such blocks at once (their map spaces together)."""
    out, losses = [], {}
    for i, (b, width) in enumerate(zip(net.blocks, net.widths)):
        found = block_space(b, width, net.tokens)
        if found is None or found[0] >= found[1]:
            continue
        space, own, why = found
        losses[i] = own - space
        bound = net.parameters - losses[i] - projected_orbit_rank(net, (i,), seed)
        out.append(
            (
                f"filling of block {i}",
                bound,
                f"block {i} alone gives maps in a space of dimension {space} ({why}) from {own} weights",
            )
        )
    if len(losses) > 1:
        names = ", ".join(map(str, losses))
        bound = net.parameters - sum(losses.values()) - projected_orbit_rank(net, tuple(losses), seed)
        out.append(
            (
                f"filling of blocks {names}",
                bound,
                f"the network factors through the map spaces of blocks {names} and the other weights",
            )
        )
    return out


def block_space(b: Block, width: int, tokens: int) -> tuple[int, int, str] | None:
    """(a proved upper bound on the dimension of block b's own map space, its weights, why), for a
    polynomial block with weights; None otherwise."""
    if not b.polynomial or not b.matrices(width):
        return None  # softmax, an activation function, or a block without weights (power)
    alone = block_alone(b, width, tokens)
    space, why = alone.ambient_dimension, "its ambient dimension"
    if space is None:
        return None  # not polynomial (an mlp's relu, gelu or tanh)
    if isinstance(b, MLP) and b.out == 1:
        ah, _ = alexander_hirschowitz(width, b.degree, b.hidden)
        if ah < space:
            space, why = ah, "sums of m r-th powers of linear forms (Alexander-Hirschowitz)"
    return space, alone.parameters, why


def block_alone(block: Block, width: int, tokens: int) -> Network:
    """``block`` as a one-block network on width ``width``, without its residual connection (Y + b(Y) is
    determined by b, so the two have the same kernels)."""
    return Network(width, tokens, (block.without_residual(),))


def expected(net: Network, seed: int = 0) -> Prediction:
    """The least proved upper bound, with every bound it is the least of."""
    orbit = generic_orbit_dimension(net, seed)
    bounds = [
        (
            "parameters - orbit",
            net.parameters - orbit,
            "the named group's orbit (rank of its action mod p at a random integer point) lies in the fiber",
        )
    ]
    if net.ambient_dimension is not None:
        bounds.append(("ambient", net.ambient_dimension, "all polynomial maps with the network's degrees"))
        bounds += split_bounds(net, seed)
        bounds += filling_bounds(net, seed)
    value = min(b[1] for b in bounds)
    tight = [b[0] for b in bounds if b[1] == value]
    polynomial_stack = all(isinstance(b, (Linear, Power, MLP)) and not b.residual for b in net.blocks)
    if polynomial_stack:
        regime = (
            "polynomial network: the expected dimension sum d_i d_(i-1) - sum_hidden d_i, capped by the "
            "ambient and split bounds; an upper bound (Alexander-Hirschowitz and deep defects fall below it)"
        )
    else:
        regime = "network of blocks: no closed form known; the least of proved upper bounds"
    return Prediction(
        "dimension",
        value,
        "min(" + ", ".join(b[0] for b in bounds) + ")",
        regime,
        "derived",
        reason=f"attained by: {', '.join(tight)}",
        kind="upper bound",
        bounds=tuple(bounds),
    )


def predict_network_dimension(net: Network, seed: int = 0) -> Prediction:
    """A published formula inside its regime (with the proved bounds next to it), else the expected dimension."""
    bound = expected(net, seed)
    claim = published(net)
    if claim is None:
        return bound
    return Prediction(claim.quantity, claim.value, claim.formula, claim.regime, claim.status, bounds=bound.bounds)


def projected_orbit_rank(net: Network, blocks: tuple[int, ...], seed: int = 0, prime: int = DEFAULT_PRIME) -> int:
    """Rank mod p, at a random point, of the named group's tangents with the coordinates of ``blocks``
    deleted (their projection onto the other blocks' weights): a lower bound of the orbit dimension of
    the group acting on (block's map space) x (the other weights), which the filling bound subtracts."""
    ar = ModP(prime)
    wc = ar.array(random_weights(net, seed))
    keep = np.ones(net.parameters, dtype=bool)
    for m in net.weight_matrices:
        if m.block in blocks:
            keep[m.offset : m.stop] = False
    cols = np.flatnonzero(keep)
    ech = RowEchelon(len(cols), prime)
    with blas_threads():
        for T in tangent_blocks(net, wc, ar):
            ech.add(np.take(T, cols, axis=1))
    return ech.rank
