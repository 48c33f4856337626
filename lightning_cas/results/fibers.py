"""The fiber through a weight point W as a result: the paper's network (:class:`FiberResult`, the fiber
ideal's components against the symmetry orbit) and a network of blocks (:class:`NetworkFiberResult`,
tangent ranks and the directions beyond the orbit), with the verdicts' words, text, Macaulay2 and
LaTeX forms beside their fields.
"""

from __future__ import annotations

import json
import re
import typing
from dataclasses import dataclass

from lightning_cas.core.names import legacy_polynomial_text
from lightning_cas.core.network import Network
from lightning_cas.results.contract import JsonResult, Provenance, Record, lines_text, optional
from lightning_cas.results.formats import M2Context, comment, ideal, latex_ideal, ring
from lightning_cas.results.ideals import Polynomials

if typing.TYPE_CHECKING:
    import sympy

# the fiber verdicts, of fiber() for every network
VERDICT_ORBIT = "fiber equals symmetry orbit closure"
VERDICT_COMPONENTS = "extra components"
VERDICT_DIMENSIONS = "extra dimensions"
VERDICT_DIMENSION_ONLY = "dimension equals symmetry orbit (components not computed)"
VERDICT_PERMUTATIONS = "fiber equals symmetry orbit closure up to head permutations"
VERDICT_INCONSISTENT = "inconsistent"  # orbit larger than the fiber: a bug or a wrong prime, never hidden


@dataclass(frozen=True)
class FiberComponent(Polynomials, Record):
    """One minimal prime of the fiber ideal: generators in q_(i,r,c), k_(i,r,c), v_(i,r,c) (core.names),
    whether W lies on it, and a witness weight point on it off W's component (or None)."""

    dimension: int
    degree: int
    contains_point: bool
    generators: tuple[str, ...]
    witness: dict | None = None


@dataclass(frozen=True)
class FiberResult(Provenance, JsonResult):
    """The fiber through one point W, its components, and the symmetry orbit it is compared with.

    ``components`` holds one record per minimal prime: dimension, degree, contains_point (whether
    W lies on it), generators (polynomial texts, core.names; ``component_ideal`` gives sympy
    expressions) and witness (a weight point on the component that is not in W's component, or
    None). The fast path leaves ``components`` empty. Schema 2: the texts in Macaulay2's form
    (``q_(1,1,1)``, ``^``); schema 1 wrote sympy's (``q_1_1_1``, ``**``) and still loads.
    """

    SCHEMA = 2

    architecture: Network
    point: dict
    fiber_dimension: int
    components: tuple[FiberComponent, ...]
    symmetry_orbit_dimension: int
    symmetry_group_dimension: int
    verdict: str
    message: str
    parameters: int
    generic_fiber_dimension: int | None = None  # parameters - generic rank (modp)
    tangent_dimension: int | None = None  # parameters - rank of the Jacobian at W (mod p)
    field: str = "QQ"
    primes: tuple = ()
    script: str | None = None
    notes: tuple = ()
    point_source: str | None = optional()  # where W came from, in words ("random (seed 0)", "file w.json")

    def text(self) -> str:
        return fiber_text(self)

    def m2_lines(self, context: M2Context) -> list[str]:
        return _m2_fiber(self)

    def latex_lines(self) -> list[str]:
        lines = []
        for i, c in enumerate(self.components, 1):
            lines += [
                latex_ideal(
                    f"F_{{{i}}}",
                    c.generators,
                    r"\mathbb{Q}[W]" if self.field == "QQ" else rf"\mathbb{{F}}_{{{self.field[3:]}}}[W]",
                ),
                f"% component {i}: dimension {c.dimension}, degree {c.degree}",
            ]
        if not self.components:
            lines += [f"% no decomposition ({self.method}): fiber dimension {self.fiber_dimension}"]
        return lines

    def component_ideal(self, index: int) -> list[sympy.Expr]:
        """Generators of component ``index`` (0-based) as sympy polynomials in q_(i,r,c), k_(i,r,c), v_(i,r,c)."""
        return list(self.components[index].polynomials)

    @classmethod
    def upgrade(cls, data: dict, schema: int) -> dict:
        if isinstance(data.get("components"), list):
            data = {
                **data,
                "components": [
                    {**c, "generators": [legacy_polynomial_text(g) for g in c["generators"]]}
                    if isinstance(c, dict)
                    and isinstance(c.get("generators"), list)
                    and all(isinstance(g, str) for g in c["generators"])
                    else c
                    for c in data["components"]
                ],
            }
        return data


@dataclass(frozen=True)
class ExtraDirection(Record):
    """Fiber directions at W beyond the named orbit that change exactly these weight matrices."""

    count: int
    matrices: tuple[str, ...]  # e.g. "v (block 2)", "p (block 3)"


