"""Multi-head lightning attention (several heads per layer): architecture, every dimension method,
the upper-bound theory with its defects, the symmetry group, sweeps and the table."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy
from click.testing import CliRunner

from lightning_cas import api
from lightning_cas.backends.modp import dimension_modp
from lightning_cas.batch.sweep import parse_spec, run_job
from lightning_cas.batch.tables import CSV_COLUMNS, job_row, to_csv
from lightning_cas.cli import main
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.model import flat_weight_symbols, network_output, token_symbols
from lightning_cas.core.multihead import head_mixing_bound, one_head_bound, span_dimension
from lightning_cas.core.symmetry import group_dimension, orbit_dimension
from lightning_cas.core.theory import predict_dimension
from lightning_cas.core.weights import flat, point_from_dict, point_to_dict, random_point
from lightning_cas.errors import InputError
from lightning_cas.geometry.fibers.points import evaluate_exact, same_function, unflatten
from tests.support import Field, evaluate, jacobian

SINGLE = [((2, 2), (1,), 2), ((2, 2), (2,), 2), ((3, 2), (2,), 1), ((2, 2, 2), (1, 1), 2), ((3, 3, 3), (2, 2), 2)]


@pytest.mark.parametrize("widths,att,t", SINGLE)
def test_heads_one_is_the_single_head_model(widths, att, t):
    """--heads 1 changes nothing: same parameters, label, points, values, dimension and prediction."""
    plain, ones = Architecture(widths, att, t), Architecture(widths, att, t, heads=(1,) * len(att))
    assert plain == ones and plain.label() == ones.label() and "_h" not in ones.label()
    assert plain.parameters == ones.parameters == sum(2 * a * d + e * d for a, d, e in plain.paper.layer_shapes)
    assert random_point(plain, 3) == random_point(ones, 3)
    assert dimension_modp(plain, seed=1).dimension == dimension_modp(ones, seed=1).dimension
    assert predict_dimension(plain) == predict_dimension(ones) and predict_dimension(ones).kind == "value"


def test_old_json_without_heads_loads_as_one_head_per_layer():
    arch = Architecture.from_dict({"widths": [3, 3, 3], "attention": [2, 2], "tokens": 2, "normalization": "none"})
    assert arch.heads == (1, 1)
    multi = Architecture((3, 3, 3), (2, 2), 2, heads=(2, 3))
    assert multi.to_dict()["heads"] == [2, 3] and Architecture.from_dict(multi.to_dict()) == multi
    assert multi.label() == "w3-3-3_a2-2_h2-3_t2_none" and multi.parameters == 2 * 21 + 3 * 21


@pytest.mark.parametrize(
    "heads,match", [((1, 2), "one entry per layer"), ((0,), "positive"), ((65,), "maximum"), ("2,x", "integer")]
)
def test_bad_heads_are_refused(heads, match):
    with pytest.raises(InputError, match=match):
        Architecture((2, 2), (1,), 2, heads=heads)


@pytest.mark.parametrize("command", ["dim", "predict", "verify", "fiber", "implicit"])
def test_cli_refuses_mismatched_heads_in_one_line(command):
    out = CliRunner().invoke(main, [command, "--widths", "2,2", "--attention", "1", "--heads", "2,2"])
    assert out.exit_code == 2 and "heads needs one entry per layer" in out.output
    assert "Traceback" not in out.output and len(out.output.strip().splitlines()) == 1


def test_evaluation_is_the_sum_of_the_heads():
    """The numeric forward pass (GF(p) and float) equals the symbolic network, and a two-head layer
    is the sum of two one-head layers."""
    arch = Architecture((2, 2), (1,), 2, heads=(2,))
    one = Architecture((2, 2), (1,), 2)
    rng = np.random.default_rng(0)
    w = rng.integers(-5, 6, arch.parameters)
    X = rng.integers(-5, 6, (1, 2, 2))
    half = one.parameters
    assert np.array_equal(evaluate(arch, w, X), evaluate(one, w[:half], X) + evaluate(one, w[half:], X))
    subs = dict(zip(flat_weight_symbols(arch), map(int, w)))
    subs.update(dict(zip(token_symbols(arch), map(int, X[0].reshape(-1)))))
    sym = network_output(arch).xreplace(subs)
    assert sym == sympy.Matrix(evaluate(arch, w, X)[0].tolist())
    p = 1_000_003
    assert np.array_equal(evaluate(arch, w % p, X % p, Field(p)), evaluate(arch, w, X) % p)


def test_forward_jacobian_matches_finite_differences_with_heads():
    arch = Architecture((2, 2, 1), (1, 2), 2, heads=(2, 2))
    rng = np.random.default_rng(1)
    w, X = rng.standard_normal(arch.parameters), rng.standard_normal((2, 2, 2))
    J, eps = jacobian(arch, w, X), 1e-6
    for k in (0, 7, arch.parameters - 1):
        e = np.zeros_like(w)
        e[k] = eps
        fd = (evaluate(arch, w + e, X) - evaluate(arch, w - e, X)).reshape(-1) / (2 * eps)
        assert np.allclose(J[:, k], fd, atol=1e-6)


def test_points_with_heads_round_trip_and_evaluate_exactly():
    arch = Architecture((2, 2, 1), (1, 1), 2, heads=(2, 1))
    point = random_point(arch, 4)
    assert len(flat(point)) == arch.parameters
    data = json.loads(json.dumps(point_to_dict(point)))
    assert "heads" in data["layers"][0] and set(data["layers"][1]) == {"Q", "K", "V"}
    assert point_from_dict(arch, data) == point == unflatten(arch, flat(point))
    swapped = ((point[0][1], point[0][0]),) + point[1:]  # permuting the heads gives the same function
    from lightning_cas.core.weights import make_layer

    swapped = (make_layer(swapped[0]),) + point[1:]
    assert same_function(arch, point, swapped)
    X = [[1, 2], [3, -1]]
    from fractions import Fraction

    Xf = [[Fraction(v) for v in row] for row in X]
    w = np.array([int(v) for v in flat(point)])
    assert [[int(v) for v in row] for row in evaluate_exact(arch, point, Xf)] == evaluate(arch, w, np.array([X]))[
        0
    ].tolist()
    with pytest.raises(InputError, match="2 head"):
        point_from_dict(arch, {"layers": [{"heads": [data["layers"][0]["heads"][0]]}, data["layers"][1]]})


MULTI = [
    ((2, 2), (1,), (2,), 2),
    ((2, 1), (1,), (3,), 2),
    ((2, 2), (2,), (2,), 1),
    ((3, 3), (3,), (2,), 2),
    ((2, 2, 2), (1, 1), (2, 1), 2),
]


@pytest.mark.m2
@pytest.mark.parametrize("widths,att,heads,t", MULTI)
def test_modp_and_macaulay2_jacobian_agree_with_heads(m2, widths, att, heads, t):
    arch = Architecture(widths, att, t, heads=heads)
    a = api.dimension(arch, method="modp", seed=2).dimension
    b = api.dimension(arch, method="jacobian", seed=2, m2=m2).dimension
    assert a == b


@pytest.mark.m2
@pytest.mark.parametrize(
    "widths,att,heads,t,dim",
    [((2, 1), (1,), (2,), 2, 6), ((1, 2), (1,), (2,), 3, 2), ((1, 1), (1,), (3,), 2, 1), ((2, 1), (1,), (2,), 1, 4)],
)
def test_implicit_dimension_with_heads(m2, widths, att, heads, t, dim):
    """Elimination (exact over QQ) against modp and the span: these small cases fill their span."""
    arch = Architecture(widths, att, t, heads=heads)
    assert arch.parameters <= 14
    assert api.dimension(arch, method="implicit", m2=m2).dimension == dimension_modp(arch).dimension == dim
    assert dim == min(span_dimension(widths[0], widths[1], t), predict_dimension(arch).value)


@pytest.mark.parametrize("d,e,t", [(1, 1, 1), (2, 1, 2), (2, 3, 3), (3, 2, 1), (3, 1, 2), (4, 2, 3)])
def test_span_is_the_rank_of_the_linear_map(d, e, t):
    """Exact span against the two descriptions of the model in docs/mathematics.md: d' copies of Sym^2 K^d (x) K^d for
    t >= 2, of cubic forms for t = 1."""
    expected = e * d * d * (d + 1) // 2 if t >= 2 else e * (d * (d + 1) * (d + 2) // 6)
    assert span_dimension(d, e, t) == expected


def test_predict_labels_the_one_layer_value_an_upper_bound():
    pred = predict_dimension(Architecture((3, 3), (3,), 2, heads=(2,)))
    assert pred.kind == "upper bound" and pred.value == min(2 * one_head_bound(3, 3, 3, 2)[0], span_dimension(3, 3, 2))
    names = [b[0] for b in pred.bounds]
    assert {"heads x one head", "span", "parameters - orbit", "ambient"} <= set(names)
    deep = predict_dimension(Architecture((2, 2, 2), (1, 1), 2, heads=(2, 2)))
    assert deep.kind == "upper bound" and "no closed form" in deep.regime and "span" not in [b[0] for b in deep.bounds]


def test_verify_reports_a_defect_with_exit_zero():
    out = CliRunner().invoke(main, ["verify", "--widths", "3,3", "--attention", "3", "--heads", "2"])
    assert out.exit_code == 0, out.output
    assert out.output.startswith("defect: computed 32 < expected 34") and "defect 2" in out.output
    res = api.verify(Architecture((2, 2), (1,), 2, heads=(2,)))
    assert res.verdict == "agree" and res.predicted == res.computed.dimension == 12


def test_verify_above_an_upper_bound_is_a_discrepancy(monkeypatch):
    """A computed value above a proved bound cannot be provoked honestly: fake the computation."""
    arch = Architecture((2, 2), (1,), 2, heads=(2,))
    real = api.dimension(arch)
    fake = real.__class__(**{**real.__dict__, "dimension": 13})
    monkeypatch.setattr(api, "_dimension", lambda *a, **k: fake)
    out = CliRunner().invoke(main, ["verify", "--widths", "2,2", "--attention", "1", "--heads", "2"])
    assert out.exit_code == 3 and "DISCREPANCY" in out.output and "upper bound 12" in out.output


@pytest.mark.parametrize(
    "d,e,a,H,t",
    [
        (2, 3, 2, 2, 2),
        (3, 1, 2, 2, 3),
        (4, 1, 4, 2, 2),
        (3, 3, 2, 3, 2),
        (3, 3, 2, 2, 1),
        (3, 2, 1, 3, 2),
        (2, 2, 1, 4, 3),
    ],
)
def test_the_table_pattern_min_of_expected_and_head_mixing(d, e, a, H, t):
    """What `make heads` found, checked on a sample: one layer's dimension is
    min(H * one head, span, head-mixing bound)."""
    arch = Architecture((d, e), (a,), t, heads=(H,))
    expected = min(H * one_head_bound(a, d, e, t)[0], span_dimension(d, e, t))
    assert dimension_modp(arch).dimension == min(expected, head_mixing_bound(a, d, e, H, t))


def test_symmetry_group_with_heads():
    arch = Architecture((3, 2, 2), (2, 1), 2, heads=(2, 3))
    assert group_dimension(arch) == 2 * (4 + 1) + 3 * (1 + 1) + 4
    # one layer, a <= d: the per-head group acts with finite stabilizers
    one = Architecture((3, 3), (2,), 2, heads=(3,))
    assert orbit_dimension(one, random_point(one, 0)) == 3 * (4 + 1)


def test_fiber_reports_head_mixing_as_extra_dimensions():
    from lightning_cas.geometry.fibers.fiber import fiber
    from lightning_cas.results.fibers import VERDICT_DIMENSIONS

    r = fiber(Architecture((3, 3), (3,), 2, heads=(2,)), method="modp")
    assert r.symmetry_orbit_dimension == 20 and r.generic_fiber_dimension == 54 - 32
    assert r.verdict == VERDICT_DIMENSIONS and any("head permutations" in n for n in r.notes)


def test_sweep_spec_with_heads_and_csv_column():
    sweep = parse_spec(
        "[grid]\nwidths = [[2, 2], [2, 2, 2]]\nattention = [[1], [1, 1]]\nheads = [[2], [1, 2]]\n"
        'method = ["modp"]\n[[architecture]]\nwidths = [2, 1]\nattention = [1]\nheads = [3]\n'
    )
    heads = sorted(j.architecture.heads for j in sweep.jobs)
    assert heads == [(1, 2), (2,), (3,)] and sweep.mismatched == 6
    rec = run_job(next(j for j in sweep.jobs if j.architecture.heads == (2,)))
    row = job_row(rec)
    assert row["heads"] == [2] and rec.agreement == "agree" and row["dimension"] == 12
    assert to_csv([row], CSV_COLUMNS).splitlines()[1].split(",")[4] == "2"  # the heads column


def test_softmax_multihead_jacobian_and_dimension():
    from lightning_cas.core import softmax

    arch = Architecture((2, 2), (1,), 3, "softmax", heads=(2,))
    rng = np.random.default_rng(3)
    w, X = rng.standard_normal(arch.parameters) / 2, rng.standard_normal((2, 2, 3))
    J, eps = softmax.jacobian(arch, w, X), 1e-6
    e = np.zeros_like(w)
    e[5] = eps
    fd = (softmax.evaluate(arch, w + e, X) - softmax.evaluate(arch, w - e, X)).reshape(-1) / (2 * eps)
    assert np.allclose(J[:, 5], fd, atol=1e-6)
    assert api.dimension(arch, method="numeric").dimension == predict_dimension(arch).value == 14


def test_head_permutations_are_located_on_components():
    from lightning_cas.geometry.fibers.points import permutation_components, permuted_points
    from lightning_cas.results.fibers import FiberComponent

    arch = Architecture((2, 1), (1,), 2, heads=(3,))
    point = random_point(arch, 2)
    perms = permuted_points(arch, point)
    assert len(perms) == 6 and len(set(perms)) == 6 and all(same_function(arch, point, p) for p in perms)
    names = [str(s) for s in flat_weight_symbols(arch)]
    w = flat(point)
    # a "component" cut out by fixing the first head's Q to W's first head's Q contains exactly
    # the permutations that keep head 1 in place (Q entries of distinct heads differ at this seed)
    part = lambda gens: FiberComponent(dimension=0, degree=1, contains_point=True, generators=gens)  # noqa: E731
    comp = part(tuple(f"{names[k]} - ({w[k]})" for k in range(2)))
    other = part((f"{names[0]} - ({w[0] + 1000})",))
    assert permutation_components(arch, point, [comp, other]) == {0}


@pytest.mark.slow
@pytest.mark.m2
def test_two_head_fiber_has_components_beyond_head_permutations(m2):
    """(2,2), a = 1, H = 2 (16 weights, about 2 minutes): the fiber has several components of the
    orbit's dimension; head permutations of W account for two of them (a finding, see docs)."""
    from lightning_cas.geometry.fibers.fiber import fiber
    from lightning_cas.results.fibers import VERDICT_COMPONENTS

    r = fiber(Architecture((2, 2), (1,), 2, heads=(2,)), method="m2", m2=m2, timeout=600)
    assert r.fiber_dimension == r.symmetry_orbit_dimension == 4
    assert all(c.dimension == 4 for c in r.components) and len(r.components) >= 2
    assert r.verdict == VERDICT_COMPONENTS and "head permutations of W lie on component(s) [1, " in r.message


