"""The PyTorch bridge (optional extra ``lightning_cas[torch]``): a module with exactly our parametrization,
and its ``state_dict`` read back as a weight point.

``TorchNetwork(net)`` is an ``nn.Module`` computing the same function as ``core.forward`` on a
``Network``: biases where the blocks have them, LayerNorm and ReLU/GELU/tanh where it has them, no
1/sqrt(d_head) scaling of the logits (the attention matrix is S = (K Y)^T (Q Y)), the causal mask keeps
key i <= query j, softmax over the keys. PyTorch convention on the outside: ``forward(x)`` takes x of
shape (batch, tokens, d_0) and returns (batch, tokens, d_out) (our token matrices are the transposes:
tokens are columns). Parameters are named ``blocks.{i}.{letter}`` (i from 0; q, k, v or w, o for
attention, stacked over heads as (H, rows, cols); u, d for an mlp; p for a linear block; biases b + the
letter, bo for the output bias): the same names ``system.points`` reads from .npz and .safetensors files,
so ``torch.save(model.state_dict())`` can be converted with ``safetensors.torch.save_file`` and given to
``dim --at``.


Nothing else in lightning_cas imports torch.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import torch
from torch import nn

from lightning_cas.core.network import MLP, Activation, Attention, LayerNorm, Linear, Network, Power
from lightning_cas.system.points import WeightPoint, exact_values, point_from_arrays, state_names
from lightning_cas.errors import InputError


class TorchNetwork(nn.Module):
    """A network of blocks as an nn.Module (module docstring); float64 by default, so the weights a test
    trains are the exact binary rationals the rank is computed at."""

    def __init__(self, network: Network, dtype: torch.dtype = torch.float64, seed: int = 0,
                 calibrate: bool = True):
        super().__init__()
        self.network = network
        generator = torch.Generator().manual_seed(seed)
        shapes = state_names(network)
        self.blocks = nn.ModuleList()
        for i, block in enumerate(network.blocks):
            module = _Block(block)
            for name, shape in shapes.items():
                _, index, letter = name.split(".")
                if int(index) == i and letter in ("g", "bg"):  # LayerNorm: PyTorch's ones and zeros
                    init = torch.ones(shape, dtype=dtype) if letter == "g" else torch.zeros(shape, dtype=dtype)
                    module.register_parameter(letter, nn.Parameter(init))
                elif int(index) == i:
                    scale = 1.0 / math.sqrt(shape[-1])  # fan-in: keeps attention logits O(1)
                    module.register_parameter(letter, nn.Parameter(torch.randn(shape, generator=generator,
                                                                               dtype=dtype) * scale))
            self.blocks.append(module)
        if calibrate:
            self._calibrate(generator, dtype)

    @torch.no_grad()
    def _calibrate(self, generator: torch.Generator, dtype: torch.dtype, batch: int = 64) -> None:
        """Scale each block's output matrices (and output biases) so that, on standard Gaussian inputs, the
        block's output has root mean square 1 (a residual branch 1/sqrt(number of residual blocks)): the
        maps are polynomial of degree 3^L, so a fan-in scaling alone lets the output grow or vanish
        doubly exponentially with depth."""
        residual = sum(bool(getattr(b, "residual", False)) for b in self.network.blocks) or 1
        x = torch.randn(batch, self.network.input, self.network.tokens, generator=generator, dtype=dtype)
        Y = x
        for block in self.blocks:
            spec = block.spec
            out = block.branch(Y)
            rms = float(out.pow(2).mean().sqrt())
            target = 1.0 / math.sqrt(residual) if getattr(spec, "residual", False) else 1.0
            if rms > 0 and math.isfinite(rms):
                for name, param in block.named_parameters():
                    if name in _OUTPUT_LETTERS:
                        param.mul_(target / rms)
            Y = block(Y)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        Y = x.transpose(-1, -2)  # (batch, d, t): tokens as columns
        for block in self.blocks:
            Y = block(Y)
        return Y.transpose(-1, -2)

    def point(self) -> WeightPoint:
        """The module's weights as an exact weight point."""
        return point_from_state_dict(self.network, self.state_dict())

    def load_point(self, point: WeightPoint) -> None:
        """Set the module's weights to a point (exactly, when the point's values are of the module's dtype)."""
        self.load_state_dict(state_dict_from_point(point, next(self.parameters()).dtype))


