"""Proved statements about the Jacobian at a point: near-drops beside an exact rank, softmax certificates that
close with exact kernel vectors, and partial certificates under a time limit.

Every number is checked a second way: the rank of a near-drop against the exact rank at the point where the
head is zero, the bands against a float64 SVD of the same matrix, the kernel vectors against an exact
Jacobian (J v = 0 over QQ), the mechanism counts against their closed forms, the certified ranks against
float64 ranks with a clear gap and the proved one-layer formula.
"""

from __future__ import annotations

import json
import time
from fractions import Fraction

import numpy as np
import pytest
from click.testing import CliRunner

from lightning_cas import api
from lightning_cas.backends.certified import gaussian_inputs, rank_at_point_softmax
from lightning_cas.cli import main
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.arithmetic import Rationals
from lightning_cas.core.forward import jacobian
from lightning_cas.core.kernel_proof import bound, candidates
from lightning_cas.core.local_kernels import kernel_vectors, local_kernel_vectors, named_tangents
from lightning_cas.core.network import MLP, Attention, Linear, Network, Power
from lightning_cas.core.predictions import rho
from lightning_cas.core.softmax import jacobian as float_jacobian
from lightning_cas.core.symmetry import group_dimension
from lightning_cas.system.points import WeightPoint

S = "softmax"
TWO_HEADS = Architecture((4, 3, 3), (1, 2), 2, "none", (2, 2))  # 82 weights, generic rank 59
SCALE = 10**-2.5  # the head's Q, K, V scaled by this: its Jacobian columns (bilinear) by SCALE^2 = 1e-5
# a bias-free softmax transformer with an embedding, a factored two-head causal attention block and an mlp on a
# residual stream, and a readout: 8 + 64 + 64 + 8 = 144 weights
TRANSFORMER = Network(
    2,
    3,
    (
        Linear(4),
        Attention(2, heads=2, value=2, causal=True, residual=True, normalization=S),
        MLP(8, residual=True),
        Linear(2),
    ),
)
# a quadratic readout after softmax attention: Σ p_i y_i^2 is invariant under the orthogonal group of diag(p),
# which moves V unseen (a polynomial tail)
QUADRATIC = Network(2, 3, (MLP(4, degree=3), Attention(2, normalization=S), Power(2), Linear(1)))
# two kernel directions no mechanism here names: the certificate stays open (19 <= rank <= 21)
OPEN = Network(3, 3, (Attention(1, heads=2, value=2, residual=True, normalization=S), Linear(1), Power(2), Linear(1)))


def _point(net, w):
    return WeightPoint(net, tuple(Fraction(float(v)) for v in w))


def _head_scaled(scale):
    net = TWO_HEADS
    w = np.random.default_rng(0).standard_normal(net.parameters)
    for m in net.weight_matrices:
        if (m.block, m.head) == (0, 0):
            w[m.offset : m.stop] *= scale
    return net, w


# ---------------------------------------------------------------- near-drops


def test_a_head_scaled_down_is_a_near_drop_to_the_rank_without_it():
    net, w = _head_scaled(SCALE)
    r = api.dimension(TWO_HEADS, at=_point(net, w))
    _, dead = _head_scaled(0.0)
    assert r.dimension == r.generic_dimension == 59
    assert api.dimension(TWO_HEADS, at=_point(net, dead)).dimension == 35  # the rank without the head
    near = r.near_ranks[0]
    assert (near.rank, near.directions) == (35, 24)
    assert 1e-7 < near.scale < 1e-4 and near.within < 1e-4
    assert near.blocks[0]["block"] == 0 and near.blocks[0]["head"] == 0 and near.blocks[0]["share"] > 0.9
    bands = [(b.count, b.kind) for b in r.bands]
    assert bands[-1] == (82 - 59, "exact zeros") and sum(b.count for b in r.bands) == 82
    assert all(b.kind == "certified" for b in r.bands[:-1]) and r.bands[0].count == 35
    # second method: the float64 SVD of the same (row-normalized) Jacobian falls in the proved bands
    X = np.vectorize(float, otypes=[float])(gaussian_inputs(net, _near_seed()))
    J = float_jacobian(net, w, X).reshape(len(X), net.rows_per_sample, -1)
    J = J / 2.0 ** np.frexp(np.abs(J).max(axis=(1, 2)))[1][:, None, None]
    s = np.linalg.svd(J.reshape(-1, net.parameters), compute_uv=False)
    start = 0
    for b in r.bands[:-1]:
        inside = s[start : start + b.count]
        assert (inside <= b.largest * 1.001).all() and (inside >= b.smallest * 0.999).all()
        start += b.count
    assert s[35] / s[0] <= near.within * 1.001  # Eckart-Young: the proved distance bounds the float one


