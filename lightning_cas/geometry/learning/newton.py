"""The learning coefficient at w* from the Newton polyhedron of the fiber ideal (docs/learning.md, MATH.md §13).

Move w* to 0 and let g_i = c_i(w* + w) − c_i(w*) generate the fiber ideal I; K ≍ Σ g_i², whose Newton polyhedron is
2·Γ₊(I). With τ the least t such that (t, …, t) ∈ Γ₊(I):
- always λ ≤ 1/(2τ): the weighted blow-up along the normal a of a facet through (τ, …, τ) writes K = y^{2N(a)}·K̃
  with K̃ equal to the facet's face part on the exceptional divisor, a nonzero real polynomial, and the Jacobian is
  y^{|a| − 1}, so the zeta function has a pole at −|a|/(2N(a)) = −1/(2τ) from real points as near 0 as wanted;
- when no compact face's system {g_{i,γ} = 0} has a zero on the real torus (ℝ∖0)ⁿ, K is non-degenerate and
  λ = 1/(2τ) with m the codimension of the face whose relative interior holds (τ, …, τ) (Varchenko 1976 for a
  function; Lin 2011, "Algebraic methods for evaluating integrals in Bayesian statistics", for sos-non-degenerate
  ideals; the prior is uniform, so positive at w*). Macaulay2 decides each face exactly
  (m2/templates/newton.m2): a face part that is a sum of even monomials of one sign, or a saturation by the
  product of the variables that gives the unit ideal.
Coordinates: first the slice across the named group's orbit (``slice_coordinates``); where it is degenerate, a
second chart in which the generators' independent linear parts are coordinates (the splitting lemma's), and
the chart that decides, or else the larger τ, is kept. Each is a linear change of the weights, so λ and m stay.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from lightning_cas.core.learning import Bound
from lightning_cas.core.network import Network
from lightning_cas.core.symmetry import orbit_tangents
from lightning_cas.errors import M2ParseError, M2TimeoutError
from lightning_cas.macaulay2.network import check_parameters, package_params
from lightning_cas.macaulay2.parse import json_bool, json_get, json_int, json_str
from lightning_cas.results.learning import LearningBound
from lightning_cas.system.deadline import Deadline, current

NEWTON_MAX_WEIGHTS = 12  # the face lattice and one saturation per compact face: seconds up to here
NEWTON_SECONDS = 60.0  # at most this much of a call's time
NONDEGENERATE = "Newton polyhedron, non-degenerate"  # the theorem's name on the bound it decides


@dataclass(frozen=True)
class NewtonPolyhedron:
    """Γ₊ of the fiber ideal at w* moved to 0: its facets (inward normal a and N(a), ⟨a, x⟩ ≥ N(a)), the distance
    τ of the diagonal, the codimension of the face it meets, and whether every compact face is non-degenerate."""

    facets: tuple[tuple[tuple[int, ...], Fraction], ...]
    distance: Fraction
    codimension: int
    compact_faces: int
    nondegenerate: bool
    degenerate_face: tuple[tuple[int, ...], ...] | None
    exponents: tuple[tuple[int, ...], ...] = ()  # of the generators' terms, on the slice
    coordinates: str = "slice"  # or "adapted": the linear parts of the generators as coordinates
    change: tuple[tuple[str, ...], ...] = ()  # "adapted": new coordinates = change · slice coordinates

    @property
    def value(self) -> Fraction:
        return 1 / (2 * self.distance)


def slice_coordinates(net: Network, values) -> list[int]:
    """Coordinates whose directions complete the named group's orbit tangent at w* (the pivots of its tangent
    vectors, over QQ): holding them at w*'s values gives a linear slice transversal to the orbit. K is constant
    on orbits, and the orbit map of a complement of the stabilizer times the slice is a local diffeomorphism at
    w*, so K on the slice has the same λ and m."""
    import flint

    rows = orbit_tangents(net, values)
    if not rows:
        return []
    M = flint.fmpq_mat(len(rows), net.parameters, [flint.fmpq(v.numerator, v.denominator) for r in rows for v in r])
    R, rank = M.rref()
    pivots = []
    for i in range(rank):
        pivots.append(next(j for j in range(net.parameters) if R[i, j] != 0))
    return pivots


def newton_polyhedron(net: Network, values, m2, fixed=()) -> NewtonPolyhedron | None:
    """Macaulay2's Newton polyhedron of the fiber ideal at w*, on the slice that holds the coordinates ``fixed``;
    None when the ideal is zero there (f never moves)."""
    columns = 1 if net.paper is not None else net.tokens
    params = {**package_params(net), "weightPoint": list(values), "columns": columns, "fixed": list(fixed)}
    script, rec = m2.run("newton", params)
    check_parameters(net, rec, script)
    if json_int(rec, "generators", script) == 0:
        return None
    try:
        facets = tuple((tuple(int(v) for v in row[:-1]), Fraction(row[-1])) for row in json_get(rec, "facets", script))
        bad = json_get(rec, "degenerate_face", script)
        out = NewtonPolyhedron(
            facets=facets,
            distance=Fraction(json_str(rec, "distance", script)),
            codimension=json_int(rec, "codimension", script),
            compact_faces=json_int(rec, "compact_faces", script),
            nondegenerate=json_bool(rec, "nondegenerate", script),
            degenerate_face=None if bad is None else tuple(tuple(int(v) for v in p) for p in bad),
            exponents=tuple(tuple(int(v) for v in e) for e in json_get(rec, "exponent_list", script)),
            coordinates=json_str(rec, "coordinates", script),
            change=tuple(tuple(str(v) for v in row) for row in rec.get("change", ())),
        )
    except (TypeError, ValueError, ZeroDivisionError):
        raise M2ParseError("Macaulay2's Newton polyhedron record is malformed", script) from None
    _check(out, net.parameters - len(fixed), script)
    return out


def _check(p: NewtonPolyhedron, n: int, script: str) -> None:
    """The distance and the face's codimension recomputed from the facets (each a valid inequality of Γ₊)."""
    ratios = [N / sum(a) for a, N in p.facets if sum(a) > 0]
    if any(min(a) < 0 or len(a) != n for a, _ in p.facets) or not ratios or max(ratios) != p.distance:
        raise M2ParseError(f"Macaulay2's Newton polyhedron does not have the distance {p.distance}", script)
    if not 1 <= p.codimension <= n:
        raise M2ParseError(f"Macaulay2's face codimension {p.codimension} is not in [1, {n}]", script)


