"""Kernel vectors and the named group on networks with residual groups: every vector a mechanism offers at a
point (before the certifier's own check) is in the kernel of the Jacobian there, so a move across a group's
boundary (the group's input used twice, its output added to the skip) is never offered. The networks put a
block that would absorb a move (a linear block before a LayerNorm, an output matrix before an input matrix)
exactly at such a boundary."""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np
import pytest

from lightning_cas.core.arithmetic import Float64, Rationals
from lightning_cas.core.forward import jacobian
from lightning_cas.core.kernel_proof import candidates
from lightning_cas.core.network import (
    MLP,
    Activation,
    Attention,
    LayerNorm,
    Linear,
    Network,
    Position,
    Power,
    RMSNorm,
)
from lightning_cas.core.symmetry import group_factors, orbit_tangents

POLYNOMIAL = [
    Network(2, 2, (Linear(3), Attention(2, out=3), MLP(2, out=3, residual=2), Linear(3, residual=3), Linear(1))),
    Network(
        3, 2, (Linear(3, bias=True), Power(2), Linear(3, bias=True, residual=2), Attention(1, residual=True), Linear(2))
    ),
    Network(2, 2, (Linear(2), Attention(1, value=1, residual=True), Linear(2, residual=2), Linear(1))),
    # a positional embedding between linear blocks: Y + E absorbs no interface move
    Network(2, 3, (Linear(2), Position(), Linear(2), Power(2), Position(residual=2), Linear(1))),
]
FUNCTIONS = [
    Network(
        3,
        3,
        (
            Linear(3, bias=True),
            LayerNorm(),
            Attention(2, normalization="softmax", bias=True, value=1, residual=2),
            LayerNorm(),
            MLP(3, activation="gelu", bias=True, residual=2),
            Linear(2, bias=True),
        ),
    ),
    Network(3, 2, (Linear(3, bias=True), RMSNorm(), MLP(2, activation="relu", bias=True, residual=2), Linear(1))),
    Network(
        2,
        2,
        (
            Linear(2, bias=True),
            Activation("relu"),
            Linear(2, bias=True, residual=2),
            Linear(2, bias=True),
            Activation("relu"),
            Linear(1, bias=True),
        ),
    ),
    Network(2, 2, (Linear(3, bias=True), LayerNorm(), Linear(3, bias=True, residual=2), LayerNorm(), Linear(1))),
]


def _point(net, seed):
    return [Fraction(int(a), 4) for a in np.random.default_rng(seed).integers(-6, 7, net.parameters)]


def _dense(vec):
    return np.array([Fraction(int(x.p), int(x.q)) for x in vec], dtype=object)


@pytest.mark.parametrize("net", POLYNOMIAL, ids=lambda n: n.label())
def test_every_offered_vector_of_a_grouped_polynomial_network_is_in_the_kernel(net):
    values = _point(net, 1)
    offered = candidates(net, values).vectors
    assert offered
    ar = Rationals()
    X = ar.array(np.random.default_rng(2).integers(-3, 4, (net.parameters + 2, net.input, net.tokens)))
    J = jacobian(net, ar, ar.array(values), X)
    for name, vec in offered:
        assert not np.any(J.dot(np.array(vec, dtype=object)) != 0), name
    for vec in orbit_tangents(net, values):
        assert not np.any(J.dot(np.array([flint.fmpq(q.numerator, q.denominator) for q in vec], dtype=object)) != 0)


@pytest.mark.parametrize("net", FUNCTIONS, ids=lambda n: n.label())
def test_every_offered_vector_of_a_grouped_network_with_functions_is_in_the_kernel(net):
    values = _point(net, 3)
    offered = candidates(net, values).vectors
    assert offered
    f = Float64()
    X = np.random.default_rng(4).normal(size=(net.parameters + 2, net.input, net.tokens))
    J = jacobian(net, f, np.array([float(v) for v in values]), X)
    scale = np.abs(J).max()
    for name, vec in offered:
        v = np.array([float(x) for x in _dense(vec)])
        assert np.abs(J @ v).max() <= 1e-9 * scale * max(1.0, np.abs(v).max()), name


def test_no_interface_group_acts_across_a_group_boundary():
    """Linear, then a group (LayerNorm, linear): the GL at the group's input would need the skip to move too;
    the stream of single residual blocks inside a larger group still carries its GL."""
    pre = Network(2, 2, (Linear(3), Linear(3), Attention(2, residual=2), Linear(3, residual=3), Linear(1)))
    assert not [f for f in group_factors(pre) if "after block 0" in f.where]  # the group's input
    assert [f for f in group_factors(pre) if "after block 1" in f.where]  # inside the group: GL acts
    inside = Network(
        2,
        2,
        (Linear(3), Linear(3), Attention(2, residual=True), Attention(2, residual=True), Linear(3, residual=4)),
    )
    assert [f.where for f in group_factors(inside) if f.name == "GL(width)"] == [
        "width 3 after block 1 through block 3"
    ]
    values = _point(inside, 5)
    ar = Rationals()
    X = ar.array(np.random.default_rng(6).integers(-3, 4, (inside.parameters, inside.input, inside.tokens)))
    J = jacobian(inside, ar, ar.array(values), X)
    for vec in orbit_tangents(inside, values):
        assert not np.any(J.dot(np.array([flint.fmpq(q.numerator, q.denominator) for q in vec], dtype=object)) != 0)
