"""``from_torch`` converts what runs: hooks, forwards other than the class's own, tied weights and options that
are not flags are refused in one line naming the module; every width and limit is checked from shapes before
a weight is read; and every conversion is proved against the module's own forward."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from lightning_cas.core import forward  # noqa: E402
from lightning_cas.core.arithmetic import Float64  # noqa: E402
from lightning_cas.core.network import MLP, Activation, Attention, Linear, Network  # noqa: E402
from lightning_cas.errors import InputError  # noqa: E402
from lightning_cas.torch_bridge import TorchNetwork, from_torch  # noqa: E402


def refused(module, match, **kw) -> str:
    with pytest.raises(InputError, match=match) as info:
        from_torch(module, **kw)
    assert "\n" not in str(info.value)
    return str(info.value)


def linear(d_in=3, d_out=3, **kw):
    return nn.Linear(d_in, d_out, dtype=torch.float64, **kw)


def ours(net, point, x):
    return np.swapaxes(forward.evaluate(net, Float64(), point.floats(), np.swapaxes(x.numpy(), 1, 2)), 1, 2)


# ---------------------------------------------------------------- hooks

HOOKS = {
    "forward hook": lambda m: m.register_forward_hook(lambda mod, args, out: out * 0),
    "forward pre-hook": lambda m: m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,)),
    "backward hook": lambda m: m.register_full_backward_hook(lambda mod, gin, gout: None),
    "backward pre-hook": lambda m: m.register_full_backward_pre_hook(lambda mod, gout: None),
}


@pytest.mark.parametrize("kind", HOOKS)
def test_a_hook_on_any_module_is_refused_naming_it(kind):
    inner = linear()
    model = nn.Sequential(linear(), nn.Sequential(nn.ReLU(), inner))
    handle = HOOKS[kind](inner)
    refused(model, rf"^1\.1 \(Linear\) has a {kind} ")
    handle.remove()
    assert from_torch(model)[0].parameters == 24  # the same model without the hook converts


def test_a_hook_on_the_top_level_module_or_inside_attention_is_refused():
    mha = nn.MultiheadAttention(4, 2).eval()
    handle = mha.out_proj.register_forward_hook(lambda mod, args, out: out)
    refused(mha, r"^out_proj \(NonDynamicallyQuantizableLinear\) has a forward hook")
    handle.remove()
    mha.register_forward_hook(lambda mod, args, out: out)
    refused(mha, r"^the MultiheadAttention module has a forward hook")


GLOBAL_HOOKS = {
    "forward pre-hook": lambda: nn.modules.module.register_module_forward_pre_hook(lambda mod, args: None),
    "forward hook": lambda: nn.modules.module.register_module_forward_hook(lambda mod, args, out: None),
    "backward hook": lambda: nn.modules.module.register_module_full_backward_hook(lambda mod, gin, gout: None),
    "backward pre-hook": lambda: nn.modules.module.register_module_full_backward_pre_hook(lambda mod, gout: None),
}


@pytest.mark.parametrize("kind", GLOBAL_HOOKS)
def test_a_global_module_hook_is_refused(kind):
    handle = GLOBAL_HOOKS[kind]()
    try:
        refused(linear(), f"^a global {kind} ")
    finally:
        handle.remove()
    assert from_torch(linear())[0].parameters == 12


# ---------------------------------------------------------------- forwards other than the class's own


class Silenced(nn.Linear):
    def forward(self, x):
        return 0 * super().forward(x)


class Skipping(nn.Sequential):
    def forward(self, x):
        return self[0](x)


class Called(nn.ReLU):
    def __call__(self, x):
        return x


class Renamed(nn.Linear):  # keeps nn.Linear's forward: converts as an nn.Linear
    pass


def test_a_subclass_with_its_own_forward_is_refused():
    """The red team's module (its output is 0 whatever its weights) had been given the rank of an nn.Linear."""
    refused(Silenced(2, 2), r"^the Silenced module is a subclass of nn.Linear with its own forward;")
    refused(
        nn.Sequential(linear(), Skipping(linear(), nn.ReLU())),
        r"^1 \(Skipping\) is a subclass of nn.Sequential with its own forward;",
    )
    refused(nn.Sequential(linear(), Called()), r"^1 \(Called\) is a subclass of nn.ReLU with its own __call__;")
    net, _ = from_torch(nn.Sequential(Renamed(3, 2, dtype=torch.float64), nn.ReLU()))
    assert net.blocks[0].kind == "linear" and net.parameters == 8


def test_a_forward_set_on_the_instance_is_refused():
    model = nn.Sequential(linear(), linear())
    model[1].forward = lambda x: x
    refused(model, r"^1 \(Linear\) has its own forward set on the instance")


