"""The real boundary of a one-layer neuromanifold as a result: a verdict at a point with its certificate,
and the Zariski closure of the boundary with the candidate components it was judged from.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass

from lightning_cas.core.names import parse_polynomials
from lightning_cas.core.network import Network
from lightning_cas.results.certificates import Certificate, legacy_certificate
from lightning_cas.results.contract import JsonResult, Provenance, Record, how, lines_text
from lightning_cas.results.formats import (
    M2Context,
    comment,
    coordinate_comments,
    ideal,
    latex_coordinates,
    latex_ideal,
    latex_ring,
    one_layer_model,
    y_ring,
)
from lightning_cas.results.ideals import (
    Coordinates,
    Polynomials,
    SampleVerdict,
    Source,
    Stratum,
    coordinate_lines,
    legacy,
    legacy_items,
)

if typing.TYPE_CHECKING:
    import sympy


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
    verdict: SampleVerdict
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
                out[key] = legacy(out[key])
        if "components" in out:
            out["components"] = legacy_items(out["components"], "generators")
        if isinstance(out.get("certificate"), dict):
            out["certificate"] = legacy_certificate(out["certificate"])
        return out

    def text(self, coordinates: bool = False) -> str:
        """What ``lightning-cas boundary`` prints (``coordinates``: every y_i with its polynomial)."""
        return boundary_text(self, coordinates)

    def m2_lines(self, context: M2Context) -> list[str]:
        return _m2_boundary(self)

    def latex_lines(self) -> list[str]:
        lines = []
        ring_ = latex_ring(_boundary_ambient(self)) if self.boundary_closure or self.critical_image else ""
        if self.boundary_closure:
            lines += [
                latex_ideal(r"I_{\partial}", self.boundary_closure, ring_),
                f"% the Zariski closure of the boundary: dimension {self.boundary_closure_dimension}",
            ]
        if self.critical_image_dimension is not None:
            lines += [
                latex_ideal(r"I_{\mathrm{crit}}", self.critical_image, ring_),
                f"% the image of the critical points: dimension {self.critical_image_dimension}",
            ]
        return lines + latex_coordinates(self)


def boundary_text(res, coordinates: bool = False) -> str:
    lines = [f"{res.architecture}"]  # first, as implicit and singular do: the coordinate table follows
    if res.point is not None:
        verdict = "unknown" if res.boundary is None else str(res.boundary).lower()
        lines.append(f"boundary: {verdict}   ({res.evidence})")
        if res.in_critical_image is not None:
            lines.append(f"in the Zariski closure of the critical image: {str(res.in_critical_image).lower()}")
    if res.coordinate_labels:
        lines.append(f"coordinates y_1..y_{len(res.coordinate_labels)} (basis of the coefficient span)")
        lines += coordinate_lines(res, coordinates)
    if res.critical_image_dimension is not None:
        lines.append(f"image of the critical points: dimension {res.critical_image_dimension}")
    for i, c in enumerate(res.components, start=1):
        flags = ", ".join(str(s.boundary).lower() for s in c.samples)
        lines.append(
            f"candidate {i}: closure of {c.stratum} (from the {' and '.join(c.source)}), dimension "
            f"{c.dimension}, degree {c.degree}: {c.verdict} (sample verdicts: {flags})"
        )
    if res.closure_complete is not None:
        if res.boundary_closure:
            gens = res.boundary_closure
            lines.append(
                f"Zariski closure of the boundary: dimension {res.boundary_closure_dimension}"
                + ("" if res.closure_complete else " (INCOMPLETE: undecided candidates)")
            )
            lines.append("  " + " ; ".join(gens[:8]) + (" ..." if len(gens) > 8 else ""))
        else:
            lines.append(
                "Zariski closure of the boundary: "
                + ("at most the vertex" if res.closure_complete else "not determined (undecided candidates)")
            )
    lines.append(f"({how(res)})")
    lines += [f"note: {note}" for note in res.notes]
    return lines_text(lines)


def _boundary_ambient(res: BoundaryResult) -> int:
    if not res.coordinate_labels:
        raise ValueError(
            "this boundary result carries no coordinates (no closure was computed, or it was written "
            "before results carried them), so the ring of its ideals is not known"
        )
    return len(res.coordinate_labels)


def _m2_boundary(res: BoundaryResult) -> list[str]:
    lines = coordinate_comments(res)
    if res.point is not None:
        verdict = "unknown" if res.boundary is None else str(res.boundary).lower()
        lines += [comment(f"the point: boundary {verdict} ({res.evidence})")]
    lines += [
        f"R = {y_ring(_boundary_ambient(res))};",
        "-- the variety (its ideal recomputed by the package)",
        f"I = {one_layer_model(res)};",
        "use R;",
    ]
    if res.boundary_closure:
        state = "" if res.closure_complete else " (INCOMPLETE: undecided candidates)"
        lines += [
            f"-- the Zariski closure of the boundary: dimension {res.boundary_closure_dimension}{state}",
            f"B = {ideal(res.boundary_closure)};",
        ]
    else:
        why = "at most the vertex" if res.closure_complete else "not determined (undecided candidates)"
        lines += [f"B = null; -- the Zariski closure of the boundary: {why}"]
    if res.critical_image_dimension is not None:
        lines += [
            f"-- the image of the critical points: dimension {res.critical_image_dimension}",
            f"criticalImageIdeal = {ideal(res.critical_image)};",
        ]
    if res.components:
        lines += ["boundaryCandidates = {"]
        for i, c in enumerate(res.components, 1):
            comma = "," if i < len(res.components) else ""
            candidate = ideal(c.generators) if c.generators else "null"
            source = " and ".join(c.source)
            lines += [f"    {candidate}{comma} -- closure of {c.stratum} (from the {source}): {c.verdict}"]
        lines += ["    };"]
    return lines
