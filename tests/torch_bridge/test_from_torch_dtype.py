"""from_torch in the module's own dtype: the defaults PyTorch takes from the input's dtype (RMSNorm's eps =
None) are taken from the module's, and the conversion computes what the module computes as the user runs
it (a float32 module in float32), on inputs of tiny and of large norm."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from lightning_cas.core import forward  # noqa: E402
from lightning_cas.core.arithmetic import Float64  # noqa: E402
from lightning_cas.errors import InputError  # noqa: E402
from lightning_cas.torch_bridge import from_torch  # noqa: E402
from lightning_cas.torch_bridge.checks import tolerance  # noqa: E402


def ours(net, point, x: np.ndarray) -> np.ndarray:
    """The converted network on (batch, tokens, features) inputs, in float64."""
    return np.swapaxes(forward.evaluate(net, Float64(), point.floats(), np.swapaxes(x, 1, 2)), 1, 2)


def test_the_red_team_token_through_a_float32_rmsnorm_with_the_default_eps():
    """Had given [0.632, -1.265] (float64's eps) where torch gives [0.263, -0.527]."""
    module = nn.RMSNorm(2).eval()
    net, point = from_torch(module, tokens=1)
    assert net.blocks[0].eps == torch.finfo(torch.float32).eps
    token = np.array([[[1e-4, -2e-4]]])
    with torch.no_grad():
        theirs = module(torch.tensor(token, dtype=torch.float32)).double().numpy()
    assert np.allclose(theirs, [[[0.263, -0.527]]], atol=1e-3)
    assert np.abs(ours(net, point, token) - theirs).max() < 1e-5


def _stack(dtype, attention: bool):
    layers = [nn.Linear(3, 4), nn.RMSNorm(4), nn.GELU(), nn.Linear(4, 4), nn.LayerNorm(4), nn.SiLU()]
    if attention:
        layers += [nn.MultiheadAttention(4, 2, batch_first=True), nn.RMSNorm(4, elementwise_affine=False)]
    return nn.Sequential(*layers).to(dtype).eval()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("attention", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_modules_agree_with_the_conversion_in_their_own_dtype_at_tiny_and_large_norms(dtype, attention, seed):
    torch.manual_seed(seed)
    module = _stack(dtype, attention)
    net, point = from_torch(module, tokens=3)
    eps = torch.finfo(dtype).eps
    assert [b.eps for b in net.blocks if b.kind == "rmsnorm"] == [eps] * (2 if attention else 1)
    rng = np.random.default_rng(seed)
    # large norms only without attention: softmax of logits 1e4 is ill-conditioned in any precision
    for scale in (1e-6, 1e-4, 1.0) + (() if attention else (1e3,)):
        x = scale * rng.standard_normal((4, 3, 3))
        given = torch.tensor(x, dtype=dtype)
        with torch.no_grad():
            theirs = _call(module, given).double().numpy()
        gap = np.abs(ours(net, point, given.double().numpy()) - theirs).max()
        assert gap <= tolerance(dtype) * max(1.0, np.abs(theirs).max()), (scale, gap)


def _call(module, x):
    for layer in module:
        x = layer(x, x, x, need_weights=False)[0] if isinstance(layer, nn.MultiheadAttention) else layer(x)
    return x


def test_a_conversion_with_another_dtype_s_default_is_refused(monkeypatch):
    """The conversion of before this round put back (float64's eps for a float32 module): the proof's input
    of tiny norm shows it, and the refusal says in which dtype and within what tolerance."""
    from lightning_cas.core.network import RMSNorm
    from lightning_cas.torch_bridge import convert

    monkeypatch.setattr(convert, "RMSNorm", lambda affine, eps: RMSNorm(affine=affine, eps=2.0**-52))
    module = nn.Sequential(nn.Linear(2, 2), nn.RMSNorm(2)).eval()
    with pytest.raises(InputError, match=r"largest difference is .* in float(32|64), above its tolerance"):
        from_torch(module, tokens=2)


def test_half_precision_modules_are_proved_in_their_dtype_too():
    torch.manual_seed(0)
    module = nn.Sequential(nn.Linear(3, 3), nn.RMSNorm(3)).to(torch.bfloat16).eval()
    net, _ = from_torch(module, tokens=2)
    assert net.blocks[1].eps == torch.finfo(torch.bfloat16).eps