# the parameters that multiply a block's output (scaling them scales the block's output exactly)
_OUTPUT_LETTERS = {"v", "bv", "o", "bo", "d", "bd", "p", "bp"}
_FUNCTIONS = {"relu": torch.relu, "tanh": torch.tanh, "gelu": nn.functional.gelu}


class _Block(nn.Module):
    """One block; its weights are registered as parameters named by their letters (blocks.{i}.{letter})."""

    def __init__(self, block):
        super().__init__()
        self.spec = block

    def forward(self, Y: torch.Tensor) -> torch.Tensor:
        out = self.branch(Y)
        return Y + out if getattr(self.spec, "residual", False) else out

    def branch(self, Y: torch.Tensor) -> torch.Tensor:
        """The block without its residual connection."""
        b = self.spec
        p = dict(self.named_parameters())
        bias = getattr(b, "bias", False)

        def affine(letter: str):
            M = torch.einsum("had,ndt->nhat", p[letter], Y)
            return M + p["b" + letter][None, :, :, None] if bias else M

        if isinstance(b, Attention):
            QY, KY = affine("q"), affine("k")
            VY = affine("v") if b.value is None else torch.einsum("heb,nhbt->nhet", p["o"], affine("w"))
            S = torch.einsum("nhai,nhaj->nhij", KY, QY)  # key i, query j
            t = Y.shape[-1]
            keep = torch.ones(t, t, dtype=torch.bool)
            if b.causal:
                keep = torch.triu(keep)
            if b.normalization == "softmax":
                A = torch.softmax(S.masked_fill(~keep, float("-inf")), dim=-2)
            else:
                A = S * keep
            out = torch.einsum("nhei,nhij->nej", VY, A)
            if bias and b.value is not None:
                out = out + p["bo"][None, :, None]
        elif isinstance(b, MLP):
            H = p["u"] @ Y + (p["bu"][:, None] if bias else 0)
            out = p["d"] @ (H ** b.degree if b.polynomial else _FUNCTIONS[b.activation](H))
            out = out + (p["bd"][:, None] if bias else 0)
        elif isinstance(b, Activation):
            out = _FUNCTIONS[b.function](Y)
        elif isinstance(b, LayerNorm):
            C = Y - Y.mean(dim=-2, keepdim=True)
            out = C / torch.sqrt((C * C).mean(dim=-2, keepdim=True) + b.eps)
            out = out * (p["g"][:, None] if b.affine else 1) + (p["bg"][:, None] if b.bias else 0)
        elif isinstance(b, Linear):
            out = p["p"] @ Y + (p["bp"][:, None] if bias else 0)
        elif isinstance(b, Power):
            out = Y ** b.degree
        else:  # pragma: no cover - Network validates the kinds
            raise InputError(f"unknown block {b!r}")
        return out


def point_from_state_dict(network: Network, state: dict) -> WeightPoint:
    """A state_dict of ``TorchNetwork`` (or tensors under the file names) as an exact weight point; missing
    or extra keys and wrong shapes are refused in one line naming the key."""
    if not isinstance(state, dict):
        raise InputError(f"a state_dict must be a mapping of names to tensors, got {type(state).__name__}.")
    arrays = {}
    for name, tensor in state.items():
        if not isinstance(tensor, torch.Tensor):
            raise InputError(f"the state_dict entry {name!r} is not a tensor.")
        if not (tensor.dtype.is_floating_point or tensor.dtype in (torch.int64, torch.int32, torch.int16,
                                                                   torch.int8, torch.uint8)):
            raise InputError(f"the state_dict entry {name!r} holds {tensor.dtype}, not numbers.")
        value = tensor.detach().cpu()
        if value.dtype in (torch.bfloat16, torch.float16):
            value = value.to(torch.float32)  # exactly: both embed in float32
        arrays[name] = value.numpy()
    return point_from_arrays(network, arrays, "the state_dict")


def state_dict_from_point(point: WeightPoint, dtype: torch.dtype = torch.float64) -> dict:
    """The module's state_dict holding the point's values (rounded to ``dtype`` where they are not exact)."""
    net = point.network
    values = np.array([float(v) for v in point.values])
    out = {}
    for name, shape in state_names(net).items():
        _, i, letter = name.split(".")
        mats = [m for m in net.weight_matrices if m.block == int(i) and m.letter == letter]
        data = np.concatenate([values[m.offset:m.stop] for m in mats]).reshape(shape)
        out[name] = torch.tensor(data, dtype=dtype)
    return out


