"""The radius enclosure (geometry.decision.radius_bounds) against msolve's isolated radius on random boundaries, the
crossing of its upper point checked in exact arithmetic apart from the code, and a count out of time."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from lightning_cas.core.network import MLP, Linear, Network, Power
from lightning_cas.errors import MsolveTimeoutError
from lightning_cas.geometry.decision.m2 import boundary_ed, readout_values, weight_values
from lightning_cas.geometry.decision.radius_bounds import enclose, lower_bound, taylor_norms
from lightning_cas.geometry.decision.system import boundary_system
from lightning_cas.results.critical import ExactBoundaryResult


def _at(poly, point):
    import flint

    return poly(*[flint.fmpq(Fraction(v).numerator, Fraction(v).denominator) for v in point])


def _system(net, seed):
    values, _ = weight_values(net, None, seed)
    w, _ = readout_values(net, None, seed)
    return boundary_system(net, values, w)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("degree", [2, 3])
def test_the_enclosure_contains_the_isolated_radius(msolve_binary, seed, degree):
    net = Network(3, 1, (Linear(3, bias=True), Power(degree), Linear(1, bias=True)))
    x0 = [Fraction(int(v), 4) for v in np.random.default_rng(seed + 20).integers(-8, 9, 3)]
    exact = boundary_ed(net, method="msolve", seed=seed, point=[[v] for v in x0]).radius
    bs = _system(net, seed)
    enc = enclose(bs.reduced, x0, seed)
    if exact.upper is None:  # B has no real point: no ray may cross it
        assert enc.squared_upper is None
        return
    assert exact.certified and exact.squared_lower is not None
    assert enc.squared_lower <= Fraction(exact.squared_lower)
    assert enc.squared_upper is not None and enc.squared_upper >= Fraction(exact.squared_upper)
    # the upper end's point: g changes sign between X0 and it (checked here, not by the code's bisection)
    assert _at(bs.reduced, x0) * _at(bs.reduced, enc.point) < 0
    assert sum((p - c) ** 2 for p, c in zip(enc.point, x0)) == enc.squared_upper


def test_the_taylor_bound_is_the_distance_to_a_line_exactly():
    # g = 3 x + 4 y - 10 at the origin: |g0| = 10, N_1 = 5: no zero within 2, and the line is at distance 2
    terms = {(0, 0): Fraction(-10), (1, 0): Fraction(3), (0, 1): Fraction(4)}
    norms = taylor_norms(terms)
    assert norms[0] >= 5 and norms[0] - 5 < Fraction(1, 2**30)
    low = lower_bound(Fraction(-10), norms)
    assert low <= 2 and 2 - low < Fraction(1, 2**20)


def test_a_count_out_of_time_keeps_an_enclosed_radius(msolve_binary, monkeypatch):
    """msolve's count runs out of time (provoked: it raises the runner's own timeout): with a point the result
    has no ED degree, the enclosed radius and says so; without one the timeout is the one-line error."""
    from lightning_cas.geometry.decision import msolve as decision_msolve

    def out_of_time(*_a, **_k):
        raise MsolveTimeoutError("msolve exceeded the 5 s time limit and was stopped")

    net = Network(8, 1, (MLP(4, degree=3, out=2),))
    point = [[Fraction((5 * i) % 7 - 3)] for i in range(8)]
    monkeypatch.setattr(decision_msolve, "count_ed", out_of_time)
    r = boundary_ed(net, method="msolve", readout=[[1], [-1]], point=point)
    assert r.ed_degree is None and r.radius.method == "bounds" and r.radius.certified
    assert 0 < r.radius.lower <= r.radius.upper
    assert "not counted in time" in str(r) and "an enclosure" in str(r)
    back = ExactBoundaryResult.from_json(r.to_json())
    assert back.radius == r.radius and back.ed_degree is None
    with pytest.raises(MsolveTimeoutError):
        boundary_ed(net, method="msolve", readout=[[1], [-1]])


def test_coefficients_beyond_floats_still_enclose_the_exact_distance():
    # g = 10^400 (x1 + x2 - 2) at the origin: the line at distance sqrt(2); no float can hold a coefficient
    import flint

    ctx = flint.fmpq_mpoly_ctx.get(("x1", "x2"), "degrevlex")
    x1, x2 = ctx.gens()
    big = flint.fmpq(10**400)
    enc = enclose(big * (x1 + x2 - 2), [0, 0])
    assert enc.squared_lower <= 2 <= enc.squared_upper
    assert enc.squared_upper - 2 < Fraction(1, 10**6) and 2 - enc.squared_lower < Fraction(1, 10**6)
