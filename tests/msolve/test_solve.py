"""msolve itself, through the writer and the parser: parametrizations mod p, real roots over QQ, the
empty and the positive-dimensional answers, leading ideals with their dimension and degree."""

from __future__ import annotations

from fractions import Fraction

import pytest

from lightning_cas.errors import InputError, MsolveParseError, TooLargeError
from lightning_cas.msolve import solve as solve_module
from lightning_cas.msolve.parse import read_list, read_polynomials, read_solution
from lightning_cas.msolve.solve import leading_ideal, monomial_dimension, solve, staircase_size
from lightning_cas.msolve.writer import polynomial_text, system_text

XY = ["x", "y"]
# x^2 + y^2 - 5, x y - 2: four real points (+-1, +-2), (+-2, +-1)
CIRCLE = [{(2, 0): 1, (0, 2): 1, (0, 0): -5}, {(1, 1): 1, (0, 0): -2}]
P = 1_073_741_789


def test_real_roots_over_qq_isolate_the_four_points(msolve_binary):
    sol, _, _ = solve(XY, CIRCLE, 0)
    assert sol.status == "finite" and sol.degree == 4 and sol.solutions == 4 and sol.radical
    points = sorted((lo, hi) for box in sol.real_roots for (lo, hi) in [(box[0][0], box[1][0])])
    assert points == [(-2, -1), (-1, -2), (1, 2), (2, 1)]
    for box in sol.real_roots:
        assert all(isinstance(a, Fraction) and a <= b for a, b in box)


def test_irrational_roots_come_as_dyadic_intervals_that_contain_them(msolve_binary):
    sol, _, _ = solve(["x"], [{(2,): 1, (0,): -2}], 0)  # x^2 = 2
    (neg,), (pos,) = sorted(sol.real_roots)
    assert neg[0] < 0 and pos[0] ** 2 <= 2 <= pos[1] ** 2 and pos[1] - pos[0] < Fraction(1, 2**100)
    assert sol.parametrization.eliminating in ((-2, 0, 1), (2, 0, -1))


def test_no_real_root_is_an_empty_list_of_boxes_not_an_empty_system(msolve_binary):
    sol, _, _ = solve(XY, [{(2, 0): 1, (0, 0): 1}, {(0, 1): 1}], 0)  # x^2 + 1 = 0, y = 0
    assert (sol.status, sol.real_roots, sol.solutions) == ("finite", (), 2)


def test_the_parametrization_mod_p_evaluates_to_solutions(msolve_binary):
    sol, _, _ = solve(XY, CIRCLE, 65521)
    par = sol.parametrization
    assert (par.degree, par.solutions, par.characteristic) == (4, 4, 65521)
    p = 65521
    value = lambda coeffs, t: sum(c * pow(t, k, p) for k, c in enumerate(coeffs)) % p
    roots = [t for t in range(p) if value(par.eliminating, t) == 0]
    assert len(roots) == 4
    last = par.variables[-1]
    for t in roots:  # x_i = -v_i(t) / (c_i den(t)); the linear form is the last variable
        other = -value(par.numerators[0], t) * pow(par.divisors[0] * value(par.denominator, t), -1, p) % p
        point = {par.variables[0]: other, last: t}
        assert (point["x"] * point["y"] - 2) % p == 0 and (point["x"] ** 2 + point["y"] ** 2 - 5) % p == 0


def test_a_multiple_root_counts_in_the_degree_not_in_the_solutions(msolve_binary):
    sol, _, _ = solve(XY, [{(2, 0): 1}, {(0, 1): 1, (0, 0): -1}], 65521)
    assert (sol.degree, sol.solutions, sol.radical) == (2, 1, False)


def test_no_solution_and_infinitely_many(msolve_binary):
    assert solve(XY, [{(1, 0): 1}, {(1, 0): 1, (0, 0): 1}], 65521)[0].status == "empty"
    positive = solve(XY, [{(1, 1): 1}], 65521)[0]
    assert positive.status == "positive" and positive.degree is None and not positive.zero_dimensional


def test_large_integer_coefficients_are_written_as_residues(msolve_binary):
    """msolve 0.10.1 misreads 12345678901 x - 1 in characteristic p; the writer hands it the residue."""
    sol, _, _ = solve(["x"], [{(1,): 12345678901, (0,): -1}], P)
    assert sol.parametrization.eliminating == ((-pow(12345678901, -1, P)) % P, 1)
    assert "12345678901" not in system_text(["x"], [{(1,): 12345678901, (0,): -1}], P)


