"""The linear block P Y (+ b_p): its keys, weights, degrees, roles and forward rule."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from lightning_cas.core.blocks.base import _BIAS, _OUT, _RESIDUAL, Block, Key, degrees_affine, register
from lightning_cas.core.blocks.tangents import affine, delta, forward_rule, join, left, ones_row


@register
@dataclass(frozen=True)
class Linear(Block):
    out: int
    bias: bool = False
    residual: int = 0
    kind: ClassVar[str] = "linear"
    KEYS: ClassVar[tuple[Key, ...]] = (_OUT, _BIAS, _RESIDUAL)

    def output_width(self, width: int) -> int:
        return self.out

    def matrices(self, width: int) -> list[tuple[int, str, int, int]]:
        return [(0, "p", self.out, width)] + ([(0, "bp", self.out, 1)] if self.bias else [])

    def token_degrees(self, degrees):
        return degrees_affine(degrees, self.bias)

    def weight_degree(self, degree: int) -> int:
        return degree + 1

    def short(self) -> str:
        return f"L{self.out}" + ("b" if self.bias else "") + self.residual_tag()

    def input_letters(self) -> list[str]:
        return ["p"]

    def output_letters(self) -> tuple[list[str], str | None]:
        return ["p"], ("bp" if self.bias else None)


@forward_rule(Linear)
def _linear(ar, block: Linear, heads, Y, dY, tangents, site=None):
    P = heads[0]["p"]
    out = affine(ar, P, Y, heads[0].get("bp"))
    if not tangents:
        return out, None
    own = None
    if tangents is True:
        own = delta(ar, Y, block.out)
        if block.bias:
            own = join([own, delta(ar, ones_row(ar, Y.shape[0], Y.shape[2]), block.out)])
    return out, join([None if dY is None else left(ar, P, dY), own])
