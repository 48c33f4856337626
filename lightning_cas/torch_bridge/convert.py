"""PyTorch modules in: ``from_torch`` reads a module's layers as blocks and its weights exactly.

In three passes, so that nothing slow happens to a module that is refused: the checks of ``checks``
(hooks, overridden forwards, tied weights), then a plan of the blocks from the modules' classes and
tensor shapes alone (every width and limit checked, and the layers' widths chained), then the weights
read as exact rationals; last, the result is proved against the module's own forward.
"""

from __future__ import annotations

import contextvars
import math
import re
import warnings
from dataclasses import replace
from fractions import Fraction

import torch
from torch import nn

from lightning_cas.core.blocks import MAX_BLOCKS, MAX_HEADS, MAX_TOKENS
from lightning_cas.core.checks import integer_value
from lightning_cas.core.network import Activation, Attention, LayerNorm, Linear, Network, RMSNorm
from lightning_cas.errors import InputError
from lightning_cas.system.points import WeightPoint, state_names
from lightning_cas.torch_bridge.checks import check_class, check_hooks, check_own_calls, check_tied, prove, where
from lightning_cas.torch_bridge.encoder import encoder, encoder_layer
from lightning_cas.torch_bridge.model import TorchNetwork, point_from_state_dict
from lightning_cas.torch_bridge.steps import Step as _Step
from lightning_cas.torch_bridge.steps import entry_names, naming, origins
from lightning_cas.torch_bridge.steps import exact as _exact
from lightning_cas.torch_bridge.traced import traced

# the classes that convert, most specific first (a subclass converts as the class it is, if it keeps its forward)
SUPPORTED = (
    TorchNetwork,
    nn.MultiheadAttention,
    nn.Linear,
    nn.LayerNorm,
    nn.RMSNorm,
    nn.Sequential,
    nn.ReLU,
    nn.Tanh,
    nn.SiLU,
    nn.GELU,
    nn.Dropout,
    nn.Identity,
    nn.TransformerEncoderLayer,
    nn.TransformerEncoder,
    nn.Embedding,
)
_SUPPORTED_TEXT = (
    "nn.Linear, nn.MultiheadAttention (self-attention), nn.LayerNorm, nn.RMSNorm, nn.ReLU, nn.GELU (both forms), "
    "nn.Tanh, nn.SiLU, nn.TransformerEncoderLayer (post- and pre-LN), nn.TransformerEncoder, nn.Embedding (first), "
    "nn.Sequential of those (nn.Identity and nn.Dropout in eval mode are skipped), TorchNetwork and a module of "
    "your own whose forward torch.fx traces to a chain of those"
)


# the dtype the module computes in (its parameters'), for the defaults PyTorch takes from the input's dtype
_DTYPE = contextvars.ContextVar("dtype", default=torch.float64)


def module_dtype(module: nn.Module) -> torch.dtype:
    """The dtype the module runs in: its first floating parameter's (or buffer's), which is the dtype of
    the inputs it takes, or PyTorch's default dtype when it has none. Its dtype-dependent defaults
    (RMSNorm's eps = None) are taken in it, and it is proved in it."""
    tensors = (t for t in (*module.parameters(), *module.buffers()) if t.is_floating_point())
    return next(tensors, torch.empty(0)).dtype


def _head_scale(d_head: int) -> Fraction:
    """1/sqrt(d_head) as an exact rational: exact when d_head is a perfect square (1/2 for 4, 1/3 for 9);
    otherwise it is irrational, and the scale is the float64 nearest to it, which is what PyTorch multiplies
    by, read as the binary rational it is."""
    root = math.isqrt(d_head)
    if root * root == d_head:
        return Fraction(1, root)
    return Fraction(1.0 / math.sqrt(d_head))


def _shape(tensor, name: str, expected: tuple | None = None) -> tuple:
    """A parameter's shape (a meta or sparse tensor has one too: its values are refused later, when read)."""
    if not hasattr(tensor, "shape") or not hasattr(tensor, "dtype"):
        raise InputError(f"{name} is not a tensor ({type(tensor).__name__}).")
    shape = tuple(tensor.shape)
    if expected is not None and shape != expected:
        raise InputError(f"{name} has shape {shape}, expected {expected}.")
    return shape


