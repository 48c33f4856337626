"""Residuals of a traced forward: whether the network model reads residual groups (``groups``), the mlp
block a residual around linear -> activation -> linear is (``fuse``), and ``residual = n`` set on the last
block of a group (``with_residual``).

``residual = n`` on block i means: block i ends a residual group of the last n blocks, whose output is the
group's input plus those n blocks applied in order. Until the network model reads n > 1 (a residual was a
flag on attention and mlp blocks), a group of one attention or mlp block converts and any other is refused
in one line; the probe makes the traced path take groups as soon as the model does.
"""

from __future__ import annotations

import functools
from dataclasses import replace

from lightning_cas.core.network import MLP, Activation, Linear, Network
from lightning_cas.errors import InputError
from lightning_cas.torch_bridge.steps import Step


@functools.cache
def groups() -> bool:
    """Whether the network model reads ``residual = n`` > 1 (a residual around the last n blocks)."""
    try:
        Network(1, 1, (Linear(1), replace(Linear(1), residual=2)))
    except (TypeError, InputError):
        return False
    return True


def fusable(first: Step, act: Step, second: Step) -> bool:
    """linear -> activation -> linear, from d back to d, with one bias choice: an mlp block."""
    kinds = [s.blocks[0] if len(s.blocks) == 1 else None for s in (first, act, second)]
    return (
        isinstance(kinds[0], Linear)
        and isinstance(kinds[1], Activation)
        and isinstance(kinds[2], Linear)
        and kinds[0].bias == kinds[2].bias
        and second.takes == first.gives
        and second.gives == first.takes is not None
    )


def fuse(first: Step, act: Step, second: Step) -> Step:
    """One mlp block; its weights in the block's order (U, D, then b_u, b_d), as the encoder's feedforward."""
    d, hidden, bias = first.takes, first.gives, first.blocks[0].bias

    def read():
        up, down = first.read(), second.read()
        return up[: hidden * d] + down[: d * hidden] + up[hidden * d :] + down[d * hidden :]

    block = MLP(hidden, activation=act.blocks[0].function, out=d, bias=bias)
    return Step(f"{first.name} -> {second.name}", (block,), d, d, read)


def with_residual(step: Step, n: int, where_: str) -> Step:
    """The step with ``residual = n`` on its last block (and on its lightning variant's)."""
    if n > 1 and not groups():
        raise InputError(
            f"{where_} is around {n} blocks; a residual around {n} blocks needs the network model's residual "
            "groups ('residual' = n > 1), which this version lacks: a residual around one attention or mlp block "
            "(post-LN, ln(x + f(x))) converts."
        )
    value = n if groups() else True
    last = step.blocks[-1]
    if last.residual:
        raise InputError(f"{where_} ends at a block that already ends a residual.")
    try:
        blocks = step.blocks[:-1] + (replace(last, residual=value),)
        lightning = step.lightning and step.lightning[:-1] + (replace(step.lightning[-1], residual=value),)
    except TypeError:
        raise InputError(
            f"{where_} ends at a {last.kind} block; a residual ending there needs the network model's "
            "residual on every block kind, which this version has on attention and mlp blocks only."
        ) from None
    return replace(step, blocks=blocks, lightning=lightning or None)