def _near_seed():
    from lightning_cas.core.checks import derived_seed

    return derived_seed(0, 7)


def test_near_drops_in_text_and_json_and_each_band_printed_once(tmp_path):
    net, w = _head_scaled(SCALE)
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"weights": [float(v) for v in w]}))
    args = ["dim", "--widths", "4,3,3", "--attention", "1,2", "--heads", "2,2", "--at", str(path)]
    text = CliRunner().invoke(main, args + ["--spectrum"])
    assert text.exit_code == 0, text.output
    assert "near-drop: 24 directions at scale" in text.output and "of rank 35" in text.output
    assert "block 0 head 0" in text.output
    assert text.output.count("exact zeros") == 1 and text.output.count("23 exact zeros") == 1
    rec = json.loads(CliRunner().invoke(main, args + ["--json"]).output)
    assert rec["near_ranks"][0]["rank"] == 35 and rec["near_ranks"][0]["directions"] == 24
    assert rec["near_ranks"][0]["blocks"][0]["block"] == 0


# ---------------------------------------------------------------- exact kernel vectors


def _count(net, values):
    """Independent offered vectors and what each mechanism adds, all taken as passed (the counting alone)."""
    cands = candidates(net, values)
    proof = bound(net.parameters, cands, [True] * len(cands.vectors))
    return proof.count, proof.steps


@pytest.mark.parametrize(
    "net",
    [
        Network(
            2,
            3,
            (Linear(4), Attention(2, heads=2, value=2, causal=True, residual=True), MLP(3, residual=True), Linear(2)),
        ),
        Network(3, 2, (Linear(2), MLP(3), Power(2), Linear(1))),
        Network(2, 2, (Attention(1, residual=True), Linear(1))),
        Network(3, 2, (MLP(2, degree=3), Attention(1, value=1), Linear(2))),
        Network(2, 3, (MLP(4, degree=3), Attention(2), Power(2), Linear(1))),
        Network(3, 2, (Attention(1, value=1), MLP(3, residual=True), Power(2), Linear(2))),
    ],
    ids=lambda n: n.label(),
)
def test_every_kernel_vector_is_exactly_in_the_kernel(net):
    """On polynomial networks the Jacobian is exact over QQ: J v = 0 for every vector, and the count never
    pushes the upper bound below the rank at the point."""
    rng = np.random.default_rng(1)
    values = [Fraction(int(v)) for v in rng.integers(-5, 6, net.parameters)]
    kv = kernel_vectors(net, values)
    ar = Rationals()
    X = ar.array(rng.integers(-9, 10, (6, net.input, net.tokens)))
    J = jacobian(net, ar, ar.array(values), X)
    for v in (
        kv.bottleneck
        + kv.invisible
        + kv.local
        + kv.tail
        + local_kernel_vectors(kv, net.parameters)
        + named_tangents(net, values)
    ):
        assert all(x == 0 for x in J.dot(np.array(v, dtype=object)))
    count, _ = _count(net, values)
    assert net.parameters - count >= api.dimension(net, at=WeightPoint(net, tuple(values))).dimension