# every float of a module is read exactly (a Fraction each: 4 million took about 30 s), so a converted width
# is bounded before any weight is read; the network itself has no width limit but its routes' estimates
MAX_WIDTH = 256


def _width(name: str, what: str, value: int) -> int:
    if not 1 <= value <= MAX_WIDTH:
        raise InputError(
            f"{name}: {what} = {value} is outside the supported widths 1..{MAX_WIDTH}; a network this "
            "wide is refused before its weights are read."
        )
    return value


def _base(module) -> type | None:
    return next((cls for cls in SUPPORTED if isinstance(module, cls)), None)


def _leaf(module) -> bool:
    """A layer the trace of a user's module keeps whole, for ``plan`` to convert (a Sequential is traced through)."""
    return _base(module) not in (None, nn.Sequential)


def _plan(module, path: str, causal: bool) -> list[_Step]:
    """The module's steps in the order its forward runs them, from classes and shapes only."""
    base, name = _base(module), where(path, module)
    if base is None and not type(module).__module__.startswith("torch."):  # a user's own module
        return traced(module, path, lambda child, key: _plan(child, key, causal), _leaf, causal)
    if base is None:
        raise InputError(f"{name} is not supported: {_SUPPORTED_TEXT} convert.")
    check_class(name, module, base)
    if base is nn.Sequential:
        steps = []
        for key, child in module._modules.items():  # named_children() would drop a repeated module
            if child is None:
                raise InputError(f"{name} holds None as {key}; a Sequential of modules converts.")
            steps += _plan(child, f"{path}.{key}" if path else key, causal)
        return steps
    if base is nn.Dropout:
        if module.training and module.p > 0:
            raise InputError(f"{name}: p = {module.p} in training mode makes the map random; call module.eval() first.")
        return []
    if base is nn.Identity:
        return []
    if base in (nn.ReLU, nn.Tanh, nn.GELU, nn.SiLU):
        if base is nn.GELU and module.approximate not in ("none", "tanh"):
            raise InputError(f"{name}: approximate = {module.approximate!r} is not a form of GELU PyTorch has.")
        function = {nn.ReLU: "relu", nn.Tanh: "tanh", nn.GELU: "gelu", nn.SiLU: "silu"}[base]
        if base is nn.GELU and module.approximate == "tanh":
            function = "gelu_tanh"
        return [_Step(name, (Activation(function),), None, None, list)]
    if base in _STACKS:
        return _STACKS[base](module, path, lambda child, key: _plan(child, key, causal))
    prefix = f"{path}." if path else ""
    if base is nn.MultiheadAttention:
        return [_attention(module, name, prefix, causal)]
    if base in _LAYERS:
        return [_LAYERS[base](module, name, prefix)]
    return [_torch_network(module, name, prefix)]


def _linear(module, name: str, prefix: str) -> _Step:
    shape = _shape(module.weight, f"{prefix}weight")
    if len(shape) != 2:
        raise InputError(f"{prefix}weight has shape {shape}; a Linear's weight is (out_features, in_features).")
    out, d = _width(name, "out_features", shape[0]), _width(name, "in_features", shape[1])
    bias = module.bias is not None
    if bias:
        _shape(module.bias, f"{prefix}bias", (out,))

    def read():
        return _exact(module.weight, f"{prefix}weight") + (_exact(module.bias, f"{prefix}bias") if bias else [])

    return _Step(name, (Linear(out, bias=bias),), d, out, read)


def _layernorm(module, name: str, prefix: str) -> _Step:
    shape = tuple(module.normalized_shape)
    if len(shape) != 1:
        raise InputError(
            f"{name}: normalized_shape = {shape} normalizes over several axes; a LayerNorm block "
            "normalizes each token's features (normalized_shape = (d,))."
        )
    d = _width(name, "normalized_shape", shape[0])
    affine, bias = module.weight is not None, getattr(module, "bias", None) is not None
    for present, letter in ((affine, "weight"), (bias, "bias")):
        if present:
            _shape(getattr(module, letter), f"{prefix}{letter}", (d,))

    def read():
        return (_exact(module.weight, f"{prefix}weight") if affine else []) + (
            _exact(module.bias, f"{prefix}bias") if bias else []
        )

    return _Step(name, (LayerNorm(affine=affine, bias=bias, eps=float(module.eps)),), d, d, read)


