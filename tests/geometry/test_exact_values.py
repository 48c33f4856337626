"""The exact evaluation of an ideal at a rational point (geometry/one_layer/exact_values.py): the values and the tangent
rank read from the polynomial texts (or sympy's sparse ring) equal sympy's own substitution and
differentiation, which they replace because it took a minute on an ideal of 120 generators."""

from __future__ import annotations

from fractions import Fraction

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from lightning_cas.core.model import rank_over_qq
from lightning_cas.core.names import polynomial_text
from lightning_cas.geometry.one_layer.exact_values import tangent_rank, vanishes

Y = sympy.symbols("y_1:5")
monomials = st.lists(st.integers(0, 3), min_size=4, max_size=4)
polynomials = st.builds(
    lambda terms: sympy.Add(*[sympy.Rational(c, d) * sympy.Mul(*[y**e for y, e in zip(Y, m)]) for c, d, m in terms]),
    st.lists(st.tuples(st.integers(-6, 6), st.integers(1, 4), monomials), max_size=6),
)
points = st.lists(st.fractions(min_value=-9, max_value=9, max_denominator=5), min_size=4, max_size=4)


def sympy_rank(polys, point) -> int:
    subs = dict(zip(Y, map(sympy.Rational, point)))
    return rank_over_qq([[sympy.diff(g, y).xreplace(subs) for y in Y] for g in polys])


@settings(max_examples=40)  # sympy's diff in the reference is the slow half
@given(st.lists(polynomials, min_size=1, max_size=5), points)
def test_exact_evaluation_equals_sympy(polys, point):
    texts = [polynomial_text(g) for g in polys]
    coords = [sympy.Rational(q) for q in point]
    subs = dict(zip(Y, coords))
    zero = all(g.xreplace(subs) == 0 for g in polys)
    assert vanishes(texts, coords) is zero and vanishes(polys, coords) is zero
    assert vanishes(texts, [Fraction(q) for q in point]) is zero
    expected = sympy_rank(polys, point)
    assert tangent_rank(texts, coords) == tangent_rank(polys, coords) == expected


def test_a_point_on_the_ideal_and_a_singular_point():
    y1, y2, y3, y4 = Y
    cone = [polynomial_text(y1 * y4 - y2 * y3)]  # the 2 x 2 determinant: singular only at 0
    assert vanishes(cone, [2, 3, 4, 6]) and not vanishes(cone, [1, 0, 0, 2])
    assert tangent_rank(cone, [2, 3, 4, 6]) == 1 and tangent_rank(cone, [0, 0, 0, 0]) == 0
    # a symbolic coordinate goes to sympy's substitution, with the same answer on a number
    assert vanishes(cone, [y1, 0, 0, 0]) and not vanishes(cone, [y1, 0, 0, 1])
