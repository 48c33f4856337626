"""The PyTorch bridge: the module computes our function, its state_dict is an exact point, and the rank at
weights trained by torch for a few steps on CPU is the generic rank (and what a float baseline sees)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lightning_cas import api  # noqa: E402
from lightning_cas.core import forward  # noqa: E402
from lightning_cas.core.arithmetic import Float64  # noqa: E402
from lightning_cas.core.network import MLP, Attention, LayerNorm, Linear, Network, Position, Power  # noqa: E402
from lightning_cas.errors import InputError  # noqa: E402
from lightning_cas.system.points import load_weights  # noqa: E402
from lightning_cas.torch_bridge import TorchNetwork, point_from_state_dict  # noqa: E402

NETS = [
    Network(3, 3, (Attention(2, causal=True, residual=True), MLP(3, residual=True), Linear(1))),
    Network(4, 3, (Attention(2, heads=2, value=2, causal=True, residual=True, normalization="softmax"), Linear(2))),
    # biases: torch's own broadcasting is an independent check of the forward definition's
    Network(
        3,
        3,
        (
            Attention(2, heads=2, value=2, causal=True, residual=True, bias=True),
            MLP(3, bias=True),
            Linear(1, bias=True),
        ),
    ),
    Network(3, 3, (Attention(2, heads=2, bias=True, normalization="softmax"), Linear(2, bias=True))),
    # residual groups: pre-LN sublayers (a group of 2), nested in a group of 5 around a linear readout
    Network(
        3,
        3,
        (
            Attention(2, causal=True, normalization="softmax"),
            LayerNorm(),
            Attention(2, causal=True, normalization="softmax", residual=2),
            LayerNorm(),
            MLP(4, activation="gelu", bias=True, residual=2),
            Linear(3, residual=5),
        ),
    ),
]


@pytest.mark.parametrize("net", NETS, ids=lambda n: n.label())
def test_the_module_computes_the_forward_definition(net):
    model = TorchNetwork(net, seed=1)
    x = torch.randn(5, net.tokens, net.input, dtype=torch.float64)  # PyTorch layout: (batch, tokens, features)
    ours = forward.evaluate(net, Float64(), model.point().floats(), x.transpose(-1, -2).numpy())
    assert np.allclose(model(x).detach().transpose(-1, -2).numpy(), ours, rtol=1e-12, atol=1e-12)
    assert [name for name, _ in model.named_parameters()][:2] == ["blocks.0.q", "blocks.0.k"]


def test_a_positional_embedding_runs_in_the_module():
    net = Network(3, 3, (Position(), Attention(2, causal=True, residual=True), Position(residual=2), Linear(1)))
    model = TorchNetwork(net, seed=2)
    assert dict(model.named_parameters())["blocks.0.e"].shape == (3, 3)
    x = torch.randn(4, net.tokens, net.input, dtype=torch.float64)
    ours = forward.evaluate(net, Float64(), model.point().floats(), x.transpose(-1, -2).numpy())
    assert np.allclose(model(x).detach().transpose(-1, -2).numpy(), ours, rtol=1e-12, atol=1e-12)


def test_state_dict_round_trip_is_exact_and_files_read_the_same(tmp_path):
    from safetensors.torch import save_file

    net = NETS[0]
    model = TorchNetwork(net, seed=2)
    point = model.point()
    again = TorchNetwork(net, seed=9)
    again.load_point(point)
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), again.state_dict().values()))
    assert again.point().values == point.values
    path = tmp_path / "w.safetensors"
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(path))
    assert load_weights(net, path).values == point.values
    np.savez(tmp_path / "w.npz", **{k: v.numpy() for k, v in model.state_dict().items()})
    assert load_weights(net, tmp_path / "w.npz").values == point.values


def test_a_state_dict_with_missing_or_extra_keys_is_refused_naming_the_key():
    net = NETS[0]
    state = TorchNetwork(net).state_dict()
    with pytest.raises(InputError, match="'blocks.1.u' is missing"):
        point_from_state_dict(net, {k: v for k, v in state.items() if k != "blocks.1.u"})
    with pytest.raises(InputError, match="'blocks.9.x' is not a weight"):
        point_from_state_dict(net, {**state, "blocks.9.x": torch.zeros(1)})
    with pytest.raises(InputError, match="shape"):
        point_from_state_dict(net, {**state, "blocks.2.p": torch.zeros(2, 3, dtype=torch.float64)})
    bad = dict(state)
    bad["blocks.2.p"] = torch.full_like(state["blocks.2.p"], float("nan"))
    with pytest.raises(InputError, match="NaN"):
        point_from_state_dict(net, bad)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda t: t.to("meta"), "is a meta tensor"),
        (lambda t: t.to(torch.float8_e4m3fn), "holds torch.float8_e4m3fn"),
        (lambda t: t.to_sparse(), r"is a sparse tensor \(torch.sparse_coo\)"),
        (lambda t: t.to_sparse_csr(), r"is a sparse tensor \(torch.sparse_csr\)"),
        (lambda t: t.to(torch.complex128), "holds torch.complex128"),
    ],
)
@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")
def test_a_state_dict_tensor_without_readable_values_is_refused_naming_it(make, match):
    """These had raised torch's or numpy's own NotImplementedError or TypeError."""
    net = NETS[0]
    state = TorchNetwork(net).state_dict()
    state["blocks.2.p"] = make(state["blocks.2.p"])
    with pytest.raises(InputError, match=rf"^the state_dict entry 'blocks.2.p' {match}") as info:
        point_from_state_dict(net, state)
    assert "\n" not in str(info.value)


def test_rank_at_trained_weights_against_the_generic_rank_and_a_float_baseline():
    net = NETS[0]
    torch.manual_seed(0)
    model = TorchNetwork(net, seed=3)
    x = torch.randn(64, net.tokens, net.input, dtype=torch.float64)
    target = torch.randn(64, net.tokens, net.output, dtype=torch.float64)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    before = model.point()
    for _ in range(5):
        opt.zero_grad()
        loss = ((model(x) - target) ** 2).mean()
        loss.backward()
        opt.step()
    point = model.point()
    assert point.values != before.values  # it trained
    local = api.dimension(net, at=point)
    generic = api.dimension(net)
    assert local.dimension == local.generic_dimension == generic.dimension
    # the float baseline: torch's own Jacobian at the trained weights on a few inputs, ranked by numpy
    names = [n for n, _ in model.named_parameters()]
    params = tuple(p.detach() for p in model.parameters())
    probe = torch.randn(12, net.tokens, net.input, dtype=torch.float64)

    def f(*ps):
        return torch.func.functional_call(model, dict(zip(names, ps)), (probe,)).reshape(-1)

    J = torch.cat([j.reshape(j.shape[0], -1) for j in torch.autograd.functional.jacobian(f, params)], dim=1)
    assert np.linalg.matrix_rank(J.numpy()) == generic.dimension


@pytest.mark.parametrize(
    "net",
    [
        Network(4, 3, tuple(Attention(2) for _ in range(6))),  # degree 3^6 in the inputs
        Network(
            4,
            3,
            tuple(
                b
                for _ in range(4)
                for b in (
                    Attention(2, heads=2, value=2, causal=True, residual=True, bias=True),
                    MLP(8, residual=True, bias=True),
                )
            ),
        ),
        Network(3, 1, (Linear(4), Power(2), Linear(4), Power(2), Linear(4), Power(2), Linear(1))),
    ],
    ids=lambda n: n.label(),
)
def test_the_initial_forward_pass_is_of_order_one_at_any_depth(net):
    """On fresh Gaussian inputs (not the calibration batch) the output's root mean square is of order one."""
    model = TorchNetwork(net, seed=3)
    x = torch.randn(256, net.tokens, net.input, dtype=torch.float64, generator=torch.Generator().manual_seed(11))
    rms = float(model(x).detach().pow(2).mean().sqrt())
    assert 0.05 < rms < 20
    raw = TorchNetwork(net, seed=3, calibrate=False)
    assert float(raw(x).detach().pow(2).mean().sqrt()) != pytest.approx(rms)  # the calibration did something


def test_a_float16_subnormal_weight_is_refused_like_any_float16_file():
    """float16's subnormals (below 6.1e-5) are refused through the bridge as in a weight file: the tensor's
    values are read as float16, not widened to float32 (whose range would take them)."""
    import torch

    from lightning_cas.errors import InputError
    from lightning_cas.torch_bridge import from_torch

    lin = torch.nn.Linear(2, 1, bias=False).to(torch.float16)
    with torch.no_grad():
        lin.weight[0, 0] = 1e-6  # a float16 subnormal
    with pytest.raises(InputError, match="subnormal"):
        from_torch(lin)