def _rmsnorm(module, name: str, prefix: str) -> _Step:
    """nn.RMSNorm over the last axis; eps = None is the machine epsilon of the input's dtype, which is the
    module's own (2^-23 for a float32 module, 2^-52 for float64): ``module_dtype``."""
    shape = tuple(module.normalized_shape)
    if len(shape) != 1:
        raise InputError(
            f"{name}: normalized_shape = {shape} normalizes over several axes; an RMSNorm block "
            "normalizes each token's features (normalized_shape = (d,))."
        )
    d = _width(name, "normalized_shape", shape[0])
    affine = module.weight is not None
    if affine:
        _shape(module.weight, f"{prefix}weight", (d,))
    eps = float(module.eps) if module.eps is not None else float(torch.finfo(_DTYPE.get()).eps)

    def read():
        return _exact(module.weight, f"{prefix}weight") if affine else []

    return _Step(name, (RMSNorm(affine=affine, eps=eps),), d, d, read)


def _attention(module, name: str, prefix: str, causal: bool) -> _Step:
    E, H = module.embed_dim, module.num_heads
    if module.kdim != E or module.vdim != E:
        raise InputError(
            f"{name}: kdim = {module.kdim}, vdim = {module.vdim} differ from embed_dim = {E}; only "
            "self-attention (kdim = vdim = embed_dim) is a block."
        )
    if module.bias_k is not None or module.bias_v is not None:
        raise InputError(f"{name}: add_bias_kv is not supported (it appends a learned key and value token).")
    if module.add_zero_attn:
        raise InputError(f"{name}: add_zero_attn is not supported (it appends a zero token).")
    if module.dropout and module.training:
        raise InputError(
            f"{name}: dropout = {module.dropout} in training mode makes the map random; call module.eval() first."
        )
    _width(name, "embed_dim", E)
    if not 1 <= H <= MAX_HEADS or E % H:
        raise InputError(f"{name}: num_heads = {H} must divide embed_dim = {E} and be at most {MAX_HEADS}.")
    packed = module.in_proj_weight is not None
    if packed:
        _shape(module.in_proj_weight, f"{prefix}in_proj_weight", (3 * E, E))
    else:
        for x in "qkv":
            _shape(getattr(module, f"{x}_proj_weight"), f"{prefix}{x}_proj_weight", (E, E))
    bias = module.in_proj_bias is not None
    if bias != (module.out_proj.bias is not None):
        raise InputError(f"{name}: the in-projection and out-projection disagree on biases.")
    _shape(module.out_proj.weight, f"{prefix}out_proj.weight", (E, E))
    if bias:
        _shape(module.in_proj_bias, f"{prefix}in_proj_bias", (3 * E,))
        _shape(module.out_proj.bias, f"{prefix}out_proj.bias", (E,))
    d = E // H

    def read() -> list[Fraction]:
        if packed:
            whole = _exact(module.in_proj_weight, f"{prefix}in_proj_weight")
            projections = [whole[: E * E], whole[E * E : 2 * E * E], whole[2 * E * E :]]
        else:
            projections = [_exact(getattr(module, f"{x}_proj_weight"), f"{prefix}{x}_proj_weight") for x in "qkv"]
        if bias:
            b = _exact(module.in_proj_bias, f"{prefix}in_proj_bias")
            biases = [b[:E], b[E : 2 * E], b[2 * E :]]
        out_w = _exact(module.out_proj.weight, f"{prefix}out_proj.weight")  # (E, E) row-major
        scale = _head_scale(d)
        values: list[Fraction] = []
        for h in range(H):
            rows = slice(h * d * E, (h + 1) * d * E)
            values += [v * scale for v in projections[0][rows]]  # Q_h, the 1/sqrt(d_head) folded in
            values += projections[1][rows] + projections[2][rows]  # K_h, W_h (value)
            values += [out_w[r * E + h * d + c] for r in range(E) for c in range(d)]  # O_h: columns of out_proj
            if bias:
                values += [v * scale for v in biases[0][h * d : (h + 1) * d]]
                values += biases[1][h * d : (h + 1) * d] + biases[2][h * d : (h + 1) * d]
        if bias:
            values += _exact(module.out_proj.bias, f"{prefix}out_proj.bias")
        return values

    block = Attention(d, heads=H, value=d, out=E, causal=causal, bias=bias, normalization="softmax")
    return _Step(name, (block,), E, E, read, (replace(block, normalization="none"),))


