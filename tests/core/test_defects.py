"""The defect split: parameters - dimension = named orbit + mechanisms + unexplained, with counts that have
closed forms, and the guards that refuse a split that does not add up."""

import dataclasses
import math
import tracemalloc

import numpy as np
import pytest

from lightning_cas import api
from lightning_cas.core import defects
from lightning_cas.core.arithmetic import ModP
from lightning_cas.core.defects import explain
from lightning_cas.core.forward import jacobian
from lightning_cas.core.network import MLP, Attention, Linear, Network, Power
from lightning_cas.core.splits import Cause, Explained
from lightning_cas.errors import InputError, ResultError
from lightning_cas.results.contract import encode
from lightning_cas.results.dimension import DimensionResult, explained_lines
from lightning_cas.results.verify import VerifyResult
from lightning_cas.system.deadline import Deadline
from lightning_cas.system.networks import load_network


@pytest.fixture(scope="module")
def demo():
    net = load_network("examples/transformer.toml")
    return net, api.verify(net)


def test_demo_transformer_defect_is_explained(demo):
    net, result = demo
    split = result.explained
    assert result.computed.dimension == 144 and net.parameters == 276
    assert split.total == net.parameters - 144 and split.unexplained == 0
    assert split.named_group == 68  # 4 heads x (GL(2) + GL(2) + scaling) + 2 x 8 neuron scalings + GL(4)
    got = {(c.block, c.mechanism): c.count for c in split.causes}
    # closed forms: the embedding has rank 3 in the width-4 stream, so each of Q, K, W (2 x 4) of the first
    # attention block's two heads can move by a row vector killing its image: 2 heads x 3 matrices x 2 rows;
    # an mlp of hidden 8, degree 2 on width 4 has 64 weights, 8 neuron scalings and at most 4 C(5, 2) = 40
    # dimensions of maps; the readout (2 x 4) kills a 2-dim subspace of the last block's quadrics (10 each)
    assert got == {
        (1, "bottleneck"): 2 * 3 * 2,
        (2, "filling"): 64 - 8 - 4 * math.comb(5, 2),
        (4, "filling"): 64 - 8 - 4 * math.comb(5, 2),
        (4, "invisibility"): 2 * math.comb(5, 2),
    }


def test_split_in_json_text_and_html(demo):
    _, result = demo
    data = result.to_dict()
    assert set(data["explained"]) >= {"named_group", "causes", "unexplained"}
    assert all(set(c) >= {"block", "mechanism", "count"} for c in data["explained"]["causes"])
    assert "explained" not in data["computed"]  # carried once
    assert VerifyResult.from_json(result.to_json()) == result
    assert "invisibility" in result._repr_html_()
    assert "filling 16" in "\n".join(explained_lines(result.explained))


def test_dim_carries_the_split():
    net = Network(2, 1, (Linear(3), Power(2), Linear(1)))
    r = api.dimension(net)
    assert r.explained is not None and r.explained.total == r.parameters - r.dimension
    assert DimensionResult.from_json(r.to_json()) == r


def test_residual_after_power_agrees():
    # p^2 x^2 + D U^2 p^4 x^4: dimension 2; the interface torus before the power is no symmetry here
    net = Network(1, 1, (Linear(1), Power(2), MLP(1, residual=True)))
    r = api.verify(net)
    assert r.computed.dimension == 2 and r.verdict == "agree" and r.predicted == 2


@pytest.mark.parametrize("blocks", [(Power(2), Linear(2)), (Linear(2), Power(2)), (Power(3), MLP(2), Power(2))])
def test_power_first_or_last_predicts_and_verifies(blocks):
    net = Network(2, 1, blocks)
    pred = api.predict(net).dimension
    r = api.verify(net)
    assert r.verdict in ("agree", "defect") and r.computed.dimension <= pred.value


def test_alexander_hirschowitz_exception_is_a_secant_defect():
    net = Network(3, 1, (Linear(5), Power(4), Linear(1)))  # (3, 4, 5): 15 - 1 = 14
    r = api.dimension(net)
    assert r.dimension == 14
    # 20 weights, the 5-dim torus, so 15 - 14 = 1 left: the exception's one missing dimension, found as a
    # direction moving the five linear forms only (the sum of fourth powers does not change)
    assert r.explained.named_group == 5 and r.explained.unexplained == 0
    assert [(c.block, c.count) for c in r.explained.causes] == [(0, 1)]


def test_sum_of_two_squares_needs_the_first_blocks():
    # c1 q1^2 + c2 q2^2 with q in the span of 4 squares of linear forms in 3 variables: products of two
    # quadrics, 6 + 6 - 1 = 11; the first three blocks give every pair of quadrics (12) from 20 weights
    net = Network(3, 1, (Linear(4), Power(2), Linear(2), Power(2), Linear(1)))
    r = api.dimension(net)
    assert r.dimension == 11 and r.explained.unexplained == 0
    assert any(c.mechanism == "filling" and c.block == 2 for c in r.explained.causes)


def test_only_block_jacobian_is_the_full_jacobians_columns():
    net = Network(3, 2, (Attention(2, value=2, causal=True, residual=True), MLP(3, residual=True), Linear(2)))
    ar = ModP(10007)
    rng = np.random.default_rng(1)
    w = ar.random(rng, (net.parameters,))
    X = ar.random(rng, (3, net.input, net.tokens))
    full = jacobian(net, ar, w, X)
    for i in range(len(net.blocks)):
        mats = [m for m in net.weight_matrices if m.block == i]
        assert np.array_equal(jacobian(net, ar, w, X, only=i), full[:, mats[0].offset : mats[-1].stop])


