"""The coordinates and quadratic forms of the ED problem, as msolve's slices take them: the coefficient span
in Macaulay2's basis (the standard form depends on it), and the data metric's evaluations with their Gram form.

Macaulay2 (m2/LightningCAS/Degrees.m2) takes as coordinates y the coefficients of the token monomials of the
output column, row by row, each row's monomials in descending graded reverse lexicographic order, a basis
chosen first come first kept: :func:`coefficient_polynomials` keeps that order, so the standard form
(the identity on y) is the same form in both routes. The data metric sum_n |f(X_n)|^2 is intrinsic: the
entries E of f(X_1), ..., f(X_N) as polynomials in the weights, a basis B of their span (the coordinates,
a projection of the neurovariety when the evaluation map has a kernel) and E = C^T B; the residuals of
|E - C^T u|^2 are A (B - u) with A = D C^T, D a common denominator (a scalar leaves the critical points).
"""

from __future__ import annotations

from fractions import Fraction
from math import lcm

from lightning_cas.core.network import Network


def output_columns(net: Network) -> list[int]:
    """The output tokens whose coefficients are the coordinates (as Macaulay2's lcasOutputColumns with one
    column): the first; in a causal network the last; causal with biases all of them."""
    causal = any(getattr(b, "causal", False) for b in net.blocks)
    if causal and net.biased:
        return list(range(net.tokens))
    return [net.tokens - 1] if causal else [0]


def _m2_key(item):
    """Macaulay2's order of the coefficients: by output row, then token, then monomial in the tokens in
    descending GRevLex (higher degree first; among equals, the smaller power of the last variable first)."""
    (row, token, exps), _ = item
    return row, token, -sum(exps), tuple(reversed(exps))


def coefficient_polynomials(net: Network) -> list[tuple[tuple, dict]]:
    """Every coefficient of the network's output in the tokens, ((row, token, exponents), {weight exponents:
    integer}), in Macaulay2's order."""
    import sympy

    from lightning_cas.core.model import coefficient_map, flat_weight_symbols

    symbols = flat_weight_symbols(net)
    out = []
    for key, expr in sorted(coefficient_map(net).items(), key=_m2_key):
        terms = sympy.Poly(expr, *symbols).as_dict()
        out.append((key, {tuple(int(e) for e in k): int(c) for k, c in terms.items() if c}))
    return out


def pivots(rows: list[dict]) -> list[int]:
    """The indices of the first linearly independent polynomials (dicts monomial -> rational), exactly."""
    import flint

    monomials = sorted({k for r in rows for k in r})
    if not rows or not monomials:
        return []
    q = lambda v: flint.fmpq(Fraction(v).numerator, Fraction(v).denominator)
    # the transposed coefficient matrix: its reduced echelon form's pivots are the first independent rows
    matrix = flint.fmpq_mat(len(monomials), len(rows), [q(r.get(k, 0)) for k in monomials for r in rows])
    reduced, rank = matrix.rref()
    return [next(j for j in range(len(rows)) if reduced[i, j] != 0) for i in range(rank)]


def _integral(poly: dict) -> dict:
    """The polynomial times the least common multiple of its denominators: integer coefficients."""
    d = lcm(*(Fraction(v).denominator for v in poly.values())) if poly else 1
    return {k: int(Fraction(v) * d) for k, v in poly.items()}


def evaluations(net: Network, inputs) -> list[dict]:
    """The entries of f(X_n) for every input (N, d_0, t) of exact rationals, as polynomials in the weights
    (dicts exponents -> Fraction), in Macaulay2's order (input, output row, token); zero ones dropped."""
    coefficients = coefficient_polynomials(net)
    t = net.tokens
    out = []
    for X in inputs:
        flat = [Fraction(X[r][j]) for r in range(net.input) for j in range(t)]
        entries: dict[tuple[int, int], dict] = {}
        for (row, token, exps), poly in coefficients:
            value = Fraction(1)
            for x, e in zip(flat, exps):
                value *= x**e
            if value:
                acc = entries.setdefault((row, token), {})
                for k, c in poly.items():
                    acc[k] = acc.get(k, 0) + value * c
        for row in range(net.output):
            for token in range(t):
                poly = {k: v for k, v in entries.get((row, token), {}).items() if v}
                if poly:
                    out.append(poly)
    return out


def data_form(net: Network, inputs) -> tuple[list[dict], list[list[int]]]:
    """The data metric's coordinates B (integer dicts, a basis of the evaluations' span) and the integer
    matrix A (evaluations x coordinates) with sum_n |f(X_n) - targets|^2 = |A (B - u)|^2 up to a scalar."""
    import flint

    evals = evaluations(net, inputs)
    chosen = pivots(evals)
    basis = [_integral(evals[i]) for i in chosen]
    # E_k = sum_i C_ik B_i, solved on monomials where the basis is independent
    monomials = sorted({k for b in basis for k in b})
    cols = pivots([{i: b.get(m, 0) for i, b in enumerate(basis)} for m in monomials])
    n, q = len(basis), lambda v: flint.fmpq(Fraction(v).numerator, Fraction(v).denominator)
    square = flint.fmpq_mat(n, n, [q(basis[i].get(monomials[c], 0)) for c in cols for i in range(n)])
    right = flint.fmpq_mat(n, len(evals), [q(e.get(monomials[c], 0)) for c in cols for e in evals])
    C = square.solve(right)  # n x K: column k holds E_k's coordinates
    entries = [[Fraction(int(C[i, k].p), int(C[i, k].q)) for i in range(n)] for k in range(len(evals))]
    d = lcm(*(v.denominator for row in entries for v in row)) if entries else 1
    return basis, [[int(v * d) for v in row] for row in entries]
