"""The attention block: per head Q, K and V (or W and O), lightning (S itself) or softmax, causal, residual,
biased; its keys, weights, degrees, roles, group factors and forward rule (``core.network`` has the formulas)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from lightning_cas.core.blocks.base import (
    _BIAS,
    _OUT,
    _RESIDUAL,
    MAX_HEADS,
    MAX_WIDTH,
    NORMALIZATIONS,
    Block,
    GroupFactor,
    Key,
    _sums,
    degrees_affine,
    gl_pairs,
    register,
    resolved_out,
)
from lightning_cas.core.blocks.tangents import (
    affine,
    delta,
    forward_rule,
    join,
    left,
    ones_row,
    outer,
    right,
    transpose,
)


@register
@dataclass(frozen=True)
class Attention(Block):
    attention: int
    heads: int = 1
    value: int | None = None
    out: int | None = None
    causal: bool = False
    residual: int = 0
    normalization: str = "none"
    bias: bool = False
    kind: ClassVar[str] = "attention"
    mixes_tokens: ClassVar[bool] = True
    residual_written: ClassVar[bool] = True
    KEYS: ClassVar[tuple[Key, ...]] = (
        Key("attention", "positive", MAX_WIDTH),
        Key("heads", "positive", MAX_HEADS),
        _OUT,
        Key("value", "positive", MAX_WIDTH, optional=True),
        Key("causal", "flag"),
        _RESIDUAL,
        Key("normalization", "choice", choices=NORMALIZATIONS),
        _BIAS,
    )

    @property
    def polynomial(self) -> bool:
        return self.normalization == "none"

    def filled(self, width: int) -> "Block":
        return replace(self, out=width) if self.out is None else self

    def output_width(self, width: int) -> int:
        return self.out or width

    def matrices(self, width: int) -> list[tuple[int, str, int, int]]:
        e = self.output_width(width)
        out: list[tuple[int, str, int, int]] = []
        for h in range(self.heads):
            out += [(h, "q", self.attention, width), (h, "k", self.attention, width)]
            if self.value is None:
                out.append((h, "v", e, width))
            else:
                out += [(h, "w", self.value, width), (h, "o", e, self.value)]
            if self.bias:  # Q y + b_q, K y + b_k, V y + b_v (or W y + b_w)
                out += [(h, "bq", self.attention, 1), (h, "bk", self.attention, 1)]
                out.append((h, "bv", e, 1) if self.value is None else (h, "bw", self.value, 1))
        if self.bias and self.value is not None:  # one output bias after the head sum, as PyTorch has
            out.append((0, "bo", e, 1))
        return out

    def token_degrees(self, degrees):
        products = _sums(degrees_affine(degrees, self.bias), 3)
        products = degrees_affine(products, self.bias and self.value is not None)
        if self.normalization != "none":
            products = frozenset()  # not polynomial
        return products

    def weight_degree(self, degree: int) -> int:
        value = 2 if self.value is not None else 1
        return 3 * degree + 2 + value

    def short(self) -> str:
        tag = f"A{self.heads}x{self.attention}" + (f"v{self.value}" if self.value is not None else "") + f"o{self.out}"
        return (
            tag
            + ("c" if self.causal else "")
            + self.residual_tag()
            + ("s" if self.normalization == "softmax" else "")
            + ("b" if self.bias else "")
        )

    def input_letters(self) -> list[str]:
        return ["q", "k", "v" if self.value is None else "w"]

    def output_letters(self) -> tuple[list[str], str | None]:
        if self.value is None:
            return ["v"], ("bv" if self.bias else None)
        return ["o"], ("bo" if self.bias else None)

    def output_bias(self) -> str | None:
        """b_o; or, with a full value map, b_v of softmax heads only (the columns of A sum to 1): a lightning
        head's b_v (1^T A) varies with the tokens."""
        if not self.bias:
            return None
        if self.value is not None:
            return "bo"
        return "bv" if self.normalization == "softmax" else None

    def group_factors(self, where: str) -> list[GroupFactor]:
        """GL(a) on (Q, K) and GL(b) on (W, O) per head; the lightning scaling, or softmax's bias translations."""
        out = []
        for h in range(self.heads):
            at = where + (f" head {h}" if self.heads > 1 else "")
            out.append(GroupFactor("GL(a)", at, self.attention**2))
            if self.value is not None:
                out.append(GroupFactor("GL(b)", at, self.value**2))
            if self.normalization == "none":
                out.append(GroupFactor("scaling", at, 1))
            elif self.bias:
                out.append(GroupFactor("key-bias translations", at, self.attention))
                if self.value is not None:
                    out.append(GroupFactor("value-bias translations", at, self.value))
                elif h > 0:  # heads from 0: every head but the first moves its value bias against it
                    out.append(GroupFactor("value-bias translations", at, resolved_out(self.out)))
        return out

    def group_tangents(self, tb, i: int):
        """dQ = X Q, dK = -X^T K; dW = Y W, dO = -O Y; lightning: dQ = Q, dV = -V; softmax: the translations."""
        for h in range(self.heads):
            rr, cc = gl_pairs(self.attention)
            T = tb.new(len(rr))
            tb.left(T, (i, h, "q"), rr, cc)
            tb.left(T, (i, h, "k"), cc, rr, sign=-1)
            yield T
            if self.value is not None:
                rr, cc = gl_pairs(self.value)
                T = tb.new(len(rr))
                tb.left(T, (i, h, "w"), rr, cc)
                tb.right(T, (i, h, "o"), rr, cc)
                yield T
            if self.normalization == "none":
                T = tb.new(1)
                tb.copy(T, 0, (i, h, "q"))
                tb.copy(T, 0, (i, h, "v" if self.value is None else "o"), sign=-1)
                yield T
            elif self.bias:
                yield from self._translations(tb, i, h)

    def _translations(self, tb, i: int, h: int):
        """Softmax with biases: d b_k = e_r (the softmax ignores a key bias); d b_w,h = e_r, d b_o = -O_h e_r
        (or d b_v,h = e_r, d b_v,1 = -e_r for h > 1 with a full value map)."""
        T = tb.new(self.attention)
        tb.unit(T, range(self.attention), (i, h, "bk"), range(self.attention))
        yield T
        if self.value is not None:
            T = tb.new(self.value)
            tb.unit(T, range(self.value), (i, h, "bw"), range(self.value))
            out_proj = tb.mats[i][h]["o"]  # (out, value)
            m = tb.where[(i, 0, "bo")]
            T[:, m.offset : m.stop] = tb.ar.scale(np.ascontiguousarray(out_proj.T), -1)
            yield T
        elif h > 0:
            e = resolved_out(self.out)
            T = tb.new(e)
            tb.unit(T, range(e), (i, h, "bv"), range(e))
            tb.unit(T, range(e), (i, 0, "bv"), range(e), value=-1)
            yield T

    def dimensions(self) -> tuple[int, ...]:
        return (self.attention, self.value or 0)


