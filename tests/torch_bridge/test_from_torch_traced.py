"""A user's own nn.Module through from_torch (traced by torch.fx): the converted network computes what the
module computes (checked here directly, not only by the converter's own proof), each weight keeps its
state_dict name, and ops, graphs, hooks and forwards it cannot read are refused in one line naming the op
and its source line."""

from __future__ import annotations

import inspect
from fractions import Fraction

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from lightning_cas.core import forward  # noqa: E402
from lightning_cas.core.arithmetic import Float64  # noqa: E402
from lightning_cas.core.network import Linear  # noqa: E402
from lightning_cas.errors import InputError  # noqa: E402
from lightning_cas.torch_bridge import from_torch  # noqa: E402

F64 = torch.float64
FILE = "test_from_torch_traced.py"


def ours(net, point, x):
    return np.swapaxes(forward.evaluate(net, Float64(), point.floats(), np.swapaxes(x.numpy(), 1, 2)), 1, 2)


def agrees(module, net, point, d, tokens=3):
    """The converted network computes the module's own forward within 1e-10 (float64)."""
    x = torch.randn(5, tokens, d, dtype=F64)
    with torch.no_grad():
        theirs = module(x).numpy()
    return np.abs(ours(net, point, x) - theirs).max() < 1e-10


def refused(module, match, **kw) -> str:
    with pytest.raises(InputError, match=match) as info:
        from_torch(module, **kw)
    assert "\n" not in str(info.value)
    return str(info.value)


def line_of(method, text: str) -> int:
    """The line number of the line of ``method`` that holds ``text``."""
    lines, start = inspect.getsourcelines(method)
    return start + next(i for i, line in enumerate(lines) if text in line)


def trained(module, seed=0):
    """Every weight random, norm gains and biases away from PyTorch's ones and zeros (as after training)."""
    torch.manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn_like(p) * 0.5 + (1.0 if p.dim() == 1 and p.numel() == 8 else 0.0))
    return module.eval()


class PostLN(nn.Module):
    """A post-LN transformer block, written out: attention + residual, LayerNorm, ReLU MLP + residual, LayerNorm."""

    def __init__(self, d=8, heads=2, hidden=16):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True, dtype=F64)
        self.ln1 = nn.LayerNorm(d, dtype=F64)
        self.up = nn.Linear(d, hidden, dtype=F64)
        self.down = nn.Linear(hidden, d, dtype=F64)
        self.ln2 = nn.LayerNorm(d, dtype=F64)

    def forward(self, x):
        x = self.ln1(x + self.attn(x, x, x, need_weights=False)[0])
        return self.ln2(x + self.down(F.relu(self.up(x))))


