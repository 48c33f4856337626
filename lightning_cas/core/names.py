"""The one naming scheme, and the one text form of polynomials, for Python, the CLI and Macaulay2.

Every variable is a Macaulay2 indexed variable and is printed the way Macaulay2 prints it: one
index as ``y_4``, several as ``q_(1,2,3)``. Macaulay2 cannot name a variable ``q_1_2_3`` (``_`` is
its subscript operator), so this is the only spelling that pastes into Macaulay2 unchanged; the
sympy symbols carry the same names, so Python prints what the package prints.

==========  ============================================  =====================
name        what                                          example
==========  ============================================  =====================
weights     block i (1-based), row r, column c            ``q_(1,2,3)``
            with several heads: head h                    ``q_(1,2,2,3)``
tokens      row r of token j of the input X               ``x_(2,1)``
coordinates a basis of the coefficient span               ``y_4``
==========  ============================================  =====================

Polynomials travel as text in Macaulay2 syntax (``^`` for powers, never ``**``, which is the
tensor product in Macaulay2): :func:`polynomial_text` writes it, :func:`parse_polynomial` reads it
back (strictly: numbers, names, ``+ - * / ^`` and parentheses, nothing else is evaluated), and
:func:`polynomial_latex` typesets it. sympy is imported inside the functions: ``dim`` never needs it.
"""

from __future__ import annotations

import functools
import operator
import re
from fractions import Fraction
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sympy


def indexed_name(letter: str, *indices: int) -> str:
    """The name of an indexed variable as Macaulay2 prints it: ``y_4``, ``q_(1,2,3)``."""
    try:
        values = [operator.index(i) for i in indices if not isinstance(i, bool)]
    except TypeError:
        values = []
    if (
        not isinstance(letter, str)
        or not re.fullmatch(r"[a-z]+", letter)
        or not indices
        or len(values) != len(indices)
        or min(values) < 0
    ):
        raise ValueError(f"not a variable name: {letter!r} with indices {indices!r}")
    return f"{letter}_{values[0]}" if len(values) == 1 else f"{letter}_({','.join(map(str, values))})"


def weight_name(letter: str, block: int, row: int, col: int, head: int | None = None) -> str:
    """A weight: ``q_(i,r,c)``, or ``q_(i,h,r,c)`` in a block with several heads (all 1-based)."""
    return indexed_name(letter, block, row, col) if head is None else indexed_name(letter, block, head, row, col)


def network_weight_names(matrices, blocks) -> list[str]:
    """Every weight's name in the canonical order, from a network's weight matrices and blocks
    (``Network.weight_names`` says which names)."""
    from lightning_cas.core.blocks import BLOCK_LETTERS

    names = []
    for m in matrices:
        several = blocks[m.block].heads > 1 and m.letter not in BLOCK_LETTERS
        head = m.head + 1 if several else None
        if m.vector:  # a bias or gain vector: letter_(i,r) or letter_(i,h,r)
            names += [indexed_name(m.letter, m.block + 1, *((head,) if head else ()), r + 1) for r in range(m.rows)]
        else:
            names += [
                weight_name(m.letter, m.block + 1, r + 1, c + 1, head) for r in range(m.rows) for c in range(m.cols)
            ]
    return names


def token_name(row: int, token: int) -> str:
    """Entry (row, token) of the input X, 1-based: ``x_(r,j)``."""
    return indexed_name("x", row, token)


def coordinate_name(i: int) -> str:
    """The i-th coordinate of the function space (1-based): ``y_i``."""
    return indexed_name("y", i)


def coordinate_names(n: int) -> list[str]:
    return [coordinate_name(i) for i in range(1, n + 1)]


def latex_name(name: str) -> str:
    """``q_(1,2,3)`` -> ``q_{1,2,3}``, ``y_4`` -> ``y_{4}``; other names unchanged."""
    m = re.fullmatch(r"([a-z]+)_(?:\((\d+(?:,\d+)*)\)|(\d+))", name)
    if m is None:
        return name
    return f"{m.group(1)}_{{{m.group(2) or m.group(3)}}}"


# ---------------------------------------------------------------- polynomial text

# a name: letters and digits, then an optional subscript _4 or _(1,2,3) (Macaulay2's indexed variables)
# an operand: a number, or a rational in parentheses as Macaulay2 writes coefficients, (-3/2); no other
# parentheses, so a text is a sum of products and never expands into more terms than it has
_TOKEN = re.compile(
    r"\s*(?:(?P<name>[a-z][a-z0-9]*(?:_(?:\d+|\(\s*\d+(?:\s*,\s*\d+)*\s*\)))?)"
    r"|(?P<num>\d+|\(\s*-?\s*\d+(?:\s*/\s*\d+)?\s*\))"
    r"|(?P<op>[-+*/])|(?P<pow>\^(?P<exp>\d{1,3})(?![\d(])))"
)
MAX_TEXT = 1_000_000  # characters of one polynomial; a longer text is refused before sympy sees it


