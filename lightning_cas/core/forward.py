"""The one forward definition of every block, with its derivative, on any arithmetic.

``forward(net, arith, w, X, tangents)`` returns phi_W(X) for a batch X of token matrices (N, d_0, t)
and, with ``tangents=True``, the Jacobian d phi_W(X_n) / dW as an array (N, d_out, t, P): rows
(n, output row, token), columns the weights in the canonical order of ``Network.weight_matrices``.
The mod-p engine, the float and ball softmax backend, the exact rational path and the symbolic
parametrization all run this code; only the arithmetic (``core.arithmetic``) differs. Each kind's rule
lives in that kind's module of ``core.blocks`` (registered in ``RULES``); their formulas are written here.

Forward mode, written so that a weight matrix acts on all tangents with one matrix product: the
tangents of the weights of earlier blocks are carried as (N, width, t, P') and pushed through each
block; a block's own weights enter through closed forms (outer products of the block's
intermediate values), never through one-hot tensors. Attention, with A the attention matrix
(S masked for lightning, its column softmax otherwise) and A' = the mask (lightning) or A
(softmax), out = V Y A:

* d out / dQ_rc [e, j] = G_Q[e, r, j] Y[c, j],   G_Q[e, r, j] = sum_i VY[e, i] KY[r, i] A'[i, j]
  (- out[e, j] (KY A)[r, j] with softmax);
* d out / dK_rc [e, j] = G_K[e, c, j] QY[r, j],  G_K[e, c, j] = sum_i VY[e, i] Y[c, i] A'[i, j]
  (- out[e, j] (Y A)[c, j] with softmax);
* d out / dV_rc = [e = r] (Y A)[c, j]; factored V = O W: dW_bc = O[e, b] (Y A)[c, j], dO_rb =
  [e = r] (W Y A)[b, j].

(The softmax terms come from dA = A o (dS - sum_i A[i, j] dS[i, j]).) An mlp D (U Y)^r has
dU_kc [o, j] = D[o, k] r (UY)[k, j]^(r-1) Y[c, j] and dD_ok = [o = o'] (UY)^r[k, j].

Biases, b broadcast over the tokens: QY, KY and VY (or WY) above are the affine images Q Y + b_q 1^T,
..., and a bias is the weight of a row of ones, so its tangent is its matrix's formula with Y[c, j]
replaced by 1: d/db_q = G_Q, d/db_k [e, j] = sum_i VY[e, i] A'[i, j] QY[r, j] (minus out[e, j] QY[r, j]
sum_i A[i, j] = out[e, j] QY[r, j] with softmax: zero, a key bias does not change a softmax),
d/db_v = [e = r] sum_i A[i, j], d/db_w = O[e, b] sum_i A[i, j], d/db_o = [e = r]; an mlp's
d/db_u [o, j] = D[o, k] r (UY + b_u)[k, j]^(r-1), d/db_d = d/db_p = [e = r].

Given weights only: an mlp's activation f (relu, gelu, tanh) replaces h^r and r h^(r-1) by f(h) and f'(h);
ReLU's f'(h) is the 0/1 pattern of h > 0, decided from exact signs (``Rationals`` or balls) or, in an
arithmetic without an order (GF(p)), read from ``patterns`` that an exact pass filled (an input with h = 0
exactly is on a kink: ``Kink``, never a guess). LayerNorm, with c = y - mean(y), s = (mean(c^2) + eps)^(-1/2),
z = s c (per token, over the features): out = g o z + b_g, dz = s (dc - z mean(z o dc)), d/dg = [e = r] z,
d/db_g = [e = r].
"""

from __future__ import annotations

import contextlib

import numpy as np

from lightning_cas.core.arithmetic import Arithmetic
from lightning_cas.core.blocks.tangents import CARRY, FORWARD, Kink, add_skip, directions
from lightning_cas.core.network import Network

__all__ = ["CARRY", "Kink", "RULES", "evaluate", "forward", "jacobian", "jvp", "prefix", "split"]

RULES = FORWARD  # block class -> its forward rule; each kind's module (core.blocks) registers its own


