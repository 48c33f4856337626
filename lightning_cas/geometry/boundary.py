"""The real boundary of a one-layer neuromanifold M = φ(ℝ^N) inside X(ℝ), X its Zariski closure.

M is closed (φ = 0 only when V = 0 or A = 0, so the projectivized map has no base points), hence
its boundary is the set of points of M with points of X(ℝ) \\ M arbitrarily close. A verdict at a
rational weight point W comes with a certificate (the M2 side is ``pointVerdict`` in
``m2/LightningCAS.m2``; the real-root counts are done here, exactly):

* **interior** by submersion (a regular real preimage, p = φ_W smooth), or by branches: the whole
  complex fiber of p consists of finitely many real regular orbits. φ is proper on balanced weights
  (|φ(V, A)| ≥ c|V||A|), so every branch of X at p is the image of a germ at a fiber point; each is
  then a smooth germ that φ maps a real neighbourhood onto, real points included;
* **boundary** by a witness curve: φ is bilinear in two weight blocks, so for δ in the kernel of that
  partial differential at a critical preimage, q(s) = φ(W + i√s δ) = p − s φ₂(δ) is a real point of X.
  Its fiber (in (V, A), rank A ≤ a, |V|² = 1: every real orbit is there) projects to f(s, t) = 0; no
  real root of f(s₀, ·) and no root of lc·disc in (0, s₀] means no q(s), 0 < s ≤ s₀, has a real
  preimage, and q(s) → p (M2 eliminates, sympy takes the discriminant and the Sturm counts);
* the **vertex**: X(ℝ) and M are cones, so 0 is a boundary point exactly when X(ℝ) ≠ M; one witness
  point anywhere shows it.

The Zariski closure of the boundary lies in the critical image plus the singular locus (elsewhere the
submersion argument applies). Both are computed on G-orbit slices and matched to strata closures; each
candidate component is then judged at random rational points of its weight piece.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction

import sympy

from lightning_cas.core.architecture import Architecture
from lightning_cas.errors import InputError, M2ParseError
from lightning_cas.options import check_point, resolve
from lightning_cas.geometry.ideals import (MINOR_BUDGET, STRATA, check_one_layer, ideal_record, implicit_from_record,
                                           phi_coordinates, sympy_strings, vanishes)
from lightning_cas.macaulay2.connection import Macaulay2
from lightning_cas.macaulay2.network import one_head_params
from lightning_cas.macaulay2.parse import (is_exact_rational, json_bool, json_get, json_int, json_list, json_object,
                                           json_str, parse_polynomial)
from lightning_cas.core.weights import Point, point_to_dict
from lightning_cas.core.results import JsonResult, Provenance, Record

WITNESS_DIRECTIONS = 2  # random kernel directions tried per critical preimage and block pair
SAMPLES_PER_PIECE = 2  # random points judged per candidate piece of the boundary closure
_S, _T = sympy.symbols("s t")


@dataclass(frozen=True)
class Certificate(Record):
    """Why a verdict holds. ``kind``: submersion | branches (interior), witness curve (boundary),
    cone over a witness (the vertex, with the witness certificate at the point ``at``)."""

    kind: str
    regular_preimages: int | None = None  # submersion, branches
    blocks: str | None = None  # witness curve: the bilinear weight blocks
    preimage_V_A: tuple | None = None  # witness curve: the critical preimage (V, A)
    direction: tuple | None = None  # witness curve: the kernel direction delta
    s0: str | None = None  # witness curve: no real preimage for 0 < s <= s0
    eliminant_degree: int | None = None
    at: dict | None = None  # cone over a witness: the weight point of the witness
    witness: "Certificate | None" = None


@dataclass(frozen=True)
class BoundarySample(Record):
    """A verdict at one random point of a candidate component."""

    point: dict  # {"Q", "K", "V"} of the one layer
    boundary: bool | None
    evidence: str


@dataclass(frozen=True)
class BoundaryComponent(Record):
    """A candidate component of the boundary closure, judged at its sample points."""

    stratum: str
    source: tuple[str, ...]  # "critical image" and/or "singular locus"
    verdict: str  # boundary | interior | undecided
    samples: tuple[BoundarySample, ...] = ()
    dimension: int | None = None
    degree: int | None = None
    generators: tuple[str, ...] = ()


@dataclass(frozen=True)
class BoundaryResult(Provenance, JsonResult):
    """A real verdict at a point (with its certificate) and/or the Zariski closure of the boundary."""

    architecture: Architecture
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


# ---------------------------------------------------------------- certificates


def witness_certificate(eliminant: str, variable: str = "t") -> dict | None:
    """Exact test that q(s) has no real preimage for all 0 < s ≤ s₀; returns the certificate or None.

    A real preimage of q(s) gives a real root t of f(s, ·) (``variable`` "t"), or a root u = t² ≥ 0 of
    the eliminant written in u (``variable`` "t^2", the text still says t). These roots can appear only
    where the leading coefficient or the discriminant vanishes (or, for u, where a root crosses 0); if
    none of that happens in (0, s₀] and there is no such root at s₀, no s in (0, s₀] has one.
    """
    if eliminant.strip() == "none":
        return None
    f = sympy.Poly(sympy.sympify(eliminant, locals={"s": _S, "t": _T}), _T)
    if f.degree() < 1:
        return None
    squared = variable.strip() == "t^2"
    # cheap necessary test first: roots at a small s (most kernel directions fail here)
    probe = sympy.Poly(f.as_expr().subs(_S, sympy.Rational(1, 10**6)), _T)
    if probe.degree() == f.degree() and (probe.count_roots(0, None) if squared else probe.count_roots()):
        return None
    bad = f.LC() * sympy.discriminant(f.as_expr(), _T)
    if squared:
        bad *= f.as_expr().subs(_T, 0)
    bad = sympy.Poly(sympy.expand(bad), _S)
    if bad.is_zero:
        return None
    bad = bad.terms_gcd()[1].clear_denoms()[1]  # s = 0 is p itself; only roots in (0, s0] matter
    s0 = _root_free_start(bad)
    at_s0 = sympy.Poly(f.as_expr().subs(_S, s0), _T)
    if (at_s0.count_roots(0, None) if squared else at_s0.count_roots()):
        return None
    return {"s0": str(s0), "eliminant_degree": f.degree() * (2 if squared else 1)}


def _root_free_start(bad: sympy.Poly) -> sympy.Rational:
    """The largest 1/2^k (k ≥ 0) below every positive root of ``bad`` (integer coefficients, bad(0) ≠ 0).

    Cauchy's bound on the reciprocal polynomial: every root has |s| > |b₀| / (|b₀| + max |b_i|), so no
    Sturm sequence of the (high-degree) polynomial is needed; when 1 is already below it, s₀ = 1.
    """
    coeffs = [abs(int(c)) for c in reversed(bad.all_coeffs())]
    b0, rest = coeffs[0], max(coeffs[1:], default=0)
    k = 0
    while (b0 << k) < b0 + rest:
        k += 1
    return sympy.Rational(1, 2 ** k)


def _exact_nested(value, script: str):
    """Nested lists of exact rationals from a record (JSON integers or strings "p/q"), as strings."""
    if isinstance(value, list):
        return [_exact_nested(v, script) for v in value]
    if is_exact_rational(value):
        return str(value)
    raise M2ParseError(f"expected an exact rational from Macaulay2, got {str(value)[:100]!r}", script)


def _parse_weights(value, script: str) -> Point:
    """A record's weights {Q, K, V} (nested lists of rationals) as a one-layer Point."""
    nested = _exact_nested(value, script)
    if len(nested) != 3 or not all(isinstance(m, list) and all(isinstance(r, list) for r in m) for m in nested):
        raise M2ParseError(f"expected weights {{Q, K, V}} from Macaulay2, got {str(value)[:100]!r}", script)
    try:
        return (tuple(tuple(tuple(Fraction(x) for x in row) for row in m) for m in nested),)
    except ZeroDivisionError:
        raise M2ParseError(f"a zero denominator in weights from Macaulay2: {str(value)[:100]!r}", script) from None


