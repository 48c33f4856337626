"""``TorchNetwork``: an ``nn.Module`` with exactly our parametrization, its ``state_dict`` read back as a
weight point, and the one place a tensor's values are read (``tensor_array``)."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from lightning_cas.core.network import (
    MLP,
    Activation,
    Attention,
    LayerNorm,
    Linear,
    Network,
    Position,
    Power,
    RMSNorm,
)
from lightning_cas.errors import InputError
from lightning_cas.system.points import WeightPoint, point_from_arrays, state_names


class TorchNetwork(nn.Module):
    """A network of blocks as an nn.Module (module docstring); float64 by default, so the weights a test
    trains are the exact binary rationals the rank is computed at."""

    def __init__(self, network: Network, dtype: torch.dtype = torch.float64, seed: int = 0, calibrate: bool = True):
        super().__init__()
        self.network = network
        generator = torch.Generator().manual_seed(seed)
        shapes = state_names(network)
        self.blocks = nn.ModuleList()
        for i, block in enumerate(network.blocks):
            module = _Block(block)
            for name, shape in shapes.items():
                _, index, letter = name.split(".")
                if int(index) == i and letter in ("g", "bg"):  # a norm's gain and bias: PyTorch's ones and zeros
                    init = torch.ones(shape, dtype=dtype) if letter == "g" else torch.zeros(shape, dtype=dtype)
                    module.register_parameter(letter, nn.Parameter(init))
                elif int(index) == i:
                    scale = 1.0 / math.sqrt(shape[-1])  # fan-in: keeps attention logits O(1)
                    module.register_parameter(
                        letter, nn.Parameter(torch.randn(shape, generator=generator, dtype=dtype) * scale)
                    )
            self.blocks.append(module)
        if calibrate:
            self._calibrate(generator, dtype)

    @torch.no_grad()
    def _calibrate(self, generator: torch.Generator, dtype: torch.dtype, batch: int = 64) -> None:
        """Scale each block's output matrices (and output biases) so that, on standard Gaussian inputs, the
        block's output has root mean square 1 (a residual branch 1/sqrt(number of residual blocks)): the
        maps are polynomial of degree 3^L, so a fan-in scaling alone lets the output grow or vanish
        doubly exponentially with depth."""
        residual = sum(bool(b.residual) for b in self.network.blocks) or 1
        x = torch.randn(batch, self.network.input, self.network.tokens, generator=generator, dtype=dtype)
        Y, inputs = x, {}
        for i, block in enumerate(self.blocks):
            spec = block.spec
            out = block.branch(Y)
            rms = float(out.pow(2).mean().sqrt())
            target = 1.0 / math.sqrt(residual) if spec.residual else 1.0
            if rms > 0 and math.isfinite(rms):
                for name, param in block.named_parameters():
                    if name in _OUTPUT_LETTERS:
                        param.mul_(target / rms)
            Y = self._step(i, Y, inputs)

    def _step(self, i: int, Y: torch.Tensor, inputs: dict) -> torch.Tensor:
        """Block i on Y, its residual group's input added when it ends one (``inputs``: first block -> input)."""
        inputs[i] = Y
        out = self.blocks[i].branch(Y)
        n = self.blocks[i].spec.residual
        return out + inputs[i + 1 - n] if n else out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        Y, inputs = x.transpose(-1, -2), {}  # (batch, d, t): tokens as columns
        for i in range(len(self.blocks)):
            Y = self._step(i, Y, inputs)
        return Y.transpose(-1, -2)

    def point(self) -> WeightPoint:
        """The module's weights as an exact weight point."""
        return point_from_state_dict(self.network, self.state_dict())

    def load_point(self, point: WeightPoint) -> None:
        """Set the module's weights to a point (exactly, when the point's values are of the module's dtype)."""
        self.load_state_dict(state_dict_from_point(point, next(self.parameters()).dtype))


# the parameters that multiply a block's output (scaling them scales the block's output exactly)
_OUTPUT_LETTERS = {"v", "bv", "o", "bo", "d", "bd", "p", "bp"}
_FUNCTIONS = {
    "relu": torch.relu,
    "tanh": torch.tanh,
    "gelu": nn.functional.gelu,
    "silu": nn.functional.silu,
    "gelu_tanh": lambda x: nn.functional.gelu(x, approximate="tanh"),
}


class _Block(nn.Module):
    """One block; its weights are registered as parameters named by their letters (blocks.{i}.{letter})."""

    def __init__(self, block):
        super().__init__()
        self.spec = block

    def forward(self, Y: torch.Tensor) -> torch.Tensor:
        """The block alone, with its residual only when it is a group of its own (``TorchNetwork`` runs groups)."""
        out = self.branch(Y)
        return Y + out if self.spec.residual == 1 else out

    def branch(self, Y: torch.Tensor) -> torch.Tensor:
        """The block without its residual connection (its kind's row of ``_BRANCHES``)."""
        return _BRANCHES[type(self.spec)](self.spec, dict(self.named_parameters()), Y)


