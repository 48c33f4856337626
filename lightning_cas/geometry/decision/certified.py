"""``boundary_ed(method="monodromy")``: every complex critical point of the distance from X0 to a decision
boundary that is a translated power sum in its bottleneck (one hidden affine layer and x^d), each certified
(geometry.decision.radius_certified), and the robustness radius read from the certified real ones: a point value to the
width of the boxes. Short of the proved count, the Taylor/ray enclosure (seconds, computed first) is kept,
its upper end lowered to the nearest certified real critical point, and the result says how many were found.
"""

from __future__ import annotations

import random
import time
from fractions import Fraction

from lightning_cas.errors import InputError, TimeLimitError
from lightning_cas.geometry.decision.m2_radius import text
from lightning_cas.geometry.decision.msolve import box_point, enclosed_radius, polynomial_text
from lightning_cas.geometry.decision.radius_bounds import enclose
from lightning_cas.geometry.decision.radius_certified import PRECISION, critical_points, power_sum
from lightning_cas.geometry.decision.radius_exact import bottleneck_point, box, pullback, sqrt_down, sqrt_up
from lightning_cas.geometry.decision.system import boundary_system
from lightning_cas.macaulay2.connection import Macaulay2
from lightning_cas.results.critical import ExactBoundaryResult, RadiusInterval
from lightning_cas.system.deadline import check, time_limit

POINT_WIDTH = 1e-10  # the radius is a point value when its certified interval is at most this wide


REFUSAL = (
    "--method monodromy certifies the critical points of a boundary that is a smooth translated power sum "
    "sum_j c_j (z_j + b_j)^d + c0 (c0 != 0) in its bottleneck coordinates (one hidden affine layer and a power "
    "activation); this one is not: use --method msolve."
)


def check_shape(net) -> None:
    """The refusal before any work: only linear, power, linear networks have power-sum boundaries."""
    from lightning_cas.core.network import Linear, Power

    kinds = [type(b) for b in getattr(net, "blocks", ())]
    if kinds != [Linear, Power, Linear]:
        raise InputError(REFUSAL)


def certified_boundary(arch, net, values, source, w, w_source, x0, x0_source, seed, timeout, m2=None):
    from lightning_cas.core.theory import generic_ed_degree

    start = time.perf_counter()
    notes: list[str] = []
    with time_limit(timeout):
        bs = boundary_system(net, values, w)
        ps = power_sum(bs.h, bs.r)
        if ps is None or ps.c0 == 0:
            raise InputError(REFUSAL)
        flat = None if x0 is None else [v for row in x0 for v in row]
        if flat is not None:
            z0 = bottleneck_point(bs, flat)
        else:  # the count alone: at a random rational point of the bottleneck (its ED degree, certified)
            rng = random.Random(seed)
            z0 = [Fraction(rng.randint(-(10**6), 10**6), 1000) for _ in range(bs.r)]
        h_at = ps.c0 + sum(c * (z + b) ** ps.d for c, z, b in zip(ps.c, z0, ps.b))
        on = flat is not None and h_at == 0  # X0 on B, which is smooth: radius 0, nothing to solve
        enclosure = None if flat is None else enclose(bs.reduced, flat, seed)
    pts = None
    left = None if timeout is None else max(timeout - (time.perf_counter() - start), 1e-3)
    try:
        if not on:
            with time_limit(left):
                (pts,) = critical_points(ps, bs.S, [z0], Macaulay2(binary=m2))
    except TimeLimitError as exc:
        check()  # an enclosing limit (a sweep job's) that ran out still ends the run
        if enclosure is None:
            raise
        notes.append(f"the critical points were not all certified within the time limit ({exc})")
    real_boxes, maybe = (), ()
    if pts is not None and flat is not None:
        P = pullback(bs)
        real_boxes = tuple(sorted((box(bs, P, flat, z0, zb) for zb in pts.real), key=lambda b: b.squared))
        maybe = tuple(box(bs, P, flat, z0, zb) for zb in pts.unclassified)
    radius = None
    if on:
        radius = RadiusInterval(0.0, 0.0, "0", "0", True, "smooth", 0.0, method="exact")
    elif flat is not None:
        radius = _radius(pts, real_boxes, maybe, enclosure)
    if pts is not None:
        notes.append(
            f"MonodromySolver reached {pts.certified} of the bound {pts.bound} = d sum_(i<k) (d-1)^i (d = {ps.d}, "
            f"k = {ps.k}) in {pts.monodromy_s:.3g} s CPU, the parameter homotopy to X0 took {pts.homotopy_s:.3g} s, "
            f"the Krawczyk certificates (arb, {PRECISION} bits) {pts.certify_s:.3g} s, the check at infinity "
            f"{pts.infinity_s:.3g} s; {pts.reason}"
        )
        if not pts.complete:
            notes.append(
                "not every critical point was certified: the radius is the enclosure (a Taylor bound below), its "
                "upper end the nearest certified real critical point where that is nearer"
            )
        if pts.unclassified:
            notes.append(
                f"{len(pts.unclassified)} certified box(es) meet the real space without being proved real: they "
                "count for the radius's lower end only"
            )
    complete = pts is not None and pts.complete
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
        ed_degree=pts.bound if complete else None,
        primes=(),
        generic_ed_degree=generic_ed_degree(bs.reduced_degree, bs.r, bs.homogeneous),
        point=None if x0 is None else tuple(text(Fraction(v)) for v in flat),
        point_source=x0_source,
        readout_source=w_source,
        on_boundary=on,
        real_critical_points=len(real_boxes) if complete else None,
        critical_points=tuple(box_point(b, "smooth") for b in real_boxes),
        singular_dimension=-1,  # c_j != 0 and c0 != 0: grad h = 0 only at w = 0, where h = c0
        radius=radius,
        method="monodromy",
        method_detail="Macaulay2 MonodromySolver on h = 0, z - u = l S grad h in the bottleneck coordinates until "
        "the proved bound on the count, a parameter homotopy to X0, Krawczyk certificates in ball arithmetic",
        certainty="exact",
        certainty_detail=(
            "every complex critical point certified (Krawczyk, pairwise disjoint boxes, as many as the bound; none "
            "at infinity): the count and the radius are proved"
            if complete
            else "the radius: a certified enclosure; the count: a lower bound (not every critical point certified)"
        ),
        seed=seed,
        elapsed_s=time.perf_counter() - start,
        notes=tuple(notes),
    )


def _radius(pts, real_boxes, maybe, enclosure) -> RadiusInterval:
    """From every real critical point when all are certified (a box not proved real or non-real counts below,
    never above), else the enclosure."""
    if pts is not None and pts.complete and real_boxes:
        lo = min(b.squared[0] for b in real_boxes + maybe)
        hi = min(b.squared[1] for b in real_boxes)
        return RadiusInterval(
            lower=sqrt_down(lo),
            upper=sqrt_up(hi),
            squared_lower=text(lo),
            squared_upper=text(hi),
            certified=True,
            at="smooth",
            smooth_lower=sqrt_down(lo),
            method="krawczyk",
        )
    rad = enclosed_radius(enclosure)
    if real_boxes and (enclosure.squared_upper is None or real_boxes[0].squared[1] < enclosure.squared_upper):
        hi = real_boxes[0].squared[1]
        rad = RadiusInterval(
            lower=rad.lower,
            upper=sqrt_up(hi),
            squared_lower=rad.squared_lower,
            squared_upper=text(hi),
            certified=True,
            at="smooth",
            method="bounds",
        )
    return rad
