"""What a PyTorch module must be for ``from_torch`` to read it (checked before any weight is read), and the
proof afterwards that the converted network computes what the module computes.

The converter reads a module's parameters and interprets its class (an ``nn.Linear`` is y = W x + b). That
interpretation is the module's function only when the module runs its class's own forward and nothing else:
no hooks (the module's own, or the global ones that run on every module's call), no forward (or call
machinery) overridden by a subclass or replaced on the instance, and no parameter used in two places (a
tied weight is one weight; each block of a network has its own). Whatever these checks miss, the proof
catches: both forwards run on a few random inputs and must agree up to rounding, in float64 and in the
dtype the module runs in (a float32 module in float32, within float32's rounding).
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from torch import nn
from torch.nn.modules import module as torch_module
from torch.nn.utils import parametrize

from lightning_cas.core.arithmetic import Float64
from lightning_cas.core.forward import evaluate
from lightning_cas.errors import InputError

# torch.nn.modules.module's registries of hooks that every module's call runs (torch 2.x; the
# _with_kwargs and _always_called tables only flag entries of these)
_GLOBAL_HOOKS = {
    "_global_forward_pre_hooks": "forward pre-hook (register_module_forward_pre_hook)",
    "_global_forward_hooks": "forward hook (register_module_forward_hook)",
    "_global_backward_pre_hooks": "backward pre-hook (register_module_full_backward_pre_hook)",
    "_global_backward_hooks": "backward hook (register_module_full_backward_hook)",
}
_HOOKS = {
    "_forward_pre_hooks": "a forward pre-hook",
    "_forward_hooks": "a forward hook",
    "_backward_pre_hooks": "a backward pre-hook",
    "_backward_hooks": "a backward hook",
}
# what calling a module runs: a subclass or the instance replacing any of these changes the function
CALL = ("forward", "__call__", "_call_impl", "_wrapped_call_impl")
TOLERANCE = 1e-8  # relative to the output's size: float64 rounding of two orders of the same operations
PROOF_INPUTS = 3
PROOF_SEED = 0


def where(path: str, module) -> str:
    """How a message names a module: its dotted path and class; the unnamed top-level module by its class."""
    kind = type(module).__name__
    return f"{path} ({kind})" if path else f"the {kind} module"


def _hook_names(hooks) -> str:
    return ", ".join(getattr(h, "__qualname__", type(h).__name__) for h in hooks.values())


def check_hooks(root: nn.Module) -> None:
    """Refuse a global hook, or a hook on any module of the tree."""
    for attr, what in _GLOBAL_HOOKS.items():
        hooks = getattr(torch_module, attr, None)
        if hooks:
            raise InputError(
                f"a global {what} is registered ({_hook_names(hooks)}): it runs on every module's call, "
                "so what a module computes is not its layers' alone; remove it (the handle's .remove()) "
                "before from_torch."
            )
    for path, module in root.named_modules(remove_duplicate=False):
        for attr, what in _HOOKS.items():
            hooks = getattr(module, attr, None)
            if hooks:
                raise InputError(
                    f"{where(path, module)} has {what} ({_hook_names(hooks)}): a hook can change what "
                    "the module computes, and from_torch reads its layers alone; remove it (the "
                    "handle's .remove()) first."
                )


def check_own_calls(root: nn.Module) -> None:
    """Refuse a forward (or call machinery) set on an instance anywhere in the tree (checked after the
    classes, so that an unsupported module is named as such)."""
    for path, module in root.named_modules(remove_duplicate=False):
        own = [attr for attr in CALL if attr in vars(module)]
        if own:
            raise InputError(
                f"{where(path, module)} has its own {own[0]} set on the instance, so it need not compute "
                "what its class computes; from_torch reads only a class's own forward."
            )


def check_class(name: str, module: nn.Module, base: type) -> None:
    """Refuse a subclass of a supported class that replaces its forward or its call machinery, and a module
    whose weights a parametrization computes on each call (in its own dtype: a float64 copy would compute
    other weights than the ones read)."""
    for attr in CALL:
        if getattr(type(module), attr, None) is not getattr(base, attr, None):
            raise InputError(
                f"{name} is a subclass of nn.{base.__name__} with its own {attr}; from_torch reads only "
                f"what nn.{base.__name__}'s own forward computes."
            )
    if parametrize.is_parametrized(module):
        tensor = next(iter(module.parametrizations.keys()))
        raise InputError(
            f"{name} has a parametrization of {tensor} (torch.nn.utils.parametrize), which computes its "
            "weights on each call; fix them first with parametrize.remove_parametrizations(module, "
            f"{tensor!r}, leave_parametrized=True)."
        )


def check_tied(root: nn.Module) -> None:
    """Refuse a parameter that two places of the tree hold (one module used twice, or a weight assigned to
    two modules): it is one weight, and the network would get two independent copies of it."""
    first: dict[int, str] = {}
    for name, parameter in root.named_parameters(remove_duplicate=False):
        if id(parameter) not in first:
            first[id(parameter)] = name
            continue
        a, b = first[id(parameter)], name
        owners = [p.rpartition(".")[0] for p in (a, b)]
        modules = [root.get_submodule(p) for p in owners]
        shared = (
            f"{where(owners[0], modules[0])} is used twice, as {owners[0] or 'the top level'} and {owners[1]}"
            if modules[0] is modules[1]
            else f"{where(owners[0], modules[0])} and {where(owners[1], modules[1])} share a parameter"
        )
        raise InputError(
            f"tied weights: {shared} ({a} is {b}); each block of a network has its own weights, so a "
            "tied weight is refused: give each place its own copy (copy.deepcopy) to convert the "
            "untied model."
        )
    _check_shared_memory(root)


def _span(tensor) -> tuple[int, int, int] | None:
    """(storage address, first byte, end byte) of the memory a dense tensor's entries can occupy."""
    if tensor.is_meta or tensor.layout != torch.strided or tensor.numel() == 0:
        return None
    size = tensor.element_size()
    last = tensor.storage_offset() + sum((n - 1) * abs(s) for n, s in zip(tensor.shape, tensor.stride()))
    return tensor.untyped_storage().data_ptr(), tensor.storage_offset() * size, (last + 1) * size