def _verdict_record(arch: Architecture, point: Point, seed: int, m2: Macaulay2) -> tuple[str, dict]:
    (Q, K, V), = point
    lists = lambda M: [list(r) for r in M]  # noqa: E731
    return m2.run("point_verdict", {**one_head_params(arch), "pointQ": lists(Q), "pointK": lists(K),
                                    "pointV": lists(V), "numDirections": WITNESS_DIRECTIONS, "seed": seed})


def point_verdict(arch: Architecture, point: Point, m2: Macaulay2, seed: int = 0) -> dict:
    """Interior/boundary certificate at one rational weight point (not the vertex: see vertex_verdict).

    Returns {"boundary": True/False/None, "evidence", "certificate", "script", "m2_version", "vertex"}.
    """
    script, rec = _verdict_record(arch, point, seed, m2)
    out = {"script": script, "m2_version": json_str(rec, "m2_version", script), "certificate": None}
    if json_bool(rec, "vertex", script):
        return {**out, "vertex": True, "boundary": None, "evidence": "phi_W = 0 is the vertex"}
    get = lambda k: json_int(rec, k, script)  # noqa: E731
    pre, regular, critical = get("rational_preimages"), get("regular_preimages"), get("critical_preimages")
    fiber_degree = get("fiber_degree") if json_get(rec, "fiber_degree", script) is not None else None
    off_chart = json_bool(rec, "fiber_off_chart", script)
    smooth = get("tangent_rank") == get("codimension")
    facts = (f"phi_W is a {'smooth' if smooth else 'singular'} point of X; fiber: "
             + (f"{fiber_degree} orbit(s) counted with multiplicity" if fiber_degree is not None
                else "positive-dimensional")
             + f", {pre} rational ({regular} regular, {critical} critical)"
             + (", some orbits off the chart ell(V) = 1" if off_chart else ""))
    if smooth and regular:
        return {**out, "vertex": False, "boundary": False,
                "certificate": Certificate(kind="submersion", regular_preimages=regular),
                "evidence": (f"interior: {facts}; at a regular real preimage W -> phi_W is a submersion onto the "
                             "real manifold X(R) near phi_W, so a neighbourhood of phi_W in X(R) lies in M")}
    if regular and regular == pre == fiber_degree and not off_chart:
        return {**out, "vertex": False, "boundary": False,
                "certificate": Certificate(kind="branches", regular_preimages=regular),
                "evidence": (f"interior: {facts}; the whole complex fiber is these real regular orbits, so every "
                             "branch of X at phi_W is a smooth germ that phi maps a real neighbourhood of one of "
                             "them onto (real points included), and a neighbourhood of phi_W in X(R) lies in M")}
    tried = []
    for witness in json_list(rec, "witnesses", script):
        eliminant = json_get(witness, "eliminant", script)
        variable = json_str(witness, "variable", script)
        if variable not in ("t", "t^2"):
            raise M2ParseError(f"unknown eliminant variable {variable[:20]!r} from Macaulay2", script)
        if eliminant is not None:
            eliminant = str(parse_polynomial(json_str(witness, "eliminant", script), script))
        cert = witness_certificate(eliminant if eliminant is not None else "none", variable)
        blocks = json_str(witness, "blocks", script)
        tried.append(blocks)
        if cert is not None:
            direction = _exact_nested(json_list(witness, "direction", script), script)
            # delta is in the order of the parametrization's weights (V, A) or (Q, K, V); base is (V, A)
            cert = Certificate(kind="witness curve", blocks=blocks,
                               preimage_V_A=_exact_nested(json_list(witness, "base", script), script),
                               direction=direction, s0=cert["s0"],
                               eliminant_degree=cert["eliminant_degree"])
            return {**out, "vertex": False, "boundary": True, "certificate": cert,
                    "evidence": (f"boundary: q(s) = phi_W - s phi_2(delta) (delta in the kernel of the ({blocks}) "
                                 f"partial differential, {direction}) is a real point of X without a real preimage "
                                 f"for all 0 < s <= {cert.s0} (Sturm count of the fiber eliminant, degree "
                                 f"{cert.eliminant_degree}); q(s) -> phi_W ({facts})")}
    why = (f"no witness curve among {len(tried)} kernel direction(s)" if tried else
           "no critical rational preimage to build a witness curve from")
    return {**out, "vertex": False, "boundary": None,
            "evidence": f"undecided: {why}, and the fiber is not all real and regular ({facts})"}


