"""The claims of docs/mathematics.md §5 (singular and boundary points of one layer), checked one by one.

Pointwise tests on random points of every named stratum come first (cheap, always); then one M2 run
gives the whole singular locus, the critical image and the boundary candidates on G-orbit slices
(``boundary.candidate_record``), and the boundary closure is judged from certified verdicts.
"""

from __future__ import annotations

import time
from fractions import Fraction

from lightning_cas.core.checks import derived_seed
from lightning_cas.core.network import Network
from lightning_cas.core.weights import point_to_dict
from lightning_cas.errors import InputError, TimeLimitError
from lightning_cas.geometry.one_layer.boundary import Closure, boundary_closure
from lightning_cas.geometry.one_layer.implicit import check_one_layer, implicit
from lightning_cas.geometry.one_layer.pointwise import is_singular, point_verdict
from lightning_cas.geometry.one_layer.singular import singular_from_record
from lightning_cas.geometry.one_layer.strata import candidate_record, stratum_samples
from lightning_cas.macaulay2.connection import Macaulay2
from lightning_cas.macaulay2.parse import json_str
from lightning_cas.options import resolve
from lightning_cas.results.claims import Claim, ClaimsResult, ClaimVerdict
from lightning_cas.results.ideals import SampleVerdict, Source, Stratum
from lightning_cas.results.singular import SingularLocusResult


def stratum_points(arch: Network, seed: int) -> dict:
    """Random integer points on the weight strata docs/mathematics.md §5 names (and a generic one)."""
    import numpy as np

    d, e, a = arch.widths[0], arch.widths[1], arch.attention[0]
    rng = np.random.default_rng(seed)
    rand = lambda *shape: rng.integers(-9, 10, size=shape)  # noqa: E731

    def make(Q, K, V):
        return (
            (
                tuple(tuple(Fraction(int(x)) for x in r) for r in Q),
                tuple(tuple(Fraction(int(x)) for x in r) for r in K),
                tuple(tuple(Fraction(int(x)) for x in r) for r in V),
            ),
        )

    def first_row_only(M):
        M = M.copy()
        M[1:] = 0
        return M

    Q, K, V = rand(a, d), rand(a, d), rand(e, d)
    k1 = first_row_only(K)
    points = {
        "generic": make(Q, K, V),
        "vertex": make(np.zeros((a, d), int), K, V),
        "rank11": make(first_row_only(Q), k1, np.outer(rand(e) | 1, rand(d) | 1)),
        "parallel": make(first_row_only(Q), k1, np.outer(rand(e) | 1, k1[0])),
    }
    if 1 < a < d:
        Q2 = Q.copy()
        Q2[-1] = 0
        points["rankA"] = make(Q2, K, V)
    return points


def check_claims(
    arch: Network,
    *,
    full: bool = True,
    seed: int = 0,
    timeout: float | None = None,
    m2: str | None = None,
    session=None,
) -> ClaimsResult:
    """Compare with the claims of docs/mathematics.md §5: pointwise tests on every stratum (always), then the whole
    singular locus, the critical image and the boundary closure (when M2 finishes in ``timeout``, one limit
    for all the runs together)."""
    opts = resolve("check_claims", arch, seed=seed, timeout=timeout, m2=m2, session=session)
    check_one_layer(arch)
    if not isinstance(full, bool):
        raise InputError(f"full must be True or False, got {full!r}.")
    with opts.deadline():  # one limit for the whole check, Python work and Macaulay2 runs
        return _check_claims(arch, full, opts.seed, opts.macaulay2)