def _canonical(name: str) -> str:
    return re.sub(r"\s+", "", name)


def parse_polynomial(text: str) -> sympy.Expr:
    """A polynomial from its text (Macaulay2 syntax, names as above); ValueError on anything else.

    Nothing but numbers, rationals in parentheses ``(-3/2)``, names, ``+ - * /`` and powers
    ``^digits`` of a name or a number is accepted (a power of a parenthesis, a product of sums or a
    huge exponent would let a hostile text hang sympy); the terms are collected from the tokens
    (:func:`polynomial_terms`), and only a text where a name divides goes to sympy's parser, rebuilt from
    its tokens with every name bound to a symbol.
    """
    import sympy
    from sympy.parsing.sympy_parser import parse_expr

    tokens, pieces, names = _tokens(text)
    try:
        terms = _sum_of_terms(tokens)
        if terms is None:  # a name divides: only sympy's own evaluation says whether it is a polynomial
            local = {ident: sympy.Symbol(name) for name, ident in names.items()}
            expr = parse_expr(
                " ".join(pieces),
                local_dict=local,
                global_dict={
                    "Integer": sympy.Integer,
                    "Rational": sympy.Rational,
                    "Symbol": sympy.Symbol,
                    "__builtins__": {},
                },
            )
        else:
            symbols = {name: sympy.Symbol(name) for name in names}
            expr = sympy.Add(
                *[
                    sympy.Mul(sympy.Rational(c.numerator, c.denominator), *[symbols[n] ** e for n, e in key])
                    for key, c in terms.items()
                ]
            )
    except Exception as exc:  # sympy raises many types for malformed text
        raise ValueError(f"not a polynomial: {text[:200]!r} ({exc})") from None
    if (
        not isinstance(expr, sympy.Expr)
        or expr.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo)
        or not expr.is_polynomial(*expr.free_symbols)
    ):
        raise ValueError(f"not a polynomial: {text[:200]!r}")
    return expr


def polynomial_terms(text: str) -> dict[tuple[tuple[str, int], ...], Fraction] | None:
    """The polynomial of a text as its terms, {((name, exponent), ...): coefficient} (nonzero coefficients,
    names sorted), without sympy: what exact evaluation at a rational point needs. The same checks as
    :func:`parse_polynomial` (ValueError); None for a text where a name divides (``y_1^2/y_1``)."""
    try:
        return _sum_of_terms(_tokens(text)[0])
    except ZeroDivisionError:
        raise ValueError(f"not a polynomial: {text[:200]!r} (division by zero)") from None


def _tokens(text: str) -> tuple[list[tuple[str, str | int]], list[str], dict[str, str]]:
    """The checked tokens of a polynomial text, the text rebuilt for sympy's parser, and its names."""
    if not isinstance(text, str):
        raise ValueError(f"a polynomial must be text, got {type(text).__name__}")
    if len(text) > MAX_TEXT:
        raise ValueError(f"a polynomial of {len(text)} characters is longer than {MAX_TEXT}")
    pieces: list[str] = []
    tokens: list[tuple[str, str | int]] = []  # (kind, text); a power's exponent as an int
    names: dict[str, str] = {}
    pos, previous = 0, None
    body = text.rstrip()
    while pos < len(body):
        m = _TOKEN.match(body, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"not a polynomial: {text[:200]!r} (at {body[pos : pos + 20]!r})")
        pos = m.end()
        kind = next(k for k in ("name", "num", "op", "pow") if m.group(k))
        op = m.group("op")
        # operands and operators alternate: no juxtaposition `lambda x`, no `*y`, no trailing `+`
        after_operand = previous in ("name", "num", "pow")
        starts, continues = kind in ("name", "num"), op in ("*", "/") or kind == "pow"
        if starts and after_operand or continues and not after_operand:
            raise ValueError(f"not a polynomial: {text[:200]!r} (at {body[m.start() : m.start() + 20]!r})")
        if kind == "name":
            name = _canonical(m.group("name"))
            pieces.append(names.setdefault(name, f"v{len(names)}"))
            tokens.append((kind, name))
        elif kind == "pow":
            if previous not in ("name", "num") or pieces[-1].startswith("("):
                raise ValueError(f"unexpected power (only name^digits or number^digits): {text[:200]!r}")
            pieces.append("**" + m.group("exp"))
            tokens.append((kind, int(m.group("exp"))))
        else:
            if m.group("op") == "*" and pieces and pieces[-1] == "*":  # `**` is the tensor product in Macaulay2
                raise ValueError(f"`**` is not a power here (write ^): {text[:200]!r}")
            pieces.append(re.sub(r"\s+", "", m.group(kind)))
            tokens.append((kind, pieces[-1]))
        previous = kind
    if not pieces:
        raise ValueError("an empty polynomial")
    if previous not in ("name", "num", "pow"):
        raise ValueError(f"not a polynomial (it ends in an operator): {text[:200]!r}")
    return tokens, pieces, names


