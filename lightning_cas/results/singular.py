"""The singular locus of a one-layer neurovariety, and the singularity of one point, as results.

:class:`SingularLocusResult` holds the Jacobian-criterion singular locus (its components, or the
strata method's pieces on weight slices); :class:`PointSingularityResult` whether one φ_W is singular
and W critical. Each with its text, Macaulay2 and LaTeX forms beside its fields.
"""

from __future__ import annotations

from dataclasses import dataclass

from lightning_cas.core.names import indexed_name
from lightning_cas.core.network import Network
from lightning_cas.results.contract import JsonResult, Provenance, Record, how, lines_text
from lightning_cas.results.display import printable
from lightning_cas.results.formats import (
    M2Context,
    coordinate_comments,
    ideal,
    latex_coordinates,
    latex_ideal,
    latex_ring,
    one_layer_model,
    ring,
    y_ring,
)
from lightning_cas.results.ideals import Coordinates, Polynomials, Stratum, coordinate_lines, legacy, legacy_items
from lightning_cas.results.implicit import IdealComponent


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
            out["singular_ideal"] = legacy(out["singular_ideal"])
        for key, field in (
            ("components", "generators"),
            ("pieces", "slice_generators"),
            ("unresolved", "slice_generators"),
        ):
            if key in out:
                out[key] = legacy_items(out[key], field)
        return out

    def text(self, coordinates: bool = False) -> str:
        """What ``lightning-cas singular`` prints (``coordinates``: every y_i with its polynomial)."""
        return singular_text(self, coordinates)

    def m2_lines(self, context: M2Context) -> list[str]:
        return _m2_singular(self)

    def latex_lines(self) -> list[str]:
        lines = []
        if self.singular_dimension is not None:
            lines += [
                latex_ideal(
                    r"I_{\mathrm{sing}}",
                    self.singular_ideal,
                    latex_ring(self.variety.dimension + self.variety.codimension),
                ),
                f"% the singular locus: dimension {self.singular_dimension}",
            ]
        for i, c in enumerate(self.components, 1):
            ring = latex_ring(self.variety.dimension + self.variety.codimension)
            lines += [
                latex_ideal(f"P_{{{i}}}", c.generators, ring),
                f"% component {i}: dimension {c.dimension}, degree {c.degree}",
            ]
        return lines + latex_coordinates(self)


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
        """What ``lightning-cas singular --at`` prints: singular, and critical for the parametrization."""
        lines = [
            f"singular: {str(self.singular).lower()}   (tangent rank {self.tangent_rank} vs codimension "
            f"{self.codimension})",
            f"critical point of the parametrization: {str(self.critical).lower()}   (differential rank "
            f"{self.differential_rank}, generic {self.generic_rank})",
        ]
        lines += [f"note: {note}" for note in self.notes]
        return lines_text(lines)


def singular_text(res, coordinates: bool = False) -> str:
    v = res.variety
    lines = [
        f"{res.architecture}: variety of dimension {v.dimension}, degree {v.degree}   ({how(res)})",
        f"coordinates y_1..y_{v.dimension + v.codimension} (basis of the coefficient span)",
    ]
    lines += coordinate_lines(res, coordinates)
    if res.singular_dimension is not None and res.singular_dimension < 0:
        lines.append("smooth everywhere (the singular ideal is the unit ideal)")
    if res.method == "strata":
        return lines_text(lines + _strata_lines(res))
    for i, c in enumerate(res.components, start=1):
        inside = "; ".join(c.contained_in) or "no listed stratum"
        lines.append(f"component {i}: dimension {c.dimension}, degree {c.degree}, inside: {inside}")
        lines.append("  " + " ; ".join(c.generators[:8]) + (" ..." if len(c.generators) > 8 else ""))
    return lines_text(lines)


def _strata_lines(res) -> list[str]:
    lines = []
    if res.variety.codimension > 0:
        lines.append("singular: the vertex 0 (a cone that is not a linear space)")
    for i, c in enumerate(res.pieces, start=1):
        inside = "; ".join(c.contained_in) or "NO listed stratum"
        eqs = " ; ".join(c.slice_generators) or "the whole slice"
        lines.append(
            f"singular piece {i}: {c.slice}, where {eqs}: rank A = {c.rank_A}, Jacobian rank "
            f"{c.jacobian_rank} < {c.codimension}; closure of dimension {c.image_dimension} = {inside}"
        )
    for c in res.unresolved:
        lines.append(
            f"NOT EXAMINED: {c.slice}, where {' ; '.join(c.slice_generators) or 'the whole slice'} ({c.reason})"
        )
    if res.complete and res.singular_dimension >= 0:
        lines.append(f"singular locus: dimension {res.singular_dimension}, {len(res.singular_ideal)} generators")
        lines.append("  " + " ; ".join(res.singular_ideal[:8]) + (" ..." if len(res.singular_ideal) > 8 else ""))
    return lines + [f"note: {note}" for note in res.notes]


def _m2_singular(res: SingularLocusResult) -> list[str]:
    v = res.variety
    lines = coordinate_comments(res) + [
        f"R = {y_ring(v.dimension + v.codimension)};",
        f"-- the variety: dimension {v.dimension}, codimension {v.codimension}, "
        f"degree {v.degree} (its ideal recomputed by the package)",
        f"I = {one_layer_model(res)};",
        "use R;",
    ]
    if res.singular_dimension is None:
        lines += ["S = null; -- the singular ideal was not assembled (see the pieces)"]
    else:
        lines += [f"-- the singular locus: dimension {res.singular_dimension}", f"S = {ideal(res.singular_ideal)};"]
    if res.components:
        lines += ["singularComponents = {"]
        for i, c in enumerate(res.components, 1):
            comma = "," if i < len(res.components) else ""
            inside = "; ".join(c.contained_in) or "no listed stratum"
            lines += [
                f"    {ideal(c.generators)}{comma} -- dimension {c.dimension}, degree {c.degree}, inside: "
                f"{printable(inside)}"
            ]
        lines += ["    };"]
    pieces = res.pieces + res.unresolved
    if pieces:
        names = _slice_variables(res.architecture)
        lines += [
            "-- pieces on weight slices V = [I_r 0; 0 0], in the slice coordinates",
            f"sliceRing = {ring('QQ', names)};",
            "slicePieces = {",
        ]
        for i, p in enumerate(pieces, 1):
            comma = "," if i < len(pieces) else ""
            what = (
                f"closure of dimension {p.image_dimension} = {'; '.join(p.contained_in) or 'no listed stratum'}"
                if isinstance(p, SingularPiece)
                else f"NOT EXAMINED ({p.reason})"
            )
            lines += [f"    {ideal(p.slice_generators, 'sliceRing')}{comma} -- rank V = {p.rank_V}: {printable(what)}"]
        lines += ["    };", "use R;"]
    return lines


def _slice_variables(arch: Network) -> list[str]:
    d, a = arch.widths[0], arch.attention[0]
    if a >= d:
        return [indexed_name("b", i + 1, j + 1) for i in range(d) for j in range(d)]
    return [indexed_name(m, i + 1, j + 1) for m in "qk" for i in range(a) for j in range(d)]