def test_compare_normalizations_with_heads():
    """Softmax has no scalings and no head mixing: on a defective lightning case the gap is larger
    than the number of heads, and the lightning side is called defective, not a disagreement."""
    res = api.verify(Architecture((3, 3), (3,), 3, heads=(2,)), compare=True)
    cmp = res.details["normalizations"]
    assert cmp["lightning"]["dimension"] == 32 and cmp["softmax"]["dimension"] == 36
    assert "lightning is defective" in cmp["explanation"] and "DISAGREES" not in cmp["explanation"]
    fills = api.verify(Architecture((2, 2), (1,), 3, heads=(2,)), compare=True).details["normalizations"]
    assert fills["difference"] == 2 and "= the number of heads" in fills["explanation"]


@pytest.mark.parametrize("verb", ["implicit", "singular_locus", "boundary", "check_claims"])
def test_one_head_geometry_verbs_refuse_several_heads(verb):
    """The one-layer geometry templates know one (V, A) per layer: several heads are refused up front
    (not silently read as Q, K, V)."""
    import lightning_cas
    from lightning_cas.errors import UnsupportedError

    with pytest.raises(UnsupportedError, match="one head"):
        getattr(lightning_cas, verb)(Architecture((2, 1), (1,), 2, heads=(3,)))
    assert lightning_cas.span_dimension(2, 1, 2) == 6


