"""The one naming scheme and the one text form of polynomials (core/names.py): the names Python gives
its symbols are the names the Macaulay2 package prints, and polynomial text is Macaulay2 syntax that
the strict parser reads back and nothing else."""

from __future__ import annotations

import time

import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from lightning_cas.core.architecture import Architecture
from lightning_cas.core.model import flat_weight_symbols, token_symbols
from lightning_cas.core.names import (
    coordinate_name,
    indexed_name,
    latex_name,
    legacy_polynomial_text,
    parse_polynomial,
    polynomial_latex,
    polynomial_text,
    token_name,
    weight_name,
)


def test_names_are_macaulay2_indexed_variables():
    assert weight_name("q", 1, 2, 3) == "q_(1,2,3)" and weight_name("v", 2, 1, 1, head=3) == "v_(2,3,1,1)"
    assert token_name(2, 1) == "x_(2,1)" and coordinate_name(4) == "y_4" and indexed_name("b", 1, 2) == "b_(1,2)"
    assert latex_name("q_(1,2,3)") == "q_{1,2,3}" and latex_name("y_12") == "y_{12}" and latex_name("s") == "s"
    for bad in (("Q", 1), ("q",), ("q", -1), ("q", True), ("q", 1.0), ("q_", 1), ("1", 2)):
        with pytest.raises(ValueError):
            indexed_name(*bad)


def test_the_model_symbols_carry_the_package_names():
    """One head: q_(i,r,c); several heads: q_(i,h,r,c); tokens x_(r,j) (the order of lightningWeights)."""
    names = [str(s) for s in flat_weight_symbols(Architecture((2, 1), (1,), 2))]
    assert names == ["q_(1,1,1)", "q_(1,1,2)", "k_(1,1,1)", "k_(1,1,2)", "v_(1,1,1)", "v_(1,1,2)"]
    two = [str(s) for s in flat_weight_symbols(Architecture((1, 1), (1,), 1, heads=(2,)))]
    assert two == ["q_(1,1,1,1)", "k_(1,1,1,1)", "v_(1,1,1,1)", "q_(1,2,1,1)", "k_(1,2,1,1)", "v_(1,2,1,1)"]
    assert [str(s) for s in token_symbols(Architecture((2, 1), (1,), 2))] == [
        "x_(1,1)",
        "x_(1,2)",
        "x_(2,1)",
        "x_(2,2)",
    ]


def test_text_is_macaulay2_syntax_and_reads_back():
    q, y = sympy.Symbol("q_(1,2,3)"), sympy.Symbol("y_4")
    expr = q**2 * y - sympy.Rational(3, 4) * y + 7
    text = polynomial_text(expr)
    assert "**" not in text and "^" in text and "q_(1,2,3)" in text
    assert parse_polynomial(text) == expr
    assert parse_polynomial("q_(1, 2,3)^2*y_4 - (3/4)*y_4 + 7") == expr  # as Macaulay2 prints it
    assert polynomial_latex(expr) == sympy.latex(expr, symbol_names={q: "q_{1,2,3}", y: "y_{4}"})


def test_the_former_text_form_converts():
    """What results held before the scheme: sympy syntax and q_1_2_3 for q_(1,2,3)."""
    old = "-k_1_1_1*q_1_1_1*v_1_1_1 + y_5**2 - b_1_2*y_4 + 3*y_1/2"
    new = legacy_polynomial_text(old)
    assert new == "-k_(1,1,1)*q_(1,1,1)*v_(1,1,1) + y_5^2 - b_(1,2)*y_4 + 3*y_1/2"
    renamed = {
        sympy.Symbol(n): sympy.Symbol(m)
        for n, m in (("k_1_1_1", "k_(1,1,1)"), ("q_1_1_1", "q_(1,1,1)"), ("v_1_1_1", "v_(1,1,1)"), ("b_1_2", "b_(1,2)"))
    }
    assert parse_polynomial(new) == sympy.sympify(old).xreplace(renamed)


