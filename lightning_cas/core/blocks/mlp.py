"""The mlp block: D f(U Y + b_u) + b_d with f the power of ``degree`` or relu, gelu, tanh (given weights only);
its keys, weights, degrees, roles, group factors and forward rule."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from lightning_cas.core.blocks.base import (
    _BIAS,
    _OUT,
    _RESIDUAL,
    ACTIVATIONS,
    MAX_DEGREE,
    MAX_WIDTH,
    Block,
    GroupFactor,
    Key,
    _KeyError,
    _sums,
    degrees_affine,
    gl_pairs,
    register,
    resolved_out,
)
from lightning_cas.core.blocks.tangents import (
    activate,
    affine,
    delta,
    forward_rule,
    join,
    left,
    ones_row,
    outer,
)


@register
@dataclass(frozen=True)
class MLP(Block):
    hidden: int
    degree: int = 2
    out: int | None = None
    residual: int = 0
    bias: bool = False
    activation: str = "power"
    kind: ClassVar[str] = "mlp"
    residual_written: ClassVar[bool] = True
    KEYS: ClassVar[tuple[Key, ...]] = (
        Key("hidden", "positive", MAX_WIDTH),
        Key("degree", "positive", MAX_DEGREE),
        _OUT,
        _RESIDUAL,
        _BIAS,
        Key("activation", "choice", choices=ACTIVATIONS),
    )

    def filled(self, width: int) -> "Block":
        return replace(self, out=width) if self.out is None else self

    def check(self, width: int) -> None:
        if self.activation != "power" and self.degree != 2:
            raise _KeyError(
                "degree", f'is the power of activation = "power"; with activation = "{self.activation}" leave it out'
            )

    def output_width(self, width: int) -> int:
        return self.out or width

    @property
    def polynomial(self) -> bool:
        return self.activation == "power"

    def matrices(self, width: int) -> list[tuple[int, str, int, int]]:
        e = self.output_width(width)
        bias = [(0, "bu", self.hidden, 1), (0, "bd", e, 1)] if self.bias else []
        return [(0, "u", self.hidden, width), (0, "d", e, self.hidden)] + bias

    def token_degrees(self, degrees):
        if not self.polynomial:
            return frozenset()
        products = degrees_affine(_sums(degrees_affine(degrees, self.bias), self.degree), self.bias)
        return products

    def weight_degree(self, degree: int) -> int:
        return self.degree * (degree + 1) + 1

    def short(self) -> str:
        act = f"p{self.degree}" if self.polynomial else self.activation
        return f"M{self.hidden}{act}o{self.out}" + self.residual_tag() + ("b" if self.bias else "")

    def input_letters(self) -> list[str]:
        return ["u"]

    def output_letters(self) -> tuple[list[str], str | None]:
        return ["d"], ("bd" if self.bias else None)

    def named_function(self) -> str | None:
        return None if self.polynomial else self.activation

    def group_factors(self, where: str) -> list[GroupFactor]:
        """The scaling of each hidden neuron (all of GL(hidden) for degree 1)."""
        name, dim = ("neuron scaling", self.hidden) if self.degree > 1 else ("GL(hidden)", self.hidden**2)
        return [GroupFactor(name, where, dim)]

    def group_tangents(self, tb, i: int):
        """dU = E U, dD = -r D E over the neuron scalings E (all of gl(hidden) for degree 1); a ReLU's scaling
        is λ^-1 and GELU and tanh have none, so only the power has these."""
        if not self.polynomial:
            return
        if self.degree == 1:
            rr, cc = gl_pairs(self.hidden)
        else:
            rr = cc = np.arange(self.hidden)
        T = tb.new(len(rr))
        tb.left(T, (i, 0, "u"), rr, cc)
        tb.right(T, (i, 0, "d"), rr, cc, sign=-self.degree if self.degree > 1 else -1)
        yield T

    def dimensions(self) -> tuple[int, ...]:
        return (self.hidden,)


@forward_rule(MLP)
def _mlp(ar, block: MLP, heads, Y, dY, tangents, site=None):
    U, D = heads[0]["u"], heads[0]["d"]
    H = affine(ar, U, Y, heads[0].get("bu"))
    r = block.degree
    if block.polynomial:
        G = ar.power(H, r)
        Dr = (ar.scale(ar.power(H, r - 1), r) if r > 1 else ar.ones(H.shape)) if tangents else None  # (h^r)'
    else:
        G, Dr = activate(ar, block.activation, H, site, bool(tangents))
    out = affine(ar, D, G, heads[0].get("bd"))
    dout, own = None, []
    if tangents and Dr is not None:  # Dr is f'(U Y + b_u), there whenever tangents are asked for
        if dY is not None:
            dout = left(ar, D, ar.mul(Dr[..., None], left(ar, U, dY)))
        if tangents is True:
            DDr = ar.mul(D[None, :, :, None], Dr[:, None, :, :])
            e = resolved_out(block.out)
            own = [outer(ar, DDr, Y), delta(ar, G, e)]
            if block.bias:
                n, t = Y.shape[0], Y.shape[2]
                own += [outer(ar, DDr, ones_row(ar, n, t)), delta(ar, ones_row(ar, n, t), e)]
    return out, (join([dout] + own) if tangents else None)
