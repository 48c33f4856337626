"""The symbolic parametrization and the numeric forward pass agree; the coefficient claim of docs/mathematics.md §2."""

from fractions import Fraction

import numpy as np
import pytest
import sympy

from lightning_cas import Architecture
from lightning_cas.core.model import coefficient_map, flat_weight_symbols, network_output, token_symbols, weight_symbols
from tests.support import Field, evaluate, jacobian

ARCHS = [Architecture((2, 2), (1,), 2), Architecture((2, 1, 2), (1, 1), 2), Architecture((1, 2, 2), (1, 2), 3)]


@pytest.mark.slow
@pytest.mark.parametrize("arch", ARCHS, ids=str)
def test_symbolic_equals_numeric(arch):
    rng = np.random.default_rng(3)
    w = rng.integers(-4, 5, arch.parameters)
    X = rng.integers(-4, 5, (1, arch.widths[0], arch.tokens))
    subs = dict(zip(flat_weight_symbols(arch), map(int, w)))
    subs.update(zip(list(token_symbols(arch)), map(int, X[0].reshape(-1))))
    symbolic = network_output(arch).subs(subs)
    numeric = evaluate(arch, w.astype(object), X.astype(object))[0]
    assert symbolic == sympy.Matrix(numeric.tolist())


def test_rational_weights_give_the_output_as_a_polynomial_in_the_tokens():
    """Trained weights are decimals: 351/500 has no place in a ring over ZZ (a traceback before)."""
    arch = Architecture((2, 1), (1,), 2)
    rng = np.random.default_rng(5)
    w = [Fraction(int(v), 500) for v in rng.integers(-500, 501, arch.parameters)]
    X = rng.integers(-3, 4, (arch.widths[0], arch.tokens))
    out = network_output(arch, weights=[sympy.Rational(v.numerator, v.denominator) for v in w])
    subs = dict(zip(list(token_symbols(arch)), map(int, X.reshape(-1))))
    numeric = evaluate(arch, np.array(w, dtype=object), X[None].astype(object))[0]
    assert out.subs(subs) == sympy.Matrix(numeric.tolist())
    assert any(not c.is_integer for c in sympy.Poly(out[0, 0], *token_symbols(arch)).coeffs())


def test_degrees_of_the_coefficient_map():
    arch = Architecture((1, 2, 2), (1, 2), 2)
    coeffs = coefficient_map(arch)
    assert all(sum(m) == 9 for (_, _, m) in coeffs)  # degree 3^L in the tokens
    weights = flat_weight_symbols(arch)
    degs = {sympy.Poly(c, *weights).total_degree() for c in coeffs.values()}
    assert degs == {12}  # D_2 = 3 * 3 + 3


def test_single_layer_coefficient_claim():
    """docs/mathematics.md §2: coefficient of x_qi x_ri x_sj (i != j, q != r) in row p is V_pq A_rs + V_pr A_qs."""
    arch = Architecture((3, 2), (2,), 2)
    ((Q, K, V),) = weight_symbols(arch)
    A = K.T * Q
    coeffs = coefficient_map(arch)
    d, t = 3, 2
    checked = 0
    for p in range(2):
        for q in range(d):
            for r in range(d):
                if q == r:
                    continue
                for s in range(d):
                    i, j = 0, 1
                    exps = [0] * (d * t)
                    exps[q * t + i] += 1
                    exps[r * t + i] += 1
                    exps[s * t + j] += 1
                    got = coeffs.get((p, j, tuple(exps)), 0)
                    assert sympy.expand(got - (V[p, q] * A[r, s] + V[p, r] * A[q, s])) == 0
                    checked += 1
    assert checked == 2 * 3 * 2 * 3


@pytest.mark.parametrize("arch", ARCHS, ids=str)
def test_forward_mode_matches_finite_differences(arch):
    rng = np.random.default_rng(0)
    w = rng.standard_normal(arch.parameters)
    X = rng.standard_normal((4, arch.widths[0], arch.tokens))
    J = jacobian(arch, w, X)
    h = 1e-6
    for k in range(arch.parameters):
        e = np.zeros_like(w)
        e[k] = h
        fd = (evaluate(arch, w + e, X) - evaluate(arch, w - e, X)).reshape(-1) / (2 * h)
        assert np.allclose(fd, J[:, k], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("arch", ARCHS, ids=str)
def test_mod_p_forward_mode_is_exact(arch):
    """The int64 GF(p) arithmetic equals exact integer arithmetic reduced mod p (no overflow)."""
    p = 2_147_483_647
    rng = np.random.default_rng(1)
    w = rng.integers(0, p, arch.parameters, dtype=np.int64)
    X = rng.integers(0, p, (3, arch.widths[0], arch.tokens), dtype=np.int64)
    field = Field(p)
    exact = jacobian(arch, w.astype(object), X.astype(object))
    fast = jacobian(arch, w, X, field)
    assert (np.vectorize(lambda v: v % p)(exact).astype(np.int64) == fast).all()
    exact_out = evaluate(arch, w.astype(object), X.astype(object))
    assert (np.vectorize(lambda v: v % p)(exact_out).astype(np.int64) == evaluate(arch, w, X, field)).all()


def test_fraction_arithmetic_supported():
    arch = Architecture((2, 2), (1,), 2)
    w = np.array([Fraction(1, k + 1) for k in range(arch.parameters)], dtype=object)
    X = np.array([[[Fraction(1), Fraction(2)], [Fraction(3), Fraction(-1, 2)]]], dtype=object)
    out = evaluate(arch, w, X)
    assert out.shape == (1, 2, 2) and all(isinstance(v, Fraction) for v in out.reshape(-1))


def test_single_layer_coefficient_on_the_diagonal():
    """For q = r the coefficient of x_qi^2 x_sj (i != j) is V_pq A_qs: docs/mathematics.md §2's formula read
    literally would double it; it holds for the symmetrized tensor, not for monomial coefficients."""
    arch = Architecture((2, 2), (2,), 2)
    ((Q, K, V),) = weight_symbols(arch)
    A = K.T * Q
    coeffs = coefficient_map(arch)
    for p in range(2):
        for q in range(2):
            for s in range(2):
                exps = [0] * 4
                exps[q * 2 + 0] += 2
                exps[s * 2 + 1] += 1
                assert sympy.expand(coeffs[(p, 1, tuple(exps))] - V[p, q] * A[q, s]) == 0