def test_a_parametrized_weight_is_refused_until_it_is_fixed():
    """weight_norm computes the weight on each call in the module's dtype (float32 here): a float64 copy
    computes another weight than the one read, so the module is refused with the way to fix it."""
    from torch.nn.utils import parametrize
    from torch.nn.utils.parametrizations import weight_norm

    module = nn.Sequential(nn.ReLU(), weight_norm(nn.Linear(3, 2)))
    refused(
        module,
        r"^1 \(ParametrizedLinear\) has a parametrization of weight .*remove_parametrizations\(module, "
        r"'weight', leave_parametrized=True\)",
    )
    parametrize.remove_parametrizations(module[1], "weight", leave_parametrized=True)
    net, point = from_torch(module)
    assert [float(v) for v in point.values[:6]] == module[1].weight.detach().double().reshape(-1).tolist()


def test_unsupported_modules_are_refused_with_what_converts():
    seq = nn.Sequential(linear())
    seq.add_module("gap", None)
    refused(seq, r"^the Sequential module holds None as gap")
    message = refused(nn.Sequential(linear(), nn.ModuleList([nn.ReLU()])), r"^1 \(ModuleList\) is not supported:")
    assert "nn.Linear" in message and "TorchNetwork" in message


# ---------------------------------------------------------------- tied weights


def test_a_module_used_twice_is_refused_as_tied_weights():
    """Sequential(l, ReLU(), l) had been one linear block: named_children() drops the repeat."""
    shared = linear()
    refused(
        nn.Sequential(shared, nn.ReLU(), shared),
        r"^tied weights: 0 \(Linear\) is used twice, as 0 and 2 "
        r"\(0\.weight is 2\.weight\)",
    )


def test_a_parameter_assigned_to_two_modules_is_refused_naming_both():
    a, b = linear(), linear()
    b.bias = a.bias
    refused(
        nn.Sequential(OrderedDict(first=a, act=nn.Tanh(), second=b)),
        r"^tied weights: first \(Linear\) and second \(Linear\) share a parameter \(first\.bias is second\.bias\)",
    )


def test_parameters_on_shared_memory_are_tied_but_side_by_side_views_are_not():
    a, b = linear(), linear()
    b.weight = nn.Parameter(a.weight)  # a new Parameter on a's memory: training one trains the other
    refused(nn.Sequential(a, b), r"^tied weights: the parameters 0\.weight and 1\.weight share memory")
    flat = torch.randn(24, dtype=torch.float64)  # one flat buffer holding both layers, side by side
    c, d = linear(), linear()
    for module, at in ((c, 0), (d, 12)):
        module.weight = nn.Parameter(flat[at : at + 9].view(3, 3))
        module.bias = nn.Parameter(flat[at + 9 : at + 12])
    net, point = from_torch(nn.Sequential(c, d))
    assert [float(v) for v in point.values] == flat.tolist()


def test_a_module_without_weights_used_twice_converts_at_each_place():
    relu = nn.ReLU()
    torch.manual_seed(1)
    model = nn.Sequential(linear(), relu, linear(3, 2), relu)
    net, point = from_torch(model, tokens=2)
    assert [b.kind for b in net.blocks] == ["linear", "activation", "linear", "activation"]
    x = torch.randn(4, 2, 3, dtype=torch.float64) * 3
    assert np.allclose(ours(net, point, x), model(x).detach().numpy(), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- sizes before values


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: nn.Linear(2048, 2048, device="meta"), r"^the Linear module: out_features = 2048 is outside"),
        (lambda: nn.Sequential(nn.Linear(4, 300, device="meta")), r"^0 \(Linear\): out_features = 300 is outside"),
        (lambda: nn.MultiheadAttention(512, 8, device="meta"), r"^the MultiheadAttention module: embed_dim = 512 is"),
        (
            lambda: nn.MultiheadAttention(128, 128, device="meta"),
            r"num_heads = 128 must divide embed_dim = 128 and be "
            r"at most 64",
        ),
        (
            lambda: nn.Sequential(
                nn.LayerNorm(4, device="meta"), nn.Linear(4, 3, device="meta"), nn.Linear(5, 2, device="meta")
            ),
            r"^2 \(Linear\) takes 5 features but 1 \(Linear\) before it gives 3; each layer must take",
        ),
        (
            lambda: nn.Sequential(*[nn.Linear(2, 2, device="meta") for _ in range(33)]),
            "converts to 33 blocks, above the supported maximum of 32",
        ),
    ],
)
def test_widths_and_limits_are_checked_before_any_weight_is_read(make, match):
    """Meta tensors have shapes and no values: reading one is refused, so a refusal about a size proves
    that the size was checked first."""
    message = refused(make(), match)
    assert "meta" not in message


