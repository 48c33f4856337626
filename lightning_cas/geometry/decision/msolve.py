"""``boundary_ed(method="msolve")``: the decision boundary's ED degree and the certified robustness radius,
without Macaulay2 (geometry.decision.system builds and counts the system, geometry.decision.radius_exact isolates
the real points at X0). No size guard of its own beyond the expansion's: msolve runs until the deadline.
"""

from __future__ import annotations

import time
from fractions import Fraction

from lightning_cas.errors import TimeLimitError
from lightning_cas.geometry.decision.m2_radius import text
from lightning_cas.geometry.decision.radius_bounds import enclose
from lightning_cas.geometry.decision.radius_exact import radius_at, sqrt_down, sqrt_up
from lightning_cas.geometry.decision.system import MAX_REDUCED, boundary_system, count_ed, singular_system
from lightning_cas.geometry.degree.msolve import MSOLVE_PRIMES
from lightning_cas.msolve.runner import msolve_version
from lightning_cas.msolve.solve import leading_ideal
from lightning_cas.results.critical import BoxPoint, ExactBoundaryResult, RadiusInterval
from lightning_cas.system.deadline import ALARM_GRACE_S, check, current, time_limit


def box_point(b, stratum: str) -> BoxPoint:
    return BoxPoint(
        coordinates=tuple(float((lo + hi) / 2) for lo, hi in b.x),
        box=tuple((text(lo), text(hi)) for lo, hi in b.x),
        squared_distance=(text(b.squared[0]), text(b.squared[1])),
        stratum=stratum,
    )


def _singular_dimension(bs, status: str, msolve, threads) -> int:
    """-1 (empty), 0 (finite) or the dimension of the singular locus of B (mod the first prime)."""
    if status == "empty":
        return -1
    if status == "finite":
        return 0
    names = [f"z{i}" for i in range(1, bs.r + 1)]
    ideal = leading_ideal(names, singular_system(bs), MSOLVE_PRIMES[0], msolve=msolve, threads=threads)
    return ideal.dimension + (bs.n - bs.r)  # B's singular locus is the cylinder over H's


def _radius(rec) -> RadiusInterval | None:
    squared = rec["squared"]
    if squared is None:
        return RadiusInterval(None, None, None, None, rec["certified"], None)
    lo, hi = squared
    smooth_lo = min((b.squared[0] for b in rec["smooth"]), default=None)
    return RadiusInterval(
        lower=sqrt_down(lo) if rec["certified"] else None,
        upper=None if hi is None else sqrt_up(hi),
        squared_lower=text(lo) if rec["certified"] else None,
        squared_upper=None if hi is None else text(hi),
        certified=rec["certified"],
        at=rec["at"],
        smooth_lower=None if smooth_lo is None else sqrt_down(smooth_lo),
    )