def split(net: Network, ar: Arithmetic, w) -> list[list[dict]]:
    """The flat weight vector cut into per-block, per-head {letter: matrix} (arrays of ``ar``)."""
    w = ar.array(w) if not isinstance(w, np.ndarray) else w
    if w.shape != (net.parameters,):
        raise ValueError(f"expected {net.parameters} weights, got shape {w.shape}")
    out: list[list[dict]] = [[{} for _ in range(b.heads)] for b in net.blocks]
    for m in net.weight_matrices:
        out[m.block][m.head][m.letter] = w[m.offset : m.stop].reshape(m.rows, m.cols)
    return out


def forward(
    net: Network,
    ar: Arithmetic,
    w,
    X,
    tangents: bool = False,
    only: int | None = None,
    patterns: dict | None = None,
    streams: list | None = None,
    stop: int | None = None,
    along=None,
):
    """(phi_W(X), d phi_W(X) / dW or None); X is (N, d_0, t), both in the arithmetic ``ar``. With
    ``only`` (a block index) and ``tangents``, the derivative by that block's weights alone: the blocks
    before it run without tangents, the blocks after it carry its tangents without adding their own.
    ``patterns`` ({block index: the signs of its ReLU's input}): read where a block's entry is there, filled
    where it is not (an exact pass fills it, a pass mod p reads it); ``streams``: a list that receives each
    block's input; ``stop``: the input of that block instead (the blocks before it only); ``along`` (P, b):
    the tangents are the derivatives along its columns (``jvp``).

    A residual group (``Block.residual`` = n on its last block i: blocks i - n + 1..i) adds its input to its
    output; with ``only``, the input's tangents are those carried into the group (none before that block)."""
    Y, dY = X, None
    starts = {i + 1 - b.residual for i, b in enumerate(net.blocks) if b.residual}
    inputs = {}  # a residual group's first block -> the group's input and its tangents
    first: dict[int, int] = {}  # block -> offset of its first weight
    for m in net.weight_matrices:
        first.setdefault(m.block, m.offset)
    with directions(ar, along) if along is not None else contextlib.nullcontext() as state:
        for i, (block, heads) in enumerate(zip(net.blocks, split(net, ar, w))):
            if i == stop:
                break
            if streams is not None:
                streams.append(Y)
            if i in starts:
                inputs[i] = (Y, dY)
            if state is not None:
                state.cursor = first.get(i, 0)
            mode = tangents if only is None or not tangents else (False if i < only else True if i == only else CARRY)
            Y, dY = RULES[type(block)](ar, block, heads, Y, dY, mode, (i, patterns))
            if block.residual:  # the group i - n + 1 .. i ends here: add its input
                Y, dY = add_skip(ar, Y, dY, *inputs[i + 1 - block.residual])
    return Y, dY


def jvp(net: Network, ar: Arithmetic, w, X, V, patterns: dict | None = None):
    """J V for the Jacobian J of ``jacobian`` and V (P, b): (N * d_out * t, b), rows as ``jacobian``'s, computed
    along the b directions (``core.blocks.tangents``) without any P-wide array."""
    Y, dY = forward(net, ar, w, X, tangents=True, patterns=patterns, along=V)
    if dY is None:  # a network without weights
        dY = ar.zeros(Y.shape + (V.shape[1],))
    return dY.reshape(-1, V.shape[1])


def prefix(net: Network, ar: Arithmetic, w, X, upto: int):
    """The input of block ``upto``: blocks 0..upto-1 (with their residual groups) applied to X."""
    return forward(net, ar, w, X, stop=upto)[0]


def evaluate(net: Network, ar: Arithmetic, w, X):
    """phi_W(X) for a batch X (N, d_0, t); returns (N, d_out, t)."""
    return forward(net, ar, w, X)[0]


def jacobian(net: Network, ar: Arithmetic, w, X, only: int | None = None, patterns: dict | None = None):
    """d phi_W(X_n)/dW as a matrix (N * d_out * t, P), rows ordered (n, output row, token); with ``only``,
    the columns of that block's weights (computed alone, see ``forward``)."""
    _, dY = forward(net, ar, w, X, tangents=True, only=only, patterns=patterns)
    return dY.reshape(-1, dY.shape[-1])
