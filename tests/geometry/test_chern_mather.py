"""The closed-form generic ED degrees (Chern-Mather degrees of Segre products and duals) against msolve's
exact counts and degrees on the shapes both reach: two computations that share nothing."""

from __future__ import annotations

import pytest

from lightning_cas import Architecture, ed_degree
from lightning_cas.core.blocks.linear import Linear
from lightning_cas.core.blocks.power import Power
from lightning_cas.core.network import Network
from lightning_cas.geometry.degree import closed_forms as cm
from lightning_cas.geometry.degree.m2 import degree


@pytest.mark.parametrize(
    "mu, ambient",
    [(cm.veronese_surface(), 5), (cm.segre_product(cm.projective_space(1), cm.projective_space(1)), 3)],
)
def test_duality_is_an_involution_that_keeps_the_generic_ed_degree(mu, ambient):
    back = cm.dual(cm.dual(mu, ambient), ambient)
    assert back == mu
    assert cm.generic_ed_degree(cm.dual(mu, ambient)) == cm.generic_ed_degree(mu)


def test_polar_degrees_round_trip_and_a_linear_space_has_one_critical_point():
    for n in range(1, 6):
        mu = cm.projective_space(n)
        assert cm.from_polar_degrees(cm.polar_degrees(mu)) == mu
        assert cm.generic_ed_degree(mu) == 1 and mu[-1] == 1
    cubic = cm.rank_two_symmetric(3)
    assert cubic[-1] == 3 and cm.polar_degrees(cubic)[0] == 0  # the determinantal cubic; its dual is not a hypersurface
    assert cm.rank_two_symmetric(4) is None and cm.one_layer_generic_ed(3, 1, 1, 1) is None


@pytest.mark.parametrize(
    "arch, closed",
    [
        (Architecture((2, 1), (1,), tokens=2), cm.one_layer_generic_ed(2, 1, 1, 2)),
        (Architecture((2, 1), (1,), tokens=3), cm.one_layer_generic_ed(2, 1, 1, 3)),
        (Network(3, 1, (Linear(2), Power(2), Linear(1))), cm.two_neuron_generic_ed(3, 1, False)),
        (Network(2, 1, (Linear(2), Power(2), Linear(1))), cm.two_neuron_generic_ed(2, 1, False)),
    ],
)
def test_the_closed_form_is_msolves_exact_count(msolve_binary, arch, closed):
    assert closed is not None
    assert ed_degree(arch, method="msolve").ed_degree == closed


@pytest.mark.parametrize("d", [2, 3])
def test_the_top_degree_is_the_neurovarietys_degree_by_msolve(msolve_binary, d):
    # d = 3: the Segre product of the determinantal cubic with P^2, degree 45, in 18 = 6 * 3 coordinates
    mu = cm.segre_product(cm.rank_two_symmetric(d), cm.projective_space(d - 1))
    res = degree(Architecture((d, 1), (1,), tokens=2), method="msolve")
    assert res.degree == mu[-1] and res.dimension == len(mu)  # the affine cone: one more than the projective
