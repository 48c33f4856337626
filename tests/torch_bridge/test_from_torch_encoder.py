"""nn.TransformerEncoderLayer (post- and pre-LN), nn.TransformerEncoder and nn.Embedding through from_torch: the
converted network computes what the module computes (checked here directly, not only by the converter's own
proof), the tanh GELU and max_norm are refused in one line, and a tiny layer gets a rank bracket at its weights."""

from __future__ import annotations

import functools

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from lightning_cas import dimension  # noqa: E402
from lightning_cas.core import forward  # noqa: E402
from lightning_cas.core.arithmetic import Float64  # noqa: E402
from lightning_cas.core.network import MLP, Attention, LayerNorm, Linear  # noqa: E402
from lightning_cas.errors import InputError  # noqa: E402
from lightning_cas.torch_bridge import from_torch  # noqa: E402

F64 = torch.float64


def ours(net, point, x):
    """Our forward on PyTorch's (batch, tokens, features) input, returned in the same layout."""
    return np.swapaxes(forward.evaluate(net, Float64(), point.floats(), np.swapaxes(x.numpy(), 1, 2)), 1, 2)


def theirs(module, x, batch_first, mask=None):
    """The module's own forward on (batch, tokens, features), called as its batch_first wants."""
    y = x if batch_first else x.transpose(0, 1)
    with torch.no_grad():
        if isinstance(module, nn.TransformerEncoder):
            out = module(y, mask=mask)
        else:
            out = module(y, src_mask=mask)
    return (out if batch_first else out.transpose(0, 1)).numpy()


def trained(module):
    """Norm gains and biases away from PyTorch's ones and zeros (as after training)."""
    torch.manual_seed(7)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith(("norm1.weight", "norm2.weight", "norm.weight")):
                p.copy_(1 + 0.5 * torch.rand_like(p))
            elif name.endswith(("norm1.bias", "norm2.bias", "norm.bias")):
                p.copy_(torch.randn_like(p))
    return module


def layer(d=8, heads=2, ff=8, **kw):
    torch.manual_seed(0)
    return trained(nn.TransformerEncoderLayer(d, heads, ff, dtype=F64, **kw)).eval()