@pytest.mark.parametrize(
    "bad",
    [
        "__import__(os)",
        "exit()",
        "x(1)",
        "9^99999999",
        "2^(2^(2^99))",
        "((2^999)^999)^999",
        "1/0",
        "x**2",
        "x * *2",
        "x; y",
        "x = 1",
        "lambda x",
        "x^-1",
        "open(f)",
        "q_(1,2",
        "y_1+",
        "*y_1",
        "(y_1 + y_2)*(y_1 - y_2)",
        "2(3)",
        "y_1/y_2",
        "",
        "   ",
        "y_1.real",
        "y_1 ^ 2",
        "Y_1",
        12,
        None,
    ],
)
def test_anything_but_a_polynomial_is_refused_fast(bad):
    start = time.monotonic()
    with pytest.raises(ValueError):
        parse_polynomial(bad)
    assert time.monotonic() - start < 2


names = st.builds(
    lambda letter, idx: indexed_name(letter, *idx),
    st.sampled_from("qkvyxabz"),
    st.lists(st.integers(0, 12), min_size=1, max_size=4),
)
terms = st.builds(
    lambda c, ns, es: sympy.Rational(*c) * sympy.Mul(*[sympy.Symbol(n) ** e for n, e in zip(ns, es)]),
    st.tuples(st.integers(-50, 50), st.integers(1, 9)),
    st.lists(names, max_size=3),
    st.lists(st.integers(1, 5), min_size=3, max_size=3),
)


@given(st.lists(terms, max_size=6))
def test_every_polynomial_survives_its_text(parts):
    expr = sympy.Add(*parts)
    assert parse_polynomial(polynomial_text(expr)) == sympy.expand(expr)


# texts as a user or Macaulay2 may write them: signs in a row, rationals (-3/2), division by numbers,
# powers of names and of numbers, a name twice in one term
factors = st.one_of(
    st.sampled_from(["y_1", "y_2", "x", "b3"]),
    st.integers(0, 40).map(str),
    st.builds(lambda n, d: f"({n}/{d})", st.integers(-9, 9), st.integers(1, 9)),
)
powered = st.builds(
    lambda f, e: f if e is None or f.startswith("(") else f"{f}^{e}", factors, st.one_of(st.none(), st.integers(0, 4))
)
products = st.builds(
    lambda first, rest: first + "".join(f" {op} {f}" for op, f in rest),
    powered,
    st.lists(st.tuples(st.sampled_from("*/"), powered), max_size=3),
)
sums = st.builds(
    lambda signs, first, rest: signs + first + "".join(f" {op} {p}" for op, p in rest),
    st.sampled_from(["", "-", "- -", "+"]),
    products,
    st.lists(st.tuples(st.sampled_from(["+", "-", "- -", "+ -"]), products), max_size=5),
)


@given(sums)
def test_the_one_pass_sum_is_what_sympy_parses(text):
    """parse_polynomial collects terms itself (sympy's parser took 41 s for one implicit ideal); on any text
    it equals sympy's own reading of the same text, or both refuse it."""
    from sympy.parsing.sympy_parser import parse_expr

    local = {n: sympy.Symbol(n) for n in ("y_1", "y_2", "x", "b3")}
    try:
        expected = parse_expr(text.replace("^", "**"), local_dict=local)
        ok = not expected.has(sympy.zoo, sympy.nan) and expected.is_polynomial(*expected.free_symbols)
    except ZeroDivisionError:
        ok = False
    if ok:
        assert parse_polynomial(text) == expected
    else:
        with pytest.raises(ValueError):
            parse_polynomial(text)


def test_a_name_that_divides_goes_to_sympy_and_a_long_ideal_parses_at_once():
    assert parse_polynomial("y_1^2/y_1") == sympy.Symbol("y_1") and parse_polynomial("x/x + 1") == 2
    y = sympy.symbols("y_1:9")
    big = sympy.expand(sum(y) ** 6 - 3 * sympy.Rational(5, 7) * y[0] ** 6)  # 1716 terms, 40,000 characters
    assert parse_polynomial(polynomial_text(big)) == big  # 0.3 s; sympy's parser takes 22 s on this text
