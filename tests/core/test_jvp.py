"""J V along directions (``core.forward.jvp``) against the full Jacobian times V, on every block kind."""

import numpy as np
import pytest

from lightning_cas.core.arithmetic import Float64, ModP, ModP2
from lightning_cas.core.blocks import MLP, Attention, LayerNorm, Linear, Position, Power, RMSNorm
from lightning_cas.core.forward import jacobian, jvp
from lightning_cas.core.network import Network

P2 = 16_777_199  # below 2^24, 3 mod 4

NETWORKS = {
    "attention heads, value, biases, residual": Network(
        3, 3, (Attention(2, heads=2, value=2, bias=True, residual=1), MLP(4, bias=True, residual=1), Linear(2))
    ),
    "causal attention, plain value": Network(2, 3, (Attention(2, causal=True), Power(2), Linear(2, bias=True))),
    "position and mlp": Network(2, 3, (Position(), MLP(3, degree=3, out=2), Attention(1, bias=True))),
    "mlp stack x^3": Network(3, 1, (MLP(5, degree=3, out=4), MLP(4, degree=3, out=2))),
}


@pytest.mark.parametrize("name", sorted(NETWORKS))
@pytest.mark.parametrize("field", ["p", "p^2"])
def test_jvp_is_jacobian_times_directions(name, field):
    net = NETWORKS[name]
    ar = ModP(P2) if field == "p" else ModP2(P2)
    rng = np.random.default_rng(3)
    w, X = ar.random(rng, net.parameters), ar.random(rng, (4, net.input, net.tokens))
    V = ar.random(rng, (net.parameters, 3))
    want = ar.matmul(jacobian(net, ar, w, X), V)
    got = jvp(net, ar, w, X, V)
    assert got.shape == want.shape
    assert np.array_equal(ar.residues(got.real), ar.residues(want.real))
    assert np.array_equal(ar.residues(got.imag), ar.residues(want.imag))
    assert np.any(want)


@pytest.mark.parametrize("norm", [LayerNorm(), RMSNorm()])
def test_jvp_through_norms_in_floats(norm):
    net = Network(3, 2, (Attention(2, normalization="softmax", value=2, bias=True), norm, MLP(3, activation="tanh")))
    ar, rng = Float64(), np.random.default_rng(5)
    w, X, V = (
        rng.standard_normal(net.parameters),
        rng.standard_normal((3, 3, 2)),
        rng.standard_normal((net.parameters, 2)),
    )
    assert np.allclose(jvp(net, ar, w, X, V), jacobian(net, ar, w, X) @ V, rtol=1e-10, atol=1e-10)


def test_position_leaves_its_input_alone():
    """ModP adds in place: the position block must not write into the tokens (or a residual group's input)."""
    net = Network(2, 3, (Position(residual=1), Linear(2)))
    ar, rng = ModP(P2), np.random.default_rng(1)
    w, X = ar.random(rng, net.parameters), ar.random(rng, (2, 2, 3))
    before = X.copy()
    first = jacobian(net, ar, w, X)
    assert np.array_equal(X, before)
    assert np.array_equal(first, jacobian(net, ar, w, X))
