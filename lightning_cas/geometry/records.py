"""The typed records of the one-layer geometry: results, their parts, and the words they use.

Every enumerated field is a StrEnum whose values are the strings the JSON always carried. Polynomials
are text in the one form of ``core.names`` (Macaulay2 syntax and names: ``q_(1,1,1)``, ``y_4``, ``^``);
``polynomials`` gives them as sympy expressions and ``_repr_latex_`` typesets the ideal in Jupyter.

JSON schema 2 (this form) differs from schema 1 in the polynomial texts (schema 1 wrote sympy syntax,
``q_1_1_1`` and ``**``), in the certificates (schema 1 wrote all eight optional fields, ``null`` where a
kind has none) and in the coordinates the singular and boundary results now carry; ``upgrade`` reads
schema 1, so every result file ever written still loads.
"""

from __future__ import annotations

import enum
import typing
from dataclasses import dataclass

from lightning_cas.core.network import Network
from lightning_cas.core.names import (coordinate_name, legacy_polynomial_text, parse_polynomials, polynomial_latex,
                                      token_name)
from lightning_cas.core.results import JsonResult, Provenance, Record
from lightning_cas.geometry.certificates import Certificate, legacy_certificate

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


_STRATUM_CODES = {Stratum.RANK11: "rank11", Stratum.PARALLEL: "parallel", Stratum.RANK_A: "rankA",
                  Stratum.VERTEX: "vertex", Stratum.UNLISTED: "none"}
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


class Verdict(enum.StrEnum):
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

    def coordinate_table(self) -> list[tuple[str, int, str, str | None]]:
        """Per coordinate: (name y_i, output row, the token monomial it is the coefficient of, and y_i as a
        polynomial in the parameters, or None when the record has no coordinates)."""
        polys = tuple(self.coordinates) or (None,) * len(self.coordinate_labels)
        return [(coordinate_name(i), row, monomial_text(self.architecture, exps), poly)
                for i, ((row, exps), poly) in enumerate(zip(self.coordinate_labels, polys), start=1)]


def _legacy(value):
    """Polynomial texts of schema 1 (a list of strings) in today's form; anything else as it is, for
    ``from_dict`` to refuse with its own message."""
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return [legacy_polynomial_text(v) for v in value]
    return value


def _legacy_items(items, *keys):
    if not isinstance(items, (list, tuple)):
        return items
    return [{**item, **{k: _legacy(item[k]) for k in keys if k in item}} if isinstance(item, dict) else item
            for item in items]


# ---------------------------------------------------------------- implicit ideal


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
        return {**data, **{k: _legacy(data[k]) for k in ("generators", "coordinates") if k in data}}

    def text(self) -> str:
        from lightning_cas.geometry.text import implicit_text

        return implicit_text(self)


# ---------------------------------------------------------------- singular locus


@dataclass(frozen=True)
class VarietyNumbers(Record):
    """Dimension, codimension and degree of the variety a singular locus was computed on."""

    dimension: int
    codimension: int
    degree: int


@dataclass(frozen=True)
class SlicePiece(Polynomials, Record):
    """A piece of a weight slice V = [I_r 0; 0 0] (strata method): which slice, and its equations."""

    GENERATORS = "slice_generators"

    rank_V: int
    slice: str
    slice_generators: tuple[str, ...]


@dataclass(frozen=True)
class SingularPiece(SlicePiece):
    """A singular piece found on a weight slice (strata method)."""

    jacobian_rank: int
    codimension: int
    image_dimension: int
    rank_A: int
    colspace_A_in_rowspace_V: bool
    contained_in: tuple[Stratum, ...] = ()


@dataclass(frozen=True)
class UnresolvedPiece(SlicePiece):
    """A slice piece the strata method did not examine (its minors exceeded the budget)."""

    reason: str


