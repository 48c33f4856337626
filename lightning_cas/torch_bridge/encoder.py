"""``nn.TransformerEncoderLayer`` and ``nn.TransformerEncoder`` as blocks: modules of modules, planned from
their children's steps (``plan`` is the converter's own, so every child gets the same checks and limits).

A post-LN layer (norm_first = False) computes x = LN1(x + SA(x)); x = LN2(x + FF(x)) with FF =
linear2(act(linear1 x)) (dropout skipped in eval mode): an attention block with a residual, a layernorm, an
mlp block with a residual, a layernorm. A pre-LN layer (norm_first = True) computes x = x + SA(LN1(x));
x = x + FF(LN2(x)): two residual groups of two blocks each, a layernorm then attention (``residual = 2`` on the
attention), a layernorm then the mlp.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from lightning_cas.core.network import MLP, Activation, Attention, Linear
from lightning_cas.errors import InputError
from lightning_cas.torch_bridge.checks import where

# the activations a layer may hold as a function (compared by identity: a lambda or a partial is not one)
_FUNCTIONS = (
    (F.relu, "relu"),
    (torch.relu, "relu"),
    (F.gelu, "gelu"),
    (torch.tanh, "tanh"),
    (F.tanh, "tanh"),
    (F.silu, "silu"),
)
# the methods of TransformerEncoderLayer its forward runs besides the children's: a subclass replacing one
# computes something else than the blocks read from its children
_PARTS = ("_sa_block", "_ff_block")


def _only(steps: list, kind: type, name: str, what: str):
    """The one step of one block of ``kind`` a child converts to."""
    if len(steps) != 1 or len(steps[0].blocks) != 1 or not isinstance(steps[0].blocks[0], kind):
        raise InputError(
            f"{name}: its {what} converts to {len(steps)} steps, not to one {kind.__name__} block; "
            f"a TransformerEncoderLayer converts with its own {what}."
        )
    return steps[0]


def _activation(module, name: str, prefix: str, plan: Callable) -> str:
    """relu, gelu (the erf form) or tanh, as a function or a module (a module is planned, so nn.GELU with
    approximate = 'tanh' is refused naming it)."""
    act = module.activation
    if isinstance(act, nn.Module):
        return _only(plan(act, f"{prefix}activation"), Activation, name, "activation").blocks[0].function
    found = next((function for f, function in _FUNCTIONS if act is f), None)
    if found is None:
        label = getattr(act, "__qualname__", None) or repr(act)[:80]
        raise InputError(
            f"{name}: activation = {label} is not supported; 'relu', 'gelu' (F.relu, F.gelu, nn.ReLU(), "
            "nn.GELU() in its erf form) and nn.Tanh() are mlp activations."
        )
    return found


def encoder_layer(module: nn.TransformerEncoderLayer, path: str, plan: Callable) -> list:
    """A post-LN layer's four steps: attention (residual), norm1, mlp (residual), norm2; a pre-LN layer's:
    norm1, attention (a group from norm1), norm2, mlp (a group from norm2)."""
    name, prefix = where(path, module), f"{path}." if path else ""
    for part in _PARTS:
        if getattr(type(module), part, None) is not getattr(nn.TransformerEncoderLayer, part):
            raise InputError(
                f"{name} is a subclass of nn.TransformerEncoderLayer with its own {part}; from_torch "
                "reads only what nn.TransformerEncoderLayer's own forward computes."
            )
    for key in ("dropout", "dropout1", "dropout2"):  # refused in training mode, skipped in eval mode
        if plan(getattr(module, key), f"{prefix}{key}"):
            raise InputError(f"{name}: its {key} is not a Dropout.")
    if not isinstance(module.self_attn, nn.MultiheadAttention):
        raise InputError(f"{name}: self_attn is a {type(module.self_attn).__name__}, not an nn.MultiheadAttention.")
    norm1, norm2 = (plan(getattr(module, key), f"{prefix}{key}") for key in ("norm1", "norm2"))
    # the residual of a sublayer: around the block alone (post-LN), or around its norm and the block (pre-LN)
    first = 1 + (sum(len(step.blocks) for step in norm1) if module.norm_first else 0)
    second = 1 + (sum(len(step.blocks) for step in norm2) if module.norm_first else 0)
    attention = _only(plan(module.self_attn, f"{prefix}self_attn"), Attention, name, "self_attn")
    attention = replace(
        attention,
        blocks=tuple(replace(b, residual=first) for b in attention.blocks),
        lightning=tuple(replace(b, residual=first) for b in attention.lightning),
    )
    mlp = _feedforward(module, name, prefix, plan, second)
    if module.norm_first:
        return [*norm1, attention, *norm2, mlp]
    return [attention, *norm1, mlp, *norm2]


def _feedforward(module, name: str, prefix: str, plan: Callable, residual: int):
    """linear2(act(linear1 x)) + x as one mlp block with a residual; its weights in the block's order (U, D,
    then b_u, b_d)."""
    function = _activation(module, name, prefix, plan)
    first, second = (
        _only(plan(getattr(module, key), f"{prefix}{key}"), Linear, name, key) for key in ("linear1", "linear2")
    )
    hidden, bias = first.gives, first.blocks[0].bias
    if second.blocks[0].bias != bias:
        raise InputError(f"{name}: linear1 and linear2 disagree on biases; an mlp block has both or neither.")
    if second.takes != hidden or second.gives != first.takes:
        raise InputError(
            f"{name}: linear2 maps {second.takes} to {second.gives} features but linear1 maps "
            f"{first.takes} to {hidden}; the feedforward must map d_model back to d_model."
        )
    d = first.takes

    def read():
        up, down = first.read(), second.read()
        return up[: hidden * d] + down[: d * hidden] + up[hidden * d :] + down[d * hidden :]

    block = MLP(hidden, activation=function, out=d, residual=residual, bias=bias)
    return replace(first, name=f"{name} feedforward", blocks=(block,), gives=d, read=read, lightning=None)


def encoder(module: nn.TransformerEncoder, path: str, plan: Callable) -> list:
    """Its layers in order, then its final norm if it has one (the nested-tensor path needs a padding mask,
    which a converted network is never called with)."""
    name, prefix = where(path, module), f"{path}." if path else ""
    layers = list(module.layers)
    if not layers:
        raise InputError(f"{name} has no layers; its forward reads layers[0].")
    for i, layer in enumerate(layers):
        if not isinstance(layer, nn.TransformerEncoderLayer):
            raise InputError(f"{name}: layers.{i} is a {type(layer).__name__}, not an nn.TransformerEncoderLayer.")
    if len({layer.self_attn.batch_first for layer in layers}) > 1:
        raise InputError(
            f"{name}: its layers disagree on batch_first, so they read the same tensor with "
            "different token axes; give every layer the same batch_first."
        )
    steps = [step for i, layer in enumerate(layers) for step in plan(layer, f"{prefix}layers.{i}")]
    return steps + (plan(module.norm, f"{prefix}norm") if module.norm is not None else [])
