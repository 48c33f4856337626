"""Polynomials in the coordinates y_1..y_n (texts or sympy) evaluated exactly at a point: do they vanish, and
the rank of their Jacobian there. Apart from geometry.one_layer.pointwise, which asks these questions of one network;
sympy's diff and xreplace are the fallback, the term lists the fast path.
"""

from __future__ import annotations

import functools
from fractions import Fraction

from lightning_cas.core.model import rank_over_qq
from lightning_cas.core.names import coordinate_names, parse_polynomial, parse_polynomials, polynomial_terms


def _y(n: int) -> list:
    import sympy

    return [sympy.Symbol(name) for name in coordinate_names(n)]


def _polys(generators):
    if all(isinstance(g, str) for g in generators):
        return parse_polynomials(tuple(generators))
    return [g if not isinstance(g, str) else parse_polynomial(g) for g in generators]


def vanishes(generators, coords) -> bool:
    """Do all the polynomials (texts or sympy, in y_i) vanish at the coordinate vector?"""
    exact = _exact_terms(generators, coords)
    if exact is not None:
        return all(value == 0 for value, _ in _values_and_gradients(*exact, gradients=False))
    subs = dict(zip(_y(len(coords)), coords))
    return all(g.xreplace(subs) == 0 for g in _polys(generators))


def tangent_rank(generators, coords) -> int:
    """Rank of the Jacobian matrix of the ideal's generators at a point, exactly over QQ."""
    import sympy

    exact = _exact_terms(generators, coords)
    if exact is not None:
        return rank_over_qq([gradient for _, gradient in _values_and_gradients(*exact)])
    ys = _y(len(coords))
    subs = dict(zip(ys, coords))
    rows = [[sympy.diff(g, y).xreplace(subs) for y in ys] for g in _polys(generators)]
    return rank_over_qq(rows)


def _exact_terms(generators, coords):
    """(terms of each polynomial in y_1..y_n, the point as Fractions) for exact evaluation, when the point is
    rational and every polynomial is in y_1..y_n; else None (then sympy substitutes). sympy's diff and
    xreplace of an ideal of 120 generators took 56 s at one point; this takes a second."""
    import sympy

    point = []
    for c in coords:
        if isinstance(c, (int, Fraction)) and not isinstance(c, bool):
            point.append(Fraction(c))
        elif isinstance(c, sympy.Rational):
            point.append(Fraction(int(c.p), int(c.q)))
        else:
            return None
    generators = tuple(generators)
    texts = all(isinstance(g, str) for g in generators)
    if not texts and not all(isinstance(g, sympy.Expr) for g in generators):
        return None
    terms = (_text_terms if texts else _expr_terms)(generators, len(point))
    return None if terms is None else (terms, tuple(point))


def _indexed(terms: dict, index: dict[str, int]):
    return [(c, tuple((index[n], e) for n, e in key)) for key, c in terms.items()]


@functools.lru_cache(maxsize=32)
def _text_terms(texts: tuple[str, ...], n: int):
    """Each text's terms, [(coefficient, ((index of y_i, exponent), ...))], read without sympy."""
    index = {name: i for i, name in enumerate(coordinate_names(n))}
    out = []
    for text in texts:
        terms = polynomial_terms(text)
        if terms is None or any(name not in index for key in terms for name, _ in key):
            return None
        out.append(_indexed(terms, index))
    return tuple(out)


@functools.lru_cache(maxsize=32)
def _expr_terms(polys: tuple, n: int):
    """The same for sympy polynomials, through sympy's sparse polynomial ring."""
    from sympy.polys.domains import QQ
    from sympy.polys.rings import ring

    ys = _y(n)
    if not ys or any(not g.free_symbols <= set(ys) for g in polys):
        return None
    R, *_ = ring(ys, QQ)
    return tuple(
        [
            (Fraction(int(c.numerator), int(c.denominator)), tuple((i, e) for i, e in enumerate(m) if e))
            for m, c in R.from_expr(g).terms()
        ]
        for g in polys
    )


def _values_and_gradients(terms, point, gradients: bool = True):
    """(value, gradient) of each polynomial at the point, exactly (the gradient [] unless asked)."""
    n = len(point)
    powers: dict[tuple[int, int], Fraction] = {}

    def power(i: int, e: int) -> Fraction:
        key = (i, e)
        if key not in powers:
            powers[key] = point[i] ** e
        return powers[key]

    for poly in terms:
        value, grad = Fraction(0), [Fraction(0)] * n if gradients else []
        for c, monomial in poly:
            factors = [power(i, e) for i, e in monomial]
            term = c
            for f in factors:
                term *= f
            value += term
            if gradients:
                for k, (i, e) in enumerate(monomial):
                    rest = c * e * power(i, e - 1)
                    for j, f in enumerate(factors):
                        if j != k:
                            rest *= f
                    grad[i] += rest
        yield value, grad