@pytest.mark.parametrize("widths,att,heads", [((3, 3), (3,), (2,)), ((2, 2, 2), (2, 2), (2, 3)), ((2, 3), (3,), (3,))])
def test_head_mixing_tangents_lie_in_the_fiber(widths, att, heads):
    """Every tangent of the extended group (named group + head mixing) is killed by the Jacobian
    (exactly, mod p at the same integer point), and the mixing adds H^2 - H per mixing layer."""
    from lightning_cas.core.head_mixing import extended_orbit_dimension, mixing_layers, mixing_tangents
    from lightning_cas.core.symmetry import orbit_tangents

    arch = Architecture(widths, att, 2, heads=heads)
    point = random_point(arch, 1)
    p = 2_147_483_647
    w = np.array([int(v) % p for v in flat(point)], dtype=np.int64)
    X = Field(p).random(np.random.default_rng(0), (3, widths[0], 2))
    J = jacobian(arch, w, X, Field(p))
    for vec in orbit_tangents(arch, point) + mixing_tangents(arch, point):
        v = np.array([q.numerator % p * pow(q.denominator, -1, p) % p for q in vec], dtype=object)
        assert all(int(x) % p == 0 for x in J.astype(object).dot(v))
    extra = sum(arch.heads[i] ** 2 - arch.heads[i] for i in mixing_layers(arch))
    assert extended_orbit_dimension(arch, point) == orbit_dimension(arch, point) + extra > orbit_dimension(arch, point)


