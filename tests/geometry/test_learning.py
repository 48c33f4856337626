"""`llc`: the learning coefficient at given weights against independent closed forms, Macaulay2's fiber at the
point, and the hypotheses of every bound; brackets that never cross on random points."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from lightning_cas import api
from lightning_cas.core import learning
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.network import MLP, Linear, Network
from lightning_cas.errors import LightningError
from lightning_cas.geometry.learning.bracket import learning_coefficient

ONE = Architecture((2, 1), (1,), tokens=2)  # Q, K: 1 x 2, V: 1 x 2 -> 6 weights, generic rank 4


def _value(text: str) -> Fraction:
    return Fraction(text)


@pytest.mark.parametrize(
    "weights,expected,order",
    [
        ([0] * 6, Fraction(1), 3),  # min(|V|^2: 1, |KᵀQ|^2: Aoyagi-Watanabe 2 -> 1 -> 2 at 0: 1, order 2) -> orders add
        ([1, 2, 3, -1, 0, 0], Fraction(1), 1),  # V = 0, KᵀQ != 0: |V|^2 in 2 weights
        ([0, 0, 3, -1, 1, 2], Fraction(1), 1),  # Q = 0, K of full rank: |Q|^2 in 2 weights
        ([1, 2, 3, -1, 1, 2], Fraction(2), 1),  # generic: r/2
    ],
)
def test_one_attention_layer_at_the_special_points(m2, weights, expected, order):
    r = learning_coefficient(ONE, {"weights": weights})
    assert r.learning_coefficient is not None and _value(r.learning_coefficient) == expected, r.text()
    assert r.multiplicity == order and r.certainty == "exact"
    # the closed form and Macaulay2's fiber at w* are two routes; where both apply they agree (no crossing)
    sides = {b.side for b in r.bounds}
    assert "equal" in sides


def test_macaulay2s_fiber_closes_what_the_rank_alone_leaves_open(m2):
    """An mlp 2-2-1 at D = 0 (U generic): the rank (2) is below the generic rank (3), no closed form applies, and
    the complex fiber has dimension 4 = n - rank at w*: smooth there, its real points of codimension 2, λ = 1.
    At V = 0 of the attention layer a closed form decides, and Macaulay2's fiber is not run at all."""
    net = Network(2, 1, (MLP(2, degree=2, out=1),))
    r = learning_coefficient(net, {"weights": [1, 2, -1, 1, 0, 0]})
    assert r.learning_coefficient == "1" and r.rank_at_point == 2, r.text()
    assert r.lower_theorem.startswith("smooth fiber") and r.multiplicity == 1
    no_fiber = learning_coefficient(net, {"weights": [1, 2, -1, 1, 0, 0]}, fiber=False)
    assert no_fiber.learning_coefficient is None and not any("Macaulay2" in b.reason for b in no_fiber.bounds)
    closed = learning_coefficient(ONE, {"weights": [1, 2, 3, -1, 0, 0]})
    assert closed.learning_coefficient == "1" and not any("tangent cone" in n for n in closed.notes)


def test_the_complex_fiber_bounds_nothing_over_the_reals(m2):
    """f = (Σ D_i U_i²) x² at U = 0, D = 1: the complex fiber has dimension 5 at w*, the real one 3. The old bracket
    [0, 1/2] came from the complex dimension and excluded the truth 3/4 (K ≍ |U|⁴ in three variables); now the
    Newton polyhedron on the slice D = 1 decides it, and no upper bound below 3/4 is printed."""
    net = Network(1, 1, (MLP(3, degree=2, out=1),))
    r = learning_coefficient(net, {"weights": [0, 0, 0, 1, 1, 1]})
    assert r.learning_coefficient == "3/4" and r.multiplicity == 1 and r.certainty == "exact", r.text()
    assert r.lower_theorem == "Newton polyhedron, non-degenerate"
    assert all(_value(b.value) >= Fraction(3, 4) for b in r.bounds if b.side == "upper")
    assert any("dimension 5" in n and "no bound" in n for n in r.notes)
    data = json.loads(r.to_json())
    assert data["lower_theorem"] == data["upper_theorem"] == "Newton polyhedron, non-degenerate"