def msolve_boundary(arch, net, values, source, w, w_source, x0, x0_source, seed, timeout, msolve, threads=1):
    """The ED degree (mod two primes) and, with ``x0``, the real critical points and the radius interval."""
    from lightning_cas.core.theory import generic_ed_degree
    from lightning_cas.errors import TooLargeError

    start = time.perf_counter()
    notes: list[str] = []
    with time_limit(timeout):
        bs = boundary_system(net, values, w)
        if bs.r > MAX_REDUCED:
            raise TooLargeError(
                f"g depends on {bs.r} coordinates of the input (no bottleneck below that); the msolve method "
                f"solves in at most {MAX_REDUCED}."
            )
        version = msolve_version(msolve)
        # seconds, and a certified radius interval whatever msolve then reaches: computed first
        enclosure = None if x0 is None else enclose(bs.reduced, [v for row in x0 for v in row], seed)
    count = _count_in_time(bs, seed, timeout, start, msolve, threads, notes, enclosure is not None)
    rec = None if x0 is None or count is None else _radius_in_time(bs, x0, timeout, start, msolve, threads, notes)
    if bs.r < bs.n:
        notes.append(
            f"g depends on X only through {bs.r} linear combinations Q X of its {bs.n} coordinates: solved "
            f"in those, with the metric (Q Q^T)^-1 (B is a cylinder)"
        )
    if bs.reduced_degree != bs.degree:
        notes.append("<w, f_W(X)> is not squarefree: B is taken reduced (its squarefree part)")
    if count is not None:
        notes.append(
            f"msolve took {count['msolve_s']:.3g} s on the Lagrange system mod both primes; input: {count['input']}"
        )
    extra: dict = {}
    if rec is None and enclosure is not None:
        extra = dict(
            on_boundary=enclosure.squared_upper == 0, real_critical_points=None, radius=enclosed_radius(enclosure)
        )
        notes.append(
            f"the radius is enclosed instead: below, the Taylor bound |g(X0)| > sum_k N_k r^k (no zero of g "
            f"within r of X0); above, a point of B on a rational ray from X0 ({enclosure.rays} random rays, the "
            "nearest hits refined by Newton's method), exact rationals: certified, not tight"
        )
    if rec is not None:
        smooth = tuple(box_point(b, "smooth") for b in rec["smooth"])
        singular = tuple(box_point(b, "singular") for b in rec["singular"])
        dim = 0 if rec["on_boundary"] else _singular_dimension(bs, rec["singular_status"], msolve, threads)
        if rec["status"] == "positive":
            notes.append(
                "the critical points of the distance from X0 form a positive-dimensional set (X0 is not in "
                "general position, e.g. a centre of curvature): the radius is not certified"
            )
        if dim > 0 and rec["certified"]:
            notes.append(
                f"the singular locus of B has dimension {dim}: it lies in the hypersurface l . grad h = 0 (l "
                "random), whose distance from X0 (its own critical points and singular locus, recursively) "
                "bounds the distance to it from below, so the lower end may lie below the radius"
            )
        elif dim > 0:
            notes.append(
                f"the singular locus of B has dimension {dim} and no bound below on its distance was found: "
                "the interval's upper end is a distance to B, its lower end (smooth_lower) covers the smooth "
                "locus only; the radius is not certified"
            )
        extra = dict(
            on_boundary=rec["on_boundary"],
            real_critical_points=None if rec["status"] == "positive" or rec["on_boundary"] else len(rec["smooth"]),
            critical_points=smooth if not rec["on_boundary"] else (),
            singular_dimension=dim,
            singular_points=singular if not rec["on_boundary"] else (),
            radius=_radius(rec),
        )
        if rec["on_boundary"]:
            extra["critical_points"], extra["singular_points"] = smooth, singular
        if rec["squared"] is None and rec["certified"]:
            notes.append("B has no real point: there is no critical point and no real singular point")
        if not rec["on_boundary"]:
            notes.append(
                f"msolve took {rec['msolve_s']:.3g} s on the real roots over QQ; inputs: {', '.join(rec['inputs'])}"
            )
    return ExactBoundaryResult(
        architecture=arch,
        weights=source,
        readout=tuple(tuple(text(Fraction(v)) for v in row) for row in w),
        polynomial=polynomial_text(bs, net),
        variables=bs.n,
        bottleneck=bs.r,
        degree=bs.degree,
        reduced_degree=bs.reduced_degree,
        factors=bs.factors,
        homogeneous=bs.homogeneous,
        ed_degree=None if count is None else count["ed_degree"],
        primes=tuple(MSOLVE_PRIMES),
        generic_ed_degree=generic_ed_degree(bs.reduced_degree, bs.r, bs.homogeneous),
        point=None if x0 is None else tuple(text(Fraction(v)) for row in x0 for v in row),
        point_source=x0_source,
        readout_source=w_source,
        **extra,
        method="msolve",
        method_detail=f"msolve {version}: the Lagrange system h = 0, z - u = l S grad h in the {bs.r} bottleneck "
        "coordinates z = Q X at a random integer u, its degree mod two primes"
        + (
            "; at X0 the same system and the singular locus over QQ, real roots in isolating boxes"
            if rec is not None
            else "; at X0 a Taylor bound below and a point of B on a ray above (no isolation in time)"
            if enclosure is not None
            else ""
        ),
        certainty="probabilistic",
        certainty_detail=(
            "the ED degree: two primes agree at a random point (wrong only for unlucky choices)"
            if count is not None
            else "the ED degree: not counted in time"
        )
        + (
            "; the real critical points and the radius interval: exact (isolating boxes, rational interval arithmetic)"
            if rec is not None
            else "; the radius interval: an enclosure in exact rational arithmetic (certified, not tight)"
            if enclosure is not None
            else ""
        ),
        seed=seed,
        elapsed_s=time.perf_counter() - start,
        script=None if count is None else count["input"],
        notes=tuple(notes),
    )