# ---------------------------------------------------------------- candidates and the closure


def _pieces(found: dict, script: str) -> list[dict]:
    """The pieces of a slice record (criticalLocus or singularStrata), with their sample points."""
    return [{"rank_V": json_int(piece, "rank_V", script), "matches": json_str(piece, "matches", script),
             "slice_generators": list(sympy_strings(piece, "generators", script)),
             "points": [_parse_weights(pt, script) for pt in json_list(piece, "points", script)]}
            for piece in json_list(found, "pieces", script)]


def critical_image_by_elimination(arch: Architecture, m2: Macaulay2, seed: int = 0) -> dict:
    """The critical image by elimination (maximal minors of the differential in the same parametrization,
    then ker; the ideal need not be radical, its minimal primes are under "components"): an independent
    route to the slices' answer, which finishes only for the smallest cases."""
    check_one_layer(arch)
    script, rec = m2.run("critical_elimination", {**one_head_params(arch), "seed": seed})
    return {**ideal_record(rec, script),
            "components": [ideal_record(c, script) for c in json_list(rec, "components", script)]}


def critical_pieces(rec: dict, script: str) -> list[dict]:
    """The critical pieces (with sample points) of a candidate run."""
    return _pieces(json_object(rec, "critical", script), script)


def candidate_record(arch: Architecture, m2: Macaulay2, seed: int = 0, singular: bool = True) -> tuple[str, dict]:
    """One M2 run: strata closures, critical pieces and (optionally) singular pieces, with sample points."""
    return m2.run("boundary_candidates", {**one_head_params(arch), "withSingular": int(singular),
                                          "minorBudget": MINOR_BUDGET, "samplesPerPiece": SAMPLES_PER_PIECE,
                                          "seed": seed})


