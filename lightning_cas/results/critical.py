"""The records of critical points: decision boundaries (ED degree, robustness radius) and training.

Every count says how it was found: ``exact`` counts are degrees of ideals mod a prime at a random
point (probabilistic: a bad prime or point lowers them), ``numeric`` counts are distinct regular
homotopy solutions (a lower bound: a failed path loses one). A critical point found numerically is
``certified`` when alpha theory in exact arithmetic proves a true solution within ``beta_bound`` of it
(NumericalCertification), and ``certified_real`` when that solution is real.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from lightning_cas.core.network import Network
from lightning_cas.results.contract import JsonResult, Provenance, Record
from lightning_cas.results.dimension import Source


def _fmt(x: float | None) -> str:
    return "none" if x is None else f"{x:.6g}"


@dataclass(frozen=True)
class CriticalPoint(Record):
    """A real critical point of |X - X0|^2 on the boundary: coordinates row-major (x_(r,j)), distance."""

    coordinates: tuple[float, ...]
    distance: float
    stratum: str  # "smooth" (a Lagrange point of B) or "singular" (on the singular locus of B)
    certified: bool  # alpha theory proves a solution of the Lagrange system within beta_bound
    certified_real: bool
    beta_bound: float | None = None  # 2 beta: the certified distance to the true solution
    multiplier: float | None = None  # lambda in x - X0 = lambda grad g


@dataclass(frozen=True)
class SingularComponent(Record):
    """A component (over QQ) of the singular locus of B and, when it is a subspace, its nearest point."""

    dimension: int
    degree: int
    linear: bool
    distance_squared: str | None = None  # exact rational, when linear
    nearest: tuple[str, ...] = ()


@dataclass(frozen=True)
class DecisionBoundaryResult(Provenance, JsonResult):
    """The ED degree of the decision boundary B = {X : <w, f_W(X)> = 0} and, with a point, its radius."""

    architecture: Network
    weights: Source
    readout: tuple[tuple[str, ...], ...]  # w, d_L x t, exact rationals as text
    polynomial: str  # g(X) = sum_ij w_ij f_W(X)_ij in x_(r,j), Macaulay2 syntax
    variables: int  # n = d_0 t
    degree: int  # of g
    reduced_degree: int  # of its squarefree part (B is taken reduced)
    factors: int  # distinct irreducible factors over QQ
    ed_degree: int | None  # the agreed count; None when the methods disagree
    ed_degree_exact: int  # degree of the saturated critical ideal mod prime at a random point
    prime: int
    ed_degree_numeric: tuple[int, ...]  # distinct regular homotopy solutions, one per run
    homogeneous: bool  # g homogeneous: B is a cone
    generic_ed_degree: int  # a generic hypersurface of the same degree (a generic cone when g is homogeneous)
    point: tuple[str, ...] | None = None  # X0 row-major, exact rationals as text
    point_source: str | None = None
    readout_source: str | None = None
    critical_points: tuple[CriticalPoint, ...] = ()  # the real ones, nearest first
    complex_critical_points: int | None = None  # homotopy solutions at X0
    exact_critical_points: int | None = None  # degree of the critical ideal at X0 over QQ
    singular_components: tuple[SingularComponent, ...] = ()
    on_boundary: bool = False  # X0 lies on B (g(X0) = 0 exactly): radius 0, attained at X0
    radius: float | None = None
    radius_at: str | None = None  # "smooth" or "singular"
    radius_certified: bool = False
    radius_evidence: str | None = None
    script: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def agree(self) -> bool:
        return all(c == self.ed_degree_exact for c in self.ed_degree_numeric)

    def text(self) -> str:
        """The lines the command line prints after the architecture (which prints the notes after them)."""
        lines = [
            f"decision boundary B = {{X : <w, f_W(X)> = 0}}: degree {self.degree} in {self.variables} input "
            f"coordinates ({self.factors} irreducible factor(s), reduced degree {self.reduced_degree})",
            f"ED degree {self.ed_degree if self.ed_degree is not None else 'UNDECIDED'}: exact mod "
            f"{self.prime} {self.ed_degree_exact}, homotopy {', '.join(map(str, self.ed_degree_numeric))} "
            f"(a generic {'cone' if self.homogeneous else 'hypersurface'} of degree {self.reduced_degree}: "
            f"{self.generic_ed_degree})   "
            f"({self.method}; {self.certainty}; {self.elapsed_s:.3g} s)",
        ]
        if self.point is not None and self.on_boundary:
            lines.append(f"at X0 = ({', '.join(self.point)}): X0 lies on the boundary")
        elif self.point is not None:
            lines.append(
                f"at X0 = ({', '.join(self.point)}): {self.complex_critical_points} complex critical "
                f"points by homotopy, {self.exact_critical_points} by the exact ideal; "
                f"{len(self.critical_points)} real"
            )
            for p in self.critical_points:
                flag = "certified real" if p.certified_real else ("certified" if p.certified else "not certified")
                lines.append(
                    f"  distance {p.distance:.10g}  {p.stratum:8s} {flag:15s} at "
                    f"({', '.join(f'{c:.6g}' for c in p.coordinates)})"
                )
            for c in self.singular_components:
                extra = f", nearest at distance^2 {c.distance_squared}" if c.linear else " (not a subspace)"
                lines.append(f"  singular component: dimension {c.dimension}, degree {c.degree}{extra}")
        if self.point is not None:
            lines.append(
                f"robustness radius {_fmt(self.radius)} (at a {self.radius_at} point; "
                f"{'certified' if self.radius_certified else 'NOT certified'}): {self.radius_evidence}"
            )
        return "\n".join(lines)


@dataclass(frozen=True)
class TrainingPoint(Record):
    """A real critical point of the squared loss on the function space (its values on the inputs)."""

    loss: float
    values: tuple[float, ...]  # f(X_n), flattened (n, output row, token)
    kind: str  # "local minimum", "saddle", "local maximum" or "degenerate" (second-order test)
    hessian_eigenvalues: tuple[float, ...]  # of the loss on the tangent space, ascending
    weights: tuple[float, ...] = ()  # a preimage on the gauge slice (complex parts dropped when real)
    found_by: tuple[str, ...] = ()  # the methods that found it


@dataclass(frozen=True)
class TrainingResult(Provenance, JsonResult):
    """The real critical points of sum_n |f(X_n) - Y_n|^2 on the function space of a small network."""

    architecture: Network
    samples: int
    inputs: Source
    targets: Source
    function_dimension: int  # m: the dimension of the function space (the gauge slice's)
    evaluation_rank: int  # rank of the data metric on the function space (m: non-degenerate)
    complex_critical_points: int  # distinct function-space images of the homotopy solutions
    critical_points: tuple[TrainingPoint, ...]  # real ones, lowest loss first
    minimum_loss: float | None
    local_search_minimum: float | None  # the best loss of the independent local searches
    local_searches: int
    script: str | None = None
    notes: tuple[str, ...] = ()

    def text(self) -> str:
        """The lines the command line prints after the architecture (which prints the notes after them)."""
        lines = [
            f"squared loss on {self.samples} sample(s): function space of dimension {self.function_dimension}"
            f", data metric of rank {self.evaluation_rank}"
            + (
                " (degenerate: critical points of the projection)"
                if self.evaluation_rank < self.function_dimension
                else ""
            ),
            f"{self.complex_critical_points} complex critical points (homotopy on a gauge slice), "
            f"{len(self.critical_points)} real   ({self.method}; {self.certainty}; {self.elapsed_s:.3g} s)",
        ]
        for p in self.critical_points:
            lines.append(f"  loss {p.loss:.10g}  {p.kind}  (found by {', '.join(p.found_by)})")
        lines.append(
            f"smallest loss {_fmt(self.minimum_loss)}; best of {self.local_searches} local searches "
            f"{_fmt(self.local_search_minimum)}"
        )
        return "\n".join(lines)


@dataclass(frozen=True)
class BoxPoint(Record):
    """A real point of the boundary certified by an isolating box: its box in the inputs X (exact
    rationals as text, row-major), the box's midpoint, and the interval of |X - X0|^2 over the box."""

    coordinates: tuple[float, ...]  # the midpoint of the box
    box: tuple[tuple[str, str], ...]
    squared_distance: tuple[str, str]
    stratum: str  # "smooth" (a critical point of the distance) or "singular" (a real singular point of B)


