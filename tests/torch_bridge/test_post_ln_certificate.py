"""Post-LN and pre-LN nn.TransformerEncoderLayers certify their rank at their weights: the stream mechanisms
(core.stream_kernels; LayerNorm's shift and plane beside residual blocks) and the dead units proved in balls close
the upper bound. At 600 weights the certified rank is float64's, where float64 has a gap of eight decades; on a
smaller layer it is the rank of the oracle (tests/oracle: an mpmath forward, a 200-digit Jacobian). A pre-LN layer
is two residual groups; the shift along 1 through its second norm is the one stream shift it needs."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from lightning_cas import dimension  # noqa: E402
from lightning_cas.backends.certified import float_rank_at  # noqa: E402
from lightning_cas.torch_bridge import from_torch  # noqa: E402
from tests.oracle.jacobian import oracle_rank  # noqa: E402


def layer(d, heads, ff, activation="relu", dead=(), norm_first=False):
    """Norm gains and all biases away from PyTorch's initial ones and zeros (as after training); the mlp units in
    ``dead`` get the bias -100, below anything their input reaches after a LayerNorm (dead on every input)."""
    torch.manual_seed(0)
    module = nn.TransformerEncoderLayer(
        d, heads, ff, dropout=0.0, activation=activation, batch_first=True, norm_first=norm_first
    )
    module = module.to(torch.float64)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if "norm" in name and name.endswith("weight"):
                p.copy_(1 + 0.5 * torch.rand_like(p))
            elif name.endswith("bias"):
                p.copy_(0.3 * torch.randn_like(p))
        for k in dead:
            module.linear1.bias[k] = -100.0
    return module.eval()


@pytest.mark.slow
@pytest.mark.parametrize("activation, dead", [("relu", (3, 11)), ("gelu", ())])
def test_a_post_ln_encoder_layer_certifies_at_its_weights_at_float64s_rank(activation, dead):
    """d_model 8, 2 heads, mlp 8 -> 16 -> 8 (600 weights), 25 Gaussian inputs of 4 tokens: about 15 s each
    on an idle machine."""
    net, point = from_torch(layer(8, 2, 16, activation, dead), tokens=4)
    assert net.parameters == 600
    X = np.random.default_rng(1).standard_normal((25, 8, 4))
    result = dimension(net, at=point, inputs=X)
    cert = result.certificate
    float_rank, s = float_rank_at(net, point.values, X)
    assert s[float_rank - 1] > 1e6 * s[float_rank]  # float64 sees a clear gap here
    assert cert.lower == cert.upper == float_rank == result.dimension, cert
    for mechanism in ("stream bias shift", "LayerNorm plane", "LayerNorm shift"):
        assert mechanism in cert.upper_by
    assert ("34 dead unit" in cert.upper_by) == bool(dead)  # 17 weights per dead unit: U's row, b_u, D's column


@pytest.mark.slow
def test_a_small_post_ln_layers_certificate_is_the_oracles_rank():
    """d_model 4, 2 heads, mlp 4 -> 8 -> 4 (172 weights), 20 integer inputs of 2 tokens (enough for the rank on
    generic inputs): the certificate closes at the oracle's rank (about 30 s idle, mostly the oracle)."""
    net, point = from_torch(layer(4, 2, 8), tokens=2)
    X = np.random.default_rng(1).integers(-2, 3, (20, 4, 2))
    cert = dimension(net, at=point, inputs=X, layout="features-tokens").certificate
    assert cert.lower == cert.upper, cert
    oracle = oracle_rank(net, point.values, [[[int(v) for v in row] for row in x] for x in X])
    assert oracle.ok and oracle.rank == cert.lower == 114


@pytest.mark.slow
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_a_pre_ln_encoder_layer_certifies_at_its_weights_at_float64s_rank(activation):
    """The same size, norm_first: layernorm, attention (residual 2), layernorm, mlp (residual 2); about 10 s."""
    net, point = from_torch(layer(8, 2, 16, activation, norm_first=True), tokens=4)
    assert [b.residual for b in net.blocks] == [0, 2, 0, 2]
    X = np.random.default_rng(1).standard_normal((25, 8, 4))
    cert = dimension(net, at=point, inputs=X).certificate
    float_rank, s = float_rank_at(net, point.values, X)
    assert s[float_rank - 1] > 1e6 * s[float_rank]
    assert cert.lower == cert.upper == float_rank, cert
    assert "1 stream bias shift" in cert.upper_by  # b_o by 1, b_d by -1: through LN2 along its skip


@pytest.mark.slow
def test_a_small_pre_ln_layers_certificate_is_the_oracles_rank():
    net, point = from_torch(layer(4, 2, 8, norm_first=True), tokens=2)
    X = np.random.default_rng(1).integers(-2, 3, (20, 4, 2))
    cert = dimension(net, at=point, inputs=X, layout="features-tokens").certificate
    assert cert.lower == cert.upper, cert
    oracle = oracle_rank(net, point.values, [[[int(v) for v in row] for row in x] for x in X])
    assert oracle.ok and oracle.rank == cert.lower


@pytest.mark.slow
def test_a_users_own_pre_ln_block_traced_by_torch_fx_certifies():
    """The GPT-style block of the traced-path tests (linear, gelu, linear: a group of four from LN2)."""
    from tests.torch_bridge.test_from_torch_traced import PreLN, trained

    net, point = from_torch(trained(PreLN()), tokens=4)
    X = np.random.default_rng(1).standard_normal((25, 8, 4))
    cert = dimension(net, at=point, inputs=X).certificate
    float_rank, s = float_rank_at(net, point.values, X)
    assert s[float_rank - 1] > 1e6 * s[float_rank]
    assert cert.lower == cert.upper == float_rank, cert