class Stack(nn.Module):
    def __init__(self, n=2):
        super().__init__()
        self.blocks = nn.ModuleList([PostLN() for _ in range(n)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class PreLN(nn.Module):
    """A GPT-style pre-LN block: x + attn(ln1(x)), then x + mlp(ln2(x))."""

    def __init__(self, d=8, heads=2, hidden=16):
        super().__init__()
        self.ln1 = nn.LayerNorm(d, dtype=F64)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True, dtype=F64)
        self.ln2 = nn.LayerNorm(d, dtype=F64)
        self.mlp = nn.Sequential(nn.Linear(d, hidden, dtype=F64), nn.GELU(), nn.Linear(hidden, d, dtype=F64))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class UserMLP(nn.Module):
    def __init__(self, act=F.relu):
        super().__init__()
        self.fc1, self.fc2, self.act = nn.Linear(4, 6, dtype=F64), nn.Linear(6, 3, dtype=F64), act

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Sin(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4, dtype=F64)

    def forward(self, x):
        y = self.lin(x)
        return torch.sin(y)


class Gram(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4, dtype=F64)

    def forward(self, x):
        y = self.lin(x)
        return y @ y.transpose(-1, -2)


# ---------------------------------------------------------------- what converts


def test_a_user_post_ln_block_converts_and_computes_what_torch_computes():
    module = trained(PostLN())
    net, point = from_torch(module, tokens=3)
    assert [b.kind for b in net.blocks] == ["attention", "layernorm", "mlp", "layernorm"]
    attention, _, mlp, _ = net.blocks
    assert attention.residual and attention.heads == 2 and attention.normalization == "softmax"
    assert (mlp.hidden, mlp.activation, mlp.out, mlp.residual, mlp.bias) == (16, "relu", 8, True, True)
    assert net.parameters == sum(p.numel() for p in module.parameters()) == 600
    assert agrees(module, net, point, 8)
    lightning, _ = from_torch(module, tokens=3, lightning=True)
    assert lightning.blocks[0].normalization == "none" and lightning.blocks[0].residual


def test_each_weight_keeps_its_state_dict_name():
    module = trained(Stack(2), seed=3)
    net, point = from_torch(module, tokens=2)
    assert len(net.blocks) == 8 and agrees(module, net, point, 8, tokens=2)
    names = point.origin_names()
    assert len(names) == net.parameters and set(names.values()) == {
        f"{key}[{', '.join(map(str, i))}]" for key, p in module.state_dict().items() for i in np.ndindex(*p.shape)
    }
    state = module.state_dict()
    values = dict(zip(net.weight_names(), point.values))
    # the second layer's first query weight: in_proj_weight[0, 0], the 1/sqrt(d_head) = 1/2 folded in
    first_q = next(n for n in names if n.startswith("q_(5,"))
    assert names[first_q] == "blocks.1.attn.in_proj_weight[0, 0]"
    assert values[first_q] == Fraction(float(state["blocks.1.attn.in_proj_weight"][0, 0])) / 2
    # and back: which canonical weight came from an entry (a key weight: not scaled)
    found = {origin: name for name, origin in names.items()}["blocks.0.attn.in_proj_weight[9, 3]"]
    assert found.startswith("k_(1,") and values[found] == Fraction(float(state["blocks.0.attn.in_proj_weight"][9, 3]))
    assert values[{o: n for n, o in names.items()}["blocks.1.down.bias[7]"]] == Fraction(
        float(state["blocks.1.down.bias"][7])
    )


def test_every_conversion_keeps_the_names_and_a_point_refuses_names_of_another_length():
    from lightning_cas.core.network import Network
    from lightning_cas.system.points import WeightPoint
    from lightning_cas.torch_bridge import TorchNetwork

    embedding = nn.Sequential(nn.Embedding(5, 2, dtype=F64), nn.Linear(2, 2, dtype=F64))
    net, point = from_torch(embedding, tokens=2)
    names = point.origin_names()
    assert names["p_(1,1,2)"] == "0.weight[1, 0]" and names["bp_(2,2)"] == "1.bias[1]"  # P = Wᵀ
    inner = TorchNetwork(Network(8, 2, (from_torch(trained(PostLN()))[0].blocks[0],)), seed=1)
    names = from_torch(nn.Sequential(nn.Linear(3, 8, dtype=F64), inner))[1].origin_names()
    assert names["q_(2,2,1,1)"] == "1.blocks.0.q[1, 0, 0]" and names["bo_(2,8)"] == "1.blocks.0.bo[7]"
    with pytest.raises(InputError, match=r"^the point has 24 weights but 2 origins\.$"):
        WeightPoint(Network(3, 2, (Linear(8),)), (Fraction(0),) * 24, origins=("a", "b"))


@pytest.mark.parametrize(
    "act, function",
    [
        (F.relu, "relu"),
        (torch.tanh, "tanh"),
        (F.silu, "silu"),
        (F.gelu, "gelu"),
        (lambda x: F.gelu(x, approximate="tanh"), "gelu_tanh"),
        (lambda x: x.relu(), "relu"),
    ],
)
def test_a_user_mlp_with_a_functional_activation_converts(act, function):
    module = trained(UserMLP(act))
    net, point = from_torch(module, tokens=2)
    assert [b.kind for b in net.blocks] == ["linear", "activation", "linear"]
    assert net.blocks[1].function == function
    assert agrees(module, net, point, 4, tokens=2)


def attend(m, x):
    out, _ = m.attn(x, x, x)  # unpacked: the weights unused
    return out


@pytest.mark.parametrize(
    "body",
    [
        lambda m, x: x + m.attn(x, x, x)[0],
        lambda m, x: torch.add(attend(m, x), x),
        lambda m, x: x.add(attend(m, x)),
        lambda m, x: m.ln(m.attn(x, x, x, need_weights=False)[0] + x),
    ],
)
def test_each_spelling_of_a_residual_around_attention_converts(body):
    module = trained(Branch(body), seed=5)
    net, point = from_torch(module, tokens=3)
    assert net.blocks[0].kind == "attention" and net.blocks[0].residual
    assert agrees(module, net, point, 4)


class OwnNorm(nn.Module):
    """A LayerNorm written with F.layer_norm, its gain and bias parameters of its own."""

    def __init__(self, d=4, bias=True):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(d, dtype=F64))
        self.shift = nn.Parameter(torch.zeros(d, dtype=F64)) if bias else None
        self.d = d

    def forward(self, x):
        return F.layer_norm(x, (self.d,), self.gain, self.shift, eps=1e-6)


