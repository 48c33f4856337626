"""Decision boundaries and training critical points, against the real Macaulay2.

Every count is found twice (the degree of the saturated Lagrange ideal mod p, and the distinct regular
solutions of a homotopy), radii against hand computations (the distance to a line, to two lines), the
ED degree of a generic cone against e sum_{i<n-1} (e-1)^i, training against Eckart-Young.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from lightning_cas.core.architecture import Architecture
from lightning_cas.core.network import Attention, Linear, Network, Power
from lightning_cas.core.primes import is_prime
from lightning_cas.errors import InputError, LightningError, TimeLimitError, TooLargeError
from lightning_cas.geometry.decision.m2 import PRIME, boundary_ed, generic_ed_degree
from lightning_cas.geometry.training.critical import training_critical_points
from lightning_cas.results.critical import DecisionBoundaryResult, TrainingResult

LINE = Network(2, 1, (Linear(1),))  # g = 3 x1 + 4 x2 at the weights below
TWO_LINES = Network(2, 1, (Linear(2), Power(2), Linear(1)))  # g = x1^2 - x2^2
CUBIC_CONE = Network(3, 1, (Linear(4), Power(3), Linear(1)))  # a sum of 4 cubes: a generic ternary cubic


@pytest.fixture(scope="module")
def line(m2):
    return boundary_ed(LINE, at=[3, 4], readout=[[1]], point=[[1], [2]], m2=m2, method="m2")


@pytest.fixture(scope="module")
def two_lines(m2):
    return boundary_ed(TWO_LINES, at=[1, 0, 0, 1, 1, -1], readout=[[1]], point=[[2], ["1/2"]], m2=m2, method="m2")


def test_line_radius_is_the_distance_to_the_line(line):
    assert line.ed_degree == line.ed_degree_exact == 1 and line.ed_degree_numeric == (1,)
    assert line.radius == pytest.approx(abs(3 * 1 + 4 * 2) / 5, rel=1e-12)
    assert line.radius_at == "smooth" and line.radius_certified
    nearest = line.critical_points[0].coordinates
    assert nearest == pytest.approx((1 - 3 * 11 / 25, 2 - 4 * 11 / 25), rel=1e-10)


def test_two_lines_radius_by_hand(two_lines):
    # B = {x1 = x2} u {x1 = -x2}; the distances from (2, 1/2) are 1.5/sqrt2 and 2.5/sqrt2; the origin is singular
    assert two_lines.factors == 2 and two_lines.ed_degree == 2 and two_lines.ed_degree_numeric == (2,)
    assert sorted(p.distance for p in two_lines.critical_points if p.stratum == "smooth") == pytest.approx(
        [1.5 / math.sqrt(2), 2.5 / math.sqrt(2)], rel=1e-10
    )
    assert two_lines.radius == pytest.approx(1.5 / math.sqrt(2), rel=1e-10) and two_lines.radius_certified
    singular = [c for c in two_lines.singular_components]
    assert len(singular) == 1 and singular[0].dimension == 0 and singular[0].distance_squared == "17/4"


@pytest.mark.parametrize(
    "net, at, point, stratum",
    [
        (LINE, [3, 4], [[4], [-3]], "smooth"),
        (TWO_LINES, [1, 0, 0, 1, 1, -1], [[0], [0]], "singular"),  # the two lines cross at the origin
        (TWO_LINES, [1, 0, 0, 1, 1, -1], [["1/3"], ["-1/3"]], "smooth"),
    ],
)
def test_a_point_on_the_boundary_has_radius_zero_exactly(m2, net, at, point, stratum):
    r = boundary_ed(net, at=at, readout=[[1]], point=point, m2=m2, method="m2")
    assert r.on_boundary and r.radius == 0 and r.radius_at == stratum and r.radius_certified
    assert r.critical_points[0].coordinates == tuple(float(Fraction(v)) for row in point for v in row)
    assert "X0 lies on the boundary" in r.text() and DecisionBoundaryResult.from_json(r.to_json()) == r


def test_a_point_just_off_the_boundary_is_not_on_it(m2):
    # g(X0) = 4e-9 exactly: the test is exact, not a tolerance
    r = boundary_ed(LINE, at=[3, 4], readout=[[1]], point=[[4], ["-2999999999/1000000000"]], m2=m2, method="m2")
    assert not r.on_boundary and r.radius == pytest.approx(4e-9 / 5, rel=1e-6)


@pytest.mark.parametrize("scale", [2.0**-600, 2.0**900])
def test_a_cone_is_searched_at_any_scale_of_the_point(line, m2, scale):
    # B is a cone: the radius from s X0 is s times that from X0 (computed at a point of size 1, carried back)
    r = boundary_ed(LINE, at=[3, 4], readout=[[1]], point=np.array([[1.0], [2.0]]) * scale, m2=m2, method="m2")
    assert r.radius == pytest.approx(line.radius * scale, rel=1e-12) and r.radius_certified
    assert r.critical_points[0].coordinates == pytest.approx(
        tuple(v * scale for v in line.critical_points[0].coordinates), rel=1e-10
    )
    assert any("carried back exactly" in n for n in r.notes)


def test_a_boundary_that_is_not_a_cone_takes_points_of_moderate_size(m2):
    affine = Network(2, 1, (Linear(1, bias=True),))  # g = 3 x1 + 4 x2 + 5
    r = boundary_ed(affine, at=[3, 4, 5], readout=[[1]], point=[[1], [2]], m2=m2, method="m2")
    assert r.radius == pytest.approx(16 / 5, rel=1e-12) and not r.homogeneous
    with pytest.raises(InputError, match=r"largest entry is 1e\+03.*not a cone") as info:
        boundary_ed(affine, at=[3, 4, 5], readout=[[1]], point=[[1000], [2]], m2=m2, method="m2")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("at, readout", [([3 * PRIME, 4 * PRIME], [[1]]), ([3, 4], [[f"1/{PRIME}"]])])
def test_weights_or_readout_the_prime_divides_give_the_same_boundary_mod_another_prime(line, m2, at, readout):
    # g = 32003 (3 x1 + 4 x2), or g / 32003: the same line, whose g is 0, or has no residue, mod 32003
    r = boundary_ed(LINE, at=at, readout=readout, point=[[1], [2]], m2=m2, method="m2")
    assert (r.ed_degree, r.ed_degree_numeric) == (line.ed_degree, line.ed_degree_numeric)
    assert r.prime != PRIME and is_prime(r.prime) and any(f"mod {r.prime}" in n for n in r.notes)
    assert r.radius == pytest.approx(line.radius, rel=1e-12) and r.radius_certified


def test_a_coefficient_of_g_the_prime_divides_moves_the_prime(m2):
    # g = 16001 x1^2 + 16002 (x1 + x2)^2: no weight is a multiple of 32003, but g's coefficient of x1^2 is
    r = boundary_ed(TWO_LINES, at=[1, 0, 1, 1, 16001, 16002], readout=[[1]], m2=m2, method="m2")
    assert f"{PRIME}*x_(1,1)^2" in r.polynomial and r.prime != PRIME and is_prime(r.prime)
    assert r.ed_degree == r.ed_degree_numeric[0] and any(f"mod {r.prime}" in n for n in r.notes)


def test_generic_cone_matches_the_formula(m2):
    r = boundary_ed(CUBIC_CONE, seed=3, m2=m2, method="m2")
    assert r.homogeneous and r.degree == 3 and r.variables == 3
    assert r.ed_degree_exact == r.ed_degree_numeric[0] == generic_ed_degree(3, 3, cone=True) == 9
    assert generic_ed_degree(3, 4) == 45 and generic_ed_degree(3, 4, cone=True) == 21


def test_one_layer_212_is_12_by_both_methods(m2):
    r = boundary_ed(Architecture((2, 1), (2,), 2), seed=0, m2=m2, method="m2")
    assert r.ed_degree == r.ed_degree_exact == 12 and r.ed_degree_numeric == (12,)
    assert r.generic_ed_degree == 21  # a generic cubic cone in K^4; 45 is the count of a generic affine cubic


@pytest.mark.slow
@pytest.mark.parametrize(
    "case",
    [
        ((2, 1), (1,)),
        ((2, 2), (1,)),
        pytest.param(
            ((2, 1), (2,)),
            marks=pytest.mark.xfail(
                reason="at seed 1 the homotopy finds 11 of the 12 critical points in every run (a finding, reported "
                "by the result as a disagreement)",
                strict=False,
            ),
        ),
    ],
)
def test_both_methods_agree(m2, case):
    widths, attention = case
    r = boundary_ed(Architecture(widths, attention, 2), seed=1, m2=m2, method="m2")
    assert r.agree and r.ed_degree == r.ed_degree_exact > 0


@pytest.mark.slow
def test_radius_of_212_certified_and_consistent(m2):
    r = boundary_ed(Architecture((2, 1), (2,), 2), seed=0, point=[[1, 2], [-1, "3/2"]], m2=m2, method="m2")
    assert r.complex_critical_points == r.exact_critical_points == 12
    smooth = [p for p in r.critical_points if p.stratum == "smooth"]
    assert smooth and all(p.certified_real for p in smooth)
    assert r.radius == min(p.distance for p in r.critical_points) and r.radius_certified
    assert DecisionBoundaryResult.from_json(r.to_json()) == r
    # an independent look (the oracle's own forward pass in mpmath): no boundary point on 300 random lines
    # through X0 is nearer than the certified radius, and the nearest critical point is on the boundary
    from fractions import Fraction

    from lightning_cas.geometry.decision.m2 import readout_values, weight_values
    from tests.oracle.boundary import boundary_value, nearest_on_lines

    arch = Architecture((2, 1), (2,), 2)
    net, x0 = arch, [[1, 2], [-1, Fraction(3, 2)]]
    w, ro = weight_values(arch, None, 0)[0], readout_values(net, None, 0)[0]
    seen = nearest_on_lines(net, w, ro, x0, degree=3, lines=300)
    assert r.radius * (1 - 1e-9) <= seen < 2 * r.radius
    best = min(r.critical_points, key=lambda p: p.distance)
    at = [list(best.coordinates[0:2]), list(best.coordinates[2:4])]
    assert abs(boundary_value(net, w, ro, at)) < 1e-8 * abs(boundary_value(net, w, ro, x0))


def test_round_trip_and_display(line):
    back = DecisionBoundaryResult.from_json(line.to_json())
    assert back == line and "ED degree 1" in line.text() and "robustness radius" in line.text()
    assert "DecisionBoundaryResult" in line._repr_html_()
    assert json.loads(line.to_json())["certainty"] == "numeric"


# ---------------------------------------------------------------- refusals, one line each


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: boundary_ed(Architecture((2, 1), (1,), 2, "softmax")), InputError, "softmax"),
        (lambda: boundary_ed(LINE, at=[3, 4], readout=[[1, 2]]), InputError, "readout must have shape (1, 1)"),
        (lambda: boundary_ed(LINE, at=[3, 4], point=[[float("nan")], [1]]), InputError, "NaN"),
        (lambda: boundary_ed(LINE, at=[3, 4], point=[[1, 2]]), InputError, "point must have shape (2, 1)"),
        (lambda: boundary_ed(Architecture((3, 1), (1,), 3), method="m2"), TooLargeError, "paths"),
        (lambda: boundary_ed(LINE, at=[3, 4, 5]), InputError, "weights"),
        (lambda: boundary_ed("not an architecture"), InputError, "Architecture"),
        (lambda: boundary_ed(LINE, method="groebner"), InputError, "method must be one of auto, msolve, m2"),
    ],
)
def test_refusals_before_work(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert words in str(info.value) and "\n" not in str(info.value)


def test_zero_boundary_refused(m2):
    with pytest.raises(InputError, match="zero polynomial"):
        boundary_ed(LINE, at=[3, 4], readout=[[0]], m2=m2, method="m2")


def test_constant_boundary_refused(m2):
    # biases can make g a nonzero constant: no input is on B (Macaulay2 once failed on an empty factor list)
    with pytest.raises(InputError, match="nonzero constant"):
        boundary_ed(
            Network(2, 1, (Linear(1, bias=True),)), at=[0, 0, 5], readout=[[1]], point=[[1], [2]], m2=m2, method="m2"
        )


def test_timeout_is_honoured(m2):
    with pytest.raises(TimeLimitError):
        boundary_ed(Architecture((2, 1), (2,), 2), point=[[1, 2], [-1, 3]], timeout=0.5, m2=m2, method="m2")


def test_readout_from_files(tmp_path, m2):
    np.save(tmp_path / "w.npy", np.array([[2.0]]))
    (tmp_path / "x.json").write_text('[[1], ["2"]]')
    r = boundary_ed(
        LINE, at=[3, 4], readout=str(tmp_path / "w.npy"), point=str(tmp_path / "x.json"), m2=m2, method="m2"
    )
    assert r.readout == (("2",),) and r.readout_source == "w.npy" and r.point == ("1", "2")
    assert r.radius == pytest.approx(11 / 5, rel=1e-12)


# ---------------------------------------------------------------- training


@pytest.fixture(scope="module")
def eckart_young(m2):
    # a linear network x -> W2 W1 x (3 -> 1 -> 2): the function space is the 2 x 3 matrices of rank <= 1
    # (the cone over the Segre P^1 x P^2); whitened inputs e_1, e_2, e_3 make the loss |M - T|_F^2
    net = Network(3, 1, (Linear(1), Linear(2)))
    T = np.array([[3, 1, 0], [1, 2, -1]])
    return training_critical_points(net, inputs=np.eye(3).reshape(3, 3, 1), targets=T.T.reshape(3, 2, 1), m2=m2), T


def test_training_is_eckart_young(eckart_young):
    r, T = eckart_young
    s = np.linalg.svd(T, compute_uv=False)
    # critical points on rank one: sigma_i u_i v_i^T, loss the other sigma^2; the larger one is the minimum
    assert r.complex_critical_points == 2
    assert [p.loss for p in r.critical_points] == pytest.approx([s[1] ** 2, s[0] ** 2], rel=1e-9)
    assert [p.kind for p in r.critical_points] == ["local minimum", "saddle"]
    assert r.local_search_minimum == pytest.approx(s[1] ** 2, rel=1e-8)
    assert "local search" in r.critical_points[0].found_by
    assert TrainingResult.from_json(r.to_json()) == r and "local minimum" in r.text()


@pytest.mark.slow
def test_training_segre_attention_is_honest(m2):
    # one layer (2,1,1,2): the cone over the Segre P^1 x P^2; three generic samples give a non-degenerate
    # data metric, and the exact Lagrange ideal of the 2 x 3 rank-one matrices under that metric has degree 10
    # (mod 32003): no more than 10 complex critical points can be reported. The homotopy on the gauge slice
    # loses real critical points here; the converged local searches find them, and the result says so.
    X = [[[1, 2], [-1, 3]], [[0, 1], [2, -2]], [[3, 1], [1, 1]]]
    Y = [[[1, 2]], [[-1, 0]], [[2, 1]]]
    r = training_critical_points(Architecture((2, 1), (1,), 2), inputs=X, targets=Y, m2=m2)
    assert r.function_dimension == r.evaluation_rank == 4 and r.complex_critical_points <= 10
    assert r.minimum_loss == pytest.approx(r.local_search_minimum, rel=1e-8)
    assert r.critical_points[0].kind == "local minimum"
    if any(p.found_by == ("local search",) for p in r.critical_points):
        assert any("MISSED" in n for n in r.notes)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"inputs": np.zeros((2, 3, 2)), "targets": np.zeros((2, 1, 2))}, "inputs must have shape (N, 2, 2)"),
        ({"inputs": np.zeros((2, 2, 2)), "targets": np.zeros((2, 2, 2))}, "targets must have shape (N, 1, 2)"),
        ({"inputs": np.zeros((2, 2, 2)), "targets": np.zeros((3, 1, 2))}, "one target per input"),
        ({"inputs": np.full((1, 2, 2), np.nan), "targets": np.zeros((1, 1, 2))}, "NaN"),
        # float64 cannot hold the loss of these (values of size s^3 at unit weights): refused, naming the size
        ({"inputs": np.full((2, 2, 2), 1e-200), "targets": np.ones((2, 1, 2))}, "largest entry is 1e-200"),
        ({"inputs": np.full((2, 2, 2), 1e300), "targets": np.ones((2, 1, 2))}, "of size 1e900 at unit weights"),
        ({"inputs": np.full((2, 2, 2), 1e-3), "targets": np.ones((2, 1, 2))}, "takes sizes from 1e-8 to 1e8"),
        ({"inputs": np.ones((2, 2, 2)), "targets": np.full((2, 1, 2), 1e9)}, "targets' largest entry is 1e9"),
        ({"inputs": np.zeros((2, 2, 2)), "targets": np.ones((2, 1, 2))}, "every input is zero"),
    ],
)
def test_training_refusals(kwargs, words):
    with pytest.raises(LightningError) as info:
        training_critical_points(Architecture((2, 1), (1,), 2), **kwargs)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_training_refuses_softmax():
    with pytest.raises(InputError, match="softmax"):
        training_critical_points(
            Network(2, 2, (Attention(1, normalization="softmax"),)),
            inputs=np.zeros((1, 2, 2)),
            targets=np.zeros((1, 2, 2)),
        )
