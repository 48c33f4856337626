"""The rank of the differential at given weights, cross-checked against an independent computation: the rank
of the symbolic coefficient Jacobian at the point (sympy differentiation of the expanded network, exact, no
random inputs), at critical points, dead layers, rational and float points; and Konda's softmax point."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy

from lightning_cas import api
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.model import coefficient_map, flat_weight_symbols, rank_over_qq
from lightning_cas.core.network import MLP, Activation, Attention, Linear, Network, Power
from lightning_cas.core.softmax import jacobian as float_jacobian
from lightning_cas.errors import InputError, UnsupportedError
from lightning_cas.system.examples import konda_point
from lightning_cas.system.points import WeightPoint, as_point

ONE = Architecture((2, 1), (1,), 2)


def coefficient_rank(net, values) -> int:
    """The oracle: rank of d(coefficients)/d(weights) at the point, over QQ, from the symbolic expansion."""
    ws = flat_weight_symbols(net)
    at = [sympy.Rational(v.numerator, v.denominator) for v in values]
    rows = []
    for c in coefficient_map(net).values():
        poly = sympy.Poly(c, *ws)
        rows.append([poly.diff(w).eval(dict(zip(ws, at))) if poly.degree(w) > 0 else 0 for w in ws])
    return rank_over_qq(rows)


def _point(net, values):
    return WeightPoint(getattr(net, "network", net), tuple(Fraction(v) for v in values))


def test_a_known_critical_point_and_floats_near_it():
    """One layer, d' = a = 1, d = 2, V a multiple of K's row: rank 3 < 4; floats a step away: 4."""
    crit = [1, 2, 3, 1, 6, 2]  # Q, K, V = 2 K
    r = api.dimension(ONE, at=_point(ONE, crit))
    assert (r.dimension, r.generic_dimension, r.drop) == (3, 4, 1)
    assert coefficient_rank(ONE, _point(ONE, crit).values) == 3
    assert api.dimension(ONE, at=_point(ONE, crit), exact=True).dimension == 3
    near = [1.0, 2.0, 3.0, 1.0, 6.0, 2.0000001]
    assert api.dimension(ONE, at=as_point(ONE, near)).dimension == 4


@pytest.mark.parametrize(
    "net",
    [
        Architecture((2, 2), (1,), 2),
        Network(2, 2, (Attention(1, causal=True, residual=True), Linear(1))),
        Network(2, 1, (Linear(2), Power(2), Linear(1))),
    ],
    ids=lambda n: n.label(),
)
def test_a_dead_layer_and_random_points_against_the_symbolic_rank(net):
    rng = np.random.default_rng(4)
    values = [Fraction(int(v)) for v in rng.integers(-5, 6, net.parameters)]
    dead = list(values)
    m = next(m for m in net.weight_matrices if m.letter in ("q", "p"))
    dead[m.offset : m.stop] = [Fraction(0)] * m.size  # Q = 0 (or the first linear map = 0)
    for vals in (values, dead):
        expected = coefficient_rank(net, vals)
        assert api.dimension(net, at=_point(net, vals)).dimension == expected
        assert api.dimension(net, at=_point(net, vals), exact=True).dimension == expected
    assert api.dimension(net, at=_point(net, dead)).dimension < api.dimension(net).dimension


def test_on_given_inputs_the_rank_is_that_of_those_inputs():
    net = Network(2, 2, (MLP(3), Linear(1)))
    one_input = np.ones((1, 2, 2))
    r = api.dimension(net, inputs=one_input, exact=True, layout="features-tokens")  # t = d_0: say which
    assert r.certainty == "exact" and r.inputs.count == 1 and r.dimension <= net.output * net.tokens
    many = np.random.default_rng(0).standard_normal((40, 2, 2))
    assert api.dimension(net, inputs=many, layout="features-tokens").dimension == api.dimension(net).dimension


def test_a_prime_that_changes_the_point_is_refused():
    with pytest.raises(InputError, match="divides an entry"):
        api.dimension(ONE, at=_point(ONE, [1, 2, 3, 1, 6, 2 * 16_777_199]), prime=16_777_199)
    # the default primes are searched: a point with an entry divisible by the first one still works
    r = api.dimension(ONE, at=_point(ONE, [16_777_213, 2, 3, 1, 6, 5]))
    assert 16_777_213 not in r.primes and r.dimension == 4


def test_konda_point_float64_forty_certified_fifty_two():
    point, inputs = konda_point()
    X = np.vectorize(float, otypes=[float])(inputs.values)
    assert np.linalg.matrix_rank(float_jacobian(point.network, point.floats(), X)) == 40
    r = api.dimension(point.network, at=point, inputs=inputs)
    assert r.certificate.certified and r.dimension == r.certificate.lower == 52 and r.certainty == "exact"
    assert "44 independent exact kernel vectors" in r.certificate.upper_by


def test_softmax_has_no_exact_path():
    with pytest.raises(UnsupportedError, match="certified"):
        api.dimension(Architecture((2, 2), (1,), 2, "softmax"), at=[0.5] * 8, exact=True)


@pytest.mark.parametrize(
    "net",
    [
        Network(2, 1, (Linear(2, bias=True), Activation("relu"), Linear(1))),
        Network(2, 2, (Attention(1, bias=True), Linear(1))),
    ],
    ids=["relu", "polynomial"],
)
def test_inputs_whose_denominators_the_default_primes_divide_choose_other_primes(net):
    """The primes are chosen after the data: an input with 16777213 (the default prime) or 16777199 (the next
    one) in a denominator has no residue mod them (an internal ZeroDivisionError before); the rank is the one
    over QQ, from other primes."""
    from fractions import Fraction as F

    from lightning_cas.core.primes import DEFAULT_PRIME

    rng = np.random.default_rng(0)
    X = np.array([F(int(v), 7) for v in rng.integers(-20, 21, 6 * net.input * net.tokens)], dtype=object).reshape(
        6, net.input, net.tokens
    )
    X[0, 0, 0] = F(1, DEFAULT_PRIME)
    X[1, -1, -1] = F(5, 16777199)
    w = [F(int(v), 4) for v in rng.integers(-6, 7, net.parameters)]
    from lightning_cas.system.points import InputData

    data = InputData(X)  # exact rationals, as an inputs file gives them
    r = api.dimension(net, at=WeightPoint(net, tuple(w)), inputs=data)
    assert DEFAULT_PRIME not in r.primes and 16777199 not in r.primes and len(r.primes) == 2
    exact = api.dimension(net, at=WeightPoint(net, tuple(w)), inputs=data, exact=True) if net.polynomial else None
    assert exact is None or exact.dimension == r.dimension
    assert r.certificate is None or r.certificate.certified