def _affine(b, p: dict, letter: str, Y: torch.Tensor) -> torch.Tensor:
    M = torch.einsum("had,ndt->nhat", p[letter], Y)
    return M + p["b" + letter][None, :, :, None] if b.bias else M


def _attention(b: Attention, p: dict, Y: torch.Tensor) -> torch.Tensor:
    QY, KY = _affine(b, p, "q", Y), _affine(b, p, "k", Y)
    VY = _affine(b, p, "v", Y) if b.value is None else torch.einsum("heb,nhbt->nhet", p["o"], _affine(b, p, "w", Y))
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
    return out + p["bo"][None, :, None] if b.bias and b.value is not None else out


def _mlp(b: MLP, p: dict, Y: torch.Tensor) -> torch.Tensor:
    H = p["u"] @ Y + (p["bu"][:, None] if b.bias else 0)
    out = p["d"] @ (H**b.degree if b.polynomial else _FUNCTIONS[b.activation](H))
    return out + (p["bd"][:, None] if b.bias else 0)


def _layernorm(b: LayerNorm, p: dict, Y: torch.Tensor) -> torch.Tensor:
    C = Y - Y.mean(dim=-2, keepdim=True)
    out = C / torch.sqrt((C * C).mean(dim=-2, keepdim=True) + b.eps)
    return out * (p["g"][:, None] if b.affine else 1) + (p["bg"][:, None] if b.bias else 0)


def _rmsnorm(b: RMSNorm, p: dict, Y: torch.Tensor) -> torch.Tensor:
    out = Y / torch.sqrt((Y * Y).mean(dim=-2, keepdim=True) + b.eps)
    return out * (p["g"][:, None] if b.affine else 1)


# each kind's forward in torch: one row per block kind
_BRANCHES = {
    Attention: _attention,
    MLP: _mlp,
    LayerNorm: _layernorm,
    RMSNorm: _rmsnorm,
    Activation: lambda b, p, Y: _FUNCTIONS[b.function](Y),
    Linear: lambda b, p, Y: p["p"] @ Y + (p["bp"][:, None] if b.bias else 0),
    Power: lambda b, p, Y: Y**b.degree,
    Position: lambda b, p, Y: Y + p["e"],  # E (d, t): one column per token
}


def point_from_state_dict(network: Network, state: dict) -> WeightPoint:
    """A state_dict of ``TorchNetwork`` (or tensors under the file names) as an exact weight point; missing
    or extra keys, wrong shapes, and tensors without readable values (meta, sparse, float8, complex) are
    refused in one line naming the key."""
    if not isinstance(state, dict):
        raise InputError(f"a state_dict must be a mapping of names to tensors, got {type(state).__name__}.")
    arrays = {
        name: tensor_array(tensor, f"the state_dict entry {name!r}", integers=True) for name, tensor in state.items()
    }
    return point_from_arrays(network, arrays, "the state_dict")


def state_dict_from_point(point: WeightPoint, dtype: torch.dtype = torch.float64) -> dict:
    """The module's state_dict holding the point's values (rounded to ``dtype`` where they are not exact)."""
    net = point.network
    values = np.array([float(v) for v in point.values])
    out = {}
    for name, shape in state_names(net).items():
        _, i, letter = name.split(".")
        mats = [m for m in net.weight_matrices if m.block == int(i) and m.letter == letter]
        data = np.concatenate([values[m.offset : m.stop] for m in mats]).reshape(shape)
        out[name] = torch.tensor(data, dtype=dtype)
    return out


# ---------------------------------------------------------------- reading a tensor's values

READ_DTYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16)
_INTEGERS = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


def tensor_array(tensor, name: str, integers: bool = False) -> np.ndarray:
    """A tensor's values as a numpy array, refused in one line naming it when it has none to read: meta
    tensors (a shape, no values), sparse or other non-strided layouts, and dtypes numpy cannot hold exactly
    (float8, complex, quantized). bfloat16 goes through float32, in which it embeds exactly (same exponents);
    integer dtypes only where ``integers`` (a state_dict's entries)."""
    if not isinstance(tensor, torch.Tensor):
        raise InputError(f"{name} is not a tensor ({type(tensor).__name__}).")
    if tensor.is_meta:
        raise InputError(f"{name} is a meta tensor (it has a shape but no values); load the weights first.")
    if tensor.layout != torch.strided:
        raise InputError(f"{name} is a sparse tensor ({tensor.layout}); convert it with .to_dense() first.")
    if tensor.dtype not in READ_DTYPES and not (integers and tensor.dtype in _INTEGERS):
        raise InputError(
            f"{name} holds {tensor.dtype}; lightning_cas reads float64, float32, float16 and bfloat16 "
            "weights (convert with .to(torch.float32))."
        )
    value = tensor.detach().cpu()
    if value.dtype == torch.bfloat16:  # numpy has no bfloat16; float32 holds it exactly, with the same range
        value = value.to(torch.float32)
    return value.numpy()  # float16 stays float16: its own subnormal range is the one refused
