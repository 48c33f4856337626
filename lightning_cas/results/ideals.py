"""What the one-layer geometry results share: the words they use, their polynomials and coordinates.

Every enumerated field is a StrEnum whose values are the strings the JSON always carried. Polynomials
are text in the one form of ``core.names`` (Macaulay2 syntax and names: ``q_(1,1,1)``, ``y_4``, ``^``);
``polynomials`` gives them as sympy expressions and ``_repr_latex_`` typesets the ideal in Jupyter.
The results themselves live in ``results.implicit``, ``results.singular`` and ``results.boundary``.

JSON schema 2 (this form) differs from schema 1 in the polynomial texts (schema 1 wrote sympy syntax,
``q_1_1_1`` and ``**``), in the certificates (schema 1 wrote all eight optional fields, ``null`` where a
kind has none) and in the coordinates the singular and boundary results now carry; ``upgrade`` reads
schema 1, so every result file ever written still loads.
"""

from __future__ import annotations

import enum
import typing

from lightning_cas.core.names import (
    coordinate_name,
    legacy_polynomial_text,
    parse_polynomials,
    polynomial_latex,
    token_name,
)
from lightning_cas.core.network import Network

if typing.TYPE_CHECKING:
    import sympy


class Stratum(enum.StrEnum):
    """The weight strata of docs/mathematics.md §5 that singular and boundary pieces are matched to."""

    RANK11 = "rank V = rank A = 1"
    PARALLEL = "rank V = rank A = 1, rowspace V = colspace A"
    RANK_A = "rank A < a"
    VERTEX = "the vertex 0"
    UNLISTED = "no listed stratum"

    @property
    def code(self) -> str:
        """The package's name of the stratum (weightStrata in m2/LightningCAS.m2)."""
        return _STRATUM_CODES[self]

    @classmethod
    def from_code(cls, code) -> Stratum | None:
        """The stratum the package names ``code`` (``rank11``, ``parallel``, ``rankA``, ``vertex``), or None."""
        return _CODE_STRATA.get(code) if isinstance(code, str) else None


_STRATUM_CODES = {
    Stratum.RANK11: "rank11",
    Stratum.PARALLEL: "parallel",
    Stratum.RANK_A: "rankA",
    Stratum.VERTEX: "vertex",
    Stratum.UNLISTED: "none",
}
_CODE_STRATA = {code: s for s, code in _STRATUM_CODES.items() if s is not Stratum.UNLISTED}
NAMED_STRATA = tuple(_CODE_STRATA.values())


class Parametrization(enum.StrEnum):
    """What the implicit ideal was eliminated from (implicitModel's codes 0..3; docs/implicit.md)."""

    QKV = "Q,K,V"
    VA = "V,A"
    VA_RANK = "V,A with rank A <= a"
    VZ = "V,Z with Z = sym(A), rank Z <= 2a"

    @classmethod
    def from_code(cls, code: int) -> Parametrization | None:
        return dict(enumerate(cls)).get(code)


class SampleVerdict(enum.StrEnum):
    """What the sample points of a candidate component showed."""

    BOUNDARY = "boundary"
    INTERIOR = "interior"
    UNDECIDED = "undecided"


class Source(enum.StrEnum):
    """Where a candidate component of the boundary closure came from."""

    CRITICAL_IMAGE = "critical image"
    SINGULAR_LOCUS = "singular locus"


# ---------------------------------------------------------------- polynomials and coordinates


class Polynomials:
    """A record that holds an ideal as polynomial texts (the field ``GENERATORS`` names)."""

    GENERATORS: typing.ClassVar[str] = "generators"

    @property
    def polynomials(self) -> tuple[sympy.Expr, ...]:
        """The generators as sympy expressions (symbols named as in Macaulay2: ``y_4``, ``q_(1,1,1)``)."""
        return parse_polynomials(tuple(getattr(self, self.GENERATORS)))

    def latex(self) -> str:
        return ideal_latex(getattr(self, self.GENERATORS))

    def _repr_latex_(self) -> str | None:
        try:
            return f"${self.latex()}$"
        except ValueError:  # not polynomials (a damaged file): the other representations show it
            return None


def ideal_latex(texts) -> str:
    """``\\left\\langle g_1, \\dots \\right\\rangle`` of polynomial texts (ValueError if one is not a polynomial)."""
    gens = ", ".join(polynomial_latex(g) for g in parse_polynomials(tuple(texts))) or "0"
    return rf"\left\langle {gens} \right\rangle"


def monomial_text(arch: Network, exponents) -> str:
    """The token monomial of an exponent vector over x_(1,1), x_(1,2), ..., x_(d,t) (row-major)."""
    d, t = arch.widths[0], arch.tokens
    names = [token_name(r + 1, j + 1) for r in range(d) for j in range(t)]
    parts = [n if e == 1 else f"{n}^{e}" for n, e in zip(names, exponents) if e]
    return "*".join(parts) or "1"


class Coordinates:
    """A record that carries the coordinates y_i of the function space and their labels."""

    # fields of the record that mixes this in
    architecture: Network
    coordinates: tuple[str, ...]  # y_i as polynomials in the parameters (empty when not computed)
    coordinate_labels: tuple  # (output row, exponent vector of the token monomial) per y_i

    def coordinate_table(self) -> list[tuple[str, int, str, str | None]]:
        """Per coordinate: (name y_i, output row, the token monomial it is the coefficient of, and y_i as a
        polynomial in the parameters, or None when the record has no coordinates)."""
        polys = tuple(self.coordinates) or (None,) * len(self.coordinate_labels)
        return [
            (coordinate_name(i), row, monomial_text(self.architecture, exps), poly)
            for i, ((row, exps), poly) in enumerate(zip(self.coordinate_labels, polys), start=1)
        ]


def legacy(value):
    """Polynomial texts of schema 1 (a list of strings) in today's form; anything else as it is, for
    ``from_dict`` to refuse with its own message."""
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return [legacy_polynomial_text(v) for v in value]
    return value


def legacy_items(items, *keys):
    if not isinstance(items, (list, tuple)):
        return items
    return [
        {**item, **{k: legacy(item[k]) for k in keys if k in item}} if isinstance(item, dict) else item
        for item in items
    ]


SHORT_TABLE = 12  # coordinates listed before "... (n more: --coordinates)"


def coordinate_lines(res, everything: bool = False) -> list[str]:
    """What each y_i is: the coefficient of which token monomial, in which output row (of output token 1)."""
    table = res.coordinate_table()
    if not table:
        return []
    lines = [
        "  y_i = coefficient of the token monomial in output row p of output token 1"
        + ("" if everything else " (--coordinates: as polynomials in the parameters)")
        + ":"
    ]
    width = max(len(name) for name, *_ in table)
    for name, row, monomial, poly in table[: None if everything else SHORT_TABLE]:
        tail = f"  = {poly}" if everything and poly else ""
        lines.append(f"  {name:<{width}}  row {row}  {monomial}{tail}")
    if not everything and len(table) > SHORT_TABLE:
        lines.append(f"  ... ({len(table) - SHORT_TABLE} more: --coordinates)")
    return lines