@forward_rule(Attention)
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
        QY, KY = affine(ar, Q, Y, h.get("bq")), affine(ar, K, Y, h.get("bk"))
        if block.value is None:
            V, WY = h["v"], None
            VY = affine(ar, V, Y, h.get("bv"))
        else:
            V, WY = ar.matmul(h["o"], h["w"]), affine(ar, h["w"], Y, h.get("bw"))
            VY = ar.matmul(h["o"], WY)
        S = ar.matmul(transpose(KY), QY)  # (N, t, t): S[i, j] = <K y_i, Q y_j>, key i, query j
        A = ar.softmax(S, keep) if softmax else (ar.mul(S, M) if block.causal else S)
        head = ar.matmul(VY, A)
        if tangents and flat is not None:
            # dS = dKY^T QY + KY^T dQY, each one product (t x d) @ dY with K or Q folded in
            dS1 = ar.matmul(ar.matmul(transpose(QY), K), flat).reshape(n, t, t, -1)  # indexed [j, i]
            dS = ar.add(
                np.ascontiguousarray(np.swapaxes(dS1, 1, 2)),
                ar.matmul(ar.matmul(transpose(KY), Q), flat).reshape(n, t, t, -1),
            )
            if softmax:
                dA = ar.mul(A[..., None], ar.sub(dS, ar.sum(ar.mul(A[..., None], dS), axis=1, keepdims=True)))
            else:
                dA = ar.mul(dS, M[:, :, None]) if block.causal else dS
            if block.value is None:
                through_v = left(ar, V, right(ar, dY, A))
            else:  # through the value dim b: O (W dY A) costs b / d of V (dY A)
                through_v = left(ar, h["o"], right(ar, left(ar, h["w"], dY), A))
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
            own.append(outer(ar, GQ, Y))
            own.append(outer(ar, GK, QY, swap=True))
            if block.value is None:
                own.append(delta(ar, YA, e))
            else:
                own.append(outer(ar, h["o"][None, :, :, None], YA))
                own.append(delta(ar, ar.matmul(WY, A), e))
            if block.bias:
                colsum = ar.sum(A, axis=1, keepdims=True)  # (N, 1, t): sum_i A[i, j]
                own.append(outer(ar, GQ, ones_row(ar, n, t)))
                Gb = ar.matmul(VY, Aprime)  # sum_i VY[e, i] A'[i, j]
                if softmax:
                    Gb = ar.sub(Gb, ar.mul(head, colsum))
                own.append(outer(ar, Gb[:, :, None, :], QY, swap=True))
                if block.value is None:
                    own.append(delta(ar, colsum, e))
                else:
                    own.append(outer(ar, h["o"][None, :, :, None], colsum))
        out = head if out is None else ar.add(out, head)
    if block.bias and block.value is not None:
        bo = heads[0]["bo"]
        out = ar.add(out, bo)
        if tangents is True:
            own.append(delta(ar, ones_row(ar, n, t), bo.shape[0]))
    return out, (join([dout] + own) if tangents else None)
