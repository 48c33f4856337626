"""The one forward definition of every block, with its derivative, on any arithmetic.

``forward(net, arith, w, X, tangents)`` returns phi_W(X) for a batch X of token matrices (N, d_0, t)
and, with ``tangents=True``, the Jacobian d phi_W(X_n) / dW as an array (N, d_out, t, P): rows
(n, output row, token), columns the weights in the canonical order of ``Network.weight_matrices``.
The mod-p engine, the float and ball softmax backend, the exact rational path and the symbolic
parametrization all run this code; only the arithmetic (``core.arithmetic``) differs.

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

import numpy as np

from lightning_cas.core.arithmetic import Arithmetic
from lightning_cas.core.network import MLP, Activation, Attention, LayerNorm, Linear, Network, Power


class Kink(ValueError):
    """A ReLU input exactly 0: the map has no derivative there (block, input n, row, token; 0-based)."""

    def __init__(self, block: int, n: int, row: int, token: int):
        super().__init__(f"input {n} is on a kink of block {block}'s ReLU (row {row}, token {token}: its input is "
                         "exactly 0, so the map has no derivative there)")
        self.block, self.n, self.row, self.token = block, n, row, token

    def __reduce__(self):  # a deadline's worker process sends it back pickled: rebuild it from its fields
        return (Kink, (self.block, self.n, self.row, self.token))


def _T(M):
    return np.swapaxes(M, -1, -2)


def split(net: Network, ar: Arithmetic, w) -> list[list[dict]]:
    """The flat weight vector cut into per-block, per-head {letter: matrix} (arrays of ``ar``)."""
    w = ar.array(w) if not isinstance(w, np.ndarray) else w
    if w.shape != (net.parameters,):
        raise ValueError(f"expected {net.parameters} weights, got shape {w.shape}")
    out: list[list[dict]] = [[{} for _ in range(getattr(b, "heads", 1))] for b in net.blocks]
    for m in net.weight_matrices:
        out[m.block][m.head][m.letter] = w[m.offset:m.stop].reshape(m.rows, m.cols)
    return out


def forward(net: Network, ar: Arithmetic, w, X, tangents: bool = False, only: int | None = None,
            patterns: dict | None = None, streams: list | None = None):
    """(phi_W(X), d phi_W(X) / dW or None); X is (N, d_0, t), both in the arithmetic ``ar``. With
    ``only`` (a block index) and ``tangents``, the derivative by that block's weights alone: the blocks
    before it run without tangents, the blocks after it carry its tangents without adding their own.
    ``patterns`` ({block index: the signs of its ReLU's input}): read where a block's entry is there, filled
    where it is not (an exact pass fills it, a pass mod p reads it); ``streams``: a list that receives each
    block's input."""
    Y, dY = X, None
    for i, (block, heads) in enumerate(zip(net.blocks, split(net, ar, w))):
        if streams is not None:
            streams.append(Y)
        mode = tangents if only is None or not tangents else (False if i < only else True if i == only else CARRY)
        Y, dY = RULES[type(block)](ar, block, heads, Y, dY, mode, (i, patterns))
    return Y, dY


def evaluate(net: Network, ar: Arithmetic, w, X):
    """phi_W(X) for a batch X (N, d_0, t); returns (N, d_out, t)."""
    return forward(net, ar, w, X)[0]


def jacobian(net: Network, ar: Arithmetic, w, X, only: int | None = None, patterns: dict | None = None):
    """d phi_W(X_n)/dW as a matrix (N * d_out * t, P), rows ordered (n, output row, token); with ``only``,
    the columns of that block's weights (computed alone, see ``forward``)."""
    _, dY = forward(net, ar, w, X, tangents=True, only=only, patterns=patterns)
    return dY.reshape(-1, dY.shape[-1])


CARRY = "carry"  # the tangents mode of a block that pushes earlier tangents through without its own


# ---------------------------------------------------------------- tangent helpers


def _left(ar, M, T):
    """M @ T on the feature axis: M (r, c) or (N, r, c), T (N, c, t, P) -> (N, r, t, P)."""
    n, c, t, p = T.shape
    return ar.matmul(M, T.reshape(n, c, t * p)).reshape(n, -1, t, p)


def _right(ar, T, A):
    """T @ A on the token axis: T (N, r, t, P), A (N, t, t') -> (N, r, t', P)."""
    out = ar.matmul(np.ascontiguousarray(_T(T)), A[:, None])  # (N, r, P, t')
    return np.ascontiguousarray(_T(out))


def _delta(ar, F, e: int):
    """[n, e', j, r, c] = [e' = r] F[n, c, j]: the tangent of a matrix that multiplies from the left."""
    n, c, t = F.shape
    out = ar.zeros((n, e, t, e, c))
    idx = np.arange(e)
    out[:, idx, :, idx, :] = _T(F)  # advanced indices first: (e, n, t, c) <- (n, t, c)
    return out.reshape(n, e, t, e * c)


def _outer(ar, G, F, swap: bool = False):
    """The closed-form tangent [n, e, j, (r, c)] = G[n, e, r, j] F[n, c, j] as (N, e, t, r * c); with
    ``swap``, G is indexed by the column and F by the row: G[n, e, c, j] F[n, r, j]."""
    out = ar.mul(np.swapaxes(G, 2, 3)[..., None], _T(F)[:, None, :, None, :])  # (n, e, t, g, f)
    if swap:
        out = np.swapaxes(out, -1, -2)
    n, e, t = out.shape[:3]
    return np.ascontiguousarray(out).reshape(n, e, t, -1)


def _join(parts):
    parts = [p for p in parts if p is not None]
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=-1)


def _affine(ar, M, Y, b):
    """M Y (+ b broadcast over the tokens)."""
    out = ar.matmul(M, Y)
    return out if b is None else ar.add(out, b)


def _ones_row(ar, n: int, t: int):
    return ar.ones((n, 1, t))


def _residual(ar, block, Y, dY, out, dout):
    if not block.residual:
        return out, dout
    return ar.add(out, Y), (None if dout is None else ar.add(dout, dY))


# ---------------------------------------------------------------- the blocks


def _attention(ar, block: Attention, heads, Y, dY, tangents, site=None):
    n, d, t = Y.shape
    keep = np.triu(np.ones((t, t), dtype=np.int64)) if block.causal else np.ones((t, t), dtype=np.int64)
    M = ar.array(keep)
    softmax = block.normalization == "softmax"
    out = dout = None
    own = []
    flat = None if dY is None else dY.reshape(n, d, -1)
    for h in heads:
        Q, K = h["q"], h["k"]
        QY, KY = _affine(ar, Q, Y, h.get("bq")), _affine(ar, K, Y, h.get("bk"))
        if block.value is None:
            V, WY = h["v"], None
            VY = _affine(ar, V, Y, h.get("bv"))
        else:
            V, WY = ar.matmul(h["o"], h["w"]), _affine(ar, h["w"], Y, h.get("bw"))
            VY = ar.matmul(h["o"], WY)
        S = ar.matmul(_T(KY), QY)  # (N, t, t): S[i, j] = <K y_i, Q y_j>, key i, query j
        A = ar.softmax(S, keep) if softmax else (ar.mul(S, M) if block.causal else S)
        head = ar.matmul(VY, A)
        if tangents and flat is not None:
            # dS = dKY^T QY + KY^T dQY, each one product (t x d) @ dY with K or Q folded in
            dS1 = ar.matmul(ar.matmul(_T(QY), K), flat).reshape(n, t, t, -1)  # indexed [j, i]
            dS = ar.add(np.ascontiguousarray(np.swapaxes(dS1, 1, 2)),
                        ar.matmul(ar.matmul(_T(KY), Q), flat).reshape(n, t, t, -1))
            if softmax:
                dA = ar.mul(A[..., None], ar.sub(dS, ar.sum(ar.mul(A[..., None], dS), axis=1, keepdims=True)))
            else:
                dA = ar.mul(dS, M[:, :, None]) if block.causal else dS
            if block.value is None:
                through_v = _left(ar, V, _right(ar, dY, A))
            else:  # through the value dim b: O (W dY A) costs b / d of V (dY A)
                through_v = _left(ar, h["o"], _right(ar, _left(ar, h["w"], dY), A))
            term = ar.add(through_v, ar.matmul(VY, dA.reshape(n, t, -1)).reshape(n, -1, t, dA.shape[-1]))
            dout = term if dout is None else ar.add(dout, term)
        if tangents is True:
            e, a = VY.shape[1], QY.shape[1]
            Aprime = A if softmax else M
            YA = ar.matmul(Y, A)
            GQ = ar.matmul(ar.mul(VY[:, :, None, :], KY[:, None, :, :]).reshape(n, e * a, t), Aprime)
            GK = ar.matmul(ar.mul(VY[:, :, None, :], Y[:, None, :, :]).reshape(n, e * d, t), Aprime)
            GQ, GK = GQ.reshape(n, e, a, t), GK.reshape(n, e, d, t)
            if softmax:
                GQ = ar.sub(GQ, ar.mul(head[:, :, None, :], ar.matmul(KY, A)[:, None, :, :]))
                GK = ar.sub(GK, ar.mul(head[:, :, None, :], YA[:, None, :, :]))
            own.append(_outer(ar, GQ, Y))
            own.append(_outer(ar, GK, QY, swap=True))
            if block.value is None:
                own.append(_delta(ar, YA, e))
            else:
                own.append(_outer(ar, h["o"][None, :, :, None], YA))
                own.append(_delta(ar, ar.matmul(WY, A), e))
            if block.bias:
                colsum = ar.sum(A, axis=1, keepdims=True)  # (N, 1, t): sum_i A[i, j]
                own.append(_outer(ar, GQ, _ones_row(ar, n, t)))
                Gb = ar.matmul(VY, Aprime)  # sum_i VY[e, i] A'[i, j]
                if softmax:
                    Gb = ar.sub(Gb, ar.mul(head, colsum))
                own.append(_outer(ar, Gb[:, :, None, :], QY, swap=True))
                if block.value is None:
                    own.append(_delta(ar, colsum, e))
                else:
                    own.append(_outer(ar, h["o"][None, :, :, None], colsum))
        out = head if out is None else ar.add(out, head)
    if block.bias and block.value is not None:
        bo = heads[0]["bo"]
        out = ar.add(out, bo)
        if tangents is True:
            own.append(_delta(ar, _ones_row(ar, n, t), bo.shape[0]))
    out, dout = _residual(ar, block, Y, dY, out, dout)
    return out, (_join([dout] + own) if tangents else None)


def _signs(ar, H, site):
    """The signs of a ReLU's input: from ``patterns`` when an exact pass put them there, else decided by the
    arithmetic (and recorded); an exact 0 is a ``Kink``."""
    block, patterns = site if site is not None else (0, None)
    if patterns is not None and block in patterns:
        signs = patterns[block]
        if signs.shape != H.shape:
            raise ValueError(f"the ReLU pattern of block {block} has shape {signs.shape}, its input {H.shape}")
        return signs
    signs = ar.signs(H)
    zero = np.argwhere(signs == 0)
    if len(zero):
        raise Kink(block, *map(int, zero[0]))
    if patterns is not None:
        patterns[block] = signs
    return signs


def _activate(ar, function: str, H, site, derivative: bool):
    """(f(H), f'(H) or None) for f = relu, gelu, tanh."""
    if function == "relu":
        mask = ar.array((_signs(ar, H, site) > 0).astype(np.int64))
        return ar.mul(H, mask), (mask if derivative else None)
    F, dF = ar.analytic(function, H)
    return F, (dF if derivative else None)


def _mlp(ar, block: MLP, heads, Y, dY, tangents, site=None):
    U, D = heads[0]["u"], heads[0]["d"]
    H = _affine(ar, U, Y, heads[0].get("bu"))
    r = block.degree
    if block.polynomial:
        G = ar.power(H, r)
        Dr = (ar.scale(ar.power(H, r - 1), r) if r > 1 else ar.ones(H.shape)) if tangents else None  # (h^r)'
    else:
        G, Dr = _activate(ar, block.activation, H, site, bool(tangents))
    out = _affine(ar, D, G, heads[0].get("bd"))
    dout, own = None, []
    if tangents:
        if dY is not None:
            dout = _left(ar, D, ar.mul(Dr[..., None], _left(ar, U, dY)))
        if tangents is True:
            DDr = ar.mul(D[None, :, :, None], Dr[:, None, :, :])
            own = [_outer(ar, DDr, Y), _delta(ar, G, block.out)]
            if block.bias:
                n, t = Y.shape[0], Y.shape[2]
                own += [_outer(ar, DDr, _ones_row(ar, n, t)), _delta(ar, _ones_row(ar, n, t), block.out)]
    out, dout = _residual(ar, block, Y, dY, out, dout)
    return out, (_join([dout] + own) if tangents else None)


def _linear(ar, block: Linear, heads, Y, dY, tangents, site=None):
    P = heads[0]["p"]
    out = _affine(ar, P, Y, heads[0].get("bp"))
    if not tangents:
        return out, None
    own = None
    if tangents is True:
        own = _delta(ar, Y, block.out)
        if block.bias:
            own = _join([own, _delta(ar, _ones_row(ar, Y.shape[0], Y.shape[2]), block.out)])
    return out, _join([None if dY is None else _left(ar, P, dY), own])


def _power(ar, block: Power, heads, Y, dY, tangents, site=None):
    r = block.degree
    out = ar.power(Y, r)
    if not tangents or dY is None:
        return out, None
    Dr = ar.scale(ar.power(Y, r - 1), r) if r > 1 else ar.ones(Y.shape)
    return out, ar.mul(Dr[..., None], dY)


def _function(ar, block: Activation, heads, Y, dY, tangents, site=None):
    out, dF = _activate(ar, block.function, Y, site, bool(tangents) and dY is not None)
    return out, (ar.mul(dF[..., None], dY) if dF is not None else None)


def _diagonal(ar, F):
    """[n, e, j, r] = [e = r] F[n, r, j]: the tangent of a gain g in g o F."""
    n, d, t = F.shape
    out = ar.zeros((n, d, t, d))
    idx = np.arange(d)
    out[:, idx, :, idx] = np.swapaxes(F, 0, 1)  # advanced indices first: (d, n, t) <- (n, d, t)
    return out


def _layernorm(ar, block: LayerNorm, heads, Y, dY, tangents, site=None):
    from fractions import Fraction

    n, d, t = Y.shape
    inverse = ar.array([[[Fraction(1, d)]]])  # 1/d, exactly in every arithmetic that has LayerNorm
    C = ar.sub(Y, ar.mul(ar.sum(Y, axis=1, keepdims=True), inverse))
    var = ar.mul(ar.sum(ar.mul(C, C), axis=1, keepdims=True), inverse)
    s, _ = ar.analytic("rsqrt", ar.add(var, ar.array([[[Fraction(block.eps)]]])))  # (N, 1, t)
    Z = ar.mul(C, s)
    g, bg = heads[0].get("g"), heads[0].get("bg")
    out = ar.mul(Z, g) if g is not None else Z
    out = ar.add(out, bg) if bg is not None else out
    if not tangents:
        return out, None
    dout = None
    if dY is not None:
        dC = ar.sub(dY, ar.mul(ar.sum(dY, axis=1, keepdims=True), inverse[..., None]))
        m = ar.mul(ar.sum(ar.mul(Z[..., None], dC), axis=1, keepdims=True), inverse[..., None])
        dZ = ar.mul(s[..., None], ar.sub(dC, ar.mul(Z[..., None], m)))
        dout = ar.mul(dZ, g[None, :, :, None]) if g is not None else dZ
    own = []
    if tangents is True:
        if g is not None:
            own.append(_diagonal(ar, Z))
        if bg is not None:
            own.append(_delta(ar, _ones_row(ar, n, t), d))
    return out, (_join([dout] + own) if dout is not None or own else None)


RULES = {Attention: _attention, MLP: _mlp, Linear: _linear, Power: _power, Activation: _function,
         LayerNorm: _layernorm}
