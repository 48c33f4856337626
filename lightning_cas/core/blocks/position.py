"""The position block: a learned positional embedding, Y + E with E (width x tokens) one bias per position.

Its keys, weights, degrees, roles and forward rule. Affine in E and in Y (degree 1), so polynomial; it is not
the same map on every token (E differs by position), so it counts as mixing tokens: the theory takes the
ambient space of all tokens' maps and the token-wise mechanisms (tails) skip it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from lightning_cas.core.blocks.base import _RESIDUAL, MAX_TOKENS, Block, Key, _KeyError, register
from lightning_cas.core.blocks.tangents import forward_rule, identity, join


@register
@dataclass(frozen=True)
class Position(Block):
    """Y + E: E has one column per token (the network's ``tokens``, filled in when left out)."""

    tokens: int | None = None
    residual: int = 0
    kind: ClassVar[str] = "position"
    KEYS: ClassVar[tuple[Key, ...]] = (Key("tokens", "positive", MAX_TOKENS, optional=True), _RESIDUAL)
    mixes_tokens: ClassVar[bool] = True

    @property
    def bias(self) -> bool | None:
        """E is a constant added to the output: the map is affine, not homogeneous."""
        return True

    def at_tokens(self, tokens: int) -> "Block":
        if self.tokens is None:
            return replace(self, tokens=tokens)
        if self.tokens != tokens:
            raise _KeyError("tokens", f"is {self.tokens}, but the network has {tokens} tokens")
        return self

    def matrices(self, width: int) -> list[tuple[int, str, int, int]]:
        if self.tokens is None:
            raise ValueError("the position block is not resolved: its tokens follow the network's")
        return [(0, "e", width, self.tokens)]

    def token_degrees(self, degrees):
        return degrees | {0}

    def weight_degree(self, degree: int) -> int:
        return max(degree, 1)

    def short(self) -> str:
        return f"E{self.tokens}" + self.residual_tag()


@forward_rule(Position)
def _position(ar, block: Position, heads, Y, dY, tangents, site=None):
    E = heads[0]["e"]  # (width, tokens)
    out = ar.add(Y.copy(), E)  # ModP adds in place, and Y may be the caller's tokens or a residual group's input
    if not tangents:
        return out, None
    own = None
    if tangents is True:  # d out[n, e, j] / dE[r, c] = [e = r][j = c]
        own = identity(ar, *Y.shape)
    return out, (join([dY, own]) if dY is not None or own is not None else None)
