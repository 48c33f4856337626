"""The one place ``auto`` is decided: the surest route to a question within its limits, the cheapest of equally
sure ones (geometry.solvers declares them), and a fallback to the next when a route refuses on the way (a
limit only its own system shows, e.g. msolve's free weights or the boundary's bottleneck). The result says
which route answered and why, in a note."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from lightning_cas.errors import InputError, MsolveNotFoundError, TooLargeError, UnsupportedError
from lightning_cas.geometry.solvers import Solver, solver, solvers

REFUSALS = (TooLargeError, UnsupportedError, MsolveNotFoundError)
VERBS = {"degree": "degree", "ed": "ed_degree", "boundary": "boundary_ed"}


@dataclass(frozen=True)
class Plan:
    """The routes to try in order (one when a method was named) and the better ones passed over, with why."""

    question: str
    method: str
    routes: tuple[Solver, ...]
    passed: tuple[str, ...] = ()

    @property
    def first(self) -> Solver:
        return self.routes[0]


def methods(question: str) -> tuple[str, ...]:
    return ("auto",) + tuple(s.method for s in solvers(question))


def plan(question: str, arch, method: str = "auto", msolve=None) -> Plan:
    """The routes ``method`` allows for ``arch``, checked before any work: a named route's refusal is raised;
    ``auto`` keeps the routes within their limits, best first, and raises the last refusal when none is."""
    choices = methods(question)
    if not isinstance(method, str) or method not in choices:
        raise InputError(f"{VERBS[question]}: method must be one of {', '.join(choices)}, got {method!r}.")
    if method != "auto":
        route = solver(question, method)
        route.check(arch, msolve)
        return Plan(question, method, (route,))
    routes, passed, last = [], [], None
    for route in solvers(question):
        try:
            route.check(arch, msolve)
        except REFUSALS as exc:
            if not routes:  # a better route passed over: the note says why
                passed.append(f"{route.method} ({route.engine}): {exc}")
            last = exc
            continue
        routes.append(route)
    if not routes:
        assert last is not None
        raise last
    return Plan(question, method, tuple(routes), tuple(passed))


def run(question: str, arch, method: str, attempt: Callable[[str], object], msolve=None):
    """``attempt(route's method)`` on the planned routes: with ``auto``, a route that refuses on the way hands
    over to the next; the result gets one note naming the route that answered and why."""
    p = plan(question, arch, method, msolve)
    passed = list(p.passed)
    for k, route in enumerate(p.routes):
        try:
            result = attempt(route.method)
        except REFUSALS as exc:
            if method != "auto":
                raise
            if k == len(p.routes) - 1:  # every route refused: the last one's words, and the better ones' (one line)
                if not passed:
                    raise
                raise type(exc)(f"{str(exc).rstrip('.')}; auto passed over " + "; ".join(passed)) from None
            passed.append(f"{route.method} ({route.engine}): {exc}")
            continue
        return _noted(result, route, method, passed)
    raise AssertionError("unreachable: the last route returns or raises")


def why(route: Solver, passed) -> str:
    """The note of ``auto``: which route answered and why (a named method is the result's own ``method``)."""
    text = f"auto chose {route.method} ({route.engine}, {route.certainty}: {route.answers})"
    if not passed:
        return text + ": the surest route, and the quickest of the equally sure"
    return text + "; passed over: " + "; ".join(passed)


def _noted(result, route: Solver, method: str, passed):
    if method != "auto" or not dataclasses.is_dataclass(result) or not hasattr(result, "notes"):
        return result
    return dataclasses.replace(result, notes=tuple(result.notes) + (why(route, passed),))
