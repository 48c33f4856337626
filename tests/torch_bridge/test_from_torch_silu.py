"""SiLU and the tanh form of GELU through from_torch: the converted network computes what the module computes,
its forward agrees with an independent 60-digit one (tests/oracle), and it gets a certified rank at its weights."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from lightning_cas import dimension  # noqa: E402
from lightning_cas.core import forward  # noqa: E402
from lightning_cas.core.arithmetic import Float64  # noqa: E402
from lightning_cas.torch_bridge import from_torch  # noqa: E402
from tests.oracle.forward import forward as oracle_forward  # noqa: E402

F64 = torch.float64


@pytest.mark.parametrize("activation, name", [(nn.SiLU(), "silu"), (nn.GELU(approximate="tanh"), "gelu_tanh")])
def test_the_activation_converts_and_computes_what_torch_computes(activation, name):
    torch.manual_seed(0)
    module = nn.Sequential(nn.Linear(3, 5, dtype=F64), activation, nn.Linear(5, 2, dtype=F64))
    net, point = from_torch(module, tokens=1)
    assert net.functions == (name,)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((7, 3, 1))
    ours = forward.evaluate(net, Float64(), point.floats(), X)
    theirs = module(torch.tensor(np.swapaxes(X, 1, 2))).detach().numpy()
    assert np.allclose(np.swapaxes(ours, 1, 2), theirs, atol=1e-12, rtol=0)
    exact = [float(v) for v in np.asarray(oracle_forward(net, point.values, X[0])).reshape(-1)]
    assert np.allclose(exact, ours[0].reshape(-1), atol=1e-12, rtol=0)
    r = dimension(net, at=point, seed=0)
    c = r.certificate
    assert c is not None and 0 < c.lower <= c.upper <= net.parameters
    assert np.linalg.matrix_rank(forward.jacobian(net, Float64(), point.floats(), X)) <= c.upper
