"""Decision boundaries by msolve: the ED degree against Macaulay2's two counts, the radius interval against
hand computations, Macaulay2's alpha-certified radius and an independent local search from many starts,
the bottleneck reduction against the unreduced problem; all with the real msolve binary."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from click.testing import CliRunner

from lightning_cas.cli import main
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.network import MLP, Linear, Network, Power
from lightning_cas.errors import InputError, MsolveNotFoundError
from lightning_cas.geometry.decision.m2 import boundary_ed
from lightning_cas.geometry.decision.radius_exact import sqrt_down, sqrt_up
from lightning_cas.geometry.decision.system import bottleneck, boundary_system
from lightning_cas.results.critical import ExactBoundaryResult

LINE = Network(2, 1, (Linear(1),))  # g = 3 x1 + 4 x2 at the weights below
TWO_LINES = Network(2, 1, (Linear(2), Power(2), Linear(1)))  # g = x1^2 - x2^2
CUBIC_CONE = Network(3, 1, (Linear(4), Power(3), Linear(1)))  # a sum of 4 cubes: a generic ternary cubic
NARROW = Network(4, 1, (Linear(2, bias=True), Power(2), Linear(1, bias=True)))  # g = h(W1 X + b), W1 of rank 2


def _exact(net, **kw):
    return boundary_ed(net, method="msolve", **kw)


@pytest.fixture(scope="module")
def line(msolve_binary):
    return _exact(LINE, at=[3, 4], readout=[[1]], point=[[1], [2]])


def test_the_line_radius_is_exactly_the_distance_to_the_line(line):
    # |3 + 8| / 5 = 11/5: g is linear, so it is one bottleneck coordinate z = 3 x1 + 4 x2 with metric 1/25
    assert (line.ed_degree, line.bottleneck, line.real_critical_points) == (1, 1, 1)
    assert line.radius.certified and line.radius.squared_lower == line.radius.squared_upper == "121/25"
    assert line.radius.lower <= 2.2 <= line.radius.upper and line.radius.upper - line.radius.lower < 1e-15
    assert line.critical_points[0].coordinates == pytest.approx((1 - 3 * 11 / 25, 2 - 4 * 11 / 25), rel=1e-12)
    assert line.singular_dimension == -1 and line.method == "msolve"
    assert ExactBoundaryResult.from_json(line.to_json()) == line


def test_two_lines_by_hand_with_their_singular_point(msolve_binary):
    r = _exact(TWO_LINES, at=[1, 0, 0, 1, 1, -1], readout=[[1]], point=[[2], ["1/2"]])
    assert (r.ed_degree, r.factors, r.real_critical_points, r.singular_dimension) == (2, 2, 2, 0)
    boxes = [tuple(map(Fraction, p.squared_distance)) for p in r.critical_points]
    for (lo, hi), exact in zip(boxes, [Fraction(9, 8), Fraction(25, 8)]):  # (1.5 / sqrt 2)^2, (2.5 / sqrt 2)^2
        assert lo <= exact <= hi and hi - lo < Fraction(1, 2**50)
    assert [p.squared_distance for p in r.singular_points] == [("17/4", "17/4")]  # the origin
    assert r.radius.certified and r.radius.at == "smooth"
    assert r.radius.lower <= 1.5 / math.sqrt(2) <= r.radius.upper


@pytest.mark.parametrize(
    "net, at, point, stratum",
    [(LINE, [3, 4], [[4], [-3]], "smooth"), (TWO_LINES, [1, 0, 0, 1, 1, -1], [[0], [0]], "singular")],
)
def test_a_point_on_the_boundary_has_radius_zero_exactly(msolve_binary, net, at, point, stratum):
    r = _exact(net, at=at, readout=[[1]], point=point)
    assert r.on_boundary and r.radius.certified and (r.radius.lower, r.radius.upper) == (0.0, 0.0)
    assert r.radius.at == stratum and "X0 lies on the boundary" in r.text()


@pytest.mark.parametrize(
    "net, kw",
    [
        (TWO_LINES, dict(at=[1, 0, 0, 1, 1, -1], readout=[[1]], point=[[2], ["1/2"]])),
        (NARROW, dict(seed=1, point=[[1], [0], ["-1/3"], [2]])),
    ],
)
def test_the_counts_and_the_radius_agree_with_macaulay2(msolve_binary, m2, net, kw):
    mine, theirs = _exact(net, **kw), boundary_ed(net, m2=m2, method="m2", **kw)
    assert mine.ed_degree == theirs.ed_degree == theirs.ed_degree_numeric[0]
    assert (mine.degree, mine.reduced_degree, mine.factors) == (theirs.degree, theirs.reduced_degree, theirs.factors)
    found = sum(p.stratum == "smooth" for p in theirs.critical_points)
    complete = theirs.complex_critical_points == theirs.exact_critical_points
    assert mine.real_critical_points == found if complete else mine.real_critical_points >= found
    assert mine.radius.certified and mine.radius.lower <= theirs.radius * (1 + 1e-9)  # M2's point lies on B
    if theirs.radius_certified:
        assert theirs.radius <= mine.radius.upper * (1 + 1e-9)


def test_an_isolated_box_finds_the_critical_point_the_homotopy_loses(msolve_binary, m2):
    # near the vertex of the cubic cone grad g is O(|X|^2), so x - X0 = l grad g needs l ~ 10^6: Macaulay2's
    # homotopy tracks 8 of the 9 paths and finds 2 real points; msolve isolates 3, the third at distance^2
    # just below the vertex's 21/4
    mine = _exact(CUBIC_CONE, seed=3, point=[[1], ["-1/2"], [2]])
    theirs = boundary_ed(CUBIC_CONE, seed=3, point=[[1], ["-1/2"], [2]], m2=m2, method="m2")
    assert theirs.complex_critical_points < theirs.exact_critical_points == mine.ed_degree == 9
    assert theirs.ed_degree == 9 and mine.radius.lower <= theirs.radius <= mine.radius.upper * (1 + 1e-12)
    assert mine.real_critical_points == 3 and not theirs.radius_certified and mine.radius.certified
    lo, hi = map(Fraction, mine.critical_points[-1].squared_distance)
    assert 5 < lo <= hi < Fraction(21, 4) and mine.singular_points[0].squared_distance == ("21/4", "21/4")


def test_a_bottleneck_is_found_from_g_and_changes_nothing_but_the_unknowns(msolve_binary):
    # W1 is 2 x 4: g depends on 2 linear forms, and B is a cylinder over a conic in the plane
    bs = boundary_system(NARROW, [1, 2, -1, 3, 0, 1, 1, -2, 1, -1, 2, 3, -7], [[1]])
    assert (bs.n, bs.r, bs.degree) == (4, 2, 2)
    assert bottleneck(bs.g, 4) and len(bottleneck(bs.g, 4)) == 2
    r = _exact(NARROW, at=[1, 2, -1, 3, 0, 1, 1, -2, 1, -1, 2, 3, -7], readout=[[1]], point=[[1], [0], [2], [-1]])
    assert r.bottleneck == 2 and any("through 2 linear combinations" in n for n in r.notes)
    assert r.ed_degree == 4  # a generic conic: 2 (1 + 1)
    for p in r.critical_points:  # each nearest point differs from X0 by a vector of the row space of W1
        d = np.array(p.coordinates) - np.array([1, 0, 2, -1])
        W1 = np.array([[1, 2, -1, 3], [0, 1, 1, -2]], dtype=float)
        assert np.linalg.matrix_rank(np.vstack([W1, d])) == 2


def _local_search(g, grad, hess, x0, starts, rng):
    """Distances from x0 to points of {g = 0} found independently: each random start projected onto B
    (Newton along the gradient), then Newton on the Lagrange system x - x0 = l grad g, g = 0; every point
    kept lies on B to 1e-10 (relative to |grad g|)."""

    def project(x):
        for _ in range(50):
            gx, dx = g(x), grad(x)
            if dx @ dx < 1e-300:
                break
            x = x - gx * dx / (dx @ dx)
        return x

    def on_b(x):
        return np.all(np.isfinite(x)) and abs(g(x)) < 1e-10 * (1 + np.linalg.norm(grad(x)))

    found, n = [], len(x0)
    for _ in range(starts):
        x = project(x0 + rng.normal(scale=3.0, size=n))
        if on_b(x):
            found.append(np.linalg.norm(x - x0))
        dx = grad(x)
        lam = ((x - x0) @ dx) / (dx @ dx)
        for _ in range(60):
            dx = grad(x)
            F = np.concatenate([x - x0 - lam * dx, [g(x)]])
            J = np.block([[np.eye(n) - lam * hess(x), -dx[:, None]], [dx[None, :], np.zeros((1, 1))]])
            try:
                step = np.linalg.solve(J, -F)
            except np.linalg.LinAlgError:
                break
            x, lam = x + step[:n], lam + step[n]
            if np.linalg.norm(step) < 1e-14 * (1 + np.linalg.norm(x)):
                break
        if on_b(x):
            found.append(np.linalg.norm(x - x0))
    return found


def _search_from(net, seed: int, x0, starts: int) -> list[float]:
    import sympy

    from lightning_cas.core.model import token_symbols
    from lightning_cas.geometry.decision.m2 import readout_values, weight_values
    from lightning_cas.geometry.decision.system import boundary_polynomial

    values, _ = weight_values(net, None, seed)
    w, _ = readout_values(net, None, seed)
    _, expr = boundary_polynomial(net, values, w)
    xs = list(token_symbols(net))  # row-major, as the point
    g = sympy.lambdify([xs], expr, "numpy")
    grad = sympy.lambdify([xs], [sympy.diff(expr, x) for x in xs], "numpy")
    hess = sympy.lambdify([xs], sympy.hessian(expr, xs).tolist(), "numpy")
    return _local_search(
        lambda x: float(g(x)),
        lambda x: np.array(grad(x), dtype=float),
        lambda x: np.array(hess(x), dtype=float),
        np.array([float(v) for row in x0 for v in row]),
        starts,
        np.random.default_rng(seed),
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("degree", [2, 3])
def test_no_local_search_beats_the_certified_lower_bound(msolve_binary, seed, degree):
    net = Network(3, 1, (Linear(3), Power(degree), Linear(1, bias=True)))  # not a cone
    x0 = [[Fraction(int(v), 4)] for v in np.random.default_rng(seed + 10).integers(-8, 9, 3)]
    r = _exact(net, seed=seed, point=x0)
    found = _search_from(net, seed, x0, 100)
    if r.radius is None or r.radius.upper is None:  # B has no real point: the search finds none
        assert not found
        return
    assert r.radius.certified and found
    assert min(found) >= r.radius.lower * (1 - 1e-9)
    assert min(found) <= r.radius.upper * (1 + 1e-6)  # 100 starts find the nearest point


@pytest.mark.parametrize("arch", [Architecture((2, 1), (2,), tokens=3), Architecture((3, 1), (1,), tokens=2)])
def test_a_positive_dimensional_singular_locus_is_bounded_through_hypersurfaces_around_it(msolve_binary, arch):
    # the held-out boundaries: their singular loci are surfaces; l . grad h = 0 contains them, and its own
    # critical points bound their distance from below
    x0 = [[Fraction((3 * i + 2 * j) % 7 - 3, 2) for j in range(arch.tokens)] for i in range(arch.input)]
    r = _exact(arch, point=x0)
    assert r.singular_dimension > 0 and r.radius.certified and r.radius.lower <= r.radius.upper
    assert r.radius.upper <= r.radius.lower * (1 + 1e-12)  # here the bound is tight
    assert any("l . grad h = 0" in n for n in r.notes)
    found = _search_from(arch, 0, x0, 40)
    assert found and min(found) >= r.radius.lower * (1 - 1e-9)


def test_the_robustness_paper_shape_is_solved_in_the_bottleneck(msolve_binary):
    # 16 inputs, 12 hidden, 2 outputs, boundary f1 - f2, quadratic activation: 12 unknowns, not 16
    net = Network(16, 1, (MLP(12, degree=2, out=2),))
    point = [[Fraction((7 * i) % 11 - 5, 3)] for i in range(16)]
    r = _exact(net, readout=[[1], [-1]], point=point, timeout=120)
    assert (r.variables, r.bottleneck, r.ed_degree) == (16, 12, r.generic_ed_degree) == (16, 12, 22)
    assert r.radius.certified and r.radius.lower <= r.radius.upper < r.radius.lower * (1 + 1e-12)


def test_sqrt_bounds_are_floats_on_the_right_side():
    for q in (Fraction(2), Fraction(121, 25), Fraction(1, 3), Fraction(10**40 + 1, 7)):
        lo, hi = sqrt_down(q), sqrt_up(q)
        assert Fraction(lo) ** 2 <= q <= Fraction(hi) ** 2 and hi - lo <= 2 * math.ulp(hi)


def test_the_command_line_prints_the_radius_interval(msolve_binary, tmp_path):
    (tmp_path / "x0.json").write_text("[[1], [2]]")
    (tmp_path / "w.json").write_text("[3, 4]")
    out = CliRunner().invoke(
        main,
        [
            "ed",
            "--widths",
            "2,1",
            "--attention",
            "1",
            "--tokens",
            "1",
            "--boundary",
            "--method",
            "msolve",
            "--point",
            str(tmp_path / "x0.json"),
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["kind"] == "ExactBoundaryResult" and data["ed_degree"] >= 1
    assert set(data["radius"]) >= {"lower", "upper", "certified"} and data["real_critical_points"] >= 0


@pytest.mark.parametrize(
    "args, message",
    [
        (["--boundary", "--method", "monodromy"], "a smooth translated power sum"),
        (["--boundary", "--method", "lagrange", "--msolve", "msolve"], "--method lagrange does not run it"),
        (["--boundary", "--method", "msolve", "--format", "m2"], "not to --boundary"),
    ],
)
def test_the_command_line_refuses_in_one_line(args, message):
    out = CliRunner().invoke(main, ["ed", "--widths", "2,1", "--attention", "1", *args])
    assert out.exit_code != 0 and message in out.output and out.output.count("\n") == 1


def test_refusals_before_any_work():
    with pytest.raises(InputError, match="method must be one of"):
        boundary_ed(LINE, method="homotopy")
    with pytest.raises(MsolveNotFoundError):
        boundary_ed(LINE, method="msolve", msolve="/nonexistent/msolve")
    with pytest.raises(InputError, match="zero polynomial"):
        _exact(LINE, at=[0, 0], readout=[[1]])


def test_the_deadline_stops_msolve_in_one_line(msolve_binary):
    # the cubic [16, 12, 2] boundary has thousands of critical points: far beyond two seconds
    from lightning_cas.errors import LightningError

    net = Network(16, 1, (MLP(12, degree=3, out=2),))
    with pytest.raises(LightningError, match="time limit|timed out|took longer") as info:
        _exact(net, readout=[[1], [-1]], timeout=2)
    assert "\n" not in str(info.value)


def test_a_radius_out_of_time_keeps_the_exact_count(msolve_binary, monkeypatch):
    """The count finished; the real roots over QQ did not (provoked: their isolation raises the runner's own
    timeout). The result keeps the ED degree, encloses the radius by bounds (around the isolated one) and says
    why; an enclosing limit (the command's, a sweep job's) stops the step in time to keep that, and one too short
    for the count ends the run."""
    from lightning_cas.errors import MsolveTimeoutError, TimeLimitError
    from lightning_cas.geometry.decision import msolve as decision_msolve
    from lightning_cas.system.deadline import time_limit

    def out_of_time(*_a, **_k):
        raise MsolveTimeoutError("msolve exceeded the 5 s time limit and was stopped")

    net = Network(16, 1, (MLP(12, degree=2, out=2),))
    point = [[Fraction((7 * i) % 11 - 5, 3)] for i in range(16)]
    full = _exact(net, readout=[[1], [-1]], point=point, timeout=120)
    monkeypatch.setattr(decision_msolve, "radius_at", out_of_time)
    r = _exact(net, readout=[[1], [-1]], point=point, timeout=120)
    assert r.ed_degree == full.ed_degree == 22 and r.real_critical_points is None
    assert r.radius.method == "bounds" and r.radius.certified and r.radius.at == "ray"
    assert r.radius.lower <= full.radius.lower and full.radius.upper <= r.radius.upper
    assert any("not isolated within the time limit" in n for n in r.notes)
    assert "isolating boxes" not in r.method_detail and "not tight" in r.certainty_detail
    text = str(r)
    assert "were not isolated" in text and "an enclosure" in text and "None" not in text

    def slow(*_a, **_k):
        import time

        time.sleep(5)

    monkeypatch.setattr(decision_msolve, "radius_at", slow)
    with time_limit(10):  # the command's --timeout, a sweep job's: the step stops in time to keep what it had
        kept = _exact(net, readout=[[1], [-1]], point=point, timeout=120)
    assert kept.ed_degree == 22 and kept.radius.method == "bounds" and kept.radius.certified
    with pytest.raises(TimeLimitError), time_limit(0.05):  # shorter than the enclosure itself: the one-line timeout
        _exact(net, readout=[[1], [-1]], point=point, timeout=120)


def test_a_repeated_factor_is_taken_reduced_and_its_points_are_smooth(msolve_binary):
    # g = (3 x1 + 4 x2)^2: B is the line, counted once; a point on it is a smooth point of B
    square = Network(2, 1, (Linear(1), Power(2)))
    r = _exact(square, at=[3, 4], readout=[[1]], point=[[1], [2]])
    assert (r.degree, r.reduced_degree, r.ed_degree) == (2, 1, 1) and any("not squarefree" in n for n in r.notes)
    assert r.radius.squared_lower == r.radius.squared_upper == "121/25"
    on = _exact(square, at=[3, 4], readout=[[1]], point=[[4], [-3]])
    assert on.on_boundary and on.radius.at == "smooth"