def _check_shared_memory(root: nn.Module) -> None:
    """Two distinct parameters on overlapping memory (``nn.Parameter(a.weight)`` shares a's memory) are
    tied as well: training one trains the other. Views of one flat buffer side by side are not."""
    spans = [(name, _span(p)) for name, p in root.named_parameters()]
    spans = sorted(((span, name) for name, span in spans if span is not None))
    for (span, name), (other, other_name) in zip(spans, spans[1:]):
        if span[0] == other[0] and other[1] < span[2]:
            raise InputError(
                f"tied weights: the parameters {name} and {other_name} share memory (one is a view of "
                "the other, or both of one tensor); each block of a network has its own weights: give "
                "each its own copy (.clone()) to convert the untied model."
            )


class _SelfAttention(nn.Module):
    """An ``nn.MultiheadAttention`` called as the self-attention block it converts to: ``module(x, x, x)``,
    with the causal mask when the conversion is causal (query j sees keys i <= j), ``batch_first`` either way."""

    def __init__(self, attention: nn.MultiheadAttention, causal: bool):
        super().__init__()
        self.attention, self.causal = attention, causal

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = x.shape[1]
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1) if self.causal else None
        first = self.attention.batch_first
        y = x if first else x.transpose(0, 1)
        out = self.attention(y, y, y, attn_mask=mask, need_weights=False)[0]
        return out if first else out.transpose(0, 1)


class _Encoder(nn.Module):
    """An ``nn.TransformerEncoder(Layer)`` called on (batch, tokens, features), with the causal mask when the
    conversion is causal."""

    def __init__(self, encoder: nn.Module, causal: bool):
        super().__init__()
        self.encoder, self.causal = encoder, causal

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = x.shape[1]
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1) if self.causal else None
        layer = self.encoder.layers[0] if isinstance(self.encoder, nn.TransformerEncoder) else self.encoder
        first = layer.self_attn.batch_first
        y = x if first else x.transpose(0, 1)
        if isinstance(self.encoder, nn.TransformerEncoder):
            out = self.encoder(y, mask=mask, is_causal=self.causal)
        else:
            out = self.encoder(y, src_mask=mask, is_causal=self.causal)
        return out if first else out.transpose(0, 1)


class _OneHot(nn.Module):
    """An ``nn.Embedding`` called on one-hot vectors: the token ids they are the one-hot vectors of."""

    def __init__(self, embedding: nn.Embedding):
        super().__init__()
        self.embedding = embedding

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.embedding(x.argmax(dim=-1))


def _callable(module: nn.Module, causal: bool) -> nn.Module:
    """The module (a copy) with every MultiheadAttention wrapped as self-attention, so that one call runs
    the whole tree on one input (a Sequential passes one tensor, attention takes three); likewise an
    encoder (layer) on our token layout, and an embedding on one-hot vectors."""
    if isinstance(module, nn.MultiheadAttention):
        return _SelfAttention(module, causal)
    if isinstance(module, (nn.TransformerEncoderLayer, nn.TransformerEncoder)):
        return _Encoder(module, causal)
    if isinstance(module, nn.Embedding):
        return _OneHot(module)
    if isinstance(module, nn.Sequential):
        for key, child in list(module._modules.items()):
            module._modules[key] = _callable(child, causal)
    return module


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def tolerance(dtype: torch.dtype) -> float:
    """How far the module's own forward may be from the network's (relative to the output's size): float64
    rounding, or in a lower precision 256 of its rounding units (a float32 module: 3.1e-5)."""
    return max(TOLERANCE, 256 * float(torch.finfo(dtype).eps))


