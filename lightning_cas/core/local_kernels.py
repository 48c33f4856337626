"""Exact kernel vectors of the differential at W beyond the named group: what no input can see.

The upper bound of a certified rank needs vectors known to lie *exactly* in the kernel of d(W ↦ φ_W) at W.
The named group's tangents are some (core.symmetry); these mechanisms give more, each exact over QQ at the
point, valid for softmax blocks too (a block is changed only where nothing can tell):

* **bottleneck**: every input a block ever sees lies in the *reachable* subspace S of its width (the
  span of the previous block's possible outputs: im P after a linear block, Σ_h im(V_h|S) after
  attention, im D after an mlp, plus S itself on a residual stream; all of K^d after a power block).
  A block reads its input only through Q, K, V/W (attention), U (mlp), P (linear), so changing a row of
  one of them by c with c ⊥ S changes nothing.
* **invisibility**: a change of the stream in the *invisible* subspace N after a block reaches no output
  (N = ker of the rest: ker P before a linear readout P, pulled back through linear blocks; for a
  block that reads the stream, N ∩ ker of its input matrices on a residual stream, ker of them
  otherwise). Changing a column of a block's output matrix (V/O, D, P) by n ∈ N changes nothing.
* **polynomial tails** (``core.tail_kernels``): an output matrix moved where a nonlinear token-wise
  polynomial tail (power, mlp, linear blocks) cannot tell.
* **local kernel** of a polynomial block (mlp, linear, lightning attention): the block's own map
  z ↦ C·f(Bz; θ) (B a basis of S, C the rows that see modulo N) is a homogeneous polynomial of degree r
  in z, so it is zero iff it vanishes at the points α with |α| = r (a unisolvent set: on the
  hyperplane Σz = r the homogeneous polynomials are all polynomials of degree ≤ r, and the principal
  lattice is unisolvent for those). The exact kernel of its θ-Jacobian at those points is a set of
  kernel vectors: the block's filling, and the invisibility and bottleneck seen through it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from lightning_cas.core.arithmetic import Rationals
from lightning_cas.core.exact_qq import LOCAL_BUDGET, _identity, _integer_rows, _rows, _unit, nullspace, row_basis
from lightning_cas.core.forward import forward, split
from lightning_cas.core.network import MLP, Attention, Linear, Network
from lightning_cas.core.tail_kernels import tail_vectors

# ---------------------------------------------------------------- reachable and invisible subspaces


def reachable(net: Network, mats) -> list[list]:
    """S_0..S_n: bases (rows) of subspaces holding every column the stream can take before block i."""
    ar = Rationals()
    widths = net.widths
    S = [_identity(widths[0])]
    for j, b in enumerate(net.blocks):
        B = np.array(S[j], dtype=object).reshape(len(S[j]), widths[j])
        out = widths[j + 1]
        if not b.input_letters():  # it reads the stream itself (a power block): every direction can come out
            new = _identity(out)
        else:
            images = []
            if isinstance(b, Linear):
                images = [mats[j][0]["p"]]
            elif isinstance(b, Attention):
                images = [h["v"] if b.value is None else ar.matmul(h["o"], h["w"]) for h in mats[j]]
            if isinstance(b, MLP):
                new = _rows(mats[j][0]["d"].T)
            else:
                new = [r for M in images for r in _rows(ar.matmul(B, np.ascontiguousarray(M.T)))] if len(B) else []
            new = new + _bias_images(b, mats[j])
        if b.residual:  # a residual group ends here: its input passes through
            new = new + S[j + 1 - b.residual]
        S.append(row_basis(new, out))
    return S


def _bias_images(block, heads) -> list[list]:
    """The directions a block's biases add to its outputs: an affine block's outputs span its matrices' images
    and these (b_p; b_d; b_v per head, or O_h b_w per head and b_o)."""
    if not block.bias:
        return []
    _, letter = block.output_letters()
    images = [list(h[letter].reshape(-1)) for h in heads if letter in h]  # b_p, b_d, b_o, or b_v per head
    if isinstance(block, Attention) and block.value is not None:  # b_w reaches the output through O_h
        ar = Rationals()
        images = [list(ar.matmul(h["o"], h["bw"]).reshape(-1)) for h in heads] + images
    return images


def annihilator(basis, cols: int) -> list[list]:
    """Rows c with c·s = 0 for every s in the span of ``basis`` (all unit rows when the span is 0)."""
    return nullspace(basis, cols)


def invisible(net: Network, mats) -> list[list]:
    """N_0..N_n: bases of stream changes at interface i that change no output (N_n = 0)."""
    widths = net.widths
    n = len(net.blocks)
    N: list[list] = [[] for _ in range(n + 1)]
    for j in range(n - 1, -1, -1):
        b, d = net.blocks[j], widths[j]
        if not b.input_letters():
            continue  # it reads the stream itself (a power block): no change of its input is invisible
        # the residual groups starting here carry the input past their blocks to their ends
        skips = [annihilator(N[k + 1], d) for k, c in enumerate(net.blocks) if c.residual and k + 1 - c.residual == j]
        if isinstance(b, Linear):
            A = np.array(annihilator(N[j + 1], widths[j + 1]), dtype=object).reshape(-1, widths[j + 1])
            reads = _rows(Rationals().matmul(A, mats[j][0]["p"])) if len(A) else []
        else:
            reads = [r for h in mats[j] for letter in b.input_letters() for r in _rows(h[letter])]
        N[j] = nullspace(reads + [r for skip in skips for r in skip], d)
    return N


# ---------------------------------------------------------------- the kernel vectors


@dataclass(frozen=True)
class KernelVectors:
    """Exact kernel vectors at W by mechanism (each a list of length-P fmpq lists), and the polynomial blocks'
    local maps as exact Jacobian rows (first weight, stop, integer rows): their kernels are kernel vectors."""

    bottleneck: list
    invisible: list
    local: list  # kernel vectors of blocks that see nothing (all their weights)
    maps: list  # (first, stop, rows) per polynomial block
    tail: list  # output matrices moved unseen by a nonlinear polynomial tail (core.tail_kernels)
    skipped: tuple[str, ...]  # blocks whose local kernel was too large to compute exactly


def _local(net: Network, j: int, w, S, C, P: int):
    """Block j's map z -> C f(Bz) at the unisolvent points: (first, stop, its exact Jacobian rows), or a list
    of kernel vectors when the block sees nothing (every weight is then in the kernel), or None above the
    budget."""
    import flint

    b = net.blocks[j]
    ar = Rationals()
    width = net.widths[j]
    degree = max(b.token_degrees(frozenset({1})))  # its degree in its input: 3 for attention, r for an mlp
    tokens = net.tokens if b.mixes_tokens else 1
    s = len(S)
    variables = s * tokens
    mats = [m for m in net.weight_matrices if m.block == j]
    first, stop = mats[0].offset, mats[-1].stop
    biased = bool(b.bias)
    if not C or (not variables and not biased):
        return [_unit(P, [(first + i, flint.fmpq(1))]) for i in range(stop - first)]
    # a bias makes the block's map affine in z, a polynomial of degree <= r that is not homogeneous: the
    # lattice {|alpha| <= r} (one slack coordinate) is unisolvent for those, {|alpha| = r} only for forms
    slack = 1 if biased else 0
    points = math.comb(variables + slack + degree - 1, degree)
    if points * len(C) * tokens * (stop - first) > LOCAL_BUDGET:
        return None
    one = Network(width, tokens, (b.without_residual(),))
    B = np.array(S, dtype=object).T.reshape(width, s)  # width x s
    Z = np.empty((points, s, tokens), dtype=object)
    for n, combo in enumerate(itertools.combinations_with_replacement(range(variables + slack), degree)):
        alpha = [0] * (variables + slack)
        for c in combo:
            alpha[c] += 1
        alpha = alpha[:variables]
        Z[n] = np.array([flint.fmpq(a) for a in alpha], dtype=object).reshape(s, tokens)
    X = np.stack([ar.matmul(B, Z[n]) if s else ar.zeros((width, tokens)) for n in range(points)])
    _, dY = forward(one, ar, w[first:stop], X, tangents=True)  # (points, out, tokens, P_j)
    Cm = np.array(C, dtype=object)
    rows = []
    for n in range(points):
        for t in range(tokens):
            rows += _rows(ar.matmul(Cm, dY[n, :, t, :]))
    return first, stop, _integer_rows(rows)


def kernel_vectors(net: Network, values) -> KernelVectors:
    """The bottleneck, invisibility and local-kernel vectors at W (module docstring), exactly."""
    ar = Rationals()
    w = ar.array(list(values))
    mats = split(net, ar, w)
    P = net.parameters
    S, N = reachable(net, mats), invisible(net, mats)
    where = {(m.block, m.head, m.letter): m for m in net.weight_matrices}
    weighted = {m.block for m in net.weight_matrices}
    bottleneck, hidden, local, maps, skipped = [], [], [], [], []
    for j, b in enumerate(net.blocks):
        if j not in weighted:
            continue  # a power block: no weights to move
        width = net.widths[j]
        perp = annihilator(S[j], width) if len(S[j]) < width else []
        outputs, _ = b.output_letters()
        for h in range(b.heads):
            for letter in b.input_letters():
                m = where[(j, h, letter)]
                for r in range(m.rows):
                    for c in perp:
                        bottleneck.append(_unit(P, [(m.offset + r * m.cols + k, x) for k, x in enumerate(c)]))
            for letter in outputs:
                m = where[(j, h, letter)]
                for col in range(m.cols):
                    for nvec in N[j + 1]:
                        hidden.append(_unit(P, [(m.offset + r * m.cols + col, x) for r, x in enumerate(nvec)]))
        if b.polynomial:  # its local kernel
            C = annihilator(N[j + 1], net.widths[j + 1])
            got = _local(net, j, w, S[j], C, P)
            if got is None:
                skipped.append(f"block {j}")
            elif isinstance(got, list):
                local += got
            else:
                maps.append(got)

    tail, too_large = tail_vectors(net, w, mats, S)
    return KernelVectors(bottleneck, hidden, local, maps, tail, tuple(skipped + too_large))


def local_kernel_vectors(kv: KernelVectors, P: int) -> list:
    """The local maps' kernels as exact vectors (solved mod p, lifted and checked over QQ)."""
    return [
        _unit(P, [(first + i, x) for i, x in enumerate(v) if x != 0])
        for first, stop, rows in kv.maps
        for v in nullspace(rows, stop - first)
    ]


def named_tangents(net: Network, values, interfaces: bool = True) -> list:
    """The named group's tangents at W, exactly (rows of fmpq); without ``interfaces`` only the factors inside
    blocks (``symmetry.tangent_blocks``)."""
    from lightning_cas.core.symmetry import tangent_blocks

    ar = Rationals()
    return [list(r) for T in tangent_blocks(net, ar.array(list(values)), ar, interfaces) for r in T]