def vertex_verdict(arch: Architecture, pieces: list[dict], seed: int, m2: Macaulay2) -> dict:
    """The vertex is a boundary point iff X(ℝ) ≠ M (both are cones): look for one witness point among the
    sample points of the critical pieces."""
    for piece in pieces:
        for pt in piece["points"]:
            v = point_verdict(arch, pt, m2, seed)
            if v["boundary"]:
                cert = Certificate(kind="cone over a witness", at=point_to_dict(pt), witness=v["certificate"])
                return {"boundary": True, "certificate": cert,
                        "evidence": ("boundary: phi_W = 0 is the vertex; X(R) and M are cones, and X(R) \\ M is not "
                                     f"empty (witness curve at the critical point {point_to_dict(pt)['layers'][0]}), "
                                     "so t q -> 0 with q not in M")}
    return {"boundary": None, "certificate": None,
            "evidence": "undecided: phi_W = 0 is the vertex, and no witness point of X(R) \\ M was found"}


def stratum_samples(arch: Architecture, name: str, seed: int, count: int) -> list[Point]:
    """Random integer weights on a stratum, through the parametrization its closure ideal came from:
    rank11 V = c u^T, A = g h^T; parallel V = c u^T, A = u h^T; rankA A = G^T H with a - 1 rows."""
    import numpy as np

    d, e, a = arch.widths[0], arch.widths[1], arch.attention[0]
    rng = np.random.default_rng([seed, sorted(STRATA).index(name)])

    def rand(*shape):  # non-zero entries, so no sample degenerates to a smaller stratum by accident
        values = rng.integers(1, 10, size=shape) * rng.choice([-1, 1], size=shape)
        return [[Fraction(int(x)) for x in row] for row in values]

    zero = lambda rows: [[Fraction(0)] * d for _ in range(rows)]  # noqa: E731
    out = []
    for _ in range(count):
        c, u, g, h = rand(e, 1), rand(1, d), rand(1, d), rand(1, d)
        if name == "rank11":
            Q, K, V = h + zero(a - 1), g + zero(a - 1), [[ci[0] * x for x in u[0]] for ci in c]
        elif name == "parallel":
            Q, K, V = h + zero(a - 1), u + zero(a - 1), [[ci[0] * x for x in u[0]] for ci in c]
        else:  # rankA
            Q, K, V = rand(a - 1, d) + zero(1), rand(a - 1, d) + zero(1), rand(e, d)
        out.append(((tuple(map(tuple, Q)), tuple(map(tuple, K)), tuple(map(tuple, V))),))
    return out