# ---------------------------------------------------------------- PyTorch modules in

_EXACT_DTYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16)


def _exact(tensor, name: str) -> list[Fraction]:
    """A tensor's entries as exact rationals: float16 and bfloat16 embed exactly in float32; float8, meta,
    sparse and non-numeric tensors are refused in one line."""
    if not isinstance(tensor, torch.Tensor):
        raise InputError(f"{name} is not a tensor ({type(tensor).__name__}).")
    if tensor.is_meta:
        raise InputError(f"{name} is a meta tensor (it has a shape but no values); load the weights first.")
    if tensor.layout != torch.strided:
        raise InputError(f"{name} is a sparse tensor ({tensor.layout}); convert it with .to_dense() first.")
    if tensor.dtype not in _EXACT_DTYPES:
        raise InputError(f"{name} holds {tensor.dtype}; lightning_cas reads float64, float32, float16 and bfloat16 "
                         "weights (convert with .to(torch.float32)).")
    value = tensor.detach().cpu()
    if value.dtype in (torch.float16, torch.bfloat16):
        value = value.to(torch.float32)
    return exact_values(value.numpy(), name)


def _head_scale(d_head: int) -> Fraction:
    """1/sqrt(d_head) as an exact rational: exact when d_head is a perfect square (1/2 for 4, 1/3 for 9);
    otherwise it is irrational, and the scale is the float64 nearest to it, which is what PyTorch multiplies
    by, read as the binary rational it is."""
    root = math.isqrt(d_head)
    if root * root == d_head:
        return Fraction(1, root)
    return Fraction(1.0 / math.sqrt(d_head))


def _linear(module, index: str) -> tuple[Linear, list[Fraction]]:
    bias = module.bias is not None
    values = _exact(module.weight, f"{index}.weight")
    if bias:
        values += _exact(module.bias, f"{index}.bias")
    return Linear(module.out_features, bias=bias), values


def _attention(module, index: str, lightning: bool, causal: bool) -> tuple[Attention, list[Fraction]]:
    E, H = module.embed_dim, module.num_heads
    if module.kdim != E or module.vdim != E:
        raise InputError(f"{index} (MultiheadAttention): kdim = {module.kdim}, vdim = {module.vdim} differ from "
                         f"embed_dim = {E}; only self-attention (kdim = vdim = embed_dim) is a block.")
    if module.bias_k is not None or module.bias_v is not None:
        raise InputError(f"{index} (MultiheadAttention): add_bias_kv is not supported (it appends a learned key "
                         "and value token).")
    if module.add_zero_attn:
        raise InputError(f"{index} (MultiheadAttention): add_zero_attn is not supported (it appends a zero token).")
    if module.dropout and module.training:
        raise InputError(f"{index} (MultiheadAttention): dropout = {module.dropout} in training mode makes the map "
                         "random; call module.eval() first.")
    d = E // H
    if module.in_proj_weight is not None:
        packed = _exact(module.in_proj_weight, f"{index}.in_proj_weight")
        third = E * E
        projections = [packed[:third], packed[third:2 * third], packed[2 * third:]]
    else:
        projections = [_exact(getattr(module, f"{x}_proj_weight"), f"{index}.{x}_proj_weight") for x in "qkv"]
    bias = module.in_proj_bias is not None
    if bias:
        packed_bias = _exact(module.in_proj_bias, f"{index}.in_proj_bias")
        biases = [packed_bias[:E], packed_bias[E:2 * E], packed_bias[2 * E:]]
    out_w = _exact(module.out_proj.weight, f"{index}.out_proj.weight")  # (E, E) row-major
    out_b = _exact(module.out_proj.bias, f"{index}.out_proj.bias") if module.out_proj.bias is not None else None
    if bias != (out_b is not None):
        raise InputError(f"{index} (MultiheadAttention): the in-projection and out-projection disagree on biases.")
    scale = _head_scale(d)
    values: list[Fraction] = []
    for h in range(H):
        rows = slice(h * d * E, (h + 1) * d * E)
        values += [v * scale for v in projections[0][rows]]  # Q_h, the 1/sqrt(d_head) folded in
        values += projections[1][rows] + projections[2][rows]  # K_h, W_h (value)
        values += [out_w[r * E + h * d + c] for r in range(E) for c in range(d)]  # O_h: columns of out_proj
        if bias:
            values += [v * scale for v in biases[0][h * d:(h + 1) * d]]
            values += biases[1][h * d:(h + 1) * d] + biases[2][h * d:(h + 1) * d]
    if bias:
        values += out_b
    block = Attention(d, heads=H, value=d, out=E, causal=causal, bias=bias,
                      normalization="none" if lightning else "softmax")
    return block, values


