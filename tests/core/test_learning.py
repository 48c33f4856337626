"""The closed forms of learning coefficients against independent ones (Aoyagi–Watanabe's four cases, the
regular model, monomials) and the bracket rules against their hypotheses."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lightning_cas.core import learning
from lightning_cas.errors import InputError


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12), st.integers(1, 12), st.data())
def test_the_deep_formula_on_three_widths_is_aoyagi_watanabe(M, H, N, data):
    r = data.draw(st.integers(0, min(M, H, N)))
    assert learning.deep_linear((M, H, N), r) == learning.reduced_rank_regression(M, H, N, r)


@pytest.mark.parametrize("widths", [(3, 2), (1, 1), (5, 7)])
def test_one_matrix_is_the_regular_model(widths):
    for r in range(min(widths) + 1):
        assert learning.deep_linear(widths, r) == (Fraction(widths[0] * widths[1], 2), 1)


@pytest.mark.parametrize("depth", range(1, 8))
def test_scalar_stacks_are_monomials(depth):
    """w_1 ... w_L at 0: K = (w_1 ... w_L)^2 has threshold 1/2 with a pole of order L."""
    assert learning.deep_linear((1,) * (depth + 1), 0) == (Fraction(1, 2), depth)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=2, max_size=7), st.data())
def test_the_deep_value_lies_in_the_sound_bracket(widths, data):
    """Aoyagi's value never leaves [0, dim/2] where dim = q(H_1 + H_L+1 - q), q the narrowest width, is the
    dimension of the function space (matrices of rank <= q): λ <= dim/2 holds at every point; and at the
    generic rank r = q it is exactly dim/2."""
    r = data.draw(st.integers(0, min(widths)))
    lam, m = learning.deep_linear(widths, r)
    q = min(widths)
    image = q * (widths[0] + widths[-1] - q)
    assert 0 <= lam <= Fraction(image, 2) and m >= 1
    if r == q:
        assert (lam, m) == (Fraction(image, 2), 1)


def test_the_generic_rank_decides_and_nothing_else_does():
    eq = learning.regular(5, 5, 9)
    assert eq is not None and eq.value == Fraction(5, 2) and eq.theorem == "constant rank"
    assert learning.regular(3, 5, 9) is None


@pytest.mark.parametrize("args", [(-1, 2, 2, 0), (2, 2, 2, 3), (2, "2", 2, 0), (True, 2, 2, 0)])
def test_bad_sizes_are_refused_in_one_line(args):
    with pytest.raises(InputError):
        learning.reduced_rank_regression(*args)