def boundary_closure(arch: Architecture, rec: dict, script: str, seed: int, m2: Macaulay2) -> dict:
    """Judge every candidate component (critical image and singular locus, by strata) at its sample points."""
    critical = json_object(rec, "critical", script)
    singular = json_object(rec, "singular_strata", script) if "singular_strata" in rec else None
    crit = _pieces(critical, script)
    sing = _pieces(singular, script) if singular is not None else []
    strata = json_object(rec, "strata", script)
    notes = []
    names = {}
    for source, pieces in (("critical image", crit), ("singular locus", sing)):
        for piece in pieces:
            entry = names.setdefault(piece["matches"], {"sources": set(), "points": []})
            entry["sources"].add(source)
            entry["points"].extend(piece["points"])
    for name, entry in names.items():
        if name in STRATA:  # generic points of the closure, from the stratum's own parametrization
            entry["points"] = stratum_samples(arch, name, seed, SAMPLES_PER_PIECE)
    unresolved = len(json_list(critical, "unresolved", script)) + \
        (len(json_list(singular, "unresolved", script)) if singular is not None else 0)
    comps, complete = [], unresolved == 0
    if unresolved:
        notes.append(f"{unresolved} slice piece(s) not examined (minor budget): the candidates may be incomplete")
    for name, entry in names.items():
        comp = {"stratum": STRATA.get(name, "no listed stratum"), "source": sorted(entry["sources"])}
        if name in STRATA:
            comp.update(ideal_record(json_object(strata, name, script), script))
        samples = []
        for pt in entry["points"]:
            v = point_verdict(arch, pt, m2, seed)
            samples.append(BoundarySample(point=point_to_dict(pt)["layers"][0], boundary=v["boundary"],
                                          evidence=v["evidence"]))
        verdicts = [s.boundary for s in samples]
        if any(v is True for v in verdicts):
            comp["verdict"] = "boundary"
        elif verdicts and all(v is False for v in verdicts):
            comp["verdict"] = "interior"
        else:
            comp["verdict"] = "undecided"
            complete = False
        if name not in STRATA:
            complete = False
            notes.append("a candidate piece matches no stratum closure: its ideal is not known")
        comp["samples"] = tuple(samples)
        comps.append(BoundaryComponent(**comp))
    bd = [c for c in comps if c.verdict == "boundary"]
    closure, dim = (), None
    if len(bd) == 1 and bd[0].dimension is not None:
        closure, dim = tuple(bd[0].generators), bd[0].dimension
    elif len(bd) > 1:
        notes.append("several boundary components: their ideals are listed per component")
        complete = False
    image = json_get(critical, "critical_image", script)
    crit_ideal = ((), None) if image is None else \
        (tuple(sympy_strings(image, "generators", script)), json_int(image, "dimension", script))
    closed = json_bool(critical, "base_locus_V_or_A", script)
    if not closed:
        notes.append("phi has zeros with V != 0 and A != 0: the closedness argument for M fails, so points of "
                     "the closure of M outside M are not examined")
        complete = False
    return {"components": comps, "closure": closure, "closure_dimension": dim, "complete": complete, "closed": closed,
            "critical_image": crit_ideal[0], "critical_image_dimension": crit_ideal[1], "critical_pieces": crit,
            "notes": notes}


# ---------------------------------------------------------------- the command


def boundary_verdict_d11(point: Point) -> tuple[bool, str]:
    """Independent verdict for d' = a = 1, where φ_W = S ⊗ γ with S = sym(v ⊗ k), γ = q (a cross-check).

    The real points of the neurovariety are S ⊗ γ with rank S ≤ 2 of any signature; M holds the
    S that are not definite on their support, so φ_W is on the boundary exactly when S has rank
    ≤ 1 (a perfect square, including S ⊗ γ = 0): an arbitrarily small rank-2 definite S' is near.
    """
    (Q, K, V), = point
    q, k, v = [list(M[0]) for M in (Q, K, V)]
    S = sympy.Matrix(len(v), len(v), lambda i, j: sympy.Rational(v[i] * k[j] + k[i] * v[j]))
    if all(x == 0 for x in q) or S.is_zero_matrix:
        return True, "phi_W = 0, the vertex: every neighbourhood holds S ⊗ γ with S definite, not in M"
    rank = S.rank()
    if rank <= 1:
        return True, f"S = sym(v ⊗ k) has rank {rank}: a perfect square ±(u·x)^2, limit of definite forms"
    return False, "S = sym(v ⊗ k) has rank 2 and signature (1, 1): indefinite forms near it stay indefinite"


