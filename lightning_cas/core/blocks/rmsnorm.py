"""The RMSNorm block (PyTorch's ``nn.RMSNorm`` over each token's features): g o y / sqrt(mean(y^2) + eps).

Its keys, weights, roles and forward rule. Not polynomial: its networks have a rank at given weights only,
certified; it commutes with every rotation of the features, which ``core.activation_kernels`` turns into
exact kernel vectors (``rotated_basis``), and its gain meets the next block's input in a diagonal junction.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

from lightning_cas.core.blocks.base import _RESIDUAL, DEFAULT_EPS, Block, Key, register
from lightning_cas.core.blocks.tangents import diagonal, forward_rule, join


@register
@dataclass(frozen=True)
class RMSNorm(Block):
    """g o y / sqrt(mean(y^2) + eps) per token, over its features (the gain g with ``affine``, as PyTorch's
    elementwise_affine; no bias, as PyTorch has none)."""

    affine: bool = True
    eps: float = DEFAULT_EPS
    residual: int = 0
    kind: ClassVar[str] = "rmsnorm"
    KEYS: ClassVar[tuple[Key, ...]] = (Key("affine", "flag"), Key("eps", "number"), _RESIDUAL)
    polynomial: ClassVar[bool] = False
    keeps_span: ClassVar[bool] = True

    def matrices(self, width: int):
        return [(0, "g", width, 1)] if self.affine else []

    def token_degrees(self, degrees):
        return frozenset()

    def weight_degree(self, degree: int) -> int:
        return degree + 1

    def short(self) -> str:
        eps = "" if self.eps == DEFAULT_EPS else f"e{self.eps:g}"
        return "R" + ("g" if self.affine else "") + eps + self.residual_tag()

    def named_function(self) -> str | None:
        return "rmsnorm"

    def gain_letters(self) -> list[str]:
        return ["g"] if self.affine else []

    def rotated_basis(self, width: int) -> list[list[Fraction]] | None:
        """Every rotation of the features commutes with it: the unit vectors span the rotated space."""
        return [[Fraction(int(k == a)) for k in range(width)] for a in range(width)]


@forward_rule(RMSNorm)
def _rmsnorm(ar, block: RMSNorm, heads, Y, dY, tangents, site=None):
    """s = (mean(y^2) + eps)^(-1/2), z = s y (per token): out = g o z; dz = s (dy - z mean(z o dy)),
    d/dg = [e = r] z."""
    d = Y.shape[1]
    inverse = ar.array([[[Fraction(1, d)]]])  # 1/d, exactly in every arithmetic that has the square root
    mean_square = ar.mul(ar.sum(ar.mul(Y, Y), axis=1, keepdims=True), inverse)
    s, _ = ar.analytic("rsqrt", ar.add(mean_square, ar.array([[[Fraction(block.eps)]]])))  # (N, 1, t)
    Z = ar.mul(Y, s)
    g = heads[0].get("g")
    out = ar.mul(Z, g) if g is not None else Z
    if not tangents:
        return out, None
    dout = None
    if dY is not None:
        m = ar.mul(ar.sum(ar.mul(Z[..., None], dY), axis=1, keepdims=True), inverse[..., None])
        dZ = ar.mul(s[..., None], ar.sub(dY, ar.mul(Z[..., None], m)))
        dout = ar.mul(dZ, g[None, :, :, None]) if g is not None else dZ
    own = [diagonal(ar, Z)] if tangents is True and g is not None else []
    return out, (join([dout] + own) if dout is not None or own else None)