def test_a_direction_outside_the_kernel_is_an_error(monkeypatch):
    net = Network(3, 2, (Attention(2, residual=True), Linear(2)))  # a defect: the split adds block kernels
    real = defects.block_kernels

    def planted(net_, ar, wc, i, rng, memory=None):
        a, b, c = real(net_, ar, wc, i, rng, memory)
        # an empty annihilator: every direction of the block, most of which are not in the kernel
        return a, b, (np.zeros((0, c[0].shape[1])), np.zeros(0, dtype=np.intp))

    monkeypatch.setattr(defects, "block_kernels", planted)
    with pytest.raises(ResultError, match="net_d3_t2_A1x2o3r-L2"):
        explain(net, api.dimension(net).dimension)


def test_a_split_that_does_not_add_up_is_refused():
    net = Network(2, 1, (Linear(3), Power(2), Linear(1)))
    r = api.dimension(net)
    bad = Explained(r.explained.named_group, (Cause(0, "filling", 1),), r.explained.unexplained)
    with pytest.raises((ResultError, InputError), match="adds up to"):
        DimensionResult.from_dict({**r.to_dict(), "explained": encode(bad)})
    with pytest.raises(ResultError):
        Explained(0, (), -1)


def test_head_mixing_is_named():
    # two heads with a = d = 2 and value dim 2: every A_h and V_h is any 2 x 2 matrix, so GL(2) mixes the
    # pairs: 2^2 - 2 directions beyond the per-head scalings (the table's "own defect 2" before)
    net = Network(2, 3, (Attention(2, heads=2, value=2),))
    r = api.dimension(net)
    assert [(c.block, c.mechanism, c.count) for c in r.explained.causes] == [(0, "head mixing", 2)]
    assert r.explained.unexplained == 0 and r.explained.total == r.parameters - r.dimension


def test_a_thin_image_of_many_weights_is_split_without_writing_its_kernel():
    # (2, 2, 60, 60, 60, 2, 1) with x^2: 7446 weights and a dimension of at most 33 (the ambient space), so the
    # kernel (P - dim vectors of P entries) would take 440 MB; the split keeps annihilators (and the forward
    # pass's tangent arrays, 32 MB each, are then the largest thing it holds)
    net = Network.polynomial_network((2, 2, 60, 60, 60, 2, 1))
    dim = api.dimension(net).dimension
    tracemalloc.start()
    try:
        split = explain(net, dim)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert split.total == net.parameters - dim and split.unexplained == 0
    assert split.named_group == 2 + 60 + 60 + 60 + 2  # one scaling per hidden neuron
    got = {(c.block, c.mechanism): c.count for c in split.causes}
    # block 4 (60 x 60) sees squares of two linear forms in two variables, a 3-dim span of quadrics:
    # every row of its matrix can move by a vector vanishing on it
    assert got[(4, "bottleneck")] == 60 * (60 - 3)
    assert peak < (net.parameters - dim) * net.parameters * 8 / 4


def test_a_bound_met_prints_exact_with_its_proof():
    # Dao-Rodriguez, MFA_PNNs data/processed/counterexamples.csv, row 1: (2, 3, 4, 5, 4, 6, 4, 1), x^2, fills its
    # ambient space of dimension 65
    r = api.dimension(Network.polynomial_network((2, 3, 4, 5, 4, 6, 4, 1)))
    assert r.dimension == r.ambient_dimension == 65
    assert r.certainty == "exact" and r.failure_bound is None
    assert "65 x 65 minor" in r.certainty_detail and "ambient dimension 65" in r.certainty_detail
    assert "proved: rank >= 65" in r.text()
    # (3, 2, 2, 1) with x^3: 12 weights, 4 neuron scalings, and nothing else in the fiber
    orbit = api.dimension(Network.polynomial_network((3, 2, 2, 1), 3))
    assert orbit.dimension == 8 and orbit.certainty == "exact" and "named group's orbit" in orbit.certainty_detail
    # x^2: sums of two squares are quadrics of rank 2 (a theorem's value, 7 = 2 * 4 - 1)
    quadric = api.dimension(Network.polynomial_network((4, 2, 1), 2))
    assert quadric.dimension == 7 and quadric.certainty == "exact" and "published" in quadric.certainty_detail
    # neither met: probabilistic, with its bound
    other = api.dimension(Network.polynomial_network((3, 2, 3, 1), 2))
    assert other.certainty == "probabilistic" and 0 < other.failure_bound < 1e-3


def test_the_dimension_survives_a_split_that_runs_out_of_time_or_memory():
    net = Network.polynomial_network((2, 2, 40, 40, 40, 2, 1))
    bare = api.dimension(net)
    bare = dataclasses.replace(bare, explained=None)
    refused = api._with_split(bare, Deadline(None), memory=2**20)
    assert refused.dimension == bare.dimension and refused.explained is None
    assert "defect split was skipped" in refused.text() and "would need about" in refused.notes[-1]
    late = api._with_split(bare, Deadline(0.05), full_split=True)
    assert late.dimension == bare.dimension and late.explained is None
    assert "0.05 s time limit ran out" in late.notes[-1]


def test_polynomial_network_spelling():
    net = Network.polynomial_network((2, 945, 4, 5, 5, 4, 3, 1), 2)
    # no width cap: 2 * 945 + 945 * 4 + 4 * 5 + 5 * 5 + 5 * 4 + 4 * 3 + 3 = 5750 weights, as the field counts them
    assert net.parameters == 5750 and net.polynomial_widths() == ((2, 945, 4, 5, 5, 4, 3, 1), 2)
    assert net.ambient_dimension == math.comb(2 + 64 - 1, 64)  # one output of degree 2^6 in 2 variables
    assert Network(2, 1, (Linear(3, bias=True), Power(2), Linear(1))).polynomial_widths() is None
    with pytest.raises(InputError, match="at least two widths"):
        Network.polynomial_network((3,))