def _run(module: nn.Module, causal: bool, X: np.ndarray, dtype: torch.dtype, own: torch.dtype) -> np.ndarray:
    """The module's own forward (a copy in ``dtype`` and eval mode, without gradients: the user's module is
    not touched) on the inputs, as float64, with the defaults PyTorch takes from the input's dtype set to
    those of the module's ``own`` dtype; anything the module raises is a one-line refusal."""
    try:
        twin = copy.deepcopy(module)
        for part in twin.modules():
            if isinstance(part, nn.RMSNorm) and part.eps is None:
                part.eps = float(torch.finfo(own).eps)
        twin = _callable(twin, causal).to(device="cpu", dtype=dtype).eval()
        with torch.no_grad():
            theirs = twin(torch.from_numpy(X).to(dtype))
    except Exception as exc:  # the user's module (and what it holds): anything it raises is a refusal, not a crash
        text = (str(exc).strip().splitlines() or [""])[0][:200]
        raise InputError(
            f"checking the conversion failed: copying the module to {_dtype_name(dtype)} and running it on "
            f"random inputs raised {type(exc).__name__}: {text}"
        ) from None
    if not isinstance(theirs, torch.Tensor):
        return theirs
    return theirs.to(torch.float64).numpy()


def prove(
    module: nn.Module, net, point, causal: bool, onehot: bool = False, dtype: torch.dtype = torch.float64
) -> None:
    """Run the module's own forward and the network's (float64) on a few random inputs with a fixed seed,
    and refuse in one line when they differ by more than rounding: a float64 copy of the module, within
    float64's rounding (what is converted is what the layers compute), and the module in its own ``dtype``
    (``module_dtype``), within that dtype's (``tolerance``), so that a default PyTorch takes from the dtype
    the module runs in (RMSNorm's eps = None) is checked as the user runs it. One input of tiny norm (1e-4)
    is among them, where such an eps shows. With ``onehot``, random token ids, one-hot: the module's
    embedding takes the ids."""
    rng = np.random.default_rng(PROOF_SEED)
    if onehot:
        X = np.eye(net.input)[rng.integers(net.input, size=(PROOF_INPUTS, net.tokens))]
    else:
        X = rng.standard_normal((PROOF_INPUTS, net.tokens, net.input))
        X = np.concatenate([X, 1e-4 * X[:1]])
    for kind in dict.fromkeys((torch.float64, dtype)):
        given = torch.from_numpy(X).to(kind).to(torch.float64).numpy()  # the inputs as the module sees them
        theirs = _run(module, causal, X, kind, dtype)
        ours = np.swapaxes(evaluate(net, Float64(), point.floats(), np.swapaxes(given, 1, 2)), 1, 2)
        _compare(theirs, ours, X.shape, kind)


def _compare(theirs, ours: np.ndarray, shape: tuple, dtype: torch.dtype) -> None:
    if not isinstance(theirs, np.ndarray) or theirs.shape != ours.shape:
        got = theirs.shape if isinstance(theirs, np.ndarray) else type(theirs).__name__
        raise InputError(
            f"the converted network does not compute what the module computes: on inputs of shape "
            f"{shape} (batch, tokens, features) the module returns {got}, the network {ours.shape}."
        )
    same = (theirs == ours) | (np.isnan(theirs) & np.isnan(ours))  # equal infinities and NaNs agree too
    gap = np.where(same, 0.0, np.nan_to_num(np.abs(theirs - ours), nan=np.inf))
    finite = np.abs(theirs[np.isfinite(theirs)])
    scale = max(1.0, float(finite.max()) if finite.size else 1.0)
    if gap.max() > tolerance(dtype) * scale:
        n, t, e = np.unravel_index(int(np.argmax(gap)), gap.shape)
        raise InputError(
            f"the converted network does not compute what the module computes: on random inputs (seed "
            f"{PROOF_SEED}) the largest difference is {gap.max():.3g} in {_dtype_name(dtype)}, above its "
            f"tolerance {tolerance(dtype):.2g} relative to the output (input {n}, token {t}, output {e}: "
            f"the module gives {theirs[n, t, e]:.6g}, the network {ours[n, t, e]:.6g}); from_torch converts "
            "only what the supported layers' own forwards compute."
        )
