"""The robustness radius read from Macaulay2's record at X0: the real critical points, the singular
candidates, what certifies the distance, and a cone's radius carried back from X0 / c. Apart from
geometry.decision.m2, which plans and runs the boundary's computation.
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import numpy as np

from lightning_cas.errors import M2ParseError
from lightning_cas.macaulay2.parse import json_get, json_int, json_list
from lightning_cas.results.critical import CriticalPoint, SingularComponent


def text(q: Fraction) -> str:
    """A rational as Macaulay2 and the result files write it: 3, -1/2."""
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def _floats(items, script) -> tuple[float, ...]:
    try:
        return tuple(float(v) for v in items)
    except (TypeError, ValueError):
        raise M2ParseError(f"expected numbers from Macaulay2, got {str(items)[:100]}", script) from None


def _sign_change(coeffs: list[int], lo: Fraction, hi: Fraction) -> bool:
    def h(x):
        return sum(Fraction(c) * x**k for k, c in enumerate(coeffs))

    return h(lo) * h(hi) <= 0


def _on_boundary(x0: np.ndarray, singular: bool) -> dict:
    """X0 on B (Macaulay2 found g(X0) = 0 over QQ): the radius is 0 exactly, attained at X0 itself."""
    where = "singular" if singular else "smooth"
    here = CriticalPoint(
        coordinates=tuple(float(v) for row in x0 for v in row),
        distance=0.0,
        stratum=where,
        certified=True,
        certified_real=True,
        beta_bound=0.0,
    )
    return {
        "critical_points": (here,),
        "on_boundary": True,
        "radius": 0.0,
        "radius_at": where,
        "radius_certified": True,
        "notes": [],
        "radius_evidence": "X0 lies on the boundary: g(X0) = 0 exactly over QQ, so the nearest boundary point "
        f"is X0 itself (a {where} point of B)",
    }


def radius_record(rec: dict, x0: np.ndarray, script: str) -> dict:
    """The real critical points, the singular candidates and the radius, with what certifies it."""
    rad = json_get(rec, "radius", script)
    if rad.get("on_boundary"):
        return _on_boundary(x0, bool(json_get(rad, "singular_point", script)))
    numeric = json_list(rad, "numeric_points", script)
    exact_count = json_get(rad, "exact_count", script)
    notes, points = [], []
    for p in numeric:
        re, im = _floats(p["real"], script), _floats(p["imag"], script)
        real = p["certified_real"] or (not p["certified_nonreal"] and max(map(abs, im), default=0) < 1e-8)
        if not real:
            continue
        beta = float(p["beta"])
        points.append(
            CriticalPoint(
                coordinates=re,
                distance=float(p["distance"]),
                stratum="smooth",
                certified=bool(p["certified"]),
                certified_real=bool(p["certified_real"]),
                beta_bound=2 * beta if p["certified"] else None,
                multiplier=float(p["lambda"][0]),
            )
        )
    components, singular = [], []
    for c in json_list(rad, "singular_components", script):
        comp = SingularComponent(
            dimension=json_int(c, "dimension", script),
            degree=json_int(c, "degree", script),
            linear=bool(c["linear"]),
            distance_squared=c.get("distance_squared"),
            nearest=tuple(c.get("nearest", ())),
        )
        components.append(comp)
        if comp.linear:
            d2 = Fraction(comp.distance_squared)
            singular.append(
                CriticalPoint(
                    coordinates=tuple(float(Fraction(v)) for v in comp.nearest),
                    distance=math.sqrt(d2),
                    stratum="singular",
                    certified=True,
                    certified_real=True,
                    beta_bound=0.0,
                )
            )
    everything = sorted(points + singular, key=lambda q: q.distance)
    eliminant = [int(c) for c in json_list(rad, "distance_eliminant", script)]
    all_found = exact_count is not None and len(numeric) == exact_count and all(p["certified"] for p in numeric)
    undecided = [p for p in numeric if not p["certified_real"] and not p["certified_nonreal"]]
    evidence, certified = [], False
    best = everything[0] if everything else None
    if best is None:
        evidence.append("no real critical point and no real singular point was found")
    elif best.stratum == "smooth":
        d2 = Fraction(best.distance) ** 2
        slack = Fraction(2 * (best.beta_bound or 0) * best.distance + 1e-9 * (1 + best.distance**2))
        root = bool(eliminant) and _sign_change(eliminant, d2 - slack, d2 + slack)
        evidence.append(
            f"{len(numeric)} homotopy solutions at X0, {exact_count} by the exact ideal"
            + (", all alpha-certified" if all_found else "")
        )
        evidence.append(
            "the squared radius is a root of the exact distance eliminant (sign change)"
            if root
            else "the squared radius shows no sign change of the exact distance eliminant"
        )
        certified = all_found and root and best.certified_real and not undecided
    else:
        evidence.append("attained on the singular locus (exact: the nearest point of a linear component)")
        certified = all_found and not undecided
    if any(not c.linear for c in components):
        certified = False
        notes.append(
            "a component of the singular locus is not a subspace and was not searched: the radius is an upper bound"
        )
    if undecided:
        evidence.append(f"{len(undecided)} solution(s) neither certified real nor certified non-real")
    return {
        "critical_points": tuple(everything),
        "complex_critical_points": len(numeric),
        "exact_critical_points": exact_count,
        "singular_components": tuple(components),
        "radius": best.distance if best else None,
        "radius_at": best.stratum if best else None,
        "radius_certified": certified,
        "radius_evidence": "; ".join(evidence),
        "notes": notes,
    }


def scaled_record(extra: dict, c: Fraction, e: int) -> dict:
    """The radius record at X0 / c carried to X0 (B a cone of degree e): points, distances and bounds times
    c, squared distances times c^2, multipliers times c^(2-e) (x - X0 = lambda grad g, grad g of degree e-1)."""
    f = float(c)

    def point(p: CriticalPoint) -> CriticalPoint:
        return replace(
            p,
            coordinates=tuple(f * v for v in p.coordinates),
            distance=f * p.distance,
            beta_bound=None if p.beta_bound is None else f * p.beta_bound,
            multiplier=None if p.multiplier is None else p.multiplier * f ** (2 - e),
        )

    def component(comp: SingularComponent) -> SingularComponent:
        if not comp.linear:
            return comp
        return replace(
            comp,
            distance_squared=text(Fraction(comp.distance_squared) * c * c),
            nearest=tuple(text(Fraction(v) * c) for v in comp.nearest),
        )

    out = dict(
        extra,
        critical_points=tuple(point(p) for p in extra["critical_points"]),
        singular_components=tuple(component(comp) for comp in extra.get("singular_components", ())),
    )
    if out.get("radius") is not None:
        out["radius"] = f * out["radius"]
    out["notes"] = list(extra.get("notes", [])) + [
        f"B is a cone, so the radius was computed at X0 / 2^{c.numerator.bit_length() - c.denominator.bit_length()}"
        " (largest entry between 1 and 2, the scale the homotopy's tolerances are made for) and carried back "
        "exactly"
    ]
    return out
