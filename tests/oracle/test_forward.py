"""The oracle's forward pass agrees with lightning_cas's (float64) on random small networks of every
block kind: the two were written apart, so agreement means both read the block definitions alike
(this test is the only place the oracle meets lightning_cas's forward pass)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from mpmath import mp

from lightning_cas.core.arithmetic import Float64
from lightning_cas.core.forward import evaluate
from lightning_cas.core.network import MLP, Activation, Attention, LayerNorm, Linear, Network, Power
from tests.oracle.forward import Watch, forward
from tests.oracle.networks import ENTRIES, FAMILIES, WEIGHTS, Case, draw_case

# every block kind and flag at least once, beside the families' random draws
NAMED = [
    Network(2, 3, (Attention(2, heads=2, value=1, causal=True, bias=True), Linear(1, bias=True))),
    Network(3, 2, (Attention(1, normalization="softmax", residual=True, bias=True),)),
    Network(2, 3, (Attention(1, value=2, out=1, causal=True, normalization="softmax", bias=True),)),
    Network(2, 2, (MLP(2, degree=3, bias=True, residual=True), Power(2), Linear(1))),
    Network(3, 2, (MLP(2, activation="gelu", bias=True), Activation("tanh"), Activation("relu"))),
    Network(3, 2, (LayerNorm(), Linear(2), LayerNorm(affine=False, bias=False, eps=0.25))),
    Network(3, 2, (LayerNorm(bias=False), MLP(1, activation="tanh", out=2), Activation("gelu"))),
]


def _cases():
    rng = random.Random(11)
    drawn = [draw_case(rng.choice, family) for family in FAMILIES for _ in range(6)]
    for net in NAMED:
        drawn.append(
            Case(
                "named",
                net,
                tuple(rng.choice(WEIGHTS) for _ in range(net.parameters)),
                tuple(
                    tuple(tuple(rng.choice(ENTRIES) for _ in range(net.tokens)) for _ in range(net.input))
                    for _ in range(2)
                ),
            )
        )
    return [c for c in drawn if not _on_a_kink(c)]  # where ReLU has no value of its derivative both refuse


def _on_a_kink(case) -> bool:
    watch = Watch()
    for x in case.inputs:
        forward(case.network, case.weights, x, watch)
    return watch.kink == 0


@pytest.mark.parametrize("case", _cases(), ids=lambda c: f"{c.family}-{c.network.label()}")
def test_the_oracle_forward_pass_agrees_with_lightning_cas(case):
    w = np.array([float(v) for v in case.weights])
    X = np.array(case.inputs, dtype=float)
    theirs = evaluate(case.network, Float64(), w, X)
    with mp.workdps(50):
        ours = [forward(case.network, case.weights, x) for x in case.inputs]
        ours = np.array([[[float(Y[r, c]) for c in range(Y.cols)] for r in range(Y.rows)] for Y in ours])
    assert ours.shape == np.shape(theirs)
    np.testing.assert_allclose(ours, np.asarray(theirs, dtype=float), rtol=1e-10, atol=1e-10)