def _embedding(module, name: str, prefix: str) -> _Step:
    """An embedding looks up row i of its weight for token id i: on the one-hot vector of i that is the
    linear map W^T (no bias). The padding row is looked up like any other (PyTorch only freezes it)."""
    if module.max_norm is not None:
        raise InputError(
            f"{name}: max_norm = {module.max_norm} rescales the rows it looks up, in place, on each "
            "call; only an embedding without max_norm is a fixed linear map."
        )
    shape = _shape(module.weight, f"{prefix}weight")
    if len(shape) != 2:
        raise InputError(f"{prefix}weight has shape {shape}; an Embedding's weight is (num_embeddings, embedding_dim).")
    vocabulary, d = _width(name, "num_embeddings", shape[0]), _width(name, "embedding_dim", shape[1])

    def read():
        rows = _exact(module.weight, f"{prefix}weight")  # (vocabulary, d) row-major; the block's P is its transpose
        return [rows[i * d + r] for r in range(d) for i in range(vocabulary)]

    return _Step(name, (Linear(d),), vocabulary, d, read, onehot=True)


# the layers that become one block each, from their shapes: one row per layer class
_LAYERS = {nn.Linear: _linear, nn.LayerNorm: _layernorm, nn.RMSNorm: _rmsnorm, nn.Embedding: _embedding}
# the modules of modules, planned from their children's steps (``encoder``)
_STACKS = {nn.TransformerEncoderLayer: encoder_layer, nn.TransformerEncoder: encoder}


def _torch_network(module: TorchNetwork, name: str, prefix: str) -> _Step:
    net = module.network
    if not isinstance(net, Network):
        raise InputError(f"{name}: its network is a {type(net).__name__}, not a Network.")

    def read():  # its parameters, not its state_dict (a state_dict hook could change what that holds)
        if naming():
            return _network_names(net, prefix)
        return list(point_from_state_dict(net, dict(module.named_parameters())).values)

    return _Step(name, tuple(net.blocks), net.input, net.output, read)


def _network_names(net: Network, prefix: str) -> list[str]:
    """A TorchNetwork's entry names in the canonical order (its parameters hold the canonical order, each
    letter's matrices stacked over the heads: ``model.state_dict_from_point``)."""
    out: list[str] = [""] * net.parameters
    for key, shape in state_names(net).items():
        _, i, letter = key.split(".")
        names = iter(entry_names(f"{prefix}{key}", shape))
        for m in net.weight_matrices:
            if m.block == int(i) and m.letter == letter:
                out[m.offset : m.stop] = [next(names) for _ in range(m.size)]
    return out


def _network(steps: list[_Step], tokens: int, top: str) -> Network:
    """The network of the steps, its widths chained and its limits checked before any weight is read."""
    width = first = giver = None
    for step in steps[1:]:
        if step.onehot:
            raise InputError(
                f"{step.name} takes token ids, so it converts only as the first layer (the network's "
                "inputs are then its one-hot vectors)."
            )
    for step in steps:
        if step.takes is not None and width is not None and step.takes != width:
            raise InputError(
                f"{step.name} takes {step.takes} features but {giver} before it gives {width}; each "
                "layer must take the features the one before it gives."
            )
        if step.takes is not None and first is None:
            first = width = step.takes
        if step.gives is not None:
            width, giver = step.gives, step.name
    owners = [step.name for step in steps for _ in step.blocks]
    if first is None:
        raise InputError(
            f"{top} has no layer that fixes a width (nn.Linear, nn.LayerNorm, nn.RMSNorm, "
            "nn.MultiheadAttention, nn.Embedding); there is nothing to convert."
        )
    if len(owners) > MAX_BLOCKS:
        raise InputError(f"{top} converts to {len(owners)} blocks, above the supported maximum of {MAX_BLOCKS}.")
    try:
        return Network(first, tokens, tuple(b for step in steps for b in step.blocks))
    except InputError as exc:
        found = re.match(r"network: block (\d+) \(\w+\): ", str(exc))  # name the module, not the block
        raise InputError(f"{owners[int(found.group(1))]}: {str(exc)[found.end() :]}" if found else str(exc)) from None


