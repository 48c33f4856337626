"""`llc` against an independent oracle: the Monte Carlo slope of log vol{K < ε} against log ε (tests/oracle/volume.py)
must agree with every exact value and lie inside every bracket."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from lightning_cas.core.architecture import Architecture
from lightning_cas.core.network import MLP, Linear, Network
from lightning_cas.geometry.learning.bracket import learning_coefficient
from tests.oracle.volume import slope_tolerance, volume_slope

ONE = Architecture((2, 1), (1,), tokens=2)  # weights q1 q2 k1 k2 v1 v2


def _agrees(net, weights, fixed=(), walkers=1000, seed=0):
    r = learning_coefficient(net, {"weights": weights})
    order = r.multiplicity or 1
    slope = volume_slope(net, weights, order=order, fixed=fixed, walkers=walkers, seed=seed).slope
    low, high = float(Fraction(r.lower)), float(Fraction(r.upper))
    # an order above 1 leaves log-factor terms the fit does not model: its slope is read more loosely
    tol = slope_tolerance(high) + 0.1 * (order - 1)
    assert low - tol <= slope <= high + tol, (slope, r.text())
    return r, slope


@pytest.mark.m2
def test_the_sum_of_squares_point_is_three_quarters_by_both_routes(m2):
    """f = (Σ D_i U_i²) x² at U = 0, D = 1: exact 3/4 from the Newton polyhedron, and the volume slope agrees; the
    old bracket [0, 1/2] (from the complex fiber) lies outside the oracle's reach."""
    net = Network(1, 1, (MLP(3, degree=2, out=1),))
    r, slope = _agrees(net, [0, 0, 0, 1, 1, 1], walkers=2000)
    assert r.learning_coefficient == "3/4" and abs(slope - 0.75) < slope_tolerance(0.75)
    assert slope > 0.5 + slope_tolerance(0.5)


@pytest.mark.slow
@pytest.mark.m2
@pytest.mark.parametrize(
    "net,weights,fixed,value,order",
    [
        (ONE, [0] * 6, (), "1", 3),  # the zero function: |V|²|KᵀQ|², orders add
        (ONE, [1, 2, 3, -1, 0, 0], (0,), "1", 1),  # V = 0
        (ONE, [1, 0, 1, 0, 1, 0], (0, 4), "7/4", 1),  # rank V = rank A = 1, aligned: below codim/2 = 2
        (Architecture((3, 1), (1,), tokens=2), [1, 0, 0, 1, 0, 0, 1, 0, 0], (0, 6), "3", 1),  # codim/2 = 7/2
        (Architecture((2, 2), (1,), tokens=2), [1, 0, 1, 0, 1, 0, 2, 0], (0, 4), "11/4", 1),
        (Network(2, 1, (Linear(2), Linear(2))), [0] * 8, (), "3/2", 1),  # Aoyagi-Watanabe at 0
        (
            Network(3, 1, (Linear(2), Linear(3))),
            [1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0],
            (0, 3, 7),
            "7/2",
            2,
        ),  # odd case: m = 2
        # the invertible middle factor merges into a neighbour: 2-2-2 at its least-rank point, odd case
        (Network(2, 1, (Linear(2), Linear(2), Linear(2))), [1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0], (), "2", 2),
    ],
    ids=["zero", "V=0", "aligned-2", "aligned-3", "aligned-22", "linear-0", "linear-rank1", "linear-merged"],
)
def test_exact_values_at_singular_points_agree_with_the_volume_slope(m2, net, weights, fixed, value, order):
    """The singular strata of one lightning layer and linear stacks at their least-rank points: exact by a theorem
    (each reason says which), and the oracle's slope on a slice across the symmetry orbit agrees."""
    r, slope = _agrees(net, weights, fixed, walkers=2000)
    assert r.learning_coefficient == value and r.multiplicity == order and r.certainty == "exact", r.text()


def _random_points(rng, net, count):
    for _ in range(count):
        w = rng.integers(-2, 3, net.parameters)
        for m in net.weight_matrices:
            if rng.random() < 0.35:
                w[m.offset : m.stop] = 0
        yield [int(v) for v in w]


@pytest.mark.slow
@pytest.mark.m2
@pytest.mark.parametrize(
    "net",
    [ONE, Network(1, 1, (MLP(2, degree=2, out=1),)), Network(2, 1, (Linear(1), Linear(2)))],
    ids=lambda n: n.label(),
)
def test_no_bracket_excludes_the_volume_slope_on_random_points(m2, net):
    rng = np.random.default_rng(3)
    for weights in _random_points(rng, net, 4):
        _agrees(net, weights, walkers=1000)