@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("d, heads", [(4, 1), (8, 2)])
def test_a_post_ln_encoder_layer_computes_what_torch_computes(activation, batch_first, d, heads):
    module = layer(d, heads, activation=activation, batch_first=batch_first)
    net, point = from_torch(module, tokens=3)
    attention, norm1, mlp, norm2 = net.blocks
    assert isinstance(attention, Attention) and isinstance(mlp, MLP)
    assert isinstance(norm1, LayerNorm) and isinstance(norm2, LayerNorm)
    assert (attention.heads, attention.attention, attention.value, attention.out) == (heads, d // heads, d // heads, d)
    assert attention.residual and attention.bias and attention.normalization == "softmax"
    assert (mlp.hidden, mlp.activation, mlp.out, mlp.residual, mlp.bias) == (8, activation, d, True, True)
    assert net.parameters == sum(p.numel() for p in module.parameters())
    x = torch.randn(5, 3, d, dtype=F64)
    assert np.abs(ours(net, point, x) - theirs(module, x, batch_first)).max() < 1e-10


@pytest.mark.parametrize(
    "activation, function",
    [(F.relu, "relu"), (F.gelu, "gelu"), (nn.GELU(), "gelu"), (nn.ReLU(), "relu"), (nn.Tanh(), "tanh")],
)
def test_an_activation_given_as_a_function_or_a_module_converts(activation, function):
    module = layer(4, 2, activation=activation, batch_first=True)
    net, point = from_torch(module, tokens=2)
    assert net.blocks[2].activation == function
    x = torch.randn(4, 2, 4, dtype=F64)
    assert np.abs(ours(net, point, x) - theirs(module, x, True)).max() < 1e-10


def test_a_layer_without_biases_and_a_causal_layer_compute_what_torch_computes():
    module = layer(4, 2, bias=False, batch_first=True, layer_norm_eps=1e-3)
    net, point = from_torch(module, tokens=3)
    assert not net.blocks[0].bias and not net.blocks[2].bias and not net.blocks[1].bias
    assert net.blocks[1].eps == 1e-3
    x = torch.randn(4, 3, 4, dtype=F64)
    assert np.abs(ours(net, point, x) - theirs(module, x, True)).max() < 1e-10
    net, point = from_torch(module, tokens=3, causal=True)
    mask = torch.triu(torch.ones(3, 3, dtype=torch.bool), diagonal=1)
    assert net.blocks[0].causal
    assert np.abs(ours(net, point, x) - theirs(module, x, True, mask)).max() < 1e-10
    lightning, _ = from_torch(module, tokens=3, lightning=True)
    assert lightning.blocks[0].normalization == "none" and lightning.blocks[0].residual


@pytest.mark.parametrize("batch_first", [True, False])
def test_an_encoder_of_two_layers_and_a_final_norm_computes_what_torch_computes(batch_first):
    torch.manual_seed(1)
    one = nn.TransformerEncoderLayer(4, 2, 8, activation="gelu", batch_first=batch_first, dtype=F64)
    module = trained(nn.TransformerEncoder(one, 2, norm=nn.LayerNorm(4, dtype=F64), enable_nested_tensor=False))
    with torch.no_grad():  # the clones start equal: make the second layer differ
        for p in module.layers[1].parameters():
            p.add_(0.1 * torch.randn_like(p))
    module.eval()
    net, point = from_torch(module, tokens=3)
    assert [b.kind for b in net.blocks] == ["attention", "layernorm", "mlp", "layernorm"] * 2 + ["layernorm"]
    x = torch.randn(5, 3, 4, dtype=F64)
    assert np.abs(ours(net, point, x) - theirs(module, x, batch_first)).max() < 1e-10
    bare = nn.TransformerEncoder(one, 1, enable_nested_tensor=batch_first).eval()  # no padding mask: no nested path
    net, point = from_torch(bare, tokens=2)
    assert len(net.blocks) == 4
    assert np.abs(ours(net, point, x[:, :2]) - theirs(bare, x[:, :2], batch_first)).max() < 1e-10


@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("batch_first", [True, False])
def test_a_pre_ln_layer_is_two_residual_groups_and_computes_what_torch_computes(activation, batch_first):
    """x + SA(LN1(x)), then x + FF(LN2(x)): a layernorm and the attention (residual = 2), a layernorm and the mlp."""
    module = layer(8, 2, activation=activation, batch_first=batch_first, norm_first=True)
    net, point = from_torch(module, tokens=3)
    assert [(b.kind, b.residual) for b in net.blocks] == [
        ("layernorm", 0),
        ("attention", 2),
        ("layernorm", 0),
        ("mlp", 2),
    ]
    assert net.parameters == sum(p.numel() for p in module.parameters())
    x = torch.randn(5, 3, 8, dtype=F64)
    assert np.abs(ours(net, point, x) - theirs(module, x, batch_first)).max() < 1e-10
    mask = torch.triu(torch.ones(3, 3, dtype=torch.bool), diagonal=1)
    net, point = from_torch(module, tokens=3, causal=True)
    assert np.abs(ours(net, point, x) - theirs(module, x, batch_first, mask)).max() < 1e-10


def test_a_pre_ln_encoder_with_its_final_norm_computes_what_torch_computes():
    torch.manual_seed(3)
    one = nn.TransformerEncoderLayer(4, 2, 8, norm_first=True, batch_first=True, dtype=F64)
    module = trained(nn.TransformerEncoder(one, 2, norm=nn.LayerNorm(4, dtype=F64), enable_nested_tensor=False))
    with torch.no_grad():  # the clones start equal: make the second layer differ
        for p in module.layers[1].parameters():
            p.add_(0.1 * torch.randn_like(p))
    module.eval()
    net, point = from_torch(module, tokens=3)
    assert [b.residual for b in net.blocks] == [0, 2, 0, 2] * 2 + [0]
    assert "r2" in net.label()
    x = torch.randn(5, 3, 4, dtype=F64)
    assert np.abs(ours(net, point, x) - theirs(module, x, True)).max() < 1e-10


def test_an_embedding_first_is_a_linear_block_on_one_hot_token_ids():
    torch.manual_seed(2)
    embedding = nn.Embedding(10, 4, padding_idx=0, dtype=F64)
    encoder = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(4, 1, 8, batch_first=True, dtype=F64), 1, enable_nested_tensor=False
    )
    module = nn.Sequential(embedding, encoder).eval()
    net, point = from_torch(module, tokens=3)
    assert net.input == 10 and net.blocks[0] == Linear(4)
    P = np.array([float(v) for v in point.values[:40]]).reshape(4, 10)
    assert np.array_equal(P, embedding.weight.detach().numpy().T) and not P[:, 0].any()  # the padding row: zeros
    ids = torch.randint(10, (6, 3))
    with torch.no_grad():
        expected = module(ids).numpy()
    onehot = nn.functional.one_hot(ids, 10).to(F64)
    assert np.abs(ours(net, point, onehot) - expected).max() < 1e-10


