"""G-orbit slices of the weights and the strata of docs/mathematics.md §5: what the singular-locus and
boundary runs find on the slices V = [I_r 0; 0 0], read once from the Macaulay2 record, and random
points on every stratum.

The package (``singularStrata``, ``criticalLocus``, ``weightStrata`` in m2/LightningCAS.m2) walks the
slices and matches every piece to the closure of a named stratum; :func:`read_slices` turns its record
into typed pieces (equations, sample points, ranks) that the singular locus and the boundary closure
both use.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from lightning_cas.core.network import Network
from lightning_cas.core.weights import Point
from lightning_cas.errors import M2ParseError
from lightning_cas.geometry.one_layer.implicit import check_one_layer, ideal_record, polynomial_texts
from lightning_cas.geometry.one_layer.pointwise import exact_nested
from lightning_cas.macaulay2.connection import Macaulay2
from lightning_cas.macaulay2.network import one_head_params
from lightning_cas.macaulay2.parse import json_bool, json_get, json_int, json_list, json_object, json_str
from lightning_cas.results.ideals import NAMED_STRATA, Stratum
from lightning_cas.results.implicit import IdealComponent

# the strata method forms at most this many minors at once ((2,2,2) needs 2.4 million, 27 s)
MINOR_BUDGET = 3_000_000
SAMPLES_PER_PIECE = 2  # random points judged per candidate piece of the boundary closure
SAMPLED_STRATA = (Stratum.RANK11, Stratum.PARALLEL, Stratum.RANK_A)  # the strata stratum_samples parametrizes


@dataclass(frozen=True)
class PieceRecord:
    """A piece of a slice as the package found it: the slice (rank V), its equations, sample weights, and
    (singular pieces) the ranks that make it singular."""

    rank_V: int
    matches: str  # the package's name of the stratum whose closure it is, or "none"
    generators: tuple[str, ...]  # in the slice coordinates
    points: tuple[Point, ...]
    image_dimension: int | None = None
    rank_A: int | None = None
    colspace_A_in_rowspace_V: bool | None = None
    jacobian_rank: int | None = None
    codimension: int | None = None

    @property
    def stratum(self) -> Stratum | None:
        return Stratum.from_code(self.matches)


@dataclass(frozen=True)
class UnresolvedRecord:
    """A piece the package did not examine: its minors exceed the budget."""

    rank_V: int
    generators: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class SliceRecord:
    """A whole slice record: ``singularStrata`` (``singular``, ``factor_route``) or ``criticalLocus``
    (``critical_image``, ``base_locus_V_or_A``); the keys of the other kind are None."""

    pieces: tuple[PieceRecord, ...]
    unresolved: tuple[UnresolvedRecord, ...]
    singular: IdealComponent | None = None  # None also when a piece was not examined or matched no stratum
    factor_route: bool | None = None
    critical_image: IdealComponent | None = None
    base_locus_V_or_A: bool | None = None

    @property
    def complete(self) -> bool:
        return not self.unresolved


def parse_weights(value, script: str) -> Point:
    """A record's weights {Q, K, V} (nested lists of rationals) as a one-layer Point."""
    nested = exact_nested(value, script)
    if len(nested) != 3 or not all(isinstance(m, list) and all(isinstance(r, list) for r in m) for m in nested):
        raise M2ParseError(f"expected weights {{Q, K, V}} from Macaulay2, got {str(value)[:100]!r}", script)
    try:
        return (tuple(tuple(tuple(Fraction(x) for x in row) for row in m) for m in nested),)
    except ZeroDivisionError:
        raise M2ParseError(f"a zero denominator in weights from Macaulay2: {str(value)[:100]!r}", script) from None


def _piece(piece: dict, script: str, singular: bool) -> PieceRecord:
    extra = {}
    if singular:
        extra = {k: json_int(piece, k, script) for k in ("image_dimension", "rank_A", "jacobian_rank", "codimension")}
        extra["colspace_A_in_rowspace_V"] = json_bool(piece, "colspace_A_in_rowspace_V", script)
    return PieceRecord(
        rank_V=json_int(piece, "rank_V", script),
        matches=json_str(piece, "matches", script),
        generators=polynomial_texts(piece, "generators", script),
        points=tuple(parse_weights(pt, script) for pt in json_list(piece, "points", script)),
        **extra,
    )


