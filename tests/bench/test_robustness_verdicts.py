"""The verdict benchmark's own parts: the verdict rule, and planted instances that are counterexamples by
construction (the exact enclosure finds a point of the boundary within epsilon of each)."""

from __future__ import annotations

import pytest

from benchmarks.critical_anchor import READOUT, network
from benchmarks.robustness_verdicts import _g, instances, train, verdict


def test_the_verdict_needs_a_certified_end_beyond_epsilon():
    assert verdict(0.3, 0.4, 0.2) == "verified"
    assert verdict(0.1, 0.15, 0.2) == "falsified"
    assert verdict(0.1, 0.4, 0.2) == "undecided"
    assert verdict(None, None, 0.2) == "undecided"


@pytest.mark.slow
@pytest.mark.parametrize("d", [2, 3])
def test_planted_points_have_a_boundary_point_within_epsilon_and_clean_ones_are_classified(d):
    pytest.importorskip("torch")
    from lightning_cas.geometry.decision.radius_bounds import enclose
    from lightning_cas.geometry.decision.radius_exact import sqrt_up
    from lightning_cas.geometry.decision.system import boundary_system

    n, k = 4, 3
    values, X, y, _ = train(n, k, d, 0)
    clean, planted = instances(values, n, k, d, X, y, (0.5,), 0)
    assert clean and planted[0.5]
    bs = boundary_system(network(n, [k], d), values, READOUT)
    for p in planted[0.5][:3]:
        enc = enclose(bs.reduced, p, 0)
        assert enc.squared_upper is not None and sqrt_up(enc.squared_upper) < 0.5
    signs = [float(_g(values, n, k, d, [float(c) for c in p])[0]) for p in clean]
    assert all(s != 0 for s in signs)
