"""PyTorch modules in: the converted network computes what the module computes, on random inputs, for every
supported layer; unsupported modules, options and tensors are refused in one line naming them."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from lightning_cas import dimension  # noqa: E402
from lightning_cas.core import forward  # noqa: E402
from lightning_cas.core.arithmetic import Float64  # noqa: E402
from lightning_cas.core.network import MLP, Activation, Attention, LayerNorm, Linear, Network  # noqa: E402
from lightning_cas.errors import InputError  # noqa: E402
from lightning_cas.torch_bridge import TorchNetwork, from_torch  # noqa: E402


def ours(net, point, x):
    """Our forward on PyTorch's (batch, tokens, features) input, returned in the same layout."""
    return np.swapaxes(forward.evaluate(net, Float64(), point.floats(), np.swapaxes(x.numpy(), 1, 2)), 1, 2)


def mha(E, H, **kw):
    torch.manual_seed(0)
    return nn.MultiheadAttention(E, H, dtype=torch.float64, **kw).eval()


LAYERS = {
    "linear": lambda: nn.Linear(4, 3, dtype=torch.float64),
    "linear-no-bias": lambda: nn.Linear(4, 2, bias=False, dtype=torch.float64),
    "sequential": lambda: nn.Sequential(
        nn.Linear(4, 5, dtype=torch.float64),
        nn.Dropout(0.1).eval(),
        nn.Sequential(nn.Linear(5, 2, bias=False, dtype=torch.float64)),
    ),
    "torchnetwork": lambda: TorchNetwork(
        Network(
            4, 3, (Attention(2, heads=2, value=2, causal=True, residual=True, bias=True), MLP(3, bias=True), Linear(2))
        )
    ),
    "torchnetwork-in-sequential": lambda: nn.Sequential(
        nn.Linear(4, 3, dtype=torch.float64), TorchNetwork(Network(3, 3, (Attention(1, bias=True),)))
    ),
    "relu-mlp": lambda: nn.Sequential(
        nn.Linear(4, 6, dtype=torch.float64), nn.ReLU(), nn.Linear(6, 2, dtype=torch.float64)
    ),
    "gelu-tanh": lambda: nn.Sequential(
        nn.Linear(4, 5, dtype=torch.float64), nn.GELU(), nn.Tanh(), nn.Linear(5, 3, bias=False, dtype=torch.float64)
    ),
    "layernorm": lambda: _trained_layernorm(nn.LayerNorm(4, dtype=torch.float64)),
    "layernorm-no-affine": lambda: nn.Sequential(
        nn.Linear(4, 3, dtype=torch.float64), nn.LayerNorm(3, elementwise_affine=False, eps=1e-3, dtype=torch.float64)
    ),
    "layernorm-no-bias": lambda: nn.LayerNorm(4, bias=False, dtype=torch.float64),
    "transformer-layer": lambda: nn.Sequential(
        nn.LayerNorm(4, dtype=torch.float64),
        nn.Linear(4, 8, dtype=torch.float64),
        nn.GELU(),
        nn.Linear(8, 4, dtype=torch.float64),
    ),
    "torchnetwork-functions": lambda: TorchNetwork(
        Network(
            4,
            3,
            (MLP(5, activation="relu", bias=True), LayerNorm(), Activation("tanh"), MLP(3, activation="gelu", out=2)),
        )
    ),
}


def _trained_layernorm(ln):
    """A LayerNorm whose gain and bias are not PyTorch's ones and zeros (as after training)."""
    with torch.no_grad():
        ln.weight.copy_(torch.linspace(0.5, 2.0, ln.weight.numel(), dtype=ln.weight.dtype))
        ln.bias.copy_(torch.linspace(-1.0, 1.0, ln.bias.numel(), dtype=ln.bias.dtype))
    return ln