def test_a_quadratic_readout_is_a_polynomial_tail():
    """linear(2) -> power(2) -> linear(1) on 3 inputs is x -> x^T Q^T diag(p) Q x: the symmetric 3 x 3
    matrices of rank <= 2, dimension 3 * 2 - 1 = 5; the torus (2) and the orthogonal group of diag(p) (1)
    leave exactly that, and the softmax network with the same readout closes its certificate."""
    net = Network(3, 1, (Linear(2), Power(2), Linear(1)))
    values = [Fraction(int(v)) for v in np.random.default_rng(0).integers(-5, 6, net.parameters)]
    count, steps = _count(net, values)
    assert dict(steps) == {"the named group's tangents": 2, "polynomial tails": 1}
    assert net.parameters - count == 5 == api.dimension(net).dimension
    w = np.random.default_rng(3).standard_normal(QUADRATIC.parameters) / 2
    r = api.dimension(QUADRATIC, at=_point(QUADRATIC, w))
    assert r.certificate.certified and r.dimension == 11 and "1 polynomial tails" in r.certificate.upper_by


def test_the_transformers_kernel_by_mechanism_matches_the_closed_forms():
    w = np.random.default_rng(0).standard_normal(TRANSFORMER.parameters) / 2
    count, steps = _count(TRANSFORMER, _point(TRANSFORMER, w).values)
    # GL(a), GL(b) per head, neuron scaling, GL(4) on the stream between embedding and readout
    assert dict(steps)["the named group's tangents"] == group_dimension(TRANSFORMER) == 2 * (4 + 4) + 8 + 16
    # the stream starts in the 2-dim image of the embedding: Q, K, W rows (2 each, 2 heads) times its 2-dim
    # complement
    assert dict(steps)["bottleneck"] == 2 * 3 * 2 * 2
    assert dict(steps)["invisibility"] == 8 * (4 - 2)  # D's 8 columns times the readout's 2-dim kernel
    # the mlp seen through the readout: 2 x (quadratic forms in 4 variables) = 20 of its 64 weights, so a
    # local kernel of 44, less the 8 neuron scalings and 16 invisible directions already counted
    assert dict(steps)["block-local kernels"] == 64 - 2 * 10 - 8 - 16
    assert count == 100


def test_the_kernel_vectors_of_a_softmax_network_are_in_its_float_kernel():
    """Softmax has no exact Jacobian: in float64 every vector must still be killed to rounding."""
    w = np.random.default_rng(0).standard_normal(TRANSFORMER.parameters) / 2
    values = _point(TRANSFORMER, w).values
    kv = kernel_vectors(TRANSFORMER, values)
    X = np.random.default_rng(4).standard_normal((30, 2, 3))
    J = float_jacobian(TRANSFORMER, w, X)
    vectors = kv.bottleneck + kv.invisible + local_kernel_vectors(kv, TRANSFORMER.parameters)
    assert len(kv.bottleneck) == 24 and len(kv.invisible) == 16 and vectors
    scale = np.abs(J).max()
    for v in vectors:
        f = np.array([float(x) for x in v])
        assert np.abs(J @ f).max() <= 1e-10 * scale * np.abs(f).sum()


# ---------------------------------------------------------------- softmax certificates


@pytest.mark.slow
def test_the_softmax_transformer_with_an_mlp_is_certified():
    w = np.random.default_rng(0).standard_normal(TRANSFORMER.parameters) / 2
    start = time.perf_counter()
    r = api.dimension(TRANSFORMER, at=_point(TRANSFORMER, w))
    assert time.perf_counter() - start < 30
    assert r.certificate.certified and r.dimension == 44 and r.certainty == "exact" and r.method == "arb"
    X = np.vectorize(float, otypes=[float])(gaussian_inputs(TRANSFORMER, 0))
    s = np.linalg.svd(float_jacobian(TRANSFORMER, w, X), compute_uv=False)
    assert s[43] / s[44] > 1e8  # float64 agrees, with a clear gap at 44


def test_softmax_one_layer_at_a_point_from_widths_is_the_proved_formula(tmp_path):
    path = tmp_path / "w.json"
    rng = np.random.default_rng(2)
    path.write_text(json.dumps({"layers": [{k: rng.standard_normal((2, 2)).tolist() for k in "QKV"}]}))
    res = CliRunner().invoke(
        main, ["dim", "--widths", "2,2", "--attention", "2", "--normalization", "softmax", "--at", str(path), "--json"]
    )
    assert res.exit_code == 0, res.output
    rec = json.loads(res.output)
    assert rec["dimension"] == 2 * 2 + rho(2, 2) and rec["certainty"] == "exact"  # d d' + rho(a, d), t >= 2


