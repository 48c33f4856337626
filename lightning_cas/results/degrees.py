"""The results of the degree and ED degree verbs: the count, how sure it is, and what it was counted on.

A count that is only known from below (a numerical run whose trace test failed, a monodromy run that no
exact method confirmed) says so in ``lower_bound``; its text never presents it as the answer.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from lightning_cas.core.network import Network
from lightning_cas.results.contract import JsonResult, Provenance, optional
from lightning_cas.results.dimension import Source


class Metric(enum.StrEnum):
    """The quadratic form of an ED degree."""

    GENERIC = "generic"  # a random linear change of coordinates, then Euclidean: an invariant
    STANDARD = "standard"  # Euclidean in the coordinates y_i of the coefficient span
    DATA = "data"  # sum_n |f(X_n)|^2 of given inputs


@dataclass(frozen=True)
class DegreeResult(Provenance, JsonResult):
    """The degree of the neurovariety (the affine cone's, i.e. its projectivization's) in coordinates of
    the coefficient span; for a network that is not a cone, the number of points on a generic affine
    section of complementary dimension."""

    architecture: Network
    degree: int | None
    dimension: int | None
    coordinates: int  # the linear span of the coefficients: the ambient space of the variety
    lower_bound: bool = False  # a numerical count that failed the trace test
    trace_residual: float | None = None  # the trace test's residual (numerical method)
    trace_test_passed: bool | None = None
    script: str | None = None
    notes: tuple[str, ...] = ()
    primes: tuple[int, ...] | None = optional()  # msolve: the characteristics whose counts agreed

    def text(self) -> str:
        if self.degree is None:
            return f"degree: unknown   ({self.method}; {self.certainty})"
        how = f"{self.method}; {self.certainty}"
        if self.primes:
            how += "; mod " + " and ".join(map(str, self.primes))
        if self.trace_residual is not None:
            verdict = "passed" if self.trace_test_passed else "FAILED"
            how += f"; trace test residual {self.trace_residual:.3g} ({verdict})"
        head = f"degree >= {self.degree} (a lower bound)" if self.lower_bound else f"degree {self.degree}"
        return f"{head}, dimension {self.dimension}, in {self.coordinates} coordinates   ({how})"


@dataclass(frozen=True)
class EDDegreeResult(Provenance, JsonResult):
    """The ED degree: complex critical points of q(f - u) on the smooth locus, for generic data u."""

    architecture: Network
    metric: Metric
    ed_degree: int | None
    dimension: int | None  # of the variety the count was taken on
    coordinates: int  # its ambient coordinates (for the data metric: a basis of the evaluations' span)
    lower_bound: bool = False  # a monodromy count that no exact method confirmed
    prime: int | None = None  # the Lagrange method's characteristic
    primes: tuple[int, ...] | None = optional()  # msolve: the characteristics whose counts agreed
    degenerate: bool | None = None  # data metric: the evaluation map has a kernel on the coefficient span
    span: int | None = None  # data metric: the dimension of the coefficient span (the variety's own ambient)
    inputs: Source | None = optional()  # data metric: the input file
    solutions: int | None = optional()  # monodromy, msolve: critical points of the gauge slice found
    stable_loops: int | None = optional()  # monodromy: loops without a new solution before it stopped
    script: str | None = None
    notes: tuple[str, ...] = ()

    def text(self) -> str:
        mod = " and ".join(map(str, self.primes)) if self.primes else self.prime
        how = f"{self.method}; {self.certainty}" + (f"; mod {mod}" if mod else "")
        if self.ed_degree is None:
            return f"ED degree ({self.metric.value} metric): unknown   ({how})"
        head = (
            f"ED degree >= {self.ed_degree} (found and stable, a lower bound)"
            if self.lower_bound
            else f"ED degree {self.ed_degree}"
        )
        where = f"variety of dimension {self.dimension} in {self.coordinates} coordinates"
        return f"{head} ({self.metric.value} metric), {where}   ({how})"