@pytest.mark.parametrize("bias", [True, False])
def test_f_layer_norm_with_parameters_of_the_module_is_a_layernorm_block(bias):
    module = trained(nn.Sequential(nn.Linear(3, 4, dtype=F64), OwnNorm(bias=bias)), seed=2)
    net, point = from_torch(module, tokens=2)
    norm = net.blocks[1]
    assert (norm.kind, norm.affine, norm.bias, norm.eps) == ("layernorm", True, bias, 1e-6)
    assert agrees(module, net, point, 3, tokens=2)
    assert point.origin_names()["g_(2,4)"] == "1.gain[3]"
    assert net.parameters == sum(p.numel() for p in module.parameters())


class OwnMLP(nn.Module):
    """An mlp written with F.linear on parameters of its own, and a residual: one mlp block with a residual."""

    def __init__(self, d=4, hidden=6):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(hidden, d, dtype=F64))
        self.b1 = nn.Parameter(torch.randn(hidden, dtype=F64))
        self.w2 = nn.Parameter(torch.randn(d, hidden, dtype=F64))
        self.b2 = nn.Parameter(torch.randn(d, dtype=F64))

    def forward(self, x):
        return x + F.linear(F.gelu(F.linear(x, self.w1, self.b1)), self.w2, bias=self.b2)


def test_f_linear_with_parameters_of_the_module_is_a_linear_block():
    module = trained(OwnMLP(), seed=4)
    net, point = from_torch(module, tokens=2)
    (mlp,) = net.blocks
    assert (mlp.kind, mlp.hidden, mlp.activation, mlp.residual, mlp.bias) == ("mlp", 6, "gelu", True, True)
    assert agrees(module, net, point, 4, tokens=2)
    names = point.origin_names()
    assert (names["u_(1,6,4)"], names["d_(1,4,6)"], names["bu_(1,1)"]) == ("w1[5, 3]", "w2[3, 5]", "b1[0]")