@dataclass(frozen=True)
class RadiusInterval(Record):
    """The robustness radius as a certified interval: the distance from X0 to B(R) lies in [lower, upper]
    (floats rounded outwards from the exact squared ends). ``lower`` is None when it is not a bound on
    the distance to all of B (a positive-dimensional singular locus: the smooth locus only)."""

    lower: float | None
    upper: float | None
    squared_lower: str | None
    squared_upper: str | None
    certified: bool
    at: str | None  # "smooth" or "singular": where the smallest upper end is; "ray": a point of B on a ray
    smooth_lower: float | None = None  # the lower end over the smooth locus' critical points alone
    # "isolation": every real critical point isolated (the interval is as tight as the boxes); "bounds": the
    # isolation did not finish, so a Taylor bound below and an exact point of B above (geometry.decision.radius_bounds);
    # "krawczyk": every complex critical point certified, the real ones' boxes (geometry.decision.radius_certified);
    # "exact": X0 on the boundary
    method: str = "isolation"


@dataclass(frozen=True)
class ExactBoundaryResult(Provenance, JsonResult):
    """The decision boundary by msolve: its ED degree mod two primes and, with a point, every real critical
    point as an isolating box and the radius as a certified interval."""

    architecture: Network
    weights: Source
    readout: tuple[tuple[str, ...], ...]
    polynomial: str  # g(X) in x_(r,j)
    variables: int  # n = d_0 t
    bottleneck: int  # r: the coordinates Q X that g depends on (r < n: solved in r unknowns)
    degree: int
    reduced_degree: int
    factors: int
    homogeneous: bool
    ed_degree: int | None  # None: msolve did not finish the count in time (the notes say so)
    primes: tuple[int, ...]
    generic_ed_degree: int  # a generic hypersurface (cone) of the reduced degree in the bottleneck coordinates
    point: tuple[str, ...] | None = None
    point_source: str | None = None
    readout_source: str | None = None
    on_boundary: bool = False
    real_critical_points: int | None = None  # exact: msolve's isolating boxes, one per real critical point
    critical_points: tuple[BoxPoint, ...] = ()  # nearest first
    singular_dimension: int | None = None  # of the singular locus of B: -1 empty, 0 finite
    singular_points: tuple[BoxPoint, ...] = ()  # the real ones, when finite
    radius: RadiusInterval | None = None
    script: str | None = None
    notes: tuple[str, ...] = ()

    def text(self) -> str:
        lines = [
            f"decision boundary B = {{X : <w, f_W(X)> = 0}}: degree {self.degree} in {self.variables} input "
            f"coordinates, through {self.bottleneck} bottleneck coordinates ({self.factors} irreducible "
            f"factor(s), reduced degree {self.reduced_degree})",
            (
                "ED degree not counted in time (see the notes)"
                if self.ed_degree is None
                else f"ED degree {self.ed_degree}: mod {' and '.join(map(str, self.primes))}"
                if self.primes
                else f"ED degree {self.ed_degree}: every critical point certified"
            )
            + " (a generic "
            f"{'cone' if self.homogeneous else 'hypersurface'} of degree {self.reduced_degree} in "
            f"{self.bottleneck} coordinates: {self.generic_ed_degree})   ({self.method}; {self.certainty}; "
            f"{self.elapsed_s:.3g} s)",
        ]
        if self.point is None:
            return "\n".join(lines)
        if self.on_boundary:
            lines.append(f"at X0 = ({', '.join(self.point)}): X0 lies on the boundary")
        elif self.real_critical_points is None and not self.critical_points:
            lines.append(
                f"at X0 = ({', '.join(self.point)}): the real critical points were not isolated (see the notes)"
            )
        else:
            lines.append(
                f"at X0 = ({', '.join(self.point)}): {self.real_critical_points} real critical points "
                "(isolating boxes), singular locus "
                + {None: "unknown", -1: "empty"}.get(
                    self.singular_dimension,
                    f"{len(self.singular_points)} real point(s)"
                    if self.singular_dimension == 0
                    else f"of dimension {self.singular_dimension}",
                )
            )
            for p in self.critical_points + self.singular_points:
                lo, hi = (float(Fraction(v)) for v in p.squared_distance)
                lines.append(
                    f"  distance^2 in [{lo:.12g}, {hi:.12g}]  {p.stratum:8s} at "
                    f"({', '.join(f'{c:.6g}' for c in p.coordinates)})"
                )
        rad = self.radius
        if rad is None or (rad.upper is None and rad.lower is None):
            lines.append("robustness radius: none (B has no real point)" if rad else "robustness radius: unknown")
        elif rad.upper is None:
            lines.append(f"robustness radius at least {rad.lower:.12g} (no real point of B was isolated; certified)")
        else:
            low = "?" if rad.lower is None else f"{rad.lower:.12g}"
            how = (
                "; an enclosure: a Taylor bound below, an exact point of B above, as the critical points were "
                "not isolated"
                if rad.method == "bounds"
                else ""
            )
            lines.append(
                f"robustness radius in [{low}, {rad.upper:.12g}] (at a {rad.at} point; "
                f"{'certified' if rad.certified else 'NOT certified'}{how})"
            )
        return "\n".join(lines)