def boundary(arch: Architecture, point: Point | None = None, *, closure: bool = True, seed: int = 0,
             timeout: float | None = None, m2: str | None = None, session=None) -> BoundaryResult:
    """The Zariski closure of the boundary (``closure``) and/or a certified verdict at ``point``.

    ``timeout`` bounds the whole command: each Macaulay2 run gets what the earlier ones left.
    """
    opts = resolve("boundary", arch, seed=seed, timeout=timeout, m2=m2, session=session)
    check_one_layer(arch)
    if not isinstance(closure, bool):
        raise InputError(f"closure must be True or False, got {closure!r}.")
    if point is not None:
        point = check_point(arch, point)
    if point is None and not closure:
        raise InputError("nothing to compute: give a point or ask for the boundary closure.")
    with opts.deadline():
        return _boundary(arch, point, closure, opts.seed, opts.macaulay2)


def _boundary(arch, point, closure, seed, m2: Macaulay2) -> BoundaryResult:
    start = time.perf_counter()
    notes, script, m2_version = [], None, None
    found = res = None
    if closure:
        script, rec = candidate_record(arch, m2, seed)
        m2_version = json_str(rec, "m2_version", script)
        res = implicit_from_record(arch, False, rec, script, start, seed)
        found = boundary_closure(arch, rec, script, seed, m2)
        notes.extend(found["notes"])
    verdict, evidence, cert, in_crit = None, "no point given", None, None
    if point is not None:
        v = point_verdict(arch, point, m2, seed)
        script, m2_version = script or v["script"], m2_version or v["m2_version"]
        if v["vertex"]:
            if found is None:
                cscript, crec = candidate_record(arch, m2, seed, singular=False)
                pieces = critical_pieces(crec, cscript)
            else:
                pieces = found["critical_pieces"]
            v = {**v, **vertex_verdict(arch, pieces, seed, m2)}
        verdict, evidence, cert = v["boundary"], v["evidence"], v["certificate"]
        if found is not None and found["critical_image"]:
            in_crit = vanishes(found["critical_image"], phi_coordinates(res, point))
        if arch.widths[1] == 1 and arch.attention[0] == 1:
            d11, why = boundary_verdict_d11(point)
            if verdict is not None and d11 != verdict:
                notes.append(f"DISAGREEMENT with the signature of S (d' = a = 1): {why}")
            elif verdict is None:
                notes.append(f"the signature of S (d' = a = 1) says boundary = {d11}: {why}")
    methods, details = [], []
    if closure:
        methods.append("strata-closure")
        details.append("critical locus and singular locus on G-orbit slices, matched to strata closures; each "
                       f"candidate stratum judged at {SAMPLES_PER_PIECE} random rational points of its parametrization")
    if point is not None:
        methods.append("certificate")
        details.append("real verdict by certificate: submersion/branch covering (interior), witness curve with a "
                       "Sturm count of the fiber eliminant (boundary), cone over a witness (vertex)")
    return BoundaryResult(
        architecture=arch, boundary=verdict, evidence=evidence, certificate=cert,
        point=point_to_dict(point) if point is not None else None, in_critical_image=in_crit,
        critical_image=found["critical_image"] if found else (),
        critical_image_dimension=found["critical_image_dimension"] if found else None,
        boundary_closure=found["closure"] if found else (),
        boundary_closure_dimension=found["closure_dimension"] if found else None,
        closure_complete=found["complete"] if found else None,
        components=tuple(found["components"]) if found else (),
        method="+".join(methods), method_detail="; ".join(details),
        certainty="probabilistic" if closure else "exact",
        certainty_detail="; ".join((["the verdict at the point is exact (a certificate)"] if point is not None else [])
                                   + (["which candidate strata hold boundary points is probabilistic (components "
                                       "judged at random points)"] if closure else [])),
        seed=seed, elapsed_s=time.perf_counter() - start, m2_version=m2_version, script=script,
        notes=tuple(notes))
