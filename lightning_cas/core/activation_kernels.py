"""Exact kernel vectors at W of a network with activation functions, LayerNorm or RMSNorm: the upper bound of its rank.

A rank at given weights is proved from two sides: a nonzero minor (mod p, or a ball) bounds it below, and
vectors that lie *exactly* in the kernel of d(W -> phi_W) bound it above. For networks with ReLU, GELU, tanh
or LayerNorm these mechanisms give such vectors, each over QQ at the point, each a change of the weights
that no input can see (to first order):

* **junction**: a block whose output is linear in its output matrices and bias (mlp D, b_d; linear P, b_p;
  attention V or O, b_v, b_o) followed by a block that reads the stream only through matrices (mlp U,
  linear P, attention Q, K, V or W), no residual skip leaving or joining there: y -> E y before, M -> M E^-1 after,
  d^2 directions (only the diagonal ones after a LayerNorm, whose output is g o z + b_g);
* **bias shift**: the output bias of the first moved by e, every input bias of the second by -M e;
* **ReLU units** (``core.relu_kernels``): scalings, dead units, blind spots, always-active units and unit
  kernels;
* **LayerNorm shift**: LayerNorm(y + c 1) = LayerNorm(y), so the output matrix of the block before it
  moved by 1 v^T (and its bias by 1) changes nothing; a residual block before it too (its output is
  y + f(y), and f(y) moved by a multiple of 1 per token is as unseen: a post-LN transformer's attention and mlp),
  and a norm's b_g (an encoder's last layer norm, then its final norm);
* **LayerNorm plane**: z = LayerNorm(y) has mean 0, so g o z + b_g lies in the hyperplane w . (x - b_g) = 0,
  w = 1/g; a block reading it sees no row moved by w^T (its bias by -w . b_g), a residual block too (the
  plane moves only its input matrices, not the stream it adds to);
* **stream bias shift** (``core.stream_kernels``): an output bias moved by c, every block on the residual
  stream after it reading y + c through biased matrices (b_X by -X c), and the shift cancelled by the output
  bias of one of them or taken by the input biases of the first non-residual block;
* **LayerNorm rotation**: a rotation A of the hyperplane 1^T y = 0 (A antisymmetric, A 1 = 0) commutes with
  LayerNorm, so y -> (I + A) y before it and M -> M - M G A G^-1 (G = diag g; its bias by M G A G^-1 b_g)
  after it change nothing: (d-1)(d-2)/2 directions;
* **RMSNorm rotation**: the same for any rotation (A antisymmetric): d(d-1)/2 directions; its gain meets the
  next block in the diagonal junction as LayerNorm's does (no shift, no plane: eps > 0 breaks both);
* **RMSNorm span**: it scales each token by a positive number, so it writes into G times the span the block
  before it writes into; rows of the next block's input matrices moved orthogonally to that are unseen.

The vectors may depend on each other: the caller counts them by a rank (mod p a lower bound of their rank
over QQ, which is what an upper bound needs) and proves J k = 0 before a vector counts (``core.kernel_proof``).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from lightning_cas.core.network import Network
from lightning_cas.core.relu_kernels import relu_units
from lightning_cas.core.stream_kernels import stream_bias_shifts
from lightning_cas.core.weight_moves import Vectors, affine_in, affine_out, fmpq, input_letters, move, output_letters


def _constant_bias(b) -> str | None:
    """The bias that shifts the whole output of a (non-residual) block by itself, or None. A lightning head's
    value bias is not one: its output (V Y + b_v 1^T) A moves by b_v (1^T A), which varies with the tokens; a
    softmax head's is (the columns of A sum to 1), and so are b_o, b_d, b_p and LayerNorm's b_g."""
    return b.output_bias()


def _junctions(vs: Vectors) -> None:
    blocks = vs.net.blocks
    widths = vs.net.widths
    for i in range(len(blocks) - 1):
        first, second = blocks[i], blocks[i + 1]
        if not affine_in(vs.net, i + 1):
            continue  # (also when a residual skip leaves or joins at this interface)
        d = widths[i + 1]
        if affine_out(vs.net, i):
            for a in range(d):
                for c in range(d):
                    vec: dict = {}
                    move(vs, i, {(a, c): 1}, 1, vec, out=True)
                    move(vs, i + 1, {(a, c): 1}, -1, vec, out=False)
                    vs.add("junction", vec)
        elif first.gain_letters():  # a norm's gain (and bias) by E, diagonal
            for a in range(d):
                vec = {}
                for letter in first.gain_letters():
                    for m in vs.mats(i, letter):
                        vec[m.offset + a] = vs.entry(m, a, 0)
                move(vs, i + 1, {(a, a): 1}, -1, vec, out=False)
                vs.add("junction", vec)
        out_bias = _constant_bias(first)
        if out_bias and second.bias:
            for a in range(d):
                vec = {}
                m = vs.mats(i, out_bias)[0]  # one head's: the shift of the whole output
                vec[m.offset + a] = Fraction(1)
                for letter in input_letters(second):
                    for m in vs.mats(i + 1, letter):
                        bias = vs.where[(i + 1, m.head, "b" + letter)]
                        for row in range(m.rows):
                            vec[bias.offset + row] = -vs.entry(m, row, a)
                vs.add("bias shift", vec)


def _layernorm_shifts(vs: Vectors) -> None:
    blocks = vs.net.blocks
    for i in range(1, len(blocks)):
        if not blocks[i].shift_invariant or vs.net.skip_in(i):  # the norm alone reads the shifted stream
            continue
        mats, bias = output_letters(blocks[i - 1])  # residual or not: y + f(y) + c 1 is as unseen as f(y) + c 1
        bias = bias if mats else blocks[i - 1].output_bias()  # a norm's b_g (LayerNorm after LayerNorm)
        for letter in mats:
            for m in vs.mats(i - 1, letter):
                for col in range(m.cols):
                    vs.add("LayerNorm shift", {m.offset + row * m.cols + col: Fraction(1) for row in range(m.rows)})
        if bias:
            for m in vs.mats(i - 1, bias):
                vs.add("LayerNorm shift", {m.offset + row: Fraction(1) for row in range(m.rows)})


def _norm_planes_and_rotations(vs: Vectors) -> None:
    """A LayerNorm's plane and rotations, an RMSNorm's rotations (``Block.mean_free``, ``rotated_basis``)."""
    blocks = vs.net.blocks
    for i in range(len(blocks) - 1):
        ln, nxt = blocks[i], blocks[i + 1]
        d = vs.net.widths[i]
        basis = ln.rotated_basis(d)
        if basis is None or not input_letters(nxt):
            continue  # the plane moves only what the next block reads through: a residual one too
        name = type(ln).__name__
        g = [vs.entry(vs.mats(i, "g")[0], r, 0) for r in range(d)] if vs.mats(i, "g") else [Fraction(1)] * d
        bg = [vs.entry(vs.mats(i, "bg")[0], r, 0) for r in range(d)] if vs.mats(i, "bg") else [Fraction(0)] * d
        if any(x == 0 for x in g):
            continue
        w = [1 / x for x in g]
        offset = sum((a * b for a, b in zip(w, bg)), Fraction(0))
        if offset and not nxt.bias:
            continue  # the plane is not through 0 and the next block has no bias to take the offset
        for letter in input_letters(nxt) if ln.mean_free else []:
            for m in vs.mats(i + 1, letter):
                bias = vs.where.get((i + 1, m.head, "b" + letter))
                for r in range(m.rows):
                    plane = {m.offset + r * m.cols + c: w[c] for c in range(d)}
                    if bias is not None:
                        plane[bias.offset + r] = -offset
                    vs.add(f"{name} plane", plane)
        if i == 0 or not affine_out(vs.net, i - 1) or not affine_in(vs.net, i + 1):
            continue  # a rotation changes the stream itself: no skip on either side
        for a in range(len(basis)):
            for b in range(a + 1, len(basis)):
                u, v = basis[a], basis[b]
                A = {(r, c): u[r] * v[c] - v[r] * u[c] for r in range(d) for c in range(d)}
                A = {rc: x for rc, x in A.items() if x}
                vec: dict = {}
                move(vs, i - 1, A, 1, vec, out=True)
                # after: -M G A G^-1 on each input matrix, + M G A G^-1 b_g on its bias
                GAG = {(r, c): g[r] * x / g[c] for (r, c), x in A.items()}
                move(vs, i + 1, GAG, -1, vec, out=False)
                shift = [sum(GAG.get((r, c), 0) * bg[c] for c in range(d)) for r in range(d)]
                if any(shift):
                    for letter in input_letters(nxt):
                        for m in vs.mats(i + 1, letter):
                            bias = vs.where.get((i + 1, m.head, "b" + letter))
                            if bias is None:
                                vec = {}
                                break
                            for row in range(m.rows):
                                k = bias.offset + row
                                vec[k] = vec.get(k, 0) + sum(vs.entry(m, row, c) * shift[c] for c in range(d))
                if vec:
                    vs.add(f"{name} rotation", vec)


def _norm_spans(vs: Vectors) -> None:
    """A norm that scales each token's vector by a positive number (``Block.keeps_span``) writes into G times
    the span the block before it writes into (the columns of its output matrices and its bias): the block after
    it sees no row of its input matrices moved by a w with w^T G (that span) = 0."""
    from lightning_cas.core.exact_qq import nullspace

    blocks, widths = vs.net.blocks, vs.net.widths
    for i in range(1, len(blocks) - 1):
        nb, prev, nxt = blocks[i], blocks[i - 1], blocks[i + 1]
        if not nb.keeps_span or not affine_out(vs.net, i - 1) or not affine_in(vs.net, i + 1):
            continue
        d = widths[i]
        g = [vs.entry(vs.mats(i, "g")[0], r, 0) for r in range(d)] if vs.mats(i, "g") else [Fraction(1)] * d
        mats, bias = prev.output_letters()
        span = [
            [fmpq(g[r] * vs.entry(m, r, col)) for r in range(d)]
            for letter in mats + ([bias] if bias else [])
            for m in vs.mats(i - 1, letter)
            for col in range(m.cols)
        ]
        for w in nullspace(span, d):
            w = [Fraction(int(x.p), int(x.q)) for x in w]
            for letter in nxt.input_letters():
                for m in vs.mats(i + 1, letter):
                    for r in range(m.rows):
                        vs.add(f"{type(nb).__name__} span", {m.offset + r * m.cols + c: w[c] for c in range(d)})


def kernel_vectors(
    net: Network, values, patterns: dict | None = None, streams: list | None = None
) -> list[tuple[str, np.ndarray]]:
    """(mechanism, vector of Fractions) for every exact kernel vector the mechanisms give at W (module
    docstring); ``patterns``: the ReLU signs on the inputs, for dead units, always-active units and blind
    spots; ``streams``: each block's input over QQ on those inputs, for blind spots."""
    vs = Vectors(net, values)
    _junctions(vs)
    relu_units(vs, patterns, streams)
    _layernorm_shifts(vs)
    stream_bias_shifts(vs)
    _norm_planes_and_rotations(vs)
    _norm_spans(vs)
    return vs.dense()