def test_verify_names_defects_explained_by_head_mixing():
    res = api.verify(Architecture((4, 1), (4,), 2, heads=(2,)))
    assert res.verdict == "defect" and "explained by head mixing (bound 32)" in res.message
    deep = api.verify(Architecture((2, 2, 2, 2), (2, 2, 2), 2, heads=(2, 2, 2)))
    assert deep.verdict == "defect" and "explained by head mixing (bound 28)" in deep.message
    collapse = api.verify(Architecture((2, 2, 2), (1, 1), 2, heads=(1, 2)))  # a_1 = 1: tokens collapse
    assert collapse.verdict == "defect" and "not explained by head mixing" in collapse.message


def test_fiber_names_head_mixing():
    from lightning_cas.geometry.fibers.fiber import fiber

    r = fiber(Architecture((2, 3), (2,), 2, heads=(2,)), method="modp")
    assert r.generic_fiber_dimension == 28 - 16 and r.symmetry_orbit_dimension == 10
    assert any("orbit dimension with it 12; this explains the whole generic fiber" in n for n in r.notes)


def test_multihead_predict_is_fast_and_bounded_by_its_timeout():
    """Found by review: predict at 16 wide, 4 heads ran past 60 s (exact ranks over QQ) and had no --timeout;
    the orbit ranks are taken mod p now, and predict takes a time limit."""
    import time

    from lightning_cas.errors import TimeLimitError

    arch = Architecture((16, 16, 16), (4, 4), 4, heads=(4, 4))
    start = time.perf_counter()
    report = api.predict(arch, timeout=30)
    assert time.perf_counter() - start < 10 and report.dimension.kind == "upper bound"
    with pytest.raises(TimeLimitError):
        api.predict(Architecture((48, 48, 48), (12, 12), 3, heads=(8, 8)), timeout=0.2)