def test_leading_ideal_dimension_and_degree(msolve_binary):
    ideal = leading_ideal(XY, CIRCLE, 65521)
    assert (ideal.dimension, ideal.degree) == (0, 4)
    assert leading_ideal(XY, [{(1, 1): 1}], 65521).dimension == 1
    assert leading_ideal(XY, [{(1, 0): 1}, {(1, 0): 1, (0, 0): 1}], 65521).dimension == -1


def test_saturation_removes_the_component_of_the_last_polynomial(msolve_binary):
    # x (x - 1) = 0, x y - x = 0: the line x = 0 and the point (1, 1); saturating by x leaves the point
    system = [{(2, 0): 1, (1, 0): -1}, {(1, 1): 1, (1, 0): -1}]
    assert leading_ideal(XY, system, 65521).dimension == 1
    saturated = leading_ideal(XY, system + [{(1, 0): 1}], P, saturate=True)
    assert (saturated.dimension, saturated.degree) == (0, 1)
    with pytest.raises(InputError, match="above 2\\^16"):
        leading_ideal(XY, system + [{(1, 0): 1}], 65521, saturate=True)


def test_monomial_ideals_by_hand():
    assert staircase_size([(1, 1), (2, 0), (0, 3)], 2) == 4
    assert staircase_size([(3, 0, 0), (0, 2, 0), (0, 0, 2)], 3) == 12
    assert staircase_size([(1, 0, 0), (0, 1, 0), (0, 0, 1)], 3) == 1
    assert monomial_dimension([(1, 1, 0)], 3) == 2 and monomial_dimension([], 2) == 2
    assert monomial_dimension([(1, 0, 0), (0, 1, 1)], 3) == 1 and monomial_dimension([(0, 0)], 2) == -1
    with pytest.raises(ValueError):
        staircase_size([(1, 1)], 2)


def test_a_large_staircase_is_counted_by_its_slices_and_a_huge_one_refused(monkeypatch):
    """x_i^10 in 8 variables: 10^8 standard monomials, counted without visiting them (before, any ideal whose
    pure powers multiplied past 10^7 was refused, with a bare ValueError)."""
    assert staircase_size([tuple(10 if j == i else 0 for j in range(8)) for i in range(8)], 8) == 10**8
    mixed = [(2, 0, 0), (0, 3, 0), (0, 0, 4), (1, 1, 1)]
    brute = sum(1 for a in range(2) for b in range(3) for c in range(4) if not (a and b and c))
    assert staircase_size(mixed, 3) == brute == 18
    monkeypatch.setattr(solve_module, "MAX_STAIRCASE_STEPS", 3)
    with pytest.raises(TooLargeError, match="standard monomials"):
        staircase_size(mixed, 3)


def test_the_writer_refuses_bad_input_in_one_line():
    with pytest.raises(InputError, match="characteristic"):
        system_text(XY, CIRCLE, 4)
    with pytest.raises(InputError, match="variable"):
        system_text(["x", "y z"], CIRCLE, 0)
    with pytest.raises(InputError, match="repeat"):
        system_text(["x", "x"], CIRCLE, 0)
    with pytest.raises(InputError, match="no residue"):
        polynomial_text({(1,): Fraction(1, 7)}, ["x"], 7)
    with pytest.raises(InputError, match="exponent"):
        polynomial_text({(1, 2): 1}, ["x"], 0)
    with pytest.raises(InputError, match="nonzero"):
        system_text(XY, [{(1, 0): 7}], 7)
    assert polynomial_text({(1, 0): Fraction(1, 3), (0, 0): -1}, XY, 0) == "1/3*x-1"
    assert polynomial_text({(1, 0): Fraction(1, 3), (0, 0): -1}, XY, 7) == "5*x+6"


@pytest.mark.parametrize("text", ["[0, [1, [", "[0, 1]", "[0, [1, [[[1, 2]]]]]", "hello:", "[1, 2]] :", "[0, [7,"])
def test_malformed_output_is_a_parse_error(text):
    with pytest.raises(MsolveParseError):
        read_solution(text if text.endswith(":") else text + ":", XY, 0)


def test_the_lists_read_rationals_strings_and_comments():
    assert read_list("#c\n[0, ['x', -3 / 2^4, 5 / 3], []]:") == [0, ["x", Fraction(-3, 16), Fraction(5, 3)], []]
    assert read_polynomials("#x\n[1*x^1*y^1+65519,\nx^2,\ny^3]:", XY) == [
        {(1, 1): 1, (0, 0): 65519},
        {(2, 0): 1},
        {(0, 3): 1},
    ]
    with pytest.raises(MsolveParseError, match="unknown variable"):
        read_polynomials("[z^2]:", XY)