# of an enclosing limit (the command's --timeout): the time to print what a stopped step left, after its alarm's
# grace (a step in Python is stopped by the alarm, which comes that moment after the end)
RESERVE_S = ALARM_GRACE_S + 1.0


def _time_left(timeout, start) -> float | None:
    """What the limits leave since ``start`` (a sliver, never zero: the limit then fires at once): this run's, and
    an enclosing one's less RESERVE_S, so that a step it stops is reported, not cut off with the command."""
    ends = [] if timeout is None else [timeout - (time.perf_counter() - start)]
    if current().end is not None:
        ends.append(current().end - time.monotonic() - RESERVE_S)
    return max(min(ends), 1e-3) if ends else None


def _count_in_time(bs, seed, timeout, start, msolve, threads, notes: list, enclosed: bool) -> dict | None:
    """The ED degree mod two primes in the time left; when it runs out with a radius enclosed, None and a
    note (the enclosure is a result); with nothing else to report, the one-line timeout. An enclosing limit
    that ran out still ends the run."""
    left = _time_left(timeout, start)
    try:
        with time_limit(left):
            return count_ed(bs, seed, msolve=msolve, threads=threads)
    except TimeLimitError as exc:
        check()
        if not enclosed:
            raise
        notes.append(f"the ED degree was not counted within the time limit ({exc})")
        return None


def enclosed_radius(enc) -> RadiusInterval:
    return RadiusInterval(
        lower=sqrt_down(enc.squared_lower),
        upper=None if enc.squared_upper is None else sqrt_up(enc.squared_upper),
        squared_lower=text(enc.squared_lower),
        squared_upper=None if enc.squared_upper is None else text(enc.squared_upper),
        certified=True,
        at="ray" if enc.squared_upper is not None else None,
        method="bounds",
    )


def _radius_in_time(bs, x0, timeout, start, msolve, threads, notes: list) -> dict | None:
    """The real critical points at X0 in the time the count left; when it runs out, the count stands (it is
    exact already) and a note says the radius was not reached: a finished result is never thrown away. An
    enclosing limit (a sweep job's) that ran out still ends the run."""
    left = _time_left(timeout, start)
    try:
        with time_limit(left):
            return radius_at(bs, [v for row in x0 for v in row], msolve=msolve, threads=threads)
    except TimeLimitError as exc:
        check()
        notes.append(
            f"the real critical points at X0 were not isolated within the time limit ({exc}): the radius is "
            "enclosed by bounds instead; the ED degree above is complete"
        )
        return None


def polynomial_text(bs, net) -> str:
    """g in the names x_(r,j) (row-major), as the Macaulay2 route writes it."""
    from lightning_cas.core.names import token_name

    names = [token_name(r + 1, j + 1) for r in range(net.input) for j in range(net.tokens)]
    return _rename(bs.g, names)


def _rename(poly, names) -> str:
    terms = []
    for exps, c in sorted(poly.to_dict().items(), key=lambda kv: (-sum(kv[0]), [-e for e in kv[0]])):
        q = Fraction(int(c.p), int(c.q))
        mono = "*".join(f"{v}^{e}" if e > 1 else v for v, e in zip(names, exps) if e)
        coef = text(abs(q))
        body = mono if (abs(q) == 1 and mono) else (f"{coef}*{mono}" if mono else coef)
        terms.append(("-" if q < 0 else "+") + body)
    out = "".join(terms)
    return out[1:] if out.startswith("+") else out