def _check_claims(arch: Network, full: bool, seed: int, m2: Macaulay2) -> ClaimsResult:
    start = time.perf_counter()
    d, e, a = arch.widths[0], arch.widths[1], arch.attention[0]
    claims = []

    def claim(text, ok, evidence):
        claims.append(
            Claim(
                claim=text,
                verdict=ClaimVerdict.NOT_APPLICABLE
                if ok is None
                else (ClaimVerdict.AGREE if ok else ClaimVerdict.DISAGREE),
                evidence=evidence,
            )
        )

    def not_computed(text, evidence):
        claims.append(Claim(claim=text, verdict=ClaimVerdict.NOT_COMPUTED, evidence=evidence))

    def finish(method, detail, m2_version, script, certainty="exact", certainty_detail=None):
        return ClaimsResult(
            architecture=arch,
            claims=tuple(claims),
            method=method,
            method_detail=detail,
            certainty=certainty,
            certainty_detail=certainty_detail,
            seed=seed,
            elapsed_s=time.perf_counter() - start,
            m2_version=m2_version,
            script=script,
        )

    res = implicit(arch, seed=seed, m2=m2)
    tests = {}
    for name, p in stratum_points(arch, seed).items():
        r = is_singular(arch, p, implicit_result=res, seed=seed)
        tests[name] = (
            r.singular,
            f"{name} point {point_to_dict(p)['layers'][0]}: tangent rank {r.tangent_rank} vs "
            f"codim {r.codimension}, differential rank {r.differential_rank}/{r.generic_rank}",
        )
    claim("pointwise: a generic point is smooth (sanity check)", not tests["generic"][0], tests["generic"][1])
    claim("pointwise: the vertex 0 is singular", tests["vertex"][0], tests["vertex"][1])
    if "rankA" in tests:
        claim("pointwise: a point with rank A < a (a < d) is singular", tests["rankA"][0], tests["rankA"][1])
    if e == 1 and a == 1:
        if d == 2:
            claim(
                "pointwise: d' = a = 1, d = 2: the parallel locus is smooth",
                not tests["parallel"][0],
                tests["parallel"][1],
            )
        else:
            claims.append(
                Claim(
                    claim="pointwise: d' = a = 1, d > 2: the parallel locus (may be singular)",
                    verdict=ClaimVerdict.INFORMATION,
                    evidence=f"singular: {tests['parallel'][0]}; " + tests["parallel"][1],
                )
            )
    else:
        claim("pointwise: a point with rank V = rank A = 1 is singular", tests["rank11"][0], tests["rank11"][1])
    if not full:
        not_computed("whole singular locus, critical image and boundary closure", "not asked for (pointwise only)")
        return finish("pointwise", "pointwise tangent-space tests", res.m2_version, res.script)
    try:
        candidates = candidate_record(arch, m2, seed)
    except TimeLimitError as exc:
        not_computed("whole singular locus, critical image and boundary closure", str(exc))
        return finish("pointwise", "pointwise tangent-space tests", res.m2_version, res.script)
    script, rec = candidates.script, candidates.record
    _singular_claims(
        arch, singular_from_record(arch, rec, script, start, seed, found=candidates.singular), claim, claims
    )
    try:
        found = boundary_closure(arch, candidates, seed, m2)
        _boundary_claims(arch, found, seed, m2, claim, not_computed)
    except TimeLimitError as exc:
        not_computed("the boundary claims (certified verdicts at random points)", str(exc))
    return finish(
        "pointwise+strata+certificate",
        "pointwise tangent-space tests; singular locus and critical locus on G-orbit slices; real "
        "verdicts by certificate at random points of each candidate stratum",
        json_str(rec, "m2_version", script),
        script,
        certainty="probabilistic",
        certainty_detail="exact ideals and verdicts; which strata hold boundary points: probabilistic (random points)",
    )


