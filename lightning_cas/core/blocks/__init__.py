"""The blocks a network is made of (``core.network`` stacks them), one module per kind.

A kind is its module: the dataclass with its key table, weights and degrees, the roles algorithms across
blocks ask for (``Block``'s methods), and its forward rule (``tangents.forward_rule``). Importing the module
registers the kind (``base.register``); the per-layer tables outside core (Macaulay2 codes, PyTorch
converters) have one row per kind. docs/networks.md, "Adding a block kind", lists the rows.
"""

from lightning_cas.core.blocks.activation import Activation
from lightning_cas.core.blocks.attention import Attention
from lightning_cas.core.blocks.base import (
    ACTIVATIONS,
    BLOCK_LETTERS,
    BLOCK_TYPES,
    DEFAULT_EPS,
    FUNCTIONS,
    MAX_BLOCKS,
    MAX_DEGREE,
    MAX_HEADS,
    MAX_NETWORK_BYTES,
    MAX_NETWORK_DEGREE,
    MAX_TOKENS,
    MAX_WIDTH,
    NORMALIZATIONS,
    VECTOR_LETTERS,
    Block,
    GroupFactor,
    Key,
    WeightMatrix,
    _KeyError,
    is_bias,
    register,
)
from lightning_cas.core.blocks.layernorm import LayerNorm
from lightning_cas.core.blocks.linear import Linear
from lightning_cas.core.blocks.mlp import MLP
from lightning_cas.core.blocks.position import Position
from lightning_cas.core.blocks.power import Power
from lightning_cas.core.blocks.rmsnorm import RMSNorm

KINDS = tuple(BLOCK_TYPES)  # every registered kind, in registration order (messages list them)
REQUIRED_KEYS = {kind: cls.required_keys() for kind, cls in BLOCK_TYPES.items()}

__all__ = [
    "ACTIVATIONS",
    "BLOCK_LETTERS",
    "BLOCK_TYPES",
    "DEFAULT_EPS",
    "FUNCTIONS",
    "KINDS",
    "MAX_BLOCKS",
    "MAX_DEGREE",
    "MAX_HEADS",
    "MAX_NETWORK_BYTES",
    "MAX_NETWORK_DEGREE",
    "MAX_TOKENS",
    "MAX_WIDTH",
    "NORMALIZATIONS",
    "REQUIRED_KEYS",
    "VECTOR_LETTERS",
    "Activation",
    "Attention",
    "Block",
    "GroupFactor",
    "Key",
    "LayerNorm",
    "Linear",
    "MLP",
    "Position",
    "Power",
    "RMSNorm",
    "WeightMatrix",
    "_KeyError",
    "is_bias",
    "register",
]
