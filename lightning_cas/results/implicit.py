"""The implicit ideal of a one-layer neurovariety as a result, with its text, Macaulay2 and LaTeX forms.

JSON schema 2 (this form) writes the polynomial texts in Macaulay2's form; schema 1 wrote sympy's
(``q_1_1_1``, ``**``) and still loads (``upgrade``).
"""

from __future__ import annotations

import typing
from dataclasses import dataclass

from lightning_cas.core.names import indexed_name, parse_polynomials
from lightning_cas.core.network import Network
from lightning_cas.results.contract import JsonResult, Provenance, Record, how, lines_text
from lightning_cas.results.formats import (
    M2Context,
    checked_text,
    coordinate_comments,
    ideal,
    latex_coordinates,
    latex_ideal,
    latex_ring,
    ring,
    y_ring,
)
from lightning_cas.results.ideals import Coordinates, Parametrization, Polynomials, Stratum, coordinate_lines, legacy

if typing.TYPE_CHECKING:
    import sympy

SHORT_GENERATORS = 20  # generators of an implicit ideal listed in full


@dataclass(frozen=True)
class DegreeRun(Record):
    """One numericalImageDegree run: its degree (None when it failed) and its CPU time."""

    degree: int | None
    cpu_s: float


@dataclass(frozen=True)
class NumericalDegree(Record):
    """The consensus of several monodromy runs (numeric: a run can miss sheets)."""

    value: int | None
    runs: tuple[DegreeRun, ...]
    consensus: str
    unanimous: bool
    certainty: str = "numeric"
    method: str = "NumericalImplicitization numericalImageDegree (monodromy)"


@dataclass(frozen=True)
class IdealComponent(Polynomials, Record):
    """A component of an ideal (a minimal prime): generators in y_1..y_n, dimension, degree."""

    generators: tuple[str, ...]
    dimension: int
    degree: int
    contained_in: tuple[Stratum, ...] = ()  # the named strata (closures) it lies in


@dataclass(frozen=True)
class ImplicitResult(Coordinates, Polynomials, Provenance, JsonResult):
    """The ideal of the neurovariety in coordinates y_1..y_n (a basis of the coefficient span)."""

    SCHEMA = 2

    architecture: Network
    one_coordinate: bool
    dimension: int | None
    codimension: int | None
    degree: int | None  # standard grading (projective degree of the cone)
    generator_degrees: tuple[int, ...]
    generators: tuple[str, ...]  # polynomial texts in y_1..y_n
    coordinates: tuple[str, ...]  # y_i as a polynomial in the parameter variables
    coordinate_labels: tuple  # (output row, exponent vector of the token monomial) per y_i
    parametrization: Parametrization  # what the ideal was eliminated from
    parameter_variables: int
    coefficients: int  # non-zero coefficients of the chosen output entries
    numerical_degree: NumericalDegree | None = None
    script: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def ambient(self) -> int:
        return len(self.coordinates)

    @property
    def coordinate_polynomials(self) -> tuple[sympy.Expr, ...]:
        return parse_polynomials(tuple(self.coordinates))

    @classmethod
    def upgrade(cls, data: dict, schema: int) -> dict:
        return {**data, **{k: legacy(data[k]) for k in ("generators", "coordinates") if k in data}}

    def text(self, coordinates: bool = False) -> str:
        """What ``lightning-cas implicit`` prints (``coordinates``: every y_i with its polynomial)."""
        return implicit_text(self, coordinates)

    def m2_lines(self, context: M2Context) -> list[str]:
        """R, the ideal I, and the parametrization phi with I == sub(ker phi, R)."""
        lines = coordinate_comments(self)
        lines += [f"R = {y_ring(self.ambient)};"]
        if self.dimension is None:
            lines += ["I = null; -- no elimination was asked for (numerical degree only)"]
        else:
            lines += [
                f"-- dimension {self.dimension}, codimension {self.codimension}, degree {self.degree}",
                f"I = {ideal(self.generators)};",
            ]
        names, rank = _parameters(self.architecture, self.parametrization)
        # phi is homogeneous once each y_i has the degree of its image (the package's graded kernel): fast
        degree = max((_degree(c) for c in self.coordinate_polynomials), default=1)
        lines += [f"-- the parametrization {self.parametrization}: I == sub(ker phi, R)", f"P = {ring('QQ', names)};"]
        if rank is not None:
            lines += [f"P = P / {rank};"]
        lines += [
            f"Rphi = newRing(R, Degrees => toList({self.ambient}:{degree}));",
            "phi = map(P, Rphi, {" + ", ".join(checked_text(c) for c in self.coordinates) + "});",
            "use R;",
        ]
        return lines

    def latex_lines(self) -> list[str]:
        lines = []
        if self.dimension is not None:
            lines += [
                latex_ideal("I", self.generators, latex_ring(self.ambient)),
                f"% dimension {self.dimension}, codimension {self.codimension}, degree {self.degree}",
            ]
        return lines + latex_coordinates(self)


