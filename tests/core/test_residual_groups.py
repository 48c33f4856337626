"""Residual groups (``residual = n`` on the last block of the group): the key, its checks, the labels and files,
and the forward pass against the group written out by hand (its blocks as a network of their own, plus the
input) and against finite differences, with and without ``only``."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from lightning_cas.core.arithmetic import Float64, Rationals
from lightning_cas.core.forward import evaluate, forward, jacobian
from lightning_cas.core.network import (
    MLP,
    Activation,
    Attention,
    LayerNorm,
    Linear,
    Network,
    Power,
    RMSNorm,
    residual_group,
)
from lightning_cas.errors import InputError

NESTED = Network(
    2, 3, (Linear(3), Attention(1, out=3, causal=True), MLP(2, residual=2), Power(2), Linear(3, residual=4), Linear(1))
)


def test_every_kind_takes_a_count_and_true_false_stay_one_and_zero():
    for block in (Attention(2), MLP(2), Linear(3), Power(2), Activation("relu"), LayerNorm(), RMSNorm()):
        net = Network(3, 2, (Linear(3), replace(block, residual=2)))
        assert net.blocks[1].residual == 2 and "r2" in net.label()
    net = Network(2, 2, (Attention(1, residual=True), MLP(2, residual=False)))
    assert net.blocks[0].residual == 1 and net.blocks[1].residual == 0
    assert net.label() == "net_d2_t2_A1x1o2r-M2p2o2"  # the label of n = 1 is what it was
    assert '"residual": true' in net.to_json() and "residual = true" in net.to_toml()
    grouped = Network(2, 2, (Linear(2), MLP(2, residual=2)))
    assert "residual = 2" in grouped.to_toml()
    assert Network.from_dict(json.loads(grouped.to_json())) == grouped
    assert '"residual"' not in Network(2, 2, (Linear(2),)).to_json()  # a linear block's file is unchanged


def test_groups_must_be_nested_or_disjoint_start_at_block_0_and_keep_the_width():
    with pytest.raises(
        InputError, match=r"block 2 \(residual 2, blocks 1..2\) and block 3 \(residual 2, blocks 2..3\)"
    ):
        Network(2, 2, (Linear(2), Linear(2), Linear(2, residual=2), Linear(2, residual=2)))
    with pytest.raises(InputError, match=r"block 1 \(linear\): residual 3 reaches before block 0"):
        Network(2, 2, (Linear(2), Linear(2, residual=3)))
    with pytest.raises(InputError, match=r"block 1 \(linear\): residual 2 adds the input of block 0 \(width 2\)"):
        Network(2, 2, (Linear(3), Linear(3, residual=2)))
    with pytest.raises(InputError, match="block 0 \\(linear\\): residual must be true, false or a block count"):
        Network.from_dict({"input": 2, "block": [{"kind": "linear", "out": 2, "residual": -1}]}, "f.toml")
    with pytest.raises(InputError, match="block 0 \\(linear\\): residual must be true, false or a block count"):
        Network.from_dict({"input": 2, "block": [{"kind": "linear", "out": 2, "residual": "yes"}]}, "f.toml")
    Network(2, 2, (Linear(2), Linear(2), Linear(2, residual=2), Linear(2, residual=4)))  # nested: fine


def test_residual_group_helper_sets_the_count_on_the_last_block():
    blocks = residual_group(LayerNorm(), Attention(2))
    assert blocks[1].residual == 2 and blocks[0].residual == 0
    with pytest.raises(InputError, match="already ends a residual group"):
        residual_group(Linear(2), Linear(2, residual=1))


def _weights(net, seed):
    return [int(v) for v in np.random.default_rng(seed).integers(-3, 4, net.parameters)]


def _alone(blocks, width, tokens):
    """The blocks as a network of their own, without residual connections."""
    return Network(width, tokens, tuple(b.without_residual() for b in blocks))


def test_the_group_adds_its_input_to_its_blocks_applied_in_order():
    """NESTED by hand: y1 = L0 x; y3 = y1 + M2(A1(y1)); y5 = y1 + L4(P3(y3)); out = L5 y5."""
    net, ar = NESTED, Rationals()
    w = ar.array(_weights(net, 3))
    X = ar.array(np.random.default_rng(1).integers(-3, 4, (2, net.input, net.tokens)))
    mats = [m for m in net.weight_matrices]
    cut = {
        i: (min(m.offset for m in mats if m.block == i), max(m.stop for m in mats if m.block == i))
        for i in (0, 1, 2, 4, 5)
    }
    run = lambda i, Y: evaluate(_alone([net.blocks[i]], Y.shape[1], net.tokens), ar, w[slice(*cut[i])], Y)  # noqa: E731
    y1 = run(0, X)
    y3 = ar.add(y1, run(2, run(1, y1)))
    y5 = ar.add(y1, run(4, ar.power(y3, 2)))
    assert np.array_equal(evaluate(net, ar, w, X), run(5, y5))


@pytest.mark.parametrize("only", range(len(NESTED.blocks)))
def test_only_one_block_gives_that_blocks_columns_of_the_full_jacobian(only):
    net, ar = NESTED, Rationals()
    w = ar.array(_weights(net, 4))
    X = ar.array(np.random.default_rng(2).integers(-3, 4, (2, net.input, net.tokens)))
    full = jacobian(net, ar, w, X)
    own = [m for m in net.weight_matrices if m.block == only]
    if not own:
        return  # a power block: no weights
    lo, hi = own[0].offset, own[-1].stop
    assert np.array_equal(jacobian(net, ar, w, X, only=only), full[:, lo:hi])


def test_the_jacobian_of_a_pre_ln_stack_matches_finite_differences():
    net = Network(
        3,
        3,
        (
            *residual_group(LayerNorm(), Attention(2, causal=True, normalization="softmax", bias=True)),
            *residual_group(RMSNorm(), MLP(4, activation="gelu", bias=True)),
            LayerNorm(),
        ),
    )
    f, rng = Float64(), np.random.default_rng(7)
    w = rng.normal(size=net.parameters)
    X = rng.normal(size=(2, net.input, net.tokens))
    J = jacobian(net, f, w, X)
    h = 1e-6
    for k in range(net.parameters):
        e = np.zeros(net.parameters)
        e[k] = h
        column = (forward(net, f, w + e, X)[0] - forward(net, f, w - e, X)[0]).reshape(-1) / (2 * h)
        assert np.allclose(J[:, k], column, atol=1e-6), k
    for i in range(len(net.blocks)):
        own = [m for m in net.weight_matrices if m.block == i]
        lo, hi = own[0].offset, own[-1].stop
        assert np.allclose(jacobian(net, f, w, X, only=i), J[:, lo:hi], atol=1e-12)


def test_degrees_follow_the_groups():
    net = Network(2, 2, (Linear(2), Power(2), Power(2, residual=2)))
    assert net.token_degrees == frozenset({1, 4})
    assert net.weight_degree == 4


def test_skip_in_and_skip_out_say_where_a_skip_leaves_and_joins():
    assert [NESTED.skip_in(i) for i in range(6)] == [False, True, False, False, False, False]
    assert [NESTED.skip_out(i) for i in range(6)] == [False, False, True, False, True, False]
    single = Network(2, 2, (Linear(2), MLP(2, residual=True)))
    assert (single.skip_in(1), single.skip_out(1), single.skip_in(0), single.skip_out(0)) == (True, True, False, False)
