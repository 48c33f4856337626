"""The symbolic parametrization: phi_W(X) with weights and tokens as symbols, on the one forward definition.

``core.forward`` runs here over a sympy polynomial ring (``core.arithmetic.Polynomials``), so the
symbolic network is the very code the numeric backends run, on another arithmetic. Weights are
named by ``Network.weight_names`` (q_(i,r,c), ... in the canonical order: core.names, the names the
Macaulay2 package gives them). Tokens are x_(r,j) (row r, token j; tokens are columns).

sympy is imported inside the functions: it takes longer to import (0.6 s) than the numeric half of
the project takes to compute a dimension, and ``dim`` never needs it.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from lightning_cas.core.forward import evaluate
from lightning_cas.core.names import token_name
from lightning_cas.core.network import Network

if TYPE_CHECKING:
    import sympy


def flat_weight_symbols(arch: Network) -> list[sympy.Symbol]:
    """All weight symbols in the canonical order (the order of every Jacobian column)."""
    import sympy

    return [sympy.Symbol(name) for name in arch.weight_names()]


def head_symbols(arch: Network) -> list[list[dict[str, sympy.Matrix]]]:
    """Per block, per head, {letter: sympy Matrix of weight symbols} (q, k, v | w, o; u, d; p)."""
    import sympy

    net = arch
    symbols = flat_weight_symbols(net)
    out: list[list[dict]] = [[{} for _ in range(b.heads)] for b in net.blocks]
    for m in net.weight_matrices:
        out[m.block][m.head][m.letter] = sympy.Matrix(m.rows, m.cols, symbols[m.offset : m.stop])
    return out


def weight_symbols(arch: Network) -> list[list[sympy.Matrix]]:
    """Per layer [Q, K, V] of a one-head-per-layer network of the old flags (symbols q_(i,r,c), ...)."""
    if arch.paper is None or arch.multihead:
        raise ValueError("weight_symbols is for the old flags with one head per layer; use head_symbols")
    return [[heads[0][letter] for letter in "qkv"] for heads in head_symbols(arch)]


def token_symbols(arch: Network) -> sympy.Matrix:
    """The d_0 x t token matrix X of symbols x_(r,j) (row r, token j; tokens are columns)."""
    import sympy

    net = arch
    return sympy.Matrix(net.input, net.tokens, lambda r, j: sympy.Symbol(token_name(r + 1, j + 1)))


def flat_values(values) -> list:
    """Weights given flat, or nested the way a user writes them: per layer [Q, K, V] (sympy matrices or
    lists of rows), or per layer a list of heads; flattened in the canonical order."""
    import sympy

    out: list = []

    def walk(v):
        if isinstance(v, sympy.MatrixBase):
            out.extend(v)
        elif isinstance(v, np.ndarray):
            out.extend(v.reshape(-1).tolist())
        elif isinstance(v, (list, tuple)):
            for item in v:
                walk(item)
        else:
            out.append(v)

    walk(values)
    return out


def _ring(symbols, domain=None):
    import sympy
    from sympy.polys.rings import ring

    # Symbols, not a comma-separated string: q_(1,1,1) has commas of its own
    names = sorted({str(s) for s in symbols})
    R, *_ = ring([sympy.Symbol(n) for n in names], domain or sympy.ZZ) if names else (None,)
    return R


def network_output(arch: Network, weights=None, X=None) -> sympy.Matrix:
    """phi_W(X) as a d_out x t matrix of expanded polynomials (weights: symbols by default, or any
    expressions, flat or nested per layer; X: the token symbols by default)."""
    import sympy

    net = arch
    w = flat_weight_symbols(net) if weights is None else [sympy.sympify(v) for v in flat_values(weights)]
    if len(w) != net.parameters:
        raise ValueError(f"expected {net.parameters} weights, got {len(w)}")
    Xs = token_symbols(net) if X is None else sympy.Matrix(X)
    free = set().union(*(sympy.sympify(v).free_symbols for v in list(w) + list(Xs)))
    R = _ring(free)
    if R is None:  # everything numeric
        from lightning_cas.core.arithmetic import Rationals

        qq = Rationals()
        out = evaluate(
            net,
            qq,
            qq.array([sympy.Rational(v) for v in w]),
            qq.array([[[sympy.Rational(v) for v in row] for row in Xs.tolist()]]),
        )[0]
        return sympy.Matrix(out.shape[0], out.shape[1], lambda r, c: sympy.Rational(int(out[r, c].p), int(out[r, c].q)))
    from lightning_cas.core.arithmetic import Polynomials

    def entries(R):
        conv = lambda e: R.from_expr(sympy.sympify(e))
        return (
            np.array([conv(v) for v in w], dtype=object),
            np.array([[[conv(v) for v in row] for row in Xs.tolist()]], dtype=object),
        )

    try:
        weights_in_R, tokens_in_R = entries(R)
    except ValueError:  # a rational weight or input (5/8 q): the same ring over QQ
        R = _ring(free, sympy.QQ)
        weights_in_R, tokens_in_R = entries(R)
    out = evaluate(net, Polynomials(R), weights_in_R, tokens_in_R)[0]
    return sympy.Matrix(out.shape[0], out.shape[1], lambda r, c: out[r, c].as_expr())


def coefficient_map(arch: Network) -> dict[tuple[int, int, tuple[int, ...]], sympy.Expr]:
    """Coefficients of phi as polynomials in the weights.

    Keys are (output row p, output token j, exponent vector over the tokens x_(r,j) in row-major
    order); only monomials with a non-zero coefficient appear. Cached per architecture (the
    expansion is the expensive part; point tests ask for it many times); callers get a copy.
    """
    return dict(_coefficient_map(arch))


@functools.lru_cache(maxsize=32)
def _coefficient_map(arch) -> dict:
    import sympy

    from lightning_cas.core.arithmetic import Polynomials

    net = arch
    weights, xs = flat_weight_symbols(net), list(token_symbols(net))
    R = _ring(weights + xs)
    gens = {str(g): k for k, g in enumerate(R.gens)}
    x_pos = [gens[str(x)] for x in xs]
    w_pos = [gens[str(s)] for s in weights]
    ar = Polynomials(R)
    X = np.array(
        [[[R.gens[gens[str(xs[r * net.tokens + j])]] for j in range(net.tokens)] for r in range(net.input)]],
        dtype=object,
    )
    out = evaluate(net, ar, np.array([R.gens[k] for k in w_pos], dtype=object), X)[0]
    symbols = {k: sympy.Symbol(str(R.gens[k])) for k in w_pos}
    coeffs: dict = {}
    for p in range(out.shape[0]):
        for j in range(out.shape[1]):
            grouped: dict = {}
            for monom, c in out[p, j].terms():
                key = tuple(monom[k] for k in x_pos)
                wmon = sympy.Integer(int(c))
                for k in w_pos:
                    if monom[k]:
                        wmon *= symbols[k] ** monom[k]
                grouped.setdefault(key, []).append(wmon)
            for key, terms in grouped.items():
                coeffs[(p, j, key)] = sympy.Add(*terms)
    return coeffs


def rank_over_qq(rows) -> int:
    """Exact rank of a matrix of rationals (Fraction, int or sympy Rational) with flint fmpq_mat."""
    import flint
    import sympy

    rows = [list(r) for r in rows]
    if not rows or not rows[0]:
        return 0
    entries = [sympy.Rational(v) for r in rows for v in r]
    return flint.fmpq_mat(len(rows), len(rows[0]), [flint.fmpq(int(q.p), int(q.q)) for q in entries]).rank()
