"""The one forward definition: its derivative rules against exact symbolic differentiation (sympy, no
forward-mode code involved) and finite differences (softmax), and the arithmetics against each other."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from lightning_cas.core import forward
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.arithmetic import Balls, Float64, IntegersModP, ModP, Rationals
from lightning_cas.core.model import flat_weight_symbols, network_output, token_symbols, weight_symbols
from lightning_cas.core.network import MLP, Attention, Linear, Network, Power
from tests.support import Objects

POLYNOMIAL = [
    Network(2, 3, (Attention(2, causal=True),)),
    Network(2, 2, (Attention(1, heads=2, value=1, residual=True),)),
    Network(2, 3, (Attention(1, value=2, out=1, causal=True),)),
    Network(2, 2, (MLP(2, degree=3), Linear(1))),
    Network(2, 2, (Linear(2), Power(2), Linear(1))),
    Network(2, 2, (Attention(1, causal=True, residual=True), MLP(1, residual=True))),
    # biases: affine projections, the output bias after the head sum, mlp and linear biases
    Network(2, 3, (Attention(1, heads=2, causal=True, bias=True),)),
    Network(2, 2, (Attention(1, heads=2, value=1, residual=True, bias=True), Linear(1, bias=True))),
    Network(2, 2, (MLP(2, degree=3, bias=True), Linear(1, bias=True))),
    # residual groups: a group of 2 inside one of 3, then a group of 2 around a linear and a power block
    Network(2, 2, (Linear(2), Linear(2), Power(2, residual=2), Linear(2, residual=3))),
    Network(2, 2, (Linear(2, bias=True), Power(2, residual=2), Linear(1))),
]
SOFTMAX = [
    Network(3, 4, (Attention(2, causal=True, normalization="softmax"),)),
    Network(3, 3, (Attention(2, heads=2, value=1, residual=True, normalization="softmax"), MLP(2), Linear(2))),
    Network(2, 3, (Linear(2), Attention(1, causal=True, residual=True, normalization="softmax"))),
    Network(
        2,
        3,
        (
            Attention(2, heads=2, value=1, causal=True, normalization="softmax", bias=True),
            MLP(2, bias=True),
            Linear(1, bias=True),
        ),
    ),
    Network(2, 3, (Linear(2), Attention(1, causal=True, normalization="softmax", residual=2), MLP(2, residual=3))),
]


@pytest.mark.parametrize("net", POLYNOMIAL, ids=lambda n: n.label())
def test_the_jacobian_is_the_exact_derivative_of_the_symbolic_network(net):
    """The symbolic output (the forward pass over a polynomial ring, no tangents) differentiated by sympy
    equals the forward-mode Jacobian, at a random integer point and integer tokens, exactly."""
    rng = np.random.default_rng(5)
    w = [int(v) for v in rng.integers(-3, 4, net.parameters)]
    X = rng.integers(-3, 4, (net.input, net.tokens))
    ws, xs = flat_weight_symbols(net), list(token_symbols(net))
    phi = network_output(net)
    subs = dict(zip(ws, w)) | dict(zip(xs, (int(v) for v in X.reshape(-1))))
    gens = ws + xs
    point = [subs[g] for g in gens]
    exact = []  # rows (output row, token)
    for f in phi:
        poly = sympy.Poly(f, *gens)
        exact.append([poly.diff(s).eval(point) if poly.degree(s) > 0 else 0 for s in ws])
    ar = Objects()
    J = forward.jacobian(net, ar, ar.array(w), ar.array(X[None]))
    assert [[int(v) for v in row] for row in J] == [[int(v) for v in row] for row in exact]


@pytest.mark.parametrize("net", SOFTMAX, ids=lambda n: n.label())
def test_softmax_jacobian_matches_finite_differences_and_balls_enclose_floats(net):
    rng = np.random.default_rng(2)
    w = rng.standard_normal(net.parameters) * 0.5
    X = rng.standard_normal((2, net.input, net.tokens))
    ar = Float64()
    J = forward.jacobian(net, ar, w, X)
    h = 1e-6
    for k in range(net.parameters):
        e = np.zeros_like(w)
        e[k] = h
        fd = (forward.evaluate(net, ar, w + e, X) - forward.evaluate(net, ar, w - e, X)).reshape(-1) / (2 * h)
        assert np.allclose(fd, J[:, k], rtol=1e-5, atol=1e-7)
    import flint

    with flint.ctx.workdps(40):
        balls = Balls(40)
        Jb = forward.jacobian(net, balls, balls.array(w), balls.array(X))
    mids = np.array([[float(v.mid()) for v in row] for row in Jb])
    assert np.allclose(mids, J, rtol=1e-12, atol=1e-13)
    assert all(v.rad() < 1e-30 for v in Jb.reshape(-1))


@pytest.mark.parametrize("net", POLYNOMIAL + [Architecture((3, 3, 3), (2, 2), 2)], ids=lambda n: n.label())
def test_the_arithmetics_agree(net):
    """GF(p) on float64 BLAS, GF(p) on int64, QQ (flint) and Python integers give one Jacobian."""
    p = 16_777_213
    rng = np.random.default_rng(3)
    w = rng.integers(-50, 50, net.parameters)
    X = rng.integers(-50, 50, (3, net.input, net.tokens))
    exact = forward.jacobian(net, Objects(), w.astype(object), X.astype(object))
    fast = ModP(p)
    assert (
        fast.residues(forward.jacobian(net, fast, fast.array(w), fast.array(X)))
        == np.vectorize(lambda v: int(v) % p)(exact)
    ).all()
    ints = IntegersModP(p)
    modulo = np.vectorize(lambda v: int(v) % p)(exact)
    assert (forward.jacobian(net, ints, ints.array(w), ints.array(X)) == modulo).all()
    qq = Rationals()
    assert (np.vectorize(int)(forward.jacobian(net, qq, qq.array(w), qq.array(X))) == exact).all()


def test_network_output_takes_weights_nested_per_layer():
    """Found by review: network_output(arch, layers=weight_symbols(arch)) raised NameError (sympy unimported)."""
    arch = Architecture((2, 1), (1,), 2)
    assert network_output(arch, weight_symbols(arch)) == network_output(arch)
    ones = network_output(arch, [1] * arch.parameters)
    assert ones.free_symbols == set(token_symbols(arch))