def test_a_bracket_is_not_exact_and_names_both_theorems(m2):
    """Where the ends differ the certainty is "bounds", never "exact", and each end names its theorem."""
    net = Network(2, 1, (MLP(2, degree=2, out=1),))
    r = learning_coefficient(net, {"weights": [0] * net.parameters})
    assert r.learning_coefficient is None and r.certainty == "bounds", r.text()
    assert r.lower_theorem and r.upper_theorem and r.lower != r.upper


@pytest.mark.parametrize("widths", [(2, 2, 2), (3, 1, 2), (2, 3, 1), (1, 1, 1, 1), (2, 1, 2, 1)])
def test_linear_stacks_at_zero_are_aoyagi(m2, widths):
    net = Network(widths[0], 1, tuple(Linear(w) for w in widths[1:]))
    r = learning_coefficient(net, {"weights": [0] * net.parameters})
    lam, m = learning.deep_linear(widths, 0)
    assert _value(r.learning_coefficient) == lam and r.multiplicity == m, r.text()


def test_the_papers_deep_network_at_generic_weights_is_half_its_dimension():
    net = Architecture((3, 3, 3), (2, 2), tokens=2)
    r = learning_coefficient(net, seed=3)
    dim = api.dimension(net).dimension
    assert _value(r.learning_coefficient) == Fraction(dim, 2) and r.multiplicity == 1


def _random_points(rng, net: Network, count: int):
    for _ in range(count):
        w = rng.integers(-2, 3, net.parameters)
        for m in net.weight_matrices:  # zero whole matrices often: the special points are the interesting ones
            if rng.random() < 0.35:
                w[m.offset : m.stop] = 0
        yield [int(v) for v in w]


@pytest.mark.parametrize(
    "net",
    [
        Network(2, 1, (Linear(2), Linear(2))),
        Network(3, 1, (Linear(1), Linear(2))),
        Architecture((2, 1), (1,), tokens=2),
        Architecture((2, 2), (1,), tokens=2),
        Network(2, 1, (MLP(2, degree=2, out=1),)),
        Network(2, 1, (Linear(2, bias=True), Linear(1, bias=True))),
        Network(2, 1, (MLP(2, degree=2, out=1, bias=True),)),  # its fiber's tangent cone: skipped below
    ],
    ids=lambda n: n.label(),
)
def test_brackets_hold_on_random_points(m2, net):
    """lower <= upper on every point (a crossing raises), an equality lies inside every other bound, and the
    bracket contains what the closed forms say wherever they apply."""
    rng = np.random.default_rng(7)
    for weights in _random_points(rng, net, 6):
        # a biased mlp's tangent cone can take minutes (llc gives it LOCAL_FIBER_SECONDS); the other bounds stand
        r = learning_coefficient(
            net, {"weights": weights}, seed=1, fiber=not (net.biased and net.blocks[0].kind == "mlp")
        )
        low, high = _value(r.lower), _value(r.upper)
        assert 0 <= low <= high <= Fraction(net.parameters, 2)
        for b in r.bounds:
            v = _value(b.value)
            assert (b.side != "lower" or v <= high) and (b.side != "upper" or v >= low), (b, r.text())
            assert b.side != "equal" or low == v == high
        if all(isinstance(b, Linear) and not b.bias for b in net.blocks):  # Aoyagi at the true rank: a lower bound
            assert low >= learning.deep_linear(list(net.widths), _product_rank(net, weights))[0]


def _product_rank(net: Network, weights) -> int:
    P = np.eye(net.input)
    for m in net.weight_matrices:
        P = np.array(weights[m.offset : m.stop], dtype=float).reshape(m.rows, m.cols) @ P
    return int(np.linalg.matrix_rank(P))


def test_json_has_the_keys_and_reads_back(m2, tmp_path):
    r = learning_coefficient(ONE, {"weights": [0] * 6})
    data = json.loads(r.to_json())
    assert {"lower", "upper", "learning_coefficient", "multiplicity", "method", "certainty", "seed"} <= set(data)
    assert data["lower"] == data["upper"] == data["learning_coefficient"] == "1"
    path = tmp_path / "llc.json"
    path.write_text(r.to_json())
    assert api.load_result(path) == r