@dataclass(frozen=True)
class NetworkFiberResult(Provenance, JsonResult):
    """The fiber through W of a network of blocks: dimensions by tangent ranks, and what lies beyond the orbit."""

    architecture: Network
    point: dict  # the blocks form of W
    generic_fiber_dimension: int  # parameters - generic rank
    tangent_dimension: int  # parameters - rank at W: the fiber's tangent space at W
    symmetry_orbit_dimension: int  # the named group's orbit at W
    symmetry_group_dimension: int
    verdict: str
    message: str
    parameters: int
    primes: tuple[int, ...] = ()
    extra: tuple[ExtraDirection, ...] = ()
    notes: tuple[str, ...] = ()
    source: "dict | None" = optional()  # the point's file and sha256
    point_source: str | None = optional()  # how W was drawn when no point was given

    def text(self) -> str:
        return network_fiber_text(self)

    def m2_lines(self, context: M2Context) -> list[str]:
        return [
            f"-- the fiber through W: generic fiber dimension {self.generic_fiber_dimension}, tangent space at W "
            f"{self.tangent_dimension} ({self.method}: tangent ranks, no ideal)",
            "F = null; -- the fiber of a network of blocks is computed by tangent ranks, without an ideal",
            comment(f"verdict: {self.verdict}: {self.message}"),
        ]

    @property
    def fiber_dimension(self) -> int:
        return self.generic_fiber_dimension


def _point_line(res) -> str:
    """Where W came from: drawn (the verb says how), a file (the CLI or the weight reader says which), or
    given from Python."""
    told = getattr(res, "point_source", None)
    if told:
        return f"point: {told}"
    source = getattr(res, "source", None)
    if isinstance(source, dict) and source.get("source"):
        return f"point: file {source['source']}"
    return "point: given"


def _compact(point: dict) -> str:
    def mat(M):
        return "[" + "; ".join(" ".join(str(v) for v in row) for row in M) + "]"

    return "  ".join(
        f"{name}{i}={mat(layer[name])}" for i, layer in enumerate(point["layers"], 1) for name in ("Q", "K", "V")
    )


def fiber_text(res) -> str:
    """What ``lightning-cas fiber`` prints for the paper's network."""
    lines = [f"{res.architecture}", _point_line(res)]
    how_ = [res.method, res.certainty, f"field {res.field}", f"seed {res.seed}"]
    if res.m2_version:
        how_.append(f"Macaulay2 {res.m2_version}")
    how_.append(f"{res.elapsed_s:.3g} s")
    lines.append(f"fiber dimension {res.fiber_dimension}   ({'; '.join(how_)})")
    lines.append(
        f"symmetry orbit dimension {res.symmetry_orbit_dimension} "
        f"(named group dimension {res.symmetry_group_dimension})"
    )
    for n, comp in enumerate(res.components, 1):
        mark = "contains W" if comp.contains_point else "does not contain W"
        lines.append(f"component {n}: dimension {comp.dimension}, degree {comp.degree}, {mark}")
        lines += [f"    {g}" for g in comp.generators]
        if comp.witness is not None:
            lines.append(f"    witness point: {_compact(comp.witness)}")
    lines.append(f"verdict: {res.verdict}: {res.message}")
    lines += [f"note: {note}" for note in res.notes]
    return lines_text(lines)


def network_fiber_text(res) -> str:
    """What ``lightning-cas fiber`` prints for a network of blocks (tangent ranks)."""
    lines = [f"{res.architecture}", _point_line(res)]
    how_ = f"{res.method}; {res.certainty}; primes {', '.join(map(str, res.primes))}; seed {res.seed}"
    lines.append(f"generic fiber dimension {res.generic_fiber_dimension}   ({how_}; {res.elapsed_s:.3g} s)")
    lines.append(
        f"tangent space of the fiber at W {res.tangent_dimension}, named orbit at W "
        f"{res.symmetry_orbit_dimension} (named group dimension {res.symmetry_group_dimension})"
    )
    for d in res.extra:
        lines.append(f"    {d.count} direction(s) beyond the orbit moving {', '.join(d.matrices)}")
    lines.append(f"verdict: {res.verdict}: {res.message}")
    lines += [f"note: {note}" for note in res.notes]
    return lines_text(lines)


def _m2_fiber(res: FiberResult) -> list[str]:
    from lightning_cas.core.model import flat_weight_symbols
    from lightning_cas.core.weights import flat, point_from_dict

    field = res.field if re.fullmatch(r"ZZ/\d+", res.field) else "QQ"  # GF(p) of the fast path: no ideal
    arch = res.architecture
    names = [str(s) for s in flat_weight_symbols(arch)]
    # a result holds its point frozen (tuples); the reader wants the JSON form (lists)
    values = [str(x) for x in flat(point_from_dict(arch, json.loads(json.dumps(res.point))))]
    lines = [f"R = {ring(field, names)};", "weightPoint = {" + ", ".join(values) + "}; -- W, in the order of gens R"]
    if not res.components:
        lines += [f"F = null; -- no decomposition ({res.method}): fiber dimension {res.fiber_dimension}"]
        return lines
    lines += ["fiberComponents = {"]
    for i, c in enumerate(res.components, 1):
        comma = "," if i < len(res.components) else ""
        mark = "contains W" if c.contains_point else "does not contain W"
        lines += [f"    {ideal(c.generators)}{comma} -- dimension {c.dimension}, degree {c.degree}, {mark}"]
    lines += [
        "    };",
        f"-- the fiber (its radical): dimension {res.fiber_dimension}",
        "F = intersect fiberComponents;",
        comment(f"verdict: {res.verdict}: {res.message}"),
    ]
    return lines
