"""The solvers of zero-dimensional systems and their counts, as one protocol: for every question, each route
that can answer it says what it returns, how sure that is, a rough cost, and its limits (the one-line refusal
it gives outside them, before any work). The questions (geometry.degree, geometry.decision) build their
systems and run a route; which one ``auto`` runs is decided in geometry.planner from these declarations only.

Certainty, best first: ``exact`` (proved over QQ), ``probabilistic`` (a count mod primes at random data: wrong
only for unlucky choices), ``numeric`` (floats; a count that may stop short, a lower bound). Costs are the
seconds a tiny case takes, measured on the CLI (start-up included: Macaulay2's session ~2 s, msolve's none);
the solving itself grows alike for routes that saturate the same ideal, so the start-up orders equally sure
routes, and the limits keep each route where it finishes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lightning_cas.errors import LightningError, MsolveNotFoundError, TooLargeError, UnsupportedError
from lightning_cas.geometry.guards import (
    IMPLICIT_MAX_WEIGHTS,
    LAGRANGE_MAX_SPAN,
    LAGRANGE_MAX_WEIGHTS,
    NUMERICAL_MAX_WEIGHTS,
    boundary_size,
    guard,
    one_layer,
    span_estimate,
)

CERTAINTIES = ("exact", "probabilistic", "numeric")  # best first


@dataclass(frozen=True)
class Solver:
    """One route to one question: the name ``--method`` takes, the program that solves, how sure its answer is,
    its cost on a tiny case, ``check(arch, msolve)`` that raises its refusal outside its limits, what it answers."""

    question: str
    method: str
    engine: str
    certainty: str
    cost_s: float
    check: Callable[[object, object], None]
    answers: str

    def refusal(self, arch, msolve=None) -> str | None:
        """Why this route cannot answer for ``arch`` (too large, unsupported, its binary missing), or None."""
        try:
            self.check(arch, msolve)
        except (TooLargeError, UnsupportedError, MsolveNotFoundError) as exc:
            return str(exc)
        return None

    @property
    def rank(self) -> tuple[int, float]:
        """The order ``auto`` tries the routes in: the surest first, then the cheapest."""
        return CERTAINTIES.index(self.certainty), self.cost_s


# The checks read the routes' guards (geometry.guards, below the planner); msolve's own size checks are imported
# when called.
def _msolve(arch, msolve) -> None:
    from lightning_cas.msolve.runner import find_msolve

    find_msolve(msolve)


def _degree_implicit(arch, msolve) -> None:
    from lightning_cas.geometry.one_layer.implicit import check_one_layer

    if one_layer(arch):
        check_one_layer(arch)  # the one-layer ideal's own guard: it eliminates from (V, A), far fewer variables
    else:
        guard(arch, IMPLICIT_MAX_WEIGHTS, "implicit")


def _degree_msolve(arch, msolve) -> None:
    from lightning_cas.geometry.degree.msolve import check_size

    check_size(arch, "degree", " or --method numerical")  # 12 free weights are checked on the slice
    _msolve(arch, msolve)


def _numerical(method: str) -> Callable[[object, object], None]:
    def check(arch, msolve) -> None:
        guard(arch, NUMERICAL_MAX_WEIGHTS, method)

    return check


def _ed_lagrange(arch, msolve) -> None:
    guard(arch, LAGRANGE_MAX_WEIGHTS, "lagrange")
    if span_estimate(arch) > LAGRANGE_MAX_SPAN:
        raise TooLargeError(
            f"the lagrange method would take the minors of a Jacobian in up to {span_estimate(arch)} "
            f"coordinates (limit {LAGRANGE_MAX_SPAN}: beyond, the saturation does not finish in "
            "minutes); use --method msolve, or --method monodromy (a lower bound)."
        )


def _ed_msolve(arch, msolve) -> None:
    from lightning_cas.geometry.degree.msolve import check_size

    check_size(arch, "ED degree")
    _msolve(arch, msolve)


def _boundary_m2(arch, msolve) -> None:
    boundary_size(arch)


# fmt: off
ROUTES = (  # question, method, engine, certainty, cost of a tiny case (s), check; what it answers
    ("degree", "implicit", "Macaulay2", "exact", 2.5, _degree_implicit,
     "the degree of the implicit ideal over QQ"),
    ("degree", "msolve", "msolve", "probabilistic", 1.3, _degree_msolve,
     "the points of a generic linear section on a gauge slice, mod two primes"),
    ("degree", "numerical", "Macaulay2", "numeric", 5.0, _numerical("numerical"),
     "a pseudo-witness set and the trace test (failing it, a lower bound)"),
    ("ed", "msolve", "msolve", "probabilistic", 1.4, _ed_msolve,
     "the critical ideal of a gauge slice saturated by its degenerate points, mod two primes"),
    ("ed", "lagrange", "Macaulay2", "probabilistic", 2.9, _ed_lagrange,
     "the saturated Lagrange ideal mod a prime"),
    ("ed", "monodromy", "Macaulay2", "numeric", 10.0, _numerical("monodromy"),
     "critical points of a gauge-fixed parametrization by monodromy (a lower bound)"),
    ("boundary", "msolve", "msolve", "probabilistic", 1.5, _msolve,
     "the Lagrange system mod two primes; at a point, the radius as a certified interval over QQ"),
    ("boundary", "m2", "Macaulay2", "probabilistic", 17.0, _boundary_m2,
     "the Lagrange ideal mod a prime and the homotopy count; at a point, alpha-certified critical points"),
)
# fmt: on
SOLVERS = {q: tuple(Solver(*r) for r in ROUTES if r[0] == q) for q in dict.fromkeys(r[0] for r in ROUTES)}


def solvers(question: str) -> tuple[Solver, ...]:
    """The routes to ``question``, in the order ``auto`` tries them."""
    return tuple(sorted(SOLVERS[question], key=lambda s: s.rank))


def solver(question: str, method: str) -> Solver:
    """The route ``method`` names for ``question``."""
    for s in SOLVERS[question]:
        if s.method == method:
            return s
    raise LightningError(f"{question}: no route named {method!r}")  # the planner checks names first