@pytest.mark.parametrize("name", LAYERS)
def test_the_converted_network_computes_the_module(name):
    module = LAYERS[name]()
    net, point = from_torch(module, tokens=3)
    x = torch.randn(6, 3, net.input, dtype=torch.float64)
    assert np.allclose(ours(net, point, x), module(x).detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "E, H, bias, batch_first",
    [(4, 1, True, False), (4, 2, True, True), (6, 2, False, True), (9, 1, True, True), (8, 2, True, False)],
)
def test_multihead_attention_converts_with_its_scale_and_biases(E, H, bias, batch_first):
    """d_head = 4 (scale 1/2) and 9 (1/3) are exact, 3 and 2 are the float64 PyTorch uses; batch_first only
    changes how the module is called."""
    module = mha(E, H, bias=bias, batch_first=batch_first)
    net, point = from_torch(module, tokens=4)
    block = net.blocks[0]
    assert (block.heads, block.attention, block.value, block.out, block.bias) == (H, E // H, E // H, E, bias)
    assert block.normalization == "softmax"
    x = torch.randn(5, 4, E, dtype=torch.float64)
    xin = x if batch_first else x.transpose(0, 1)
    y = module(xin, xin, xin, need_weights=False)[0]
    y = y if batch_first else y.transpose(0, 1)
    assert np.allclose(ours(net, point, x), y.detach().numpy(), rtol=1e-10, atol=1e-12)
    causal_net, causal_point = from_torch(module, tokens=4, causal=True)
    mask = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)  # query j may not see key i > j
    yc = module(xin, xin, xin, attn_mask=mask, need_weights=False)[0]
    yc = yc if batch_first else yc.transpose(0, 1)
    assert np.allclose(ours(causal_net, causal_point, x), yc.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_the_exact_scales():
    from fractions import Fraction

    from lightning_cas.torch_bridge.convert import _head_scale

    assert _head_scale(4) == Fraction(1, 2) and _head_scale(9) == Fraction(1, 3) and _head_scale(16) == Fraction(1, 4)
    assert _head_scale(2) == Fraction(1.0 / math.sqrt(2))  # irrational: the float64 1/sqrt(2), read exactly


def test_lightning_variant_and_a_certified_rank_at_the_module_weights():
    module = mha(4, 2)
    net, point = from_torch(module, tokens=3, lightning=True)
    assert net.blocks[0].normalization == "none" and net.polynomial
    soft, soft_point = from_torch(module, tokens=3)
    assert soft_point.values == point.values
    result = dimension(soft, at=soft_point)
    # certified both ways: a Gram minor enclosed away from 0, and 24 exact kernel vectors (GL(2) on (Q, K) and on
    # (W, O) per head, and the key- and value-bias translations softmax adds): 80 - 24 = 56
    assert result.certainty == "exact" and result.certificate.lower == result.certificate.upper == 56
    assert dimension(soft, method="numeric").dimension == 56  # the float protocol at random weights agrees


def test_half_precision_weights_are_read_exactly():
    lin = nn.Linear(2, 2, dtype=torch.bfloat16)
    _, point = from_torch(lin, tokens=1)
    assert [float(v) for v in point.values[:4]] == lin.weight.detach().to(torch.float64).reshape(-1).tolist()


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: mha(4, 2, add_bias_kv=True), "add_bias_kv"),
        (lambda: nn.MultiheadAttention(4, 2, kdim=3, vdim=3), "kdim = 3"),
        (lambda: nn.MultiheadAttention(4, 2, dropout=0.1).train(), "dropout = 0.1 in training mode"),
        (lambda: nn.MultiheadAttention(4, 2, add_zero_attn=True), "add_zero_attn"),
        (lambda: nn.Conv1d(2, 2, 1), "the Conv1d module is not supported"),
        (lambda: nn.Sequential(nn.Linear(2, 2), nn.Softplus()), r"1 \(Softplus\) is not supported"),
        (lambda: nn.Sequential(nn.Linear(4, 4), nn.LayerNorm((2, 2))), r"normalized_shape = \(2, 2\)"),
        (lambda: nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5)), r"Dropout\): p = 0.5 in training mode"),
        (lambda: nn.Linear(2, 2).to(torch.float8_e4m3fn), "float8_e4m3fn"),
        (lambda: nn.Linear(2, 2, device="meta"), "meta tensor"),
    ],
)
def test_unsupported_modules_options_and_tensors_are_refused_in_one_line(make, match):
    with pytest.raises(InputError, match=match) as info:
        from_torch(make())
    assert "\n" not in str(info.value)


def test_a_sparse_weight_is_refused():
    lin = nn.Linear(2, 2)
    lin.weight = nn.Parameter(lin.weight.detach().to_sparse(), requires_grad=False)
    with pytest.raises(InputError, match="sparse"):
        from_torch(lin)


def test_a_relu_mlp_from_torch_gets_its_exact_batch_functional_dimension():
    """The rank on given inputs, proved from both sides, agrees with float64 autograd on a well-conditioned
    batch (numpy's tolerance), and the kernel is the hidden units' scalings."""
    torch.manual_seed(3)
    module = nn.Sequential(nn.Linear(3, 6, dtype=torch.float64), nn.ReLU(), nn.Linear(6, 2, dtype=torch.float64))
    net, point = from_torch(module, tokens=1)
    x = torch.randn(40, 1, 3, dtype=torch.float64)
    result = dimension(net, at=point, inputs=x.numpy(), layout="tokens-features")
    jac = torch.autograd.functional.jacobian(
        lambda *ps: torch.func.functional_call(module, dict(zip([n for n, _ in module.named_parameters()], ps)), (x,)),
        tuple(module.parameters()),
    )
    J = np.concatenate([j.reshape(x.shape[0] * 2, -1).numpy() for j in jac], axis=1)
    assert result.certainty == "exact" and result.certificate.lower == result.certificate.upper
    assert result.dimension == np.linalg.matrix_rank(J) == net.parameters - 6


def test_a_layernorm_gelu_block_from_torch_gets_a_certified_rank():
    torch.manual_seed(4)
    module = nn.Sequential(
        nn.Linear(3, 4, dtype=torch.float64),
        nn.LayerNorm(4, dtype=torch.float64),
        nn.Linear(4, 5, dtype=torch.float64),
        nn.GELU(),
        nn.Linear(5, 2, dtype=torch.float64),
    )
    net, point = from_torch(module, tokens=2)
    result = dimension(net, at=point, inputs=np.random.default_rng(0).standard_normal((12, 3, 2)))
    assert result.method == "arb" and result.certificate.lower == result.certificate.upper == result.dimension
    assert result.dimension < net.parameters  # the LayerNorm's shift, plane and rotation kernel vectors
