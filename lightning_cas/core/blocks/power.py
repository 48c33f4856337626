"""The power block Y^{o r}, entrywise, no weights: its keys, degrees and forward rule."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from lightning_cas.core.blocks.base import _RESIDUAL, MAX_DEGREE, Block, Key, _sums, register
from lightning_cas.core.blocks.tangents import forward_rule


@register
@dataclass(frozen=True)
class Power(Block):
    degree: int = 2
    residual: int = 0
    kind: ClassVar[str] = "power"
    KEYS: ClassVar[tuple[Key, ...]] = (Key("degree", "positive", MAX_DEGREE), _RESIDUAL)

    def token_degrees(self, degrees):
        return _sums(degrees, self.degree)

    def weight_degree(self, degree: int) -> int:
        return self.degree * degree

    def short(self) -> str:
        return f"P{self.degree}" + self.residual_tag()


@forward_rule(Power)
def _power(ar, block: Power, heads, Y, dY, tangents, site=None):
    r = block.degree
    out = ar.power(Y, r)
    if not tangents or dY is None:
        return out, None
    Dr = ar.scale(ar.power(Y, r - 1), r) if r > 1 else ar.ones(Y.shape)
    return out, ar.mul(Dr[..., None], dY)