@dataclass(frozen=True)
class SingularLocusResult(Coordinates, Polynomials, Provenance, JsonResult):
    """Jacobian-criterion singular locus of the neurovariety, its components and their meaning."""

    SCHEMA = 2
    GENERATORS = "singular_ideal"

    architecture: Network
    one_coordinate: bool
    variety: VarietyNumbers
    singular_ideal: tuple[str, ...]  # empty when the strata method left a piece unresolved
    singular_dimension: int | None  # -1: smooth everywhere (unit ideal); None: not determined
    components: tuple[IdealComponent, ...] = ()  # whole-ideal method: the minimal primes of the singular ideal
    pieces: tuple[SingularPiece, ...] = ()  # strata method: the singular pieces on weight slices
    script: str | None = None
    notes: tuple[str, ...] = ()
    unresolved: tuple[UnresolvedPiece, ...] = ()  # strata method: pieces whose minors exceeded the budget
    complete: bool = True  # every point of the variety was examined
    coordinates: tuple[str, ...] = ()  # y_i in the parameters, as in ImplicitResult
    coordinate_labels: tuple = ()

    @classmethod
    def upgrade(cls, data: dict, schema: int) -> dict:
        out = dict(data)
        if "singular_ideal" in out:
            out["singular_ideal"] = _legacy(out["singular_ideal"])
        for key, field in (("components", "generators"), ("pieces", "slice_generators"),
                           ("unresolved", "slice_generators")):
            if key in out:
                out[key] = _legacy_items(out[key], field)
        return out

    def text(self) -> str:
        from lightning_cas.geometry.text import singular_text

        return singular_text(self)


@dataclass(frozen=True)
class PointSingularityResult(Provenance, JsonResult):
    """Is φ_W a singular point of the neurovariety, and is W a critical point of W ↦ φ_W?"""

    architecture: Network
    point: dict
    phi_is_zero: bool
    singular: bool | None  # from the tangent space of the implicit ideal at φ_W (exact)
    tangent_rank: int | None
    codimension: int | None
    critical: bool  # rank of the differential of the parametrization below the generic rank
    differential_rank: int
    generic_rank: int
    notes: tuple[str, ...] = ()

    def text(self) -> str:
        from lightning_cas.geometry.text import point_singularity_text

        return point_singularity_text(self)


# ---------------------------------------------------------------- boundary


@dataclass(frozen=True)
class BoundarySample(Record):
    """A verdict at one random point of a candidate component."""

    point: dict  # {"Q", "K", "V"} of the one layer
    boundary: bool | None
    evidence: str


@dataclass(frozen=True)
class BoundaryComponent(Polynomials, Record):
    """A candidate component of the boundary closure, judged at its sample points."""

    stratum: Stratum
    source: tuple[Source, ...]
    verdict: Verdict
    samples: tuple[BoundarySample, ...] = ()
    dimension: int | None = None
    degree: int | None = None
    generators: tuple[str, ...] = ()


@dataclass(frozen=True)
class BoundaryResult(Coordinates, Polynomials, Provenance, JsonResult):
    """A real verdict at a point (with its certificate) and/or the Zariski closure of the boundary."""

    SCHEMA = 2
    GENERATORS = "boundary_closure"

    architecture: Network
    boundary: bool | None  # verdict for the given point; None without a point or where nothing is proved
    evidence: str
    certificate: Certificate | None
    point: dict | None
    in_critical_image: bool | None
    critical_image: tuple[str, ...]  # generators in y_1..y_n; empty when not computed
    critical_image_dimension: int | None
    boundary_closure: tuple[str, ...]  # generators of the Zariski closure of the boundary; empty if not computed
    boundary_closure_dimension: int | None
    closure_complete: bool | None  # every candidate component decided
    components: tuple[BoundaryComponent, ...]
    script: str | None = None
    notes: tuple[str, ...] = ()
    coordinates: tuple[str, ...] = ()  # y_i in the parameters (when the closure was computed)
    coordinate_labels: tuple = ()

    @property
    def critical_image_polynomials(self) -> tuple[sympy.Expr, ...]:
        return parse_polynomials(tuple(self.critical_image))

    @classmethod
    def upgrade(cls, data: dict, schema: int) -> dict:
        out = dict(data)
        for key in ("critical_image", "boundary_closure"):
            if key in out:
                out[key] = _legacy(out[key])
        if "components" in out:
            out["components"] = _legacy_items(out["components"], "generators")
        if isinstance(out.get("certificate"), dict):
            out["certificate"] = legacy_certificate(out["certificate"])
        return out

    def text(self) -> str:
        from lightning_cas.geometry.text import boundary_text

        return boundary_text(self)