_MASKABLE = (nn.MultiheadAttention, nn.TransformerEncoderLayer, nn.TransformerEncoder)


def _note_masks(module: nn.Module, causal: bool) -> None:
    """A mask is an argument of the call, not part of the module, so the conversion cannot see one: say so
    once when attention was converted unmasked."""
    masked = next((where(p, m) for p, m in module.named_modules() if isinstance(m, _MASKABLE)), None)
    if masked is not None and not causal:
        warnings.warn(
            f"from_torch: {masked} converted without a mask; a mask given at call time (attn_mask, "
            "key_padding_mask, is_causal) is not part of the module: pass causal=True if it is called with a "
            "causal mask (a padding mask does not convert).",
            UserWarning,
            stacklevel=3,
        )


def from_torch(module, *, tokens: int = 3, lightning: bool = False, causal: bool = False):
    """(network, point) for a PyTorch module, its weights read exactly. ``tokens``: the sequence length the
    network acts on (it is not in the module). ``nn.MultiheadAttention`` becomes a factored attention block
    (d_head = embed_dim / num_heads, biases as the module has them) with the 1/sqrt(d_head) scale folded into
    Q and b_q (exactly for square d_head, else the float64 PyTorch multiplies by); softmax, or with
    ``lightning`` our lightning variant on the same weights; ``causal`` when it is called with a causal mask.
    A post-LN ``nn.TransformerEncoderLayer`` is attention (residual), LayerNorm, mlp (residual), LayerNorm; a
    pre-LN one LayerNorm, attention (residual = 2: a group from the norm), LayerNorm, mlp (residual = 2);
    an ``nn.Embedding`` first is a linear block on one-hot token ids (the network's inputs are one-hot); a
    module of the user's own class is read through its torch.fx trace (``traced``). Each weight keeps the
    state_dict entry it came from (``point.origins``).
    Anything else is refused naming the module or the option, before any weight is read; the result is
    checked against the module's own forward on random inputs (the softmax network, with ``lightning``), in
    float64 and in the dtype the module runs in (``module_dtype``), from which the defaults PyTorch takes
    from the input's dtype are taken too. Attention converted without ``causal`` warns in one line that a
    mask given at call time is not part of the module."""
    if not isinstance(module, nn.Module):
        raise InputError(f"from_torch takes an nn.Module, got {type(module).__name__}.")
    for flag, value in (("lightning", lightning), ("causal", causal)):
        if not isinstance(value, bool):
            raise InputError(f"from_torch: {flag} must be True or False, got {value!r}.")
    count = integer_value(tokens)
    if count is None or not 1 <= count <= MAX_TOKENS:
        raise InputError(f"from_torch: tokens must be a whole number from 1 to {MAX_TOKENS}, got {tokens!r}.")
    check_hooks(module)
    dtype = module_dtype(module)
    token = _DTYPE.set(dtype)
    try:
        steps = _plan(module, "", causal)
    finally:
        _DTYPE.reset(token)
    check_own_calls(module)
    check_tied(module)
    net = _network(steps, count, where("", module))
    values = [v for step in steps for v in step.read()]
    source = f"torch {type(module).__name__}"
    point = WeightPoint(net, tuple(values), source=source, origins=origins(steps))
    prove(module, net, point, causal, onehot=steps[0].onehot, dtype=dtype)
    _note_masks(module, causal)
    if lightning:
        net = Network(net.input, net.tokens, tuple(b for s in steps for b in (s.lightning or s.blocks)))
        point = WeightPoint(net, point.values, source=source, origins=point.origins)
    return net, point
