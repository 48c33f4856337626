"""msolve's input format: the variables on the first line (comma separated), the characteristic on the
second (0 or a prime below 2^31), then the polynomials, one a line, separated by commas.

A polynomial is given as a mapping {exponent tuple: coefficient} (``to_dict()`` of a python-flint
``fmpz_mpoly`` or ``fmpq_mpoly`` is one), coefficients int or Fraction. Over GF(p) every coefficient is
written as its residue in [0, p): msolve 0.10.1 misreads some integers above 2^32 in characteristic p
(``12345678901*x-1`` mod 1073741789 is solved as another equation), which turns a system into another
one without a word. Over QQ coefficients are written exactly (``a/b``).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Mapping, Sequence
from fractions import Fraction

from lightning_cas.core.checks import shown
from lightning_cas.core.primes import is_prime
from lightning_cas.errors import InputError

MSOLVE_PRIME_LIMIT = 2**31  # msolve's prime fields hold residues in 32 bits
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")

Polynomial = Mapping[tuple[int, ...], "int | Fraction"]


def check_characteristic(char) -> int:
    """0 (the rationals) or a prime below 2^31."""
    if (
        isinstance(char, bool)
        or not isinstance(char, int)
        or not (char == 0 or (2 < char < MSOLVE_PRIME_LIMIT and is_prime(char)))
    ):
        raise InputError(f"the characteristic for msolve must be 0 or an odd prime below 2^31, got {shown(char)}.")
    return char


def check_variables(variables: Sequence[str]) -> list[str]:
    names = list(variables)
    if not names:
        raise InputError("msolve needs at least one variable.")
    for name in names:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise InputError(f"an msolve variable is a letter then letters, digits or _, got {shown(name)}.")
    if len(set(names)) != len(names):
        raise InputError(f"the msolve variables repeat a name: {', '.join(names)}.")
    return names


def _coefficient(c, char: int) -> int | Fraction:
    if isinstance(c, bool) or not isinstance(c, (int, Fraction)):
        try:  # python-flint's fmpz / fmpq
            c = Fraction(int(c.p), int(c.q)) if hasattr(c, "q") else int(c)
        except (TypeError, ValueError, AttributeError):
            raise InputError(f"an msolve coefficient must be an integer or a fraction, got {shown(c)}.") from None
    if char == 0:
        return c
    c = Fraction(c)
    if c.denominator % char == 0:
        raise InputError(f"the coefficient {c} has no residue mod {char} (the prime divides its denominator).")
    return c.numerator * pow(c.denominator, -1, char) % char


def _exponents(exps, nvars: int) -> tuple[int, ...]:
    try:
        out = tuple(operator.index(e) for e in exps)  # ints, or python-flint's fmpz exponents
    except TypeError:
        out = ()
    if len(out) != nvars or any(isinstance(e, bool) or e < 0 for e in exps) or min(out, default=0) < 0:
        raise InputError(f"an exponent vector {shown(exps)} does not fit the {nvars} variables.")
    return out


def polynomial_text(poly: Polynomial, variables: Sequence[str], char: int) -> str:
    """One polynomial in msolve's syntax (``c*x^e*y^f + ...``), its coefficients reduced mod ``char``."""
    terms = []
    for exps, c in sorted(((_exponents(e, len(variables)), c) for e, c in poly.items()), reverse=True):
        c = _coefficient(c, char)
        if c == 0:
            continue
        monomial = "*".join(f"{v}^{e}" if e > 1 else v for v, e in zip(variables, exps) if e)
        text = str(c) if not monomial else monomial if c == 1 else f"{c}*{monomial}"
        terms.append(text if text.startswith("-") or not terms else "+" + text)
    return "".join(terms) or "0"


def system_text(variables: Sequence[str], polynomials: Sequence[Polynomial], char: int) -> str:
    """The whole input file for ``polynomials`` over GF(char) (QQ for 0) in ``variables``."""
    names = check_variables(variables)
    char = check_characteristic(char)
    polys = [polynomial_text(p, names, char) for p in polynomials]
    polys = [p for p in polys if p != "0"]
    if not polys:
        raise InputError("msolve needs at least one nonzero polynomial.")
    return ",".join(names) + "\n" + str(char) + "\n" + ",\n".join(polys) + "\n"