def _count(values) -> dict:
    out: dict = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def implicit_text(res, coordinates: bool = False) -> str:
    """The ideal's numbers and generators, what each y_i is, the numerical degree and the notes."""
    lines = [
        f"{res.architecture}{'  (one output coordinate)' if res.one_coordinate else ''}",
        f"coordinates y_1..y_{res.ambient} (basis of the coefficient span); parametrization "
        f"{res.parametrization} with {res.parameter_variables} variables",
    ]
    lines += coordinate_lines(res, coordinates)
    if res.dimension is not None:
        lines.append(f"dimension {res.dimension}, codimension {res.codimension}, degree {res.degree}   ({how(res)})")
        degs = ", ".join(f"{n} of degree {d}" for d, n in sorted(_count(res.generator_degrees).items()))
        lines.append(f"{len(res.generator_degrees)} minimal generators: {degs or 'none (linear space)'}")
        lines += [f"  {g}" for g in res.generators[:SHORT_GENERATORS]]
        if len(res.generators) > SHORT_GENERATORS:
            lines.append(f"  ... ({len(res.generators) - SHORT_GENERATORS} more; use --json or --format m2)")
    if res.numerical_degree:
        nd = res.numerical_degree
        lines.append(f"numerical degree {nd.value} (numeric; consensus {nd.consensus}: {[r.degree for r in nd.runs]})")
    lines += [f"note: {note}" for note in res.notes]
    return lines_text(lines)


def _parameters(arch: Network, route: Parametrization) -> tuple[list[str], str | None]:
    """The parameter variables of the parametrization and the ideal it lives on (None: none)."""
    d, e, a = arch.widths[0], arch.widths[1], arch.attention[0]
    v = [indexed_name("v", p + 1, q + 1) for p in range(e) for q in range(d)]
    if route is Parametrization.QKV:
        names = [
            indexed_name(m, 1, r + 1, c + 1)
            for m, rows in (("q", a), ("k", a), ("v", e))
            for r in range(rows)
            for c in range(d)
        ]
        return names, None
    if route is Parametrization.VZ:
        z = {(r, c): indexed_name("z", min(r, c) + 1, max(r, c) + 1) for r in range(d) for c in range(d)}
        names = v + [z[r, c] for r in range(d) for c in range(r, d)]
        size = 2 * a + 1
    else:
        z = {(r, c): indexed_name("a", r + 1, c + 1) for r in range(d) for c in range(d)}
        names = v + [z[r, c] for r in range(d) for c in range(d)]
        size = a + 1
    if route is Parametrization.VA or size > d:
        return names, None
    matrix = "matrix {" + ", ".join("{" + ", ".join(z[r, c] for c in range(d)) + "}" for r in range(d)) + "}"
    return names, f"minors({size}, {matrix})"


def _degree(poly) -> int:
    import sympy

    return sympy.Poly(poly, *sorted(poly.free_symbols, key=str)).total_degree() if poly.free_symbols else 0
