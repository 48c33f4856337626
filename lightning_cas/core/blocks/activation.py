"""The activation block: relu, gelu or tanh entrywise, no weights (given weights only)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from lightning_cas.core.blocks.base import _RESIDUAL, FUNCTIONS, Block, Key, register
from lightning_cas.core.blocks.tangents import activate, forward_rule


@register
@dataclass(frozen=True)
class Activation(Block):
    """relu, gelu or tanh entrywise, no weights: a network with one has a rank at given weights only."""

    function: str
    residual: int = 0
    kind: ClassVar[str] = "activation"
    KEYS: ClassVar[tuple[Key, ...]] = (Key("function", "choice", choices=FUNCTIONS), _RESIDUAL)
    polynomial: ClassVar[bool] = False

    def token_degrees(self, degrees):
        return frozenset()

    def weight_degree(self, degree: int) -> int:
        return degree

    def short(self) -> str:
        return f"F{self.function}" + self.residual_tag()

    def named_function(self) -> str | None:
        return self.function


@forward_rule(Activation)
def _function(ar, block: Activation, heads, Y, dY, tangents, site=None):
    out, dF = activate(ar, block.function, Y, site, bool(tangents) and dY is not None)
    return out, (ar.mul(dF[..., None], dY) if dF is not None else None)
