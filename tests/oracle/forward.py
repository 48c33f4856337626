"""The oracle's own forward pass of a ``Network``, in mpmath at the working precision of the caller.

Written from the definition of the blocks (core/network.py's docstring), not from lightning_cas's
forward pass or arithmetics: only the layout of the flat weight vector (``net.weight_matrices``) is
shared. Tokens are columns: Y is d x t, and an input is a d_0 x t matrix.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
from mpmath import mp

from lightning_cas.core.network import MLP, Activation, Attention, LayerNorm, Linear, Network, Position, Power


def number(v):
    """An exact number (int, Fraction, dyadic float) as an mpf at the current precision; a Fraction is
    divided at that precision (dyadic ones exactly)."""
    if isinstance(v, Fraction):
        return mp.mpf(v.numerator) / v.denominator
    return mp.mpf(v)


def pieces(net: Network, weights) -> dict:
    """The weight vector cut into its matrices: (block, head, letter) -> mp.matrix (rows x cols; a bias or
    gain is a column)."""
    out = {}
    for m in net.weight_matrices:
        M = mp.matrix(m.rows, m.cols)
        for r in range(m.rows):
            for c in range(m.cols):
                M[r, c] = weights[m.offset + r * m.cols + c]
        out[(m.block, m.head, m.letter)] = M
    return out


def _affine(M, Y, b=None):
    """M Y (+ b 1^T): b broadcast over the tokens."""
    Z = M * Y
    if b is not None:
        for i in range(Z.rows):
            for j in range(Z.cols):
                Z[i, j] += b[i, 0]
    return Z


def _entrywise(f, Y):
    Z = mp.matrix(Y.rows, Y.cols)
    for i in range(Y.rows):
        for j in range(Y.cols):
            Z[i, j] = f(Y[i, j])
    return Z


class Watch:
    """What the derivatives could hide: the smallest |argument| any ReLU saw (near 0 the map has no
    derivative), and the smallest saturation factor (a kept softmax weight, 1 - tanh^2, GELU's Phi(x) for
    x < 0). A tiny factor can make a singular value real but far below any fixed precision."""

    def __init__(self):
        self.kink = mp.inf
        self.saturation = mp.one

    def relu(self, x):
        self.kink = min(self.kink, abs(x))
        return x if x > 0 else mp.zero

    def tanh(self, x):
        y = mpmath.tanh(x)
        self.saturation = min(self.saturation, 1 - y * y)
        return y

    def gelu(self, x):
        phi = (1 + mpmath.erf(x / mp.sqrt(2))) / 2
        self.saturation = min(self.saturation, phi)
        return x * phi

    def silu(self, x):
        s = 1 / (1 + mpmath.exp(-x))
        self.saturation = min(self.saturation, s)
        return x * s

    def gelu_tanh(self, x):
        t = mpmath.tanh(mp.sqrt(2 / mp.pi) * (x + mpmath.mpf("0.044715") * x**3))
        self.saturation = min(self.saturation, 1 - t * t)
        return x * (1 + t) / 2

    def weight(self, a):
        self.saturation = min(self.saturation, a)
        return a


def _function(name: str, watch: Watch):
    return {
        "relu": watch.relu,
        "tanh": watch.tanh,
        "gelu": watch.gelu,
        "silu": watch.silu,
        "gelu_tanh": watch.gelu_tanh,
    }[name]


def _attention(block: Attention, i: int, W: dict, Y, watch: Watch):
    t = Y.cols
    total = None
    for h in range(block.heads):
        get = lambda letter: W.get((i, h, letter))
        Q = _affine(get("q"), Y, get("bq"))
        K = _affine(get("k"), Y, get("bk"))
        S = K.T * Q  # t x t: entry (i, j) = <K y_i, Q y_j>, key i, query j
        A = mp.matrix(t, t)
        for j in range(t):
            keys = range(j + 1) if block.causal else range(t)
            if block.normalization == "softmax":
                top = max(S[k, j] for k in keys)
                e = {k: mp.exp(S[k, j] - top) for k in keys}
                z = mp.fsum(e.values())
                for k in keys:
                    A[k, j] = watch.weight(e[k] / z)
            else:
                for k in keys:
                    A[k, j] = S[k, j]
        if block.value is None:
            head = _affine(get("v"), Y, get("bv")) * A
        else:
            head = get("o") * _affine(get("w"), Y, get("bw")) * A
        total = head if total is None else total + head
    if block.bias and block.value is not None:
        total = _affine(mp.eye(total.rows), total, W[(i, 0, "bo")])
    return total


def _layernorm(block: LayerNorm, i: int, W: dict, Y):
    d, t = Y.rows, Y.cols
    Z = mp.matrix(d, t)
    eps = mp.mpf(block.eps)
    for j in range(t):
        mean = mp.fsum(Y[r, j] for r in range(d)) / d
        c = [Y[r, j] - mean for r in range(d)]
        scale = mp.sqrt(mp.fsum(x * x for x in c) / d + eps)
        for r in range(d):
            z = c[r] / scale
            if block.affine:
                z = W[(i, 0, "g")][r, 0] * z
            if block.bias:
                z = z + W[(i, 0, "bg")][r, 0]
            Z[r, j] = z
    return Z


def forward(net: Network, weights, X, watch: Watch | None = None):
    """phi_W(X) as an mp.matrix (d_out x t), for one input X (d_0 x t, any nested sequence of numbers)."""
    watch = watch or Watch()
    W = pieces(net, [number(w) for w in weights])
    Y = mp.matrix([[number(x) for x in row] for row in X])
    if Y.rows != net.input or Y.cols != net.tokens:
        raise ValueError(f"an input must be {net.input} x {net.tokens}, got {Y.rows} x {Y.cols}")
    inputs = {}  # block i -> its input: a residual group of n blocks ending at block e adds inputs[e - n + 1]
    for i, block in enumerate(net.blocks):
        inputs[i] = Y
        if isinstance(block, Attention):
            out = _attention(block, i, W, Y, watch)
        elif isinstance(block, MLP):
            hidden = _affine(W[(i, 0, "u")], Y, W.get((i, 0, "bu")))
            if block.activation == "power":
                hidden = _entrywise(lambda x: x**block.degree, hidden)
            else:
                hidden = _entrywise(_function(block.activation, watch), hidden)
            out = _affine(W[(i, 0, "d")], hidden, W.get((i, 0, "bd")))
        elif isinstance(block, Linear):
            out = _affine(W[(i, 0, "p")], Y, W.get((i, 0, "bp")))
        elif isinstance(block, Power):
            out = _entrywise(lambda x: x**block.degree, Y)
        elif isinstance(block, Activation):
            out = _entrywise(_function(block.function, watch), Y)
        elif isinstance(block, LayerNorm):
            out = _layernorm(block, i, W, Y)
        elif isinstance(block, Position):  # one learned column per token, added
            out = Y + W[(i, 0, "e")]
        else:  # a new block kind must get its own definition here, not a silent pass-through
            raise NotImplementedError(f"the oracle has no forward pass for {block.kind} blocks")
        n = int(block.residual)  # true is a group of one block: Y + block(Y)
        Y = inputs[i + 1 - n] + out if n else out
    return Y
