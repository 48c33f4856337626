"""msolve's output, read into typed results.

The solve output (no ``-g``) is one bracketed list ending in ``:``:

* ``[-1]:`` no solution over the algebraic closure;
* ``[1, nvars, -1, []]:`` infinitely many (a positive-dimensional ideal);
* over GF(p): ``[0, [p, nvars, deg, [vars], [linear form], [1, [[d, elim], [d', den], [params]]]]]``, the
  rational parametrization: ``elim(t) = 0``, ``x_i = -v_i(t) / (c_i den(t))`` with t the linear form;
  ``deg`` is the dimension of the quotient algebra (the degree of the ideal, with multiplicities) and
  the degree of ``elim`` the number of distinct solutions;
* over QQ: ``[0, [1, [boxes]]]`` the real solutions as isolating boxes, one interval ``[a, b]`` per
  variable (dyadic rationals ``n / 2^k``); with ``-P 1`` the parametrization comes first:
  ``[0, param, [1, [boxes]]]``, each numerator then ``[[d, coeffs], c_i]``.

With ``-g 1`` / ``-g 2`` msolve writes ``#`` comment lines and a list of polynomials (the leading
monomials, or the reduced Groebner basis for degree reverse lexicographic order).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from lightning_cas.errors import MsolveParseError

_TOKEN = re.compile(
    r"\s*(?:(?P<open>\[)|(?P<close>\])|(?P<comma>,)|(?P<str>'[^']*')|"
    r"(?P<num>-?\d+)(?:\s*/\s*(?P<den>\d+)(?:\s*\^\s*(?P<exp>\d+))?)?)"
)


def read_list(text: str, source: str | None = None):
    """The bracketed value msolve wrote (ints, Fractions, strings, lists), up to its final ``:``."""
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")).strip()
    if not body.endswith(":"):
        raise MsolveParseError(f"msolve's output does not end in ':' ({_excerpt(body)})", source, text)
    body = body[:-1]
    stack: list[list] = [[]]
    pos = 0
    while pos < len(body):
        if body[pos:].strip() == "":
            break
        m = _TOKEN.match(body, pos)
        if not m:
            raise MsolveParseError(f"unexpected text in msolve's output at {_excerpt(body[pos:])}", source, text)
        pos = m.end()
        if m["open"]:
            stack.append([])
        elif m["close"]:
            if len(stack) < 2:
                raise MsolveParseError("unbalanced brackets in msolve's output", source, text)
            done = stack.pop()
            stack[-1].append(done)
        elif m["str"]:
            stack[-1].append(m["str"][1:-1])
        elif m["num"]:
            num = int(m["num"])
            if m["den"] is None:
                stack[-1].append(num)
            else:
                den = int(m["den"]) ** (int(m["exp"]) if m["exp"] else 1)
                if den == 0:
                    raise MsolveParseError("a zero denominator in msolve's output", source, text)
                stack[-1].append(Fraction(num, den))
    if len(stack) != 1 or len(stack[0]) != 1:
        raise MsolveParseError("msolve's output is not one bracketed list", source, text)
    return stack[0][0]


def _excerpt(text: str) -> str:
    return repr(text[:60] + ("..." if len(text) > 60 else ""))


@dataclass(frozen=True)
class Parametrization:
    """A rational parametrization of a zero-dimensional ideal: ``eliminating(t) = 0`` and
    ``x_i = -numerators[i](t) / (divisors[i] * denominator(t))``, t = sum_j linear_form[j] x_j; polynomials
    as coefficient lists from degree 0 up; over GF(p) the coefficients are residues and the divisors 1.
    The last variable (in ``variables``' order, which msolve may permute) is t itself when the linear form
    is that variable."""

    characteristic: int
    variables: tuple[str, ...]
    linear_form: tuple[int, ...]
    degree: int  # dimension of the quotient algebra: solutions counted with multiplicity
    eliminating: tuple
    denominator: tuple
    numerators: tuple[tuple, ...]
    divisors: tuple[int, ...]

    @property
    def solutions(self) -> int:
        """Distinct solutions over the algebraic closure: the degree of the eliminating polynomial."""
        return len(self.eliminating) - 1


@dataclass(frozen=True)
class Solution:
    """What msolve says about a system: empty, positive-dimensional, or finite with its parametrization
    (and, over QQ, its real solutions as isolating boxes of dyadic rationals)."""

    characteristic: int
    variables: tuple[str, ...]
    status: str  # "empty" | "finite" | "positive"
    parametrization: Parametrization | None = None
    real_roots: tuple[tuple[tuple[Fraction, Fraction], ...], ...] | None = None

    @property
    def zero_dimensional(self) -> bool:
        return self.status == "finite"

    @property
    def degree(self) -> int | None:
        """The degree of the zero-dimensional ideal (with multiplicities); 0 when empty, None if infinite."""
        return {"empty": 0, "positive": None}.get(self.status, self.parametrization and self.parametrization.degree)

    @property
    def solutions(self) -> int | None:
        """Distinct solutions over the algebraic closure; 0 when empty, None if infinitely many."""
        return {"empty": 0, "positive": None}.get(self.status, self.parametrization and self.parametrization.solutions)

    @property
    def radical(self) -> bool | None:
        """Whether every solution is simple (degree = distinct solutions)."""
        return None if self.status != "finite" else self.degree == self.solutions


def _poly(entry, source, text) -> tuple:
    """``[d, [c_0, ..., c_d]]`` as the coefficient tuple (checked against d)."""
    if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], int) and isinstance(entry[1], list)):
        raise MsolveParseError(
            f"a polynomial of msolve's parametrization is not [degree, coefficients]: {_excerpt(str(entry))}",
            source,
            text,
        )
    degree, coeffs = entry
    if not all(isinstance(c, int) for c in coeffs) or (coeffs and len(coeffs) != degree + 1) or degree < -1:
        raise MsolveParseError(
            f"msolve's parametrization has a polynomial of degree {degree} with {len(coeffs)} coefficients",
            source,
            text,
        )
    return tuple(coeffs)


def _parametrization(entry, source, text) -> Parametrization:
    try:
        char, nvars, degree, names, form, (one, (elim, den, params)) = entry
        names = tuple(names)
    except (TypeError, ValueError):
        raise MsolveParseError(
            f"msolve's parametrization does not have its documented shape: {_excerpt(str(entry))}", source, text
        ) from None
    if one != 1 or nvars != len(names) or len(form) != nvars or not isinstance(degree, int) or len(params) != nvars - 1:
        raise MsolveParseError("msolve's parametrization does not match its own variable count", source, text)
    numerators, divisors = [], []
    for p in params:  # GF(p): [[d, coeffs]]; QQ: [[d, coeffs], c]
        if isinstance(p, list) and len(p) == 2 and isinstance(p[1], int):
            numerators.append(_poly(p[0], source, text))
            divisors.append(p[1])
        elif isinstance(p, list) and len(p) == 1:
            numerators.append(_poly(p[0], source, text))
            divisors.append(1)
        else:
            raise MsolveParseError(f"a numerator of msolve's parametrization is {_excerpt(str(p))}", source, text)
    elim = _poly(elim, source, text)
    if len(elim) - 1 > degree:
        raise MsolveParseError(
            f"msolve's eliminating polynomial has degree {len(elim) - 1}, above the ideal's degree {degree}",
            source,
            text,
        )
    return Parametrization(
        char, names, tuple(form), degree, elim, _poly(den, source, text), tuple(numerators), tuple(divisors)
    )


def _boxes(entry, nvars: int, source, text) -> tuple:
    if not (isinstance(entry, list) and len(entry) == 2 and entry[0] == 1 and isinstance(entry[1], list)):
        raise MsolveParseError(f"msolve's real solutions are not [1, [boxes]]: {_excerpt(str(entry))}", source, text)
    boxes = []
    for box in entry[1]:
        if not (
            isinstance(box, list)
            and len(box) == nvars
            and all(isinstance(iv, list) and len(iv) == 2 and iv[0] <= iv[1] for iv in box)
        ):
            raise MsolveParseError(
                f"a real solution of msolve is not {nvars} intervals: {_excerpt(str(box))}", source, text
            )
        boxes.append(tuple((Fraction(lo), Fraction(hi)) for lo, hi in box))
    return tuple(boxes)


def read_solution(text: str, variables, characteristic: int, source: str | None = None) -> Solution:
    """A :class:`Solution` from msolve's solve output (``-P 0`` or ``-P 1``)."""
    value = read_list(text, source)
    variables = tuple(variables)
    if value == [-1]:
        return Solution(characteristic, variables, "empty")
    if isinstance(value, list) and len(value) == 4 and value[0] == 1 and value[2] == -1:
        return Solution(characteristic, variables, "positive")
    if not (isinstance(value, list) and len(value) >= 2 and value[0] == 0):
        raise MsolveParseError(f"msolve's output is none of its documented forms: {_excerpt(str(value))}", source, text)
    rest = value[1:]
    param = roots = None
    if isinstance(rest[0], list) and rest[0] and rest[0][0] == characteristic and len(rest[0]) == 6:
        param = _parametrization(rest[0], source, text)
        rest = rest[1:]
    if rest:
        if characteristic != 0 or len(rest) != 1:
            raise MsolveParseError("msolve's output has more parts than a parametrization and real roots", source, text)
        roots = _boxes(rest[0], len(variables), source, text)
    if param is None and roots is None:
        raise MsolveParseError("msolve's output has neither a parametrization nor real roots", source, text)
    return Solution(characteristic, variables, "finite", param, roots)


_TERM = re.compile(r"\s*([+-]?)\s*(\d*)\s*\*?\s*((?:[A-Za-z][A-Za-z0-9_]*(?:\^\d+)?\s*\*?\s*)*)")


def read_polynomials(text: str, variables, source: str | None = None) -> list[dict[tuple[int, ...], int]]:
    """The polynomials of a ``-g 1`` (leading monomials) or ``-g 2`` (reduced basis) output, as
    {exponents: coefficient} in ``variables``."""
    index = {v: i for i, v in enumerate(variables)}
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")).strip()
    if not (body.startswith("[") and body.endswith("]:")):
        raise MsolveParseError(f"msolve's basis is not a bracketed list ending in ':' ({_excerpt(body)})", source, text)
    polys = []
    for item in body[1:-2].split(","):
        item = item.strip()
        if not item:
            continue
        poly: dict[tuple[int, ...], int] = {}
        pos = 0
        while pos < len(item):
            m = _TERM.match(item, pos)
            if not m or m.end() == pos:
                raise MsolveParseError(f"an msolve polynomial term is {_excerpt(item[pos:])}", source, text)
            pos = m.end()
            sign, coeff, mono = m.groups()
            exps = [0] * len(variables)
            for factor in filter(None, (f.strip() for f in mono.split("*"))):
                name, _, e = factor.partition("^")
                if name not in index:
                    raise MsolveParseError(f"msolve wrote an unknown variable {name!r}", source, text)
                exps[index[name]] += int(e or 1)
            c = int(coeff or 1) * (-1 if sign == "-" else 1)
            key = tuple(exps)
            poly[key] = poly.get(key, 0) + c
        polys.append(poly)
    return polys