def newton_bounds(net: Network, values, opts, notes: list[str]) -> list[LearningBound]:
    """λ ≤ 1/(2τ) always; λ = 1/(2τ) with m the face's codimension where every compact face is non-degenerate."""
    if net.parameters > NEWTON_MAX_WEIGHTS or opts is None:
        return []
    left = current().left("before the Newton polyhedron at w*")
    budget = NEWTON_SECONDS if left is None else min(NEWTON_SECONDS, left / 2)
    fixed = slice_coordinates(net, values)
    try:
        p = newton_polyhedron(net, values, replace(opts.macaulay2, deadline=Deadline(budget)), fixed)
    except M2TimeoutError:
        notes.append(f"the Newton polyhedron at w* did not finish in {budget:.0f} s; the bounds from it are left out")
        return []
    if p is None:
        return []
    tau = _text(p.distance)
    on = f", on the slice holding {len(fixed)} coordinates across the named group's orbit," if fixed else ""
    if p.coordinates == "adapted":
        on += " in coordinates that make the linear parts of the generators coordinates,"
    where = f"the Newton polyhedron of the fiber ideal at w* (moved to 0){on} meets the diagonal at τ = {tau}"
    if p.nondegenerate:
        why = (
            f"{where}, on a face of codimension {p.codimension}; none of its {p.compact_faces} compact faces has a "
            f"real torus zero (exact, Macaulay2): K is non-degenerate, λ = 1/(2τ) = {_text(p.value)} with "
            f"m = {p.codimension} (Varchenko 1976; Lin 2011 for ideals)"
        )
        return [LearningBound.of("equal", Bound(p.value, why, NONDEGENERATE), p.codimension)]
    face = ", ".join("(" + ",".join(map(str, v)) + ")" for v in p.degenerate_face or ())
    notes.append(
        f"Newton polyhedron at w*: degenerate in these coordinates (or undecided): the compact face with vertices "
        f"{face} has a face system with complex torus zeros and no sign argument; only its upper bound is used"
    )
    why = f"{where}: the weighted blow-up along a facet through it gives a real pole at -1/(2τ) (Varchenko 1976)"
    return [LearningBound.of("upper", Bound(p.value, why, "Newton distance"))]


def chart_data(net: Network, values, m2) -> dict | None:
    """The data a proof of λ consumes, for a point the Newton polyhedron decides (None otherwise): the slice
    (coordinates held at w*), the chart's coordinates, the generators' exponents, and for each facet ⟨a, x⟩ ≥ N
    of Γ₊(I) the weighted blow-up chart along a: K = y^(2N)·(unit where non-degenerate), Jacobian y^(|a| − 1),
    candidate pole −|a|/(2N). λ is the least candidate and m the rank of the normals that attain it. This is
    the weighted blow-up of each facet, not a full toric resolution (a regular refinement of the normal fan)."""
    fixed = slice_coordinates(net, values)
    p = newton_polyhedron(net, values, m2, fixed)
    if p is None or not p.nondegenerate:
        return None
    return {
        "network": net.label(),
        "weights": [str(v) for v in values],
        "slice_fixed": fixed,
        "coordinates": p.coordinates,
        "change": [list(row) for row in p.change],
        "exponents": [list(e) for e in p.exponents],
        "facets": [
            {
                "normal": list(a),
                "N": _text(N),
                "K_exponent": _text(2 * N),
                "jacobian_exponent": sum(a) - 1,
                "pole": _text(Fraction(sum(a)) / (2 * N)) if N else None,
            }
            for a, N in p.facets
        ],
        "distance": _text(p.distance),
        "learning_coefficient": _text(p.value),
        "multiplicity": p.codimension,
        "compact_faces_non_degenerate": p.compact_faces,
        "theorem": "Varchenko 1976; Lin 2011 (sos-non-degenerate ideals); uniform prior",
    }


def _text(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"