def test_a_wide_linear_is_refused_at_once():
    module = nn.Linear(2048, 2048)
    start = time.perf_counter()
    refused(module, "out_features = 2048 is outside the supported widths 1..256")
    assert time.perf_counter() - start < 1.0  # reading its 4 million floats first took about 30 s


def test_a_width_mismatch_after_a_torch_network_names_both_modules():
    model = nn.Sequential(linear(4, 3), TorchNetwork(Network(5, 3, (Linear(2),))))
    refused(model, r"^1 \(TorchNetwork\) takes 5 features but 0 \(Linear\) before it gives 3")


def test_a_block_the_network_refuses_is_named_by_its_module():
    refused(nn.Sequential(linear(), nn.LayerNorm(3, eps=0.0)), r"^1 \(LayerNorm\): eps must be a positive")


# ---------------------------------------------------------------- options


@pytest.mark.parametrize(
    "options, match",
    [
        ({"lightning": "yes"}, "lightning must be True or False, got 'yes'"),
        ({"causal": 1}, "causal must be True or False, got 1"),
        ({"tokens": "3"}, "tokens must be a whole number from 1 to 64, got '3'"),
        ({"tokens": 0}, "tokens must be a whole number from 1 to 64, got 0"),
        ({"tokens": True}, "tokens must be a whole number"),
    ],
)
def test_options_that_are_not_flags_or_counts_are_refused(options, match):
    refused(nn.MultiheadAttention(4, 2).eval(), match, **options)


def test_a_top_level_and_a_named_module_are_named_readably():
    refused(nn.MultiheadAttention(4, 2, add_zero_attn=True), r"^the MultiheadAttention module: add_zero_attn")
    refused(
        nn.Sequential(OrderedDict(attn=nn.MultiheadAttention(4, 2, add_zero_attn=True))),
        r"^attn \(MultiheadAttention\): add_zero_attn",
    )


# ---------------------------------------------------------------- the proof


def test_a_conversion_that_does_not_compute_the_module_is_refused_naming_the_largest_difference():
    """A TorchNetwork whose network was replaced: its weights still fit, but its blocks compute the causal
    attention they were built with; only running both forwards can tell."""
    model = TorchNetwork(Network(3, 3, (Attention(2, causal=True),)), seed=1)
    model.network = Network(3, 3, (Attention(2),))
    message = refused(
        model,
        r"^the converted network does not compute what the module computes: on random inputs "
        r"\(seed 0\) the largest difference is ",
    )
    assert "the module gives" in message and "the network" in message


def test_a_forward_patched_on_the_torch_class_itself_is_caught_by_the_check(monkeypatch):
    """The class checks compare a module's forward with its torch class's, so they cannot see nn.Linear's own
    forward replaced; running it can."""
    monkeypatch.setattr(nn.Linear, "forward", lambda self, x: nn.functional.linear(x, self.weight) * 0)
    refused(linear(), r"^the converted network does not compute what the module computes")


def test_a_module_that_fails_or_gives_another_shape_when_run_is_refused():
    model = TorchNetwork(Network(3, 3, (Linear(2),)))
    model.blocks[0].spec = MLP(2)  # reads weights the module does not have
    refused(
        model,
        r"^checking the conversion failed: copying the module to float64 and running it on random "
        r"inputs raised KeyError",
    )
    model = TorchNetwork(Network(3, 3, (Linear(2),)))
    model.blocks[0].spec = Activation("relu")
    refused(model, r"the module returns \(4, 3, 3\), the network \(4, 3, 2\)")  # 3 random inputs, 1 tiny
    held = linear()
    held.lock = threading.Lock()  # cannot be copied: the check cannot run, and says so
    refused(held, r"^checking the conversion failed: copying .* raised TypeError: cannot pickle")


def test_the_check_runs_attention_inside_a_sequential_and_leaves_the_module_as_it_was():
    torch.manual_seed(2)
    mha = nn.MultiheadAttention(4, 2)  # float32, training mode (no dropout), batch second
    model = nn.Sequential(nn.Linear(4, 4), mha, nn.GELU())
    before = {k: v.clone() for k, v in model.state_dict().items()}
    net, point = from_torch(model, tokens=3, causal=True, lightning=True)
    assert [b.kind for b in net.blocks] == ["linear", "attention", "activation"]
    assert net.blocks[1].normalization == "none" and net.blocks[1].causal  # the softmax network was checked
    assert model.training and mha.in_proj_weight.dtype == torch.float32
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
