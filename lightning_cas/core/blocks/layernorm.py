"""The LayerNorm block (PyTorch's, over each token's features): its keys, weights, roles and forward rule.
Not polynomial: its networks have a rank at given weights only, certified (``core.activation_kernels`` has its
kernel mechanisms: shift, plane, rotation)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import ClassVar

from lightning_cas.core.blocks.base import _BIAS, _RESIDUAL, DEFAULT_EPS, Block, Key, _KeyError, register
from lightning_cas.core.blocks.tangents import delta, diagonal, forward_rule, join, ones_row


@register
@dataclass(frozen=True)
class LayerNorm(Block):
    """PyTorch's LayerNorm over the features of each token: g o (y - mean) / sqrt(var + eps) + b_g (the gain
    g and bias b_g with ``affine``, as elementwise_affine; ``bias`` defaults to ``affine``)."""

    affine: bool = True
    bias: bool | None = None
    eps: float = DEFAULT_EPS
    residual: int = 0
    kind: ClassVar[str] = "layernorm"
    KEYS: ClassVar[tuple[Key, ...]] = (Key("affine", "flag"), _BIAS, Key("eps", "number"), _RESIDUAL)
    polynomial: ClassVar[bool] = False
    shift_invariant: ClassVar[bool] = True
    mean_free: ClassVar[bool] = True

    def filled(self, width: int) -> "Block":
        return replace(self, bias=self.affine) if self.bias is None else self

    def check(self, width: int) -> None:
        if self.bias and not self.affine:
            raise _KeyError("bias", "needs affine = true (PyTorch has no bias without elementwise_affine)")
        if width < 2:
            raise _KeyError("affine", "a LayerNorm needs at least two features (one feature normalizes to 0)")

    @classmethod
    def defaults(cls) -> dict:
        return {**super().defaults(), "bias": True}

    def matrices(self, width: int):
        return ([(0, "g", width, 1)] if self.affine else []) + ([(0, "bg", width, 1)] if self.bias else [])

    def token_degrees(self, degrees):
        return frozenset()

    def weight_degree(self, degree: int) -> int:
        return degree + 1

    def short(self) -> str:
        eps = "" if self.eps == DEFAULT_EPS else f"e{self.eps:g}"
        return "N" + ("g" if self.affine else "") + ("b" if self.bias else "") + eps + self.residual_tag()

    def output_bias(self) -> str | None:
        return "bg" if self.bias else None

    def named_function(self) -> str | None:
        return "layernorm"

    def gain_letters(self) -> list[str]:
        return ["g", "bg"] if self.affine else []

    def rotated_basis(self, width: int) -> list[list[Fraction]] | None:
        """Rotations of the hyperplane 1^T y = 0 commute with it: the basis e_a - e_d of that hyperplane."""
        return [[Fraction(int(k == a) - int(k == width - 1)) for k in range(width)] for a in range(width - 1)]


@forward_rule(LayerNorm)
def _layernorm(ar, block: LayerNorm, heads, Y, dY, tangents, site=None):
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
            own.append(diagonal(ar, Z))
        if bg is not None:
            own.append(delta(ar, ones_row(ar, n, t), d))
    return out, (join([dout] + own) if dout is not None or own else None)