def test_an_embedding_inside_a_module_of_ones_own_is_refused_pointing_to_a_sequential():
    class Embedded(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(5, 4, dtype=F64)

        def forward(self, x):
            return self.emb(x)

    refused(Embedded(), r"^the Embedded module: emb takes token ids; an embedding converts first in an nn\.Sequential")


def test_f_layer_norm_reads_only_parameters_of_the_module():
    module = OwnNorm()
    del module.gain
    module.register_buffer("gain", torch.ones(4, dtype=F64))  # a buffer is not a weight
    refused(
        module.eval(),
        r"^the OwnNorm module: torch\.nn\.functional\.layer_norm's weight gain is not a parameter of shape \(4,\)",
    )


def test_user_modules_nest_in_a_sequential_and_dropout_in_eval_mode_is_skipped():
    class Dropped(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4, dtype=F64)

        def forward(self, x):
            return F.dropout(self.lin(x), 0.3, self.training).contiguous()

    module = trained(nn.Sequential(Dropped(), nn.ReLU(), UserMLP()))
    net, point = from_torch(module, tokens=2)
    assert [b.kind for b in net.blocks] == ["linear", "activation", "linear", "activation", "linear"]
    assert agrees(module, net, point, 4, tokens=2)
    assert point.origin_names()["p_(3,1,1)"] == "2.fc1.weight[0, 0]"
    refused(module.train(), r"F\.dropout in training mode makes the map random")


# ---------------------------------------------------------------- pre-LN: residual groups


def test_a_gpt_style_pre_ln_block_converts_as_two_residual_groups():
    module = trained(PreLN())
    net, point = from_torch(module, tokens=3)
    assert [b.residual for b in net.blocks] == [0, 2, 0, 0, 0, 4]
    assert agrees(module, net, point, 8)


def test_a_residual_around_several_blocks_is_one_group():
    mlp = Branch(lambda m, x: x + m.b(F.relu(m.a(m.ln(x)))))  # layernorm, linear, relu, linear: not one mlp
    net, point = from_torch(trained(mlp), tokens=2)
    assert [b.residual for b in net.blocks] == [0, 0, 0, 4]
    assert agrees(trained(mlp), net, point, 4, tokens=2)


# ---------------------------------------------------------------- what is refused


def test_an_unsupported_op_is_refused_naming_it_and_its_source_line():
    message = refused(Sin(), r"^the Sin module: torch\.sin is not an op from_torch reads at ")
    assert f"{FILE}:{line_of(Sin.forward, 'torch.sin')} (return torch.sin(y))" in message
    message = refused(Gram(), r"^the Gram module: the tensor method \.transpose\(\) is not an op")
    assert f"{FILE}:{line_of(Gram.forward, 'y @ y')}" in message


class Branch(nn.Module):
    def __init__(self, forward):
        super().__init__()
        self.a, self.b = nn.Linear(4, 4, dtype=F64), nn.Linear(4, 4, dtype=F64)
        self.attn = nn.MultiheadAttention(4, 2, batch_first=True, dtype=F64)
        self.ln = nn.LayerNorm(4, dtype=F64)
        self.body = forward

    def forward(self, x):
        return self.body(self, x)


@pytest.mark.parametrize(
    "body, match",
    [
        (lambda m, x: m.a(x) + m.b(x), r"x is read by 2 ops \(the graph branches, not a chain\)"),
        (lambda m, x: m.a(x) + 1, r"the add's other input 1 is not an earlier value"),
        (lambda m, x: m.a(x) * 2, r"operator\.mul is not an op"),
        (lambda m, x: m.a(m.a(x)), r"a is called twice \(one weight in two places"),
        (lambda m, x: m.attn(x, m.a(x), x)[0], r"attn reads .*not a chain"),
        (lambda m, x: m.attn(x, x, x, attn_mask=m.a.weight > 0)[0], r"attn is called with attn_mask"),
        (lambda m, x: m.attn(x, x, x)[1], r"only its output \[0\] is read"),
        (lambda m, x: (m.a(x), x), r"returns something other than the value of its last layer"),
        (lambda m, x: m.a(x) if x.sum() > 0 else x, r"torch\.fx cannot trace its forward \(TraceError"),
        (lambda m, x: torch.add(m.a(x), x, alpha=2), r"torch\.add with \['alpha'\] is not x \+ f\(x\)"),
        (lambda m, x: F.layer_norm(x, (2, 2)), r"F\.layer_norm over \(2, 2\) \(only one axis"),
    ],
)
def test_what_is_not_a_chain_of_supported_ops_is_refused_in_one_line(body, match):
    message = refused(trained(Branch(body)), match)
    assert message.startswith("the Branch module: ")
    if "cannot trace" not in message:
        assert f"{FILE}:" in message  # the source line of the lambda


def test_a_residual_around_a_norm_converts():
    net, point = from_torch(trained(Branch(lambda m, x: x + m.ln(x))), tokens=2)
    assert [(b.kind, b.residual) for b in net.blocks] == [("layernorm", 1)]


def test_causal_and_batch_first_false_are_refused_for_a_traced_module():
    refused(
        trained(PostLN()), r"^the PostLN module: causal = True converts attention called with a causal", causal=True
    )
    module = PostLN()
    module.attn = nn.MultiheadAttention(8, 2, dtype=F64)
    refused(module.eval(), r"^attn \(MultiheadAttention\): batch_first = False")


def test_the_proof_runs_on_a_traced_module(monkeypatch):
    """The trace keeps nn.Linear whole and converts it by its class; a forward patched on nn.Linear itself is
    invisible to both, and only running the module's own forward against the network catches it."""
    monkeypatch.setattr(nn.Linear, "forward", lambda self, x: F.linear(x, self.weight) * 0)
    refused(trained(UserMLP()), r"^the converted network does not compute what the module computes")


def test_hooks_and_forwards_the_trace_cannot_see_are_refused():
    module = trained(PostLN())
    handle = module.register_forward_hook(lambda mod, args, out: out * 0)
    refused(module, r"^the PostLN module has a forward hook")
    handle.remove()
    handle = module.up.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    refused(module, r"^up \(Linear\) has a forward pre-hook")
    handle.remove()
    module.forward = lambda x: x * 2  # on the instance: the trace reads the class's forward
    refused(module, r"^the PostLN module has its own forward set on the instance")
    refused(nn.Sequential(module), r"^0 \(PostLN\) has its own forward set on the instance")
    del module.forward
    assert from_torch(module)[0].parameters == 600

    class Called(PostLN):
        def __call__(self, x):
            return super().__call__(x) * 2

    refused(Called().eval(), r"^the Called module has its own __call__; from_torch traces")

    class OwnLinear(nn.Linear):
        def forward(self, x):
            return super().forward(x) * 2

    model = UserMLP()
    model.fc2 = OwnLinear(6, 3, dtype=F64)
    refused(model.eval(), r"^fc2 \(OwnLinear\) is a subclass of nn\.Linear with its own forward")