def _convert(module, index: str, lightning: bool, causal: bool) -> tuple[list, list[Fraction], int | None]:
    """(blocks, values, input width or None) of one module."""
    if isinstance(module, TorchNetwork):
        point = module.point()
        return list(module.network.blocks), list(point.values), module.network.input
    if isinstance(module, nn.Linear):
        block, values = _linear(module, index)
        return [block], values, module.in_features
    if isinstance(module, nn.MultiheadAttention):
        block, values = _attention(module, index, lightning, causal)
        return [block], values, module.embed_dim
    if isinstance(module, nn.Sequential):
        blocks, values, width = [], [], None
        for name, child in module.named_children():
            b, v, w = _convert(child, f"{index}.{name}" if index else name, lightning, causal)
            width = width if width is not None else w
            blocks += b
            values += v
        return blocks, values, width
    if isinstance(module, (nn.Dropout, nn.Identity)) and not (isinstance(module, nn.Dropout) and module.training
                                                             and module.p > 0):
        return [], [], None
    if isinstance(module, nn.Dropout):
        raise InputError(f"{index or 'the module'} (Dropout): p = {module.p} in training mode makes the map random; "
                         "call module.eval() first.")
    where = index or "the module"
    if isinstance(module, nn.ReLU):
        return [Activation("relu")], [], None
    if isinstance(module, nn.Tanh):
        return [Activation("tanh")], [], None
    if isinstance(module, nn.GELU):
        if module.approximate != "none":
            raise InputError(f"{where} (GELU): approximate = {module.approximate!r} is not supported; the erf form "
                             "(approximate = 'none', the default) is.")
        return [Activation("gelu")], [], None
    if isinstance(module, nn.LayerNorm):
        return _layernorm(module, where)
    kind = type(module).__name__
    raise InputError(f"{where} ({kind}) is not supported: nn.Linear, nn.MultiheadAttention (self-attention), "
                     "nn.LayerNorm, nn.ReLU, nn.GELU, nn.Tanh, nn.Sequential of those and TorchNetwork convert.")


def _layernorm(module, where: str):
    shape = tuple(module.normalized_shape)
    if len(shape) != 1:
        raise InputError(f"{where} (LayerNorm): normalized_shape = {shape} normalizes over several axes; a LayerNorm "
                         "block normalizes each token's features (normalized_shape = (d,)).")
    affine = module.weight is not None
    bias = getattr(module, "bias", None) is not None
    values = (_exact(module.weight, f"{where}.weight") if affine else []) + \
        (_exact(module.bias, f"{where}.bias") if bias else [])
    return [LayerNorm(affine=affine, bias=bias, eps=float(module.eps))], values, shape[0]


def from_torch(module, *, tokens: int = 3, lightning: bool = False, causal: bool = False):
    """(network, point) for a PyTorch module, its weights read exactly. ``tokens``: the sequence length the
    network acts on (it is not in the module). ``nn.MultiheadAttention`` becomes a factored attention block
    (d_head = embed_dim / num_heads, biases as the module has them) with the 1/sqrt(d_head) scale folded into
    Q and b_q (exactly for square d_head, else the float64 PyTorch multiplies by); softmax, or with
    ``lightning`` our lightning variant on the same weights; ``causal`` when it is called with a causal mask.
    Anything else is refused naming the module or the option."""
    if not isinstance(module, nn.Module):
        raise InputError(f"from_torch takes an nn.Module, got {type(module).__name__}.")
    blocks, values, width = _convert(module, "", lightning, causal)
    if not blocks or width is None:
        raise InputError(f"the module ({type(module).__name__}) has no layer lightning_cas can convert.")
    net = Network(width, tokens, tuple(blocks))
    return net, WeightPoint(net, tuple(values), source=f"torch {type(module).__name__}")