@functools.lru_cache(maxsize=256)
def parse_polynomials(texts: tuple[str, ...]) -> tuple:
    """The polynomials of a tuple of texts, read once per process (an ideal's generators are read by every
    test of a point against it, and by its LaTeX and its printout)."""
    return tuple(parse_polynomial(t) for t in texts)


def _sum_of_terms(tokens: list[tuple[str, str | int]]) -> dict[tuple[tuple[str, int], ...], Fraction] | None:
    """The terms of checked tokens (a sum of products of numbers and powers), like terms collected in one
    pass; None when a name follows ``/`` (then sympy's parser decides).

    sympy's parser adds term by term, and each addition re-sorts the whole sum: 41 s for the 35
    generators of one implicit ideal (212,000 characters), against well under a second here. The
    operators keep Python's precedence: ``^`` first, then ``*`` and ``/`` from the left, then ``+ -``.
    """
    terms: dict[tuple[tuple[str, int], ...], Fraction] = {}
    monomial: dict[str, int] = {}
    last: tuple[str | Fraction, int] | None = None  # the factor just read (a name or a number) and its power
    coeff, sign, op = Fraction(1), 1, "*"

    def close() -> None:  # the factor just read, with its power, into the term
        nonlocal coeff
        if last is None:
            return
        factor, exp = last
        if isinstance(factor, str):
            monomial[factor] = monomial.get(factor, 0) + exp
        else:
            number = factor**exp
            coeff = coeff * number if op == "*" else coeff / number

    def flush() -> None:
        key = tuple(sorted((n, e) for n, e in monomial.items() if e))
        terms[key] = terms.get(key, Fraction(0)) + sign * coeff

    in_term = False
    for kind, value in tokens:
        if isinstance(value, int):  # a power: _tokens puts one only right after a name or a number
            assert last is not None
            last = (last[0], value)
        elif kind == "op" and value in "+-":
            if in_term:
                close()
                flush()
                coeff, monomial, sign, op, last, in_term = Fraction(1), {}, 1, "*", None, False
            sign = -sign if value == "-" else sign
        elif kind == "op":
            close()
            op, last = value, None
        else:
            if kind == "name" and op == "/":
                return None
            last = (value if kind == "name" else _number(value), 1)
            in_term = True
    close()
    flush()
    return {key: c for key, c in terms.items() if c}


def _number(text: str) -> Fraction:
    """A number token: ``3`` or ``(-3/2)`` (spaces already gone)."""
    return Fraction(text.strip("()"))


def polynomial_text(expr) -> str:
    """The text of a polynomial: sympy's terms with ``^`` for powers (valid Macaulay2 and valid input of
    :func:`parse_polynomial`); a rational coefficient is written as a quotient, which Macaulay2 reads
    in a ring over QQ."""
    import sympy

    return sympy.sstr(sympy.expand(expr)).replace("**", "^")


def polynomial_latex(expr) -> str:
    """LaTeX of a polynomial, with ``q_{1,2,3}`` for ``q_(1,2,3)``."""
    import sympy

    return sympy.latex(expr, symbol_names={s: latex_name(s.name) for s in expr.free_symbols})


# the form written before this scheme: sympy syntax (``**``) and names q_1_2_3 for M2's q_(1,2,3)
_LEGACY_NAME = re.compile(r"\b([a-z][a-z0-9]*)_(\d+(?:_\d+)+)\b")


def legacy_polynomial_text(text: str) -> str:
    """A polynomial written in the earlier form (``q_1_2_3``, ``**``) in today's form (``q_(1,2,3)``, ``^``)."""
    if not isinstance(text, str):
        raise ValueError(f"a polynomial must be text, got {type(text).__name__}")
    return _LEGACY_NAME.sub(lambda m: f"{m.group(1)}_({m.group(2).replace('_', ',')})", text).replace("**", "^")