def read_slices(found: dict, script: str, singular: bool) -> SliceRecord:
    """The record of ``singularStrata`` (``singular``) or ``criticalLocus``, read and checked once."""
    pieces = tuple(_piece(p, script, singular) for p in json_list(found, "pieces", script))
    unresolved = tuple(
        UnresolvedRecord(
            rank_V=json_int(p, "rank_V", script),
            generators=polynomial_texts(p, "generators", script),
            reason=json_str(p, "reason", script),
        )
        for p in json_list(found, "unresolved", script)
    )
    if singular:
        sing = json_get(found, "singular", script)
        return SliceRecord(
            pieces=pieces,
            unresolved=unresolved,
            singular=None if sing is None else ideal_record(json_object(found, "singular", script), script),
            factor_route=json_bool(found, "factor_route", script),
        )
    image = json_get(found, "critical_image", script)
    return SliceRecord(
        pieces=pieces,
        unresolved=unresolved,
        critical_image=None if image is None else ideal_record(json_object(found, "critical_image", script), script),
        base_locus_V_or_A=json_bool(found, "base_locus_V_or_A", script),
    )


def slice_text(arch: Network, rank_v: int) -> str:
    """The slice in words, with the names of its coordinates."""
    d, a = arch.widths[0], arch.attention[0]
    a_text = "A = (b_(i,j))" if a >= d else "A = K^T Q with Q = (q_(i,j)), K = (k_(i,j))"
    return f"V = [I_{rank_v} 0; 0 0] (rank V = {rank_v}), {a_text}"


# ---------------------------------------------------------------- the candidates of the boundary closure


@dataclass(frozen=True)
class CandidateRecord:
    """One Macaulay2 run for the boundary: the strata closures, the critical locus and (optionally) the
    singular locus on slices, with sample points; ``record`` is the whole record (its top level is the
    implicit record)."""

    script: str
    record: dict
    strata: dict  # the package's stratum name -> IdealComponent of its closure
    critical: SliceRecord
    singular: SliceRecord | None


def candidate_record(arch: Network, m2: Macaulay2, seed: int = 0, singular: bool = True) -> CandidateRecord:
    """One M2 run: strata closures, critical pieces and (optionally) singular pieces, with sample points."""
    script, rec = m2.run(
        "boundary_candidates",
        {
            **one_head_params(arch),
            "withSingular": int(singular),
            "minorBudget": MINOR_BUDGET,
            "samplesPerPiece": SAMPLES_PER_PIECE,
            "seed": seed,
        },
    )
    strata = json_object(rec, "strata", script)
    return CandidateRecord(
        script=script,
        record=rec,
        strata={name: ideal_record(json_object(strata, name, script), script) for name in strata},
        critical=read_slices(json_object(rec, "critical", script), script, singular=False),
        singular=read_slices(json_object(rec, "singular_strata", script), script, singular=True)
        if "singular_strata" in rec
        else None,
    )


def critical_image_by_elimination(arch: Network, m2: Macaulay2, seed: int = 0) -> tuple[IdealComponent, tuple]:
    """The critical image by elimination (maximal minors of the differential in the same parametrization,
    then ker; the ideal need not be radical, its minimal primes are the second value): an independent
    route to the slices' answer, which finishes only for the smallest cases."""
    check_one_layer(arch)
    script, rec = m2.run("critical_elimination", {**one_head_params(arch), "seed": seed})
    return ideal_record(rec, script), tuple(ideal_record(c, script) for c in json_list(rec, "components", script))


def stratum_samples(arch: Network, stratum: Stratum | str, seed: int, count: int) -> list[Point]:
    """Random integer weights on a stratum (or the package's name of one), through the parametrization
    its closure ideal came from: rank11 V = c u^T, A = g h^T; parallel V = c u^T, A = u h^T; rankA
    A = G^T H with a - 1 rows."""
    import numpy as np

    if not isinstance(stratum, Stratum):
        stratum = Stratum.from_code(stratum)
    if stratum not in SAMPLED_STRATA:
        raise ValueError(f"no sample points on {stratum!r}")
    d, e, a = arch.widths[0], arch.widths[1], arch.attention[0]
    rng = np.random.default_rng([seed, sorted(s.code for s in NAMED_STRATA).index(stratum.code)])

    def rand(*shape):  # non-zero entries, so no sample degenerates to a smaller stratum by accident
        values = rng.integers(1, 10, size=shape) * rng.choice([-1, 1], size=shape)
        return [[Fraction(int(x)) for x in row] for row in values]

    zero = lambda rows: [[Fraction(0)] * d for _ in range(rows)]  # noqa: E731
    out = []
    for _ in range(count):
        c, u, g, h = rand(e, 1), rand(1, d), rand(1, d), rand(1, d)
        if stratum is Stratum.RANK11:
            Q, K, V = h + zero(a - 1), g + zero(a - 1), [[ci[0] * x for x in u[0]] for ci in c]
        elif stratum is Stratum.PARALLEL:
            Q, K, V = h + zero(a - 1), u + zero(a - 1), [[ci[0] * x for x in u[0]] for ci in c]
        else:
            Q, K, V = rand(a - 1, d) + zero(1), rand(a - 1, d) + zero(1), rand(e, d)
        out.append(((tuple(map(tuple, Q)), tuple(map(tuple, K)), tuple(map(tuple, V))),))
    return out
