"""The singular locus of a one-layer neurovariety, by G-orbit strata (default) or on the whole ideal.

``strata``: the Jacobian criterion pulled back to weight slices (V = [I_r 0; 0 0], A) and organised by
G-orbits (singularStrata in m2/LightningCAS.m2 explains why this covers every point); exact, and it
finishes where the whole-ideal minors do not ((2,2,1), (2,2,2), (3,1,1)). ``whole-ideal``: I + minors
of jacobian I on the whole ideal, then minimalPrimes (only the smallest cases finish). The two are
cross-checked in the tests.
"""

from __future__ import annotations

import time

from lightning_cas.core.checks import count_value
from lightning_cas.core.network import Network
from lightning_cas.errors import InputError
from lightning_cas.geometry.one_layer.implicit import check_one_layer, coordinates_of, flag, ideal_record
from lightning_cas.geometry.one_layer.strata import MINOR_BUDGET, SliceRecord, read_slices, slice_text
from lightning_cas.macaulay2.network import one_head_params
from lightning_cas.macaulay2.parse import json_bool, json_int, json_list, json_object, json_str
from lightning_cas.options import (
    SINGULAR_METHOD_SPELLINGS,  # noqa: F401 (the spellings, for callers)
    resolve,
)
from lightning_cas.results.ideals import Stratum
from lightning_cas.results.singular import SingularLocusResult, SingularPiece, UnresolvedPiece, VarietyNumbers


def singular_locus(
    arch: Network,
    *,
    one_coordinate: bool = False,
    method: str = "strata",
    minor_budget: int = MINOR_BUDGET,
    seed: int = 0,
    timeout: float | None = None,
    m2: str | None = None,
    session=None,
) -> SingularLocusResult:
    """Singular locus of a one-layer neurovariety (``method`` strata or whole-ideal, formerly spelled
    jacobian); the strata method describes its pieces in the weights."""
    opts = resolve("singular_locus", arch, method=method, seed=seed, timeout=timeout, m2=m2, session=session)
    one_coordinate = flag(one_coordinate, "one_coordinate")
    minor_budget = count_value(minor_budget, "the minor budget", 1, 10**9)
    if opts.method == "strata":
        if one_coordinate:
            raise InputError(
                "the strata method needs the full output (the G-action mixes output rows); "
                "use --method whole-ideal with --one-coordinate."
            )
        check_one_layer(arch)
        with opts.deadline():
            start = time.perf_counter()
            script, rec = opts.macaulay2.run(
                "singular_strata",
                {**one_head_params(arch), "minorBudget": minor_budget, "samplesPerPiece": 1, "seed": opts.seed},
            )
            return singular_from_record(arch, rec, script, start, opts.seed, minor_budget)
    check_one_layer(arch, one_coordinate)
    with opts.deadline():
        start = time.perf_counter()
        script, rec = opts.macaulay2.run(
            "singular_whole", {**one_head_params(arch), "oneCoord": int(one_coordinate), "seed": opts.seed}
        )
    found = json_object(rec, "singular_locus", script)
    comps = []
    for comp in json_list(found, "components", script):
        inside = [Stratum.from_code(name) for name in json_list(comp, "strata", script)]
        inside = [s for s in inside if s is not None]
        if json_int(comp, "dimension", script) == 0:
            inside.insert(0, Stratum.VERTEX)
        comps.append(ideal_record(comp, script, contained_in=inside))
    sing = ideal_record(json_object(found, "singular", script), script)
    randomized = json_bool(found, "randomized", script)
    return SingularLocusResult(
        architecture=arch,
        one_coordinate=one_coordinate,
        variety=variety_numbers(rec, script),
        singular_ideal=sing.generators,
        singular_dimension=sing.dimension,
        components=tuple(comps),
        method="whole-ideal",
        method_detail=(
            "Jacobian criterion (I + minors of size codim I of jacobian I), minimalPrimes"
            if not randomized
            else "Jacobian criterion with dim V + 1 random combinations of the generators (sum of their "
            "minors), minimalPrimes"
        ),
        certainty="probabilistic" if randomized else "exact",
        certainty_detail="random combinations of the generators" if randomized else None,
        seed=opts.seed,
        elapsed_s=time.perf_counter() - start,
        m2_version=json_str(rec, "m2_version", script),
        script=script,
        **coordinates_of(arch, rec, script),
    )


def variety_numbers(rec: dict, script: str) -> VarietyNumbers:
    return VarietyNumbers(**{k: json_int(rec, k, script) for k in ("dimension", "codimension", "degree")})


def singular_pieces(arch: Network, found: SliceRecord) -> tuple[tuple, tuple]:
    """The singular pieces and the unexamined ones of a slice record, as result records."""
    pieces = tuple(
        SingularPiece(
            rank_V=p.rank_V,
            slice=slice_text(arch, p.rank_V),
            slice_generators=p.generators,
            jacobian_rank=p.jacobian_rank,
            codimension=p.codimension,
            image_dimension=p.image_dimension,
            rank_A=p.rank_A,
            colspace_A_in_rowspace_V=p.colspace_A_in_rowspace_V,
            contained_in=(p.stratum,) if p.stratum is not None else (),
        )
        for p in found.pieces
    )
    unresolved = tuple(
        UnresolvedPiece(
            rank_V=u.rank_V,
            slice=slice_text(arch, u.rank_V),
            slice_generators=u.generators,
            reason=f"too many {u.reason} (budget)",
        )
        for u in found.unresolved
    )
    return pieces, unresolved


def singular_from_record(
    arch, rec, script, start, seed, minor_budget=MINOR_BUDGET, found: SliceRecord | None = None
) -> SingularLocusResult:
    """The strata singular locus from a record with ``singular_strata`` (shared with the boundary run,
    which passes the slices it has read already as ``found``)."""
    if found is None:
        found = read_slices(json_object(rec, "singular_strata", script), script, singular=True)
    pieces, unresolved = singular_pieces(arch, found)
    sing = found.singular
    notes = []
    if unresolved:
        notes.append(f"{len(unresolved)} piece(s) not examined: their minors exceed the budget of {minor_budget}")
    elif sing is None:
        notes.append(
            "a singular piece matches no stratum of docs/mathematics.md §5: "
            "the singular ideal is not assembled "
            "(see the pieces)"
        )
    if found.factor_route:
        notes.append(
            "d' = a = 1: phi = S (x) gamma, tested on the factor S = sym(v (x) k) (Sing X = Sing Y (x) C^d "
            "off the vertex); jacobian_rank and codimension are those of the factor"
        )
    return SingularLocusResult(
        architecture=arch,
        one_coordinate=False,
        variety=variety_numbers(rec, script),
        singular_ideal=sing.generators if sing else (),
        singular_dimension=sing.dimension if sing else None,
        pieces=pieces,
        method="strata",
        method_detail="Jacobian criterion on weight slices V = [I_r 0; 0 0] by G-orbit strata (exact ranks over the "
        "function fields of the pieces, minors of the action and of the Jacobian, minimalPrimes); "
        "singular ideal = intersection of the matched strata closures",
        certainty="exact",
        seed=seed,
        elapsed_s=time.perf_counter() - start,
        m2_version=json_str(rec, "m2_version", script),
        script=script,
        notes=tuple(notes),
        unresolved=unresolved,
        complete=sing is not None and not unresolved,
        **coordinates_of(arch, rec, script),
    )
