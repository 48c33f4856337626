"""nn.RMSNorm through from_torch: the converted network computes what the module computes (with a trained gain,
without one, with eps = None), and gets a certified rank at its weights."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from lightning_cas import dimension  # noqa: E402
from lightning_cas.core import forward  # noqa: E402
from lightning_cas.core.arithmetic import Float64  # noqa: E402
from lightning_cas.core.network import Linear, RMSNorm  # noqa: E402
from lightning_cas.errors import InputError  # noqa: E402
from lightning_cas.torch_bridge import TorchNetwork, from_torch  # noqa: E402

F64 = torch.float64


def _trained(norm):
    with torch.no_grad():
        norm.weight.copy_(torch.linspace(0.5, 2.0, norm.weight.shape[0], dtype=F64))
    return norm


@pytest.mark.parametrize(
    "make, blocks",
    [
        (
            lambda: nn.Sequential(
                nn.Linear(4, 5, dtype=F64),
                _trained(nn.RMSNorm(5, eps=1e-3, dtype=F64)),
                nn.GELU(),
                nn.Linear(5, 2, dtype=F64),
            ),
            4,
        ),
        (lambda: nn.Sequential(nn.Linear(4, 3, dtype=F64), nn.RMSNorm(3, elementwise_affine=False, dtype=F64)), 2),
    ],
)
def test_the_converted_network_computes_what_torch_computes(make, blocks):
    torch.manual_seed(0)
    module = make()
    net, point = from_torch(module, tokens=3)
    assert len(net.blocks) == blocks and isinstance(net.blocks[1], RMSNorm)
    norm = module[1]
    assert net.blocks[1].affine == (norm.weight is not None)
    assert net.blocks[1].eps == (norm.eps if norm.eps is not None else torch.finfo(F64).eps)
    x = torch.randn(7, 3, 4, dtype=F64)
    with torch.no_grad():
        theirs = module(x).numpy()
    ours = np.swapaxes(forward.evaluate(net, Float64(), point.floats(), np.swapaxes(x.numpy(), 1, 2)), 1, 2)
    assert np.abs(theirs - ours).max() < 1e-12


def test_torchnetwork_runs_an_rmsnorm_block_as_our_forward():
    from lightning_cas.core.network import Network

    net = Network(3, 2, (Linear(4, bias=True), RMSNorm(eps=0.25), Linear(2)))
    module = TorchNetwork(net)
    x = torch.randn(5, 2, 3, dtype=F64)
    with torch.no_grad():
        theirs = module(x).numpy()
    ours = np.swapaxes(forward.evaluate(net, Float64(), module.point().floats(), np.swapaxes(x.numpy(), 1, 2)), 1, 2)
    assert np.abs(theirs - ours).max() < 1e-12


def test_an_rmsnorm_over_two_axes_is_refused_in_one_line():
    with pytest.raises(InputError, match=r"normalized_shape = \(2, 2\)") as info:
        from_torch(nn.Sequential(nn.Linear(4, 4), nn.RMSNorm((2, 2))))
    assert "\n" not in str(info.value)


def test_an_rmsnorm_from_torch_gets_a_certified_rank():
    torch.manual_seed(4)
    module = nn.Sequential(
        nn.Linear(3, 4, bias=False, dtype=F64),
        _trained(nn.RMSNorm(4, dtype=F64)),
        nn.Linear(4, 2, bias=False, dtype=F64),
    )
    net, point = from_torch(module, tokens=2)
    result = dimension(net, at=point)
    assert result.method == "arb" and result.certificate.lower == result.certificate.upper == result.dimension
    assert result.dimension == 12  # 24 weights; rotations 6, gain junction 4, the span the linear writes 2