def test_a_stack_of_only_softmax_attention_blocks_from_a_network_file(tmp_path):
    path = tmp_path / "soft.toml"
    path.write_text(
        "input = 2\ntokens = 2\n" + '[[block]]\nkind = "attention"\nattention = 1\nnormalization = "softmax"\n' * 2
    )
    res = CliRunner().invoke(main, ["dim", "--arch", str(path), "--json"])
    assert res.exit_code == 0, res.output
    flags = CliRunner().invoke(
        main, ["dim", "--widths", "2,2,2", "--attention", "1,1", "--normalization", "softmax", "--json"]
    )
    assert json.loads(res.output)["dimension"] == json.loads(flags.output)["dimension"]


def test_an_open_certificate_says_so_once_and_never_certified(tmp_path):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"weights": list(np.random.default_rng(3).standard_normal(OPEN.parameters) / 2)}))
    arch = tmp_path / "open.toml"
    arch.write_text(
        'input = 3\ntokens = 3\n[[block]]\nkind = "attention"\nattention = 1\nheads = 2\nvalue = 2\n'
        'residual = true\nnormalization = "softmax"\n[[block]]\nkind = "linear"\nout = 1\n'
        '[[block]]\nkind = "power"\n[[block]]\nkind = "linear"\nout = 1\n'
    )
    res = CliRunner().invoke(main, ["dim", "--arch", str(arch), "--at", str(path), "--spectrum"])
    assert res.exit_code == 0, res.output
    head = res.stdout.splitlines()[1]
    assert head.startswith("rank between 19 and 21") and "certified" not in head
    assert "not certified: rank >= 19" in res.stdout and res.stdout.count("exact zeros") == 1
    assert "2 at most" in res.stdout and "not resolved" in res.stdout


def test_the_time_limit_keeps_the_partial_certificate_and_stops_on_time():
    w = np.random.default_rng(3).standard_normal(OPEN.parameters) / 2
    start = time.perf_counter()
    r = api.dimension(OPEN, at=_point(OPEN, w), timeout=2)
    took = time.perf_counter() - start
    assert took < 3.0, took
    c = r.certificate
    assert (c.lower, c.upper) == (19, 21) and c.stopped == "the 2 s time limit" and not c.certified
    assert r.dimension == 19 and r.certainty == "numeric" and any("time limit" in n for n in r.notes)
    back = type(r).from_json(r.to_json())
    assert back.certificate.stopped == c.stopped and back.bands == r.bands


def test_without_a_limit_the_precision_stops_at_its_cap():
    w = np.random.default_rng(3).standard_normal(OPEN.parameters) / 2
    r = rank_at_point_softmax(OPEN, _point(OPEN, w), max_digits=120)
    assert r.certificate.digits <= 120 and r.certificate.stopped is None and r.certificate.lower == 19


def test_a_proved_minor_above_the_kernel_bound_switches_the_mechanisms_off(monkeypatch):
    """A failure that cannot be provoked honestly: a wrong vector that the ball check let through. The pivot
    search is not capped at the upper bound, so the proved minor beats it, and no mechanism is used."""
    import flint

    from lightning_cas.backends import certified
    from lightning_cas.core.kernel_proof import Candidates

    net = Network(2, 2, (Attention(1, normalization="softmax"), Linear(1)))
    P = net.parameters
    wrong = [[flint.fmpq(int(i == k)) for i in range(P)] for k in range(P)]  # every weight "unseen"
    monkeypatch.setattr(certified, "candidates", lambda net, values: Candidates(tuple(("forged", v) for v in wrong)))
    monkeypatch.setattr(certified, "ball_images", lambda J, vectors, digits: [True] * len(vectors))
    r = api.dimension(net, at=[0.5, -0.25, 0.75, 1.0, -0.5, 0.25, 0.5, -1.0, 0.125, 2.0][:P])
    c = r.certificate
    assert c.upper >= c.lower > 0 and c.upper_by == "the rows and columns of the Jacobian"
    assert any("none of them is used" in n for n in r.notes)
