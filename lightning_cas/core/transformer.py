"""The blocks of ``Network.transformer``, the PyTorch-style shorthand: apart from ``core.network`` so that
module stays the network itself."""

from __future__ import annotations

from lightning_cas.core.blocks import MAX_BLOCKS, MLP, Attention, Block
from lightning_cas.core.checks import as_int
from lightning_cas.errors import InputError


def transformer_blocks(
    d_model: int,
    n_heads: int,
    d_head: int,
    n_layers: int,
    d_mlp: int | None,
    mlp_degree: int,
    causal: bool,
    residual: bool,
    normalization: str,
    bias: bool,
) -> tuple[Block, ...]:
    """Per layer an attention block, then an mlp block when d_mlp is given (``Network.transformer`` says more)."""
    layers = as_int(n_layers, "n_layers")
    per_layer = 1 if d_mlp is None else 2
    if layers <= 0:
        raise InputError(f"n_layers must be a positive integer, got {layers}.")
    if layers * per_layer > MAX_BLOCKS:  # before building: 10**12 layers are refused, not made
        raise InputError(
            f"{layers} layers make {layers * per_layer} blocks, above the supported maximum of {MAX_BLOCKS}."
        )
    blocks: list[Block] = []
    for _ in range(layers):
        blocks.append(
            Attention(
                attention=d_head,
                heads=n_heads,
                value=d_head,
                out=d_model,
                causal=causal,
                residual=residual,
                normalization=normalization,
                bias=bias,
            )
        )
        if d_mlp is not None:
            blocks.append(MLP(hidden=d_mlp, degree=mlp_degree, out=d_model, residual=residual, bias=bias))
    return tuple(blocks)
