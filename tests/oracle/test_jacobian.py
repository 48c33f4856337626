"""The oracle's rank on cases whose rank is known by hand or by an exact path, and its refusals to
decide: a saturated softmax and a ReLU on its kink."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

from lightning_cas import dimension
from lightning_cas.core.network import MLP, Attention, Linear, Network, Power
from lightning_cas.system.points import WeightPoint
from tests.oracle.jacobian import oracle_rank

AFFINE = Network(1, 1, (Linear(1, bias=True),))  # f = p x + b


@pytest.mark.parametrize("inputs, rank", [([[[1]], [[2]]], 2), ([[[3]]], 1), ([[[0]]], 1)])
def test_an_affine_map_has_the_rank_its_two_columns_give(inputs, rank):
    result = oracle_rank(AFFINE, [F(1, 2), F(-3, 4)], inputs)
    assert (result.status, result.rank, result.lower) == ("ok", rank, rank)


@pytest.mark.parametrize("bias, rank", [(-5, 1), (5, 2)])
def test_a_dead_relu_unit_leaves_only_the_output_bias(bias, rank):
    """d relu(u x + b_u) + b_d on x = 1, 2: dead (b_u = -5) only b_d moves the outputs; alive, the two
    outputs are affine in x and the rank is 2."""
    net = Network(1, 1, (MLP(1, activation="relu", bias=True),))
    result = oracle_rank(net, [1, 1, bias, 0], [[[1]], [[2]]])
    assert (result.status, result.rank) == ("ok", rank)


POLYNOMIAL = [
    Network(2, 2, (Attention(1, heads=2, causal=True, bias=True), Linear(1, bias=True))),
    Network(2, 2, (Attention(1, value=1, residual=True, bias=True),)),
    Network(1, 2, (Linear(2, bias=True), MLP(2, degree=2, bias=True), Linear(1))),
    Network(2, 1, (Linear(2, bias=True), Power(2), Linear(1, bias=True))),
]


@pytest.mark.parametrize("net", POLYNOMIAL, ids=lambda n: n.label())
def test_the_oracle_agrees_with_the_exact_rank_over_qq_of_polynomial_networks(net):
    """lightning_cas's rank over QQ (python-flint, no certifier involved) on the same point and inputs."""
    rng = np.random.default_rng(7)
    weights = tuple(F(int(v), 4) for v in rng.integers(-6, 7, net.parameters))
    inputs = rng.integers(-2, 3, (3, net.input, net.tokens))
    exact = dimension(net, at=WeightPoint(net, weights), inputs=inputs, layout="features-tokens", exact=True)
    ours = oracle_rank(net, weights, inputs.tolist())
    assert ours.ok and ours.rank == exact.dimension


def test_a_saturated_softmax_is_not_decided_but_keeps_its_lower_bound():
    """Logits of +-1024: the derivatives carry exp(-2048), real but far below the noise floor."""
    net = Network(1, 2, (Attention(1, out=1, normalization="softmax"),))
    result = oracle_rank(net, [16, 16, 1], [[[2, -2]]])
    assert result.status == "saturated" and result.rank is None and result.lower >= 1


def test_a_relu_on_its_kink_decides_nothing():
    net = Network(1, 1, (MLP(1, activation="relu", bias=True),))
    result = oracle_rank(net, [1, 1, -1, 0], [[[1]], [[2]]])
    assert (result.status, result.rank, result.lower) == ("kink", None, None)