def test_the_command_line_answers_and_refuses_in_one_line(m2, tmp_path):
    point = tmp_path / "w.json"
    point.write_text(json.dumps({"weights": [0] * 6}))
    run = [sys.executable, "-m", "lightning_cas", "llc", "--widths", "2,1", "--attention", "1", "--tokens", "2", "-q"]
    ok = subprocess.run(run + ["--at", str(point)], capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0 and "λ = 1 (pole of order 3)" in ok.stdout, ok.stderr
    bad = subprocess.run(
        run + ["--normalization", "softmax", "--at", str(point)], capture_output=True, text=True, timeout=300
    )
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert "generic rank" in bad.stderr


def test_a_point_of_the_wrong_size_is_refused():
    with pytest.raises(LightningError, match="6"):
        learning_coefficient(ONE, {"weights": [1, 2, 3]})


def test_the_log_canonical_threshold_bound_is_sound_and_guarded(m2):
    """Scalar stacks w_1 ... w_L at 0: lct of (w_1 ... w_L) is 1, so lct/2 = 1/2 = λ (Aoyagi) from below."""
    for depth in (2, 3):
        net = Network(1, 1, tuple(Linear(1) for _ in range(depth)))
        r = learning_coefficient(net, {"weights": [0] * depth}, lct=True)
        lct = [b for b in r.bounds if "log canonical" in b.reason]
        assert lct and _value(lct[0].value) == Fraction(1, 2) == _value(r.learning_coefficient)
        assert r.multiplicity == depth
    with pytest.raises(LightningError, match="6 weights"):
        learning_coefficient(Network(2, 1, (Linear(2), Linear(2))), {"weights": [0] * 8}, lct=True)


def test_analytic_networks_at_generic_rank_and_refused_elsewhere():
    """softmax: λ = r/2 where the certified rank at w* reaches the generic rank (7 for (2,2) a = 1, the paper's
    proved softmax formula); at Q = 0 the rank drops and nothing is stated; ReLU is not analytic."""
    from lightning_cas import MLP, Activation

    soft = Architecture((2, 2), (1,), tokens=2, normalization="softmax")
    r = learning_coefficient(soft, seed=0)
    assert _value(r.learning_coefficient) == Fraction(api.predict(soft).dimension.value, 2) == Fraction(7, 2)
    assert r.multiplicity == 1
    with pytest.raises(LightningError, match="known only at points of generic rank"):
        learning_coefficient(Architecture((2, 1), (2,), 2, "softmax"), {"weights": [0, 0, 0, 0, 1, 1, 1, 1, 1, 1]})
    gelu = Network(2, 1, (MLP(3, activation="gelu", out=1),))
    g = learning_coefficient(gelu, seed=2)
    assert g.learning_coefficient is not None and _value(g.learning_coefficient) <= Fraction(gelu.parameters, 2)
    with pytest.raises(LightningError, match="not analytic"):
        learning_coefficient(Network(2, 1, (Linear(3), Activation("relu"), Linear(1))), seed=0)


def test_on_data_the_gram_matrix_decides_which_bounds_hold(m2):
    """Six generic inputs see the whole 6-dimensional coefficient span of the 2 -> 1 layer: λ at 0 is the
    population's 1. One input does not: the closed form is only an upper bound, and the bracket says so."""
    rng = np.random.default_rng(1)
    many, one = rng.integers(-5, 6, (6, 2, 2)), rng.integers(-5, 6, (1, 2, 2))
    zero = {"weights": [0] * 6}
    full = learning_coefficient(ONE, zero, inputs=many, layout="features-tokens")
    assert _value(full.learning_coefficient) == 1 and any("non-degenerate" in n for n in full.notes)
    few = learning_coefficient(ONE, zero, inputs=one, layout="features-tokens")
    assert few.learning_coefficient is None and _value(few.upper) == 1 and _value(few.lower) == 0
    assert any("degenerate: the evaluation on the 1 inputs" in n for n in few.notes)
    assert all(b.side != "equal" or "Macaulay2" in b.reason for b in few.bounds)


def test_a_biased_linear_stack_at_zero_holds_its_value_by_hand(m2):
    """x -> P2 (P1 x + b1) + b2 at 0: with b2' = b2 + P2 b1 (an analytic change of weights), K is |b2'|^2 +
    |P2 P1|^2, so λ = 1/2 + the reduced-rank regression 2 -> 2 -> 1 at 0 (Aoyagi-Watanabe: 1) = 3/2. The
    bracket llc proves must hold it."""
    net = Network(2, 1, (Linear(2, bias=True), Linear(1, bias=True)))
    truth = Fraction(1, 2) + learning.reduced_rank_regression(2, 2, 1, 0)[0]
    r = learning_coefficient(net, {"weights": [0] * net.parameters})
    assert truth == Fraction(3, 2) and _value(r.lower) <= truth <= _value(r.upper)


def test_a_tangent_cone_that_runs_long_is_left_out_not_waited_for(m2, monkeypatch):
    """At this point of a biased 2-2-1 mlp Macaulay2's tangent cone ran past 600 s: llc gives it its own budget
    and answers with the other bounds, saying so."""
    from lightning_cas.geometry.learning import bracket as llc

    monkeypatch.setattr(llc, "LOCAL_FIBER_SECONDS", 2.0)
    net = Network(2, 1, (MLP(2, degree=2, out=1, bias=True),))
    weights = next(_random_points(np.random.default_rng(7), net, 1))
    r = learning_coefficient(net, {"weights": weights}, seed=1)
    assert any("did not finish in 2 s" in n for n in r.notes), r.notes
    assert 0 < _value(r.lower) <= _value(r.upper) <= Fraction(net.parameters, 2)


def _check_charts(data: dict) -> tuple[Fraction, int]:
    """An independent reader's check of the chart data: every facet is a valid, supporting inequality of the
    exponents' Newton polyhedron, its blow-up chart has K exponent 2N and Jacobian exponent |a| - 1, and λ and m
    are the least candidate pole |a|/(2N) and the rank of the normals attaining it."""
    exps = data["exponents"]
    poles = []
    for f in data["facets"]:
        a, N = f["normal"], Fraction(f["N"])
        values = [sum(x * e for x, e in zip(a, exp)) for exp in exps]
        assert min(a) >= 0 and min(values) == N, f  # valid on every exponent, tight on one
        assert Fraction(f["K_exponent"]) == 2 * N and f["jacobian_exponent"] == sum(a) - 1
        if N > 0:
            poles.append((Fraction(sum(a)) / (2 * N), a))
    lam = min(p for p, _ in poles)
    tight = [a for p, a in poles if p == lam]
    rank = int(np.linalg.matrix_rank(np.array(tight, dtype=float)))
    return lam, rank


def test_chart_data_recomputes_lambda_for_an_outside_reader(m2):
    """The sum-of-squares point (λ = 3/4): the chart data's facets are valid and λ, m recompute from them."""
    from lightning_cas.geometry.learning.newton import chart_data
    from lightning_cas.options import resolve

    net = Network(1, 1, (MLP(3, degree=2, out=1),))
    data = chart_data(net, [0, 0, 0, 1, 1, 1], resolve("llc", net, seed=0, m2=None).macaulay2)
    assert data is not None and data["slice_fixed"] == [3, 4, 5]  # D held at 1: the hidden scalings' slice
    lam, m = _check_charts(data)
    assert lam == Fraction(3, 4) == Fraction(data["learning_coefficient"]) and m == data["multiplicity"] == 1


@pytest.mark.slow
def test_the_command_line_writes_chart_data_where_newton_decides(m2, tmp_path):
    """At the aligned point of the 2 -> 1 layer (λ = 7/4) the CLI writes the charts and the check recomputes λ;
    at the zero function a closed form decides and the CLI says no chart data is written."""
    run = [sys.executable, "-m", "lightning_cas", "llc", "--widths", "2,1", "--attention", "1", "--tokens", "2", "-q"]
    for weights, expect in (([1, 0, 1, 0, 1, 0], "chart data written"), ([0] * 6, "no chart data")):
        point, charts = tmp_path / "w.json", tmp_path / "charts.json"
        point.write_text(json.dumps({"weights": weights}))
        ok = subprocess.run(run + ["--at", str(point), "--charts", str(charts)], capture_output=True, text=True)
        assert ok.returncode == 0 and expect in ok.stdout, ok.stderr
    lam, m = _check_charts(json.loads(charts.read_text()))
    assert (lam, m) == (Fraction(7, 4), 1)
