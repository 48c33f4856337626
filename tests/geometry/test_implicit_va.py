"""Implicit ideal for 1 < a < d: elimination from (V, A) modulo minors(a+1, A), and from
(V, Z = sym A) at one token, checked against routes that do not use that shortcut.

Independent checks: the dimension from the modp backend and the theory formula; the degree from
NumericalImplicitization, which samples the (Q, K, V) parametrization itself (not the rank minors);
membership of φ_W for random rational weights W = (Q, K, V); and a point (V, A) with rank A = 3 > a,
whose image must fail the equations (it would pass if the rank condition were dropped).
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
import sympy

from lightning_cas import api
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.model import rank_over_qq
from lightning_cas.core.names import parse_polynomial
from lightning_cas.core.theory import predict_dimension
from lightning_cas.core.weights import random_point
from lightning_cas.geometry.one_layer.implicit import implicit
from lightning_cas.geometry.one_layer.pointwise import is_singular, phi_coordinates, vanishes

pytestmark = pytest.mark.slow

A312_T1 = Architecture((3, 1), (2,), 1)
A312_T2 = Architecture((3, 1), (2,), 2)


@pytest.fixture(scope="module")
def ideal_t1(m2):
    return implicit(A312_T1, numerical_degree_runs=3, m2=m2, timeout=600)


@pytest.fixture(scope="module")
def ideal_t2(m2):
    return implicit(A312_T2, numerical_degree_runs=1, m2=m2, timeout=600)  # one run: 20 s of monodromy


def va_coordinates(res, V, A):
    """The coordinates y_i of φ at (V, A), A any d x d matrix (not necessarily of rank <= a)."""
    values = {
        sympy.Symbol(f"v_({r + 1},{c + 1})"): sympy.Rational(x) for r, row in enumerate(V) for c, x in enumerate(row)
    }
    values |= {
        sympy.Symbol(f"a_({r + 1},{c + 1})"): sympy.Rational(x) for r, row in enumerate(A) for c, x in enumerate(row)
    }
    return [parse_polynomial(c).xreplace(values) for c in res.coordinates]


@pytest.mark.parametrize(
    "which,arch,route,dim,degree",
    [
        ("ideal_t1", A312_T1, "V,Z with Z = sym(A), rank Z <= 2a", 8, 21),
        ("ideal_t2", A312_T2, "V,A with rank A <= a", 10, 108),
    ],
)
def test_dimension_and_degree_against_independent_routes(request, which, arch, route, dim, degree):
    res = request.getfixturevalue(which)
    assert res.parametrization == route and res.certainty == "exact"
    assert (res.dimension, res.degree) == (dim, degree)
    assert res.dimension == api.dimension(arch, method="modp").dimension  # Jacobian rank of (Q, K, V) mod p
    pred = predict_dimension(arch).value
    # t = 1 has no formula in theory.py; there phi = (v.x)(x^T Z x): d + d(d+1)/2 - 1 = 8 (scaling v, Z)
    assert res.dimension == (pred if arch.tokens > 1 else 3 + 6 - 1)
    nd = res.numerical_degree  # monodromy on the (Q, K, V) parametrization
    assert nd.certainty == "numeric" and nd.value == res.degree, nd
    assert res.codimension == res.ambient - res.dimension


@pytest.mark.parametrize("which,arch", [("ideal_t1", A312_T1), ("ideal_t2", A312_T2)])
def test_random_weight_images_satisfy_the_equations(request, which, arch):
    res = request.getfixturevalue(which)
    assert res.generators
    for seed in range(4):
        assert vanishes(res.generators, phi_coordinates(res, random_point(arch, seed)))
    assert not vanishes(res.generators, [sympy.Integer(i * i + 1) for i in range(res.ambient)])


def test_the_rank_condition_is_imposed(ideal_t2):
    rng = random.Random(7)
    V = [[rng.randint(-5, 5) for _ in range(3)]]
    A = [[rng.randint(-5, 5) for _ in range(3)] for _ in range(3)]
    while sympy.Matrix(A).det() == 0:
        A = [[rng.randint(-5, 5) for _ in range(3)] for _ in range(3)]
    # rank A = 3 > a: phi(V, A) lies in the a = 3 variety (dimension 11), generically not in this one
    assert not vanishes(ideal_t2.generators, va_coordinates(ideal_t2, V, A))
    # the same V with a rank-2 A (third row = first + second) is an image point
    A2 = [A[0], A[1], [A[0][j] + A[1][j] for j in range(3)]]
    assert vanishes(ideal_t2.generators, va_coordinates(ideal_t2, V, A2))


def test_the_script_parametrizes_its_ideal_modulo_the_rank_minors(m2, tmp_path, ideal_t2):
    """`--format m2` of the route "V,A with rank": in Macaulay2, phi sends every generator of I to zero on
    P = QQ[V, A] / minors(a + 1, A), and phi composed with A = B C (B 3 x a, C a x 3: every A of rank <= a)
    has Jacobian rank dim I at a random point. So the image lies in V(I) with I's dimension; its degree is
    the numerical degree of the (Q, K, V) parametrization (the test above): the script's phi is I's own.
    (`ker phi == I` over QQ took 47 s on one coordinate; this takes seconds on the whole ideal.)"""
    from lightning_cas.geometry.formats import m2_script
    from tests.results.test_formats import m2_values

    script = m2_script(ideal_t2)
    assert "P = P / minors(3, matrix {{a_(1,1), a_(1,2), a_(1,3)}" in script
    tail = (
        "nV = numgens ambient P - 9;\n"
        "S = QQ[u_1..u_nV, b_1..b_6, c_1..c_6];\n"
        "BC = flatten entries (genericMatrix(S, b_1, 3, 2) * genericMatrix(S, c_1, 2, 3));\n"
        "psi = map(S, P, toList(u_1..u_nV) | BC);\n"
        "J = jacobian matrix {apply(gens Rphi, y -> psi phi y)};\n"
        "pt = map(QQ, S, apply(numgens S, i -> (random 199) - 99));\n"
        "print toString {dim I, degree I, if phi sub(gens I, Rphi) == 0 then 1 else 0, rank pt J};\n"
    )
    assert m2_values(m2, tmp_path, script, tail) == [ideal_t2.dimension, ideal_t2.degree, 1, ideal_t2.dimension]


def test_coordinates_are_in_the_chosen_parameters(ideal_t1, ideal_t2):
    names = lambda res: {s.name[0] for c in res.coordinates for s in parse_polynomial(c).free_symbols}  # noqa: E731
    assert names(ideal_t2) == {"v", "a"} and ideal_t2.parameter_variables == 3 + 9
    assert names(ideal_t1) == {"v", "z"} and ideal_t1.parameter_variables == 3 + 6
    assert any("minors" in n for n in ideal_t2.notes) and any("symmetric" in n for n in ideal_t1.notes)


def test_singularity_test_reuses_the_ideal(ideal_t2):
    generic = random_point(A312_T2, 3)
    res = is_singular(A312_T2, generic, implicit_result=ideal_t2)
    assert res.singular is False and res.critical is False and res.certainty == "exact"
    # rank A = 1 < a: the claimed singular stratum {rank A < a}; W = (Q, K, V) with K's second row zero
    F = lambda rows: tuple(tuple(Fraction(x) for x in r) for r in rows)  # noqa: E731
    low = ((F([[1, 2, -1], [3, 0, 1]]), F([[2, -1, 1], [0, 0, 0]]), F([[1, -2, 3]])),)
    res = is_singular(A312_T2, low, implicit_result=ideal_t2)
    assert res.phi_is_zero is False and res.tangent_rank < res.codimension and res.singular is True


def degree_part(generators, n, k):
    """Rows spanning the degree-k part of the ideal: every monomial multiple of a generator of degree <= k."""
    ys = sympy.symbols(f"y_1:{n + 1}")
    rows = []
    for g in generators:
        p = sympy.Poly(parse_polynomial(g), *ys)
        if p.total_degree() > k:
            continue
        for m in sympy.itermonomials(ys, k - p.total_degree(), k - p.total_degree()):
            rows.append((p * sympy.Poly(m, *ys)).as_dict())
    return rows


def same_ideal(gens1, degs1, gens2, degs2, n) -> bool:
    """Equal homogeneous ideals: equal degree-k parts for every degree k of a generator of either."""
    for k in sorted(set(degs1) | set(degs2)):
        a, b = degree_part(gens1, n, k), degree_part(gens2, n, k)
        monos = sorted({m for r in a + b for m in r})
        mat = lambda rows: [[r.get(m, 0) for m in monos] for r in rows]  # noqa: E731
        if not rank_over_qq(mat(a)) == rank_over_qq(mat(b)) == rank_over_qq(mat(a + b)):
            return False
    return True


@pytest.mark.parametrize("arch", [Architecture((3, 1), (1,), 1), Architecture((2, 2), (1,), 1)])
def test_one_token_route_equals_the_weights_route(m2, arch):
    """(V, Z = sym A), with the minors of Z ((3,1,1): rank Z <= 2) or generic ((2,2,1)), against (Q, K, V)."""
    fast = implicit(arch, m2=m2, timeout=300)
    slow = implicit(arch, m2=m2, timeout=300, reparametrize=False)
    assert fast.parametrization.startswith("V,Z") and slow.parametrization == "Q,K,V"
    assert fast.coordinate_labels == slow.coordinate_labels
    assert (fast.dimension, fast.degree) == (slow.dimension, slow.degree)
    assert same_ideal(fast.generators, fast.generator_degrees, slow.generators, slow.generator_degrees, fast.ambient)