def test_the_rank_on_one_hot_inputs_is_the_rank_over_the_tokens_used():
    """Embedding rows no input looks up do not move the outputs: on ids {0, 1} only two of the four rows count."""
    torch.manual_seed(3)
    module = nn.Sequential(nn.Embedding(4, 2, dtype=F64), nn.Linear(2, 2, bias=False, dtype=F64))
    net, point = from_torch(module, tokens=1)
    every = np.eye(4)[[0, 1, 2, 3] * 3][:, :, None]  # (inputs, d, tokens): one-hot columns
    some = np.eye(4)[[0, 1] * 3][:, :, None]
    assert dimension(net, at=point, inputs=every).dimension == 8  # A E^T: all 2 x 4 matrices
    assert dimension(net, at=point, inputs=some).dimension == 4  # its two columns for ids 0 and 1


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_a_tiny_encoder_layer_gets_a_rank_bracket_at_its_weights(activation):
    """d_model 4, one head, ff 4, two tokens (136 weights), 12 inputs: about 3 s each. The lower bound is the
    rank of a Gram minor enclosed away from 0, the upper one the weights less the exact kernel vectors found
    (the symmetries: at least the norms' and softmax's translations)."""
    module = layer(4, 1, 4, activation=activation, batch_first=True)
    net, point = from_torch(module, tokens=2)
    assert net.parameters == 136
    result = dimension(net, at=point, inputs=np.random.default_rng(0).standard_normal((12, 4, 2)))
    lower, upper = result.certificate.lower, result.certificate.upper
    assert 0 < lower == result.dimension <= upper < net.parameters


def refused(module, match, **kw) -> str:
    with pytest.raises(InputError, match=match) as info:
        from_torch(module, **kw)
    assert "\n" not in str(info.value)
    return str(info.value)


@pytest.mark.parametrize(
    "make, match",
    [
        (
            lambda: layer(4, 2, activation=functools.partial(F.gelu, approximate="tanh")),
            r"activation = functools\.partial\(<built-in function gelu>, approximate='tanh'\) is not supported",
        ),
        (lambda: layer(4, 2, activation=lambda x: F.relu(x)), r"activation = .*<lambda> is not supported"),
        (lambda: layer(4, 2, dropout=0.1).train(), r"^dropout \(Dropout\): p = 0\.1 in training mode"),
        (lambda: nn.Embedding(5, 3, max_norm=1.0), r"^the Embedding module: max_norm = 1\.0 rescales the rows"),
        (
            lambda: nn.Sequential(nn.Linear(3, 5), nn.Embedding(5, 3)),
            r"^1 \(Embedding\) takes token ids, so it converts "
            r"only as the first layer",
        ),
    ],
)
def test_what_the_network_model_cannot_express_is_refused_in_one_line(make, match):
    refused(make(), match)


class OwnFeedforward(nn.TransformerEncoderLayer):
    def _ff_block(self, x):
        return 0 * x


def test_a_layer_replacing_part_of_its_forward_or_its_children_is_refused():
    refused(
        OwnFeedforward(4, 2, 8),
        r"^the OwnFeedforward module is a subclass of nn\.TransformerEncoderLayer with "
        r"its own _ff_block",
    )
    module = layer(4, 2)
    module.linear1 = nn.Linear(4, 6, dtype=F64)  # linear2 still takes 8
    refused(module, r"linear2 maps 8 to 4 features but linear1 maps 4 to 6")
    module = layer(4, 2)
    module.linear2.bias = None
    refused(module, "linear1 and linear2 disagree on biases")