def _singular_claims(arch: Network, sl: SingularLocusResult, claim, claims) -> None:
    """The §5 singular-point claims against the whole singular locus (strata method)."""
    d, e, a = arch.widths[0], arch.widths[1], arch.attention[0]
    pieces = sl.pieces
    text = (
        "; ".join(
            f"rank V = {c.rank_V}, {' ; '.join(c.slice_generators) or 'whole slice'} "
            f"(closure dim {c.image_dimension}: {', '.join(c.contained_in) or 'no listed stratum'})"
            for c in pieces
        )
        or "none besides the vertex"
    )
    has = lambda stratum: any(stratum in c.contained_in for c in pieces)  # noqa: E731
    claim(
        "the vertex 0 is a singular point",
        sl.variety.codimension > 0,
        f"the variety is a cone of codimension {sl.variety.codimension}: singular at 0 unless linear",
    )
    if 1 < a < d:
        claim("{rank A < a} is singular (a < d)", has(Stratum.RANK_A), f"singular pieces: {text}")
    else:
        claim("{rank A < a} is singular (a < d)", None, f"a = {a}, d = {d}: the stratum is the vertex or empty")
    if e == 1 and a == 1:
        claim("{rank V = rank A = 1} is singular", None, "d' = a = 1: this stratum is the whole variety")
        checks = [
            (
                "d' = a = 1: only the locus rowspace V = colspace A can be singular",
                all(Stratum.PARALLEL in c.contained_in for c in pieces),
            )
        ]
        if d == 2:
            checks.append(("d' = a = 1, d = 2: smooth apart from the vertex", not pieces))
        for text_claim, ok in checks:
            if sl.complete:
                claim(text_claim, ok, f"singular pieces: {text}")
            else:  # a piece beyond the minor budget: the locus is not known in full
                claims.append(
                    Claim(claim=text_claim, verdict=ClaimVerdict.NOT_COMPUTED, evidence=f"singular pieces: {text}")
                )
    else:
        claim(
            "{rank V = rank A = 1} is singular",
            has(Stratum.RANK11) or has(Stratum.PARALLEL),
            f"singular pieces: {text}",
        )
    if sl.unresolved:
        claims.append(
            Claim(
                claim="every singular point lies in a listed stratum",
                verdict=ClaimVerdict.NOT_COMPUTED,
                evidence=f"{len(sl.unresolved)} piece(s) not examined (minor budget)",
            )
        )
    else:
        claim(
            "every singular point lies in a listed stratum",
            all(c.contained_in for c in pieces),
            f"singular pieces: {text}; singular locus of dimension {sl.singular_dimension}",
        )


def _boundary_claims(arch: Network, found: Closure, seed: int, m2: Macaulay2, claim, not_computed) -> None:
    """The §5 boundary claims against the critical image and the certified verdicts."""
    e, a = arch.widths[1], arch.attention[0]
    comps = found.components
    claim(
        "M is closed in the Euclidean topology",
        found.closed,
        "phi(V, A) = 0 only where V = 0 or A = 0 (V.A lies in the radical of the coefficient ideal): with "
        "(V, A) rescaled to |V| = |A|, |phi| >= c |V| |A|, so preimages of a convergent sequence stay bounded"
        if found.closed
        else "the coefficient ideal has zeros with V != 0 and A != 0",
    )
    crit_names = [c.stratum for c in comps if Source.CRITICAL_IMAGE in c.source]
    comp_text = (
        "; ".join(f"{c.stratum} (dim {c.dimension}, from the {' and '.join(c.source)}): {c.verdict}" for c in comps)
        or "none"
    )
    claim(
        "the claimed boundary {V = c v^T, A = ±v g^T} lies in the image of the critical points",
        Stratum.PARALLEL in crit_names,
        f"critical image on slices: {', '.join(crit_names) or 'only the vertex'} "
        f"(dim {found.critical_image_dimension})",
    )
    if e == 1 and a == 1:
        claim(
            "d' = a = 1: the image of the critical points is exactly the claimed boundary closure",
            crit_names == [Stratum.PARALLEL],
            f"critical image components: {', '.join(crit_names) or 'none'}",
        )

    def judge(stratum, text, expect_boundary):
        samples = stratum_samples(arch, stratum, derived_seed(seed, 1), 2)
        verdicts = [point_verdict(arch, p, m2, seed) for p in samples]
        evidence = " | ".join(f"{point_to_dict(p)['layers'][0]}: {v.evidence}" for p, v in zip(samples, verdicts))
        flags = [v.boundary for v in verdicts]
        if None in flags:
            not_computed(text, evidence)
        else:
            claim(text, all(f is expect_boundary for f in flags), evidence)

    judge(Stratum.PARALLEL, "points V = c v^T, A = v g^T are boundary points", True)
    if not (e == 1 and a == 1):
        judge(
            Stratum.RANK11, "points of rank V = rank A = 1 off that locus are interior (singular, not boundary)", False
        )
    boundary_names = [c.stratum for c in comps if c.verdict is SampleVerdict.BOUNDARY]
    if not found.complete:
        not_computed(
            "the Zariski closure of the boundary is the closure of {V = c v^T, A = ±v g^T}",
            f"not every candidate component was decided: {comp_text}",
        )
    else:
        claim(
            "the Zariski closure of the boundary is the closure of {V = c v^T, A = ±v g^T}",
            boundary_names == [Stratum.PARALLEL],
            f"candidates (critical image and singular locus, by strata): {comp_text}; closure of dimension "
            f"{found.closure_dimension}",
        )
