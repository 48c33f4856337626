"""Residuals of a traced forward: the mlp block a residual around linear -> activation -> linear is (``fuse``),
and ``residual = n`` set on the last block of a group (``with_residual``).

``residual = n`` on block i means: block i ends a residual group of the last n blocks, whose output is the
group's input plus those n blocks applied in order (``core.residual_groups``).
"""

from __future__ import annotations

from dataclasses import replace

from lightning_cas.core.network import MLP, Activation, Linear
from lightning_cas.errors import InputError
from lightning_cas.torch_bridge.steps import Step


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
    last = step.blocks[-1]
    if last.residual:
        raise InputError(f"{where_} ends at a block that already ends a residual.")
    blocks = step.blocks[:-1] + (replace(last, residual=n),)
    lightning = step.lightning and step.lightning[:-1] + (replace(step.lightning[-1], residual=n),)
    return replace(step, blocks=blocks, lightning=lightning or None)
