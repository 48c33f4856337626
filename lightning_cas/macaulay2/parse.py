"""Parsing Macaulay2 output: our one-line records, never M2's 2-D pretty printing.

Templates emit ``@@LCAS@@ key value`` lines (see ``lcasEmit`` in ``m2/network.m2``). Values are
integers, lists of integers ``{1, 2}``, version strings, or polynomials separated by `` ; ``.
Anything else is refused with the offending text.
"""

from __future__ import annotations

import re

import sympy
from sympy.parsing.sympy_parser import convert_xor, parse_expr, standard_transformations

from lightning_cas.errors import M2ParseError

MARK = "@@LCAS@@ "
_INT = re.compile(r"^-?\d+$", re.ASCII)
_INT_LIST = re.compile(r"^\{\s*(-?\d+(\s*,\s*-?\d+)*)?\s*\}$", re.ASCII)
# M2 prints indexed variables as q_(1,2,3); sympy gets q_1_2_3.
_INDEXED = re.compile(r"\b([a-z]+)_\((\d+(?:,\s*\d+)*)\)")
_SINGLE_INDEX = re.compile(r"\b([a-z]+)_(\d+)\b")
_POLY_CHARS = re.compile(r"^[0-9a-z_+\-*/^() ]+$")
# M2 prints a power as name^digits or integer^digits; anything else after `^` (a huge or nested
# exponent such as 9^99999999 or 2^(2^(2^99)), or a power of a parenthesis) would let output hang sympy.
_POWER = re.compile(r"(?<![)\s])\^\d{1,3}(?![\d(])")


def records(output: str, script: str | None = None) -> dict[str, str]:
    """All ``@@LCAS@@`` records of an M2 run, as raw strings by key (a repeated key is an error)."""
    found: dict[str, str] = {}
    for line in output.splitlines():
        line = line.rstrip("\r")
        if not line.startswith(MARK):
            continue
        key, _, value = line[len(MARK):].partition(" ")
        if not key or key in found:
            raise M2ParseError(f"malformed or repeated Macaulay2 record: {line[:200]!r}", script)
        found[key] = value.strip()
    return found


def require(recs: dict[str, str], key: str, script: str | None = None) -> str:
    if key not in recs:
        raise M2ParseError(f"Macaulay2 output lacks the record {key!r} (got {sorted(recs)})", script)
    return recs[key]


def parse_int(text: str, script: str | None = None) -> int:
    if not _INT.match(text):
        raise M2ParseError(f"expected an integer from Macaulay2, got {text[:200]!r}", script)
    return _to_int(text, script)


def _to_int(text: str, script: str | None) -> int:
    try:
        return int(text)
    except ValueError:  # beyond Python's 4300-digit conversion limit
        raise M2ParseError(f"integer from Macaulay2 too long ({len(text)} characters): {text[:60]!r}...",
                           script) from None


def parse_int_list(text: str, script: str | None = None) -> list[int]:
    if not _INT_LIST.match(text):
        raise M2ParseError(f"expected a list of integers from Macaulay2, got {text[:200]!r}", script)
    inner = text.strip()[1:-1].strip()
    return [_to_int(v.strip(), script) for v in inner.split(",")] if inner else []


def m2_name_to_sympy(text: str) -> str:
    """q_(1,2,3) -> q_1_2_3 and y_4 stays y_4."""
    return _INDEXED.sub(lambda m: m.group(1) + "_" + "_".join(s.strip() for s in m.group(2).split(",")), text)


def parse_polynomial(text: str, script: str | None = None) -> sympy.Expr:
    """One M2 polynomial (``toString`` form) as a sympy expression; refuses anything but arithmetic."""
    body = m2_name_to_sympy(text.strip())
    if not body or not _POLY_CHARS.match(body) or "**" in body:
        raise M2ParseError(f"not a polynomial in Macaulay2 output: {text[:200]!r}", script)
    if body.count("^") != len(_POWER.findall(body)):
        raise M2ParseError(f"unexpected power (only name^digits) in Macaulay2 output: {text[:200]!r}", script)
    names = set(re.findall(r"[a-z][a-z0-9_]*", body))
    local = {n: sympy.Symbol(n) for n in names}
    try:
        expr = parse_expr(body, local_dict=local, global_dict={"Integer": sympy.Integer, "Symbol": sympy.Symbol,
                                                               "Rational": sympy.Rational},
                          transformations=standard_transformations + (convert_xor,), evaluate=True)
        if not isinstance(expr, sympy.Expr) or expr.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
            raise ValueError("not a finite polynomial")
        return expr
    except Exception as exc:  # sympy raises many types for malformed text
        raise M2ParseError(f"not a polynomial in Macaulay2 output: {text[:200]!r} ({exc})", script) from None


def parse_polynomial_list(text: str, script: str | None = None) -> list[sympy.Expr]:
    """Polynomials joined by `` ; `` (the separator our templates use)."""
    if not text.strip():
        return []
    return [parse_polynomial(part, script) for part in text.split(" ; ")]
