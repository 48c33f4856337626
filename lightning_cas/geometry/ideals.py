"""One-layer geometry: implicit equations and the singular locus (the boundary is in boundary.py).

Everything symbolic runs in Macaulay2, in the LightningCAS package (``implicitModel``,
``implicitRecord``, ``singularRecord``, ``singularStrata``; one small template per question, so the
ideal is computed once per run) and comes back as one JSON record; Python only validates input,
evaluates the coordinates of φ_W exactly at a rational point, and judges. Coordinates are a basis
of the linear span of the coefficients of output token 1 (all rows, or row 1 with
``one_coordinate``): an injective linear image of the neurovariety, so dimension, degree and
singularities are those of the neurovariety.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

import sympy

from lightning_cas.core.architecture import Architecture
from lightning_cas.errors import InputError, M2ParseError, M2TimeoutError, TooLargeError, UnsupportedError
from lightning_cas.macaulay2.connection import Macaulay2
from lightning_cas.macaulay2.network import one_head_params
from lightning_cas.macaulay2.parse import (json_bool, json_get, json_int, json_int_list, json_list, json_object,
                                           json_polynomials, json_str)
from lightning_cas.core.model import coefficient_map, flat_weight_symbols, rank_over_qq
from lightning_cas.core.weights import Point, point_to_dict, random_point
from lightning_cas.core.weights import flat as flat_point
from lightning_cas.options import SINGULAR_METHODS as OPTION_SINGULAR_METHODS
from lightning_cas.core.checks import derived_seed
from lightning_cas.options import check_point, resolve
from lightning_cas.core.results import JsonResult, Provenance, Record

# Beyond these sizes elimination does not finish in minutes (measured; see bench_geometry).
MAX_PARAMETER_VARIABLES = 21
MAX_AMBIENT = 40


# ---------------------------------------------------------------- result types


@dataclass(frozen=True)
class DegreeRun(Record):
    """One numericalImageDegree run: its degree (None when it failed) and its CPU time."""

    degree: int | None
    cpu_s: float


@dataclass(frozen=True)
class NumericalDegree(Record):
    """The consensus of several monodromy runs (numeric: a run can miss sheets)."""

    value: int | None
    runs: tuple[DegreeRun, ...]
    consensus: str
    unanimous: bool
    certainty: str = "numeric"
    method: str = "NumericalImplicitization numericalImageDegree (monodromy)"


@dataclass(frozen=True)
class IdealComponent(Record):
    """A component of an ideal (a minimal prime): generators in y_1..y_n, dimension, degree."""

    generators: tuple[str, ...]
    dimension: int
    degree: int
    contained_in: tuple[str, ...] = ()  # the named strata (closures) it lies in


@dataclass(frozen=True)
class SlicePiece(Record):
    """A piece of a weight slice V = [I_r 0; 0 0] (strata method): which slice, and its equations."""

    rank_V: int
    slice: str
    slice_generators: tuple[str, ...]


@dataclass(frozen=True)
class SingularPiece(SlicePiece):
    """A singular piece found on a weight slice (strata method)."""

    jacobian_rank: int
    codimension: int
    image_dimension: int
    rank_A: int
    colspace_A_in_rowspace_V: bool
    contained_in: tuple[str, ...] = ()


@dataclass(frozen=True)
class UnresolvedPiece(SlicePiece):
    """A slice piece the strata method did not examine (its minors exceeded the budget)."""

    reason: str


@dataclass(frozen=True)
class ImplicitResult(Provenance, JsonResult):
    """The ideal of the neurovariety in coordinates y_1..y_n (a basis of the coefficient span)."""

    architecture: Architecture
    one_coordinate: bool
    dimension: int | None
    codimension: int | None
    degree: int | None  # standard grading (projective degree of the cone)
    generator_degrees: tuple[int, ...]
    generators: tuple[str, ...]  # sympy-parseable, in y_1..y_n
    coordinates: tuple[str, ...]  # y_i as a polynomial in the parameter variables
    coordinate_labels: tuple  # (output row, exponent vector of the token monomial) per y_i
    parametrization: str  # one of PARAMETRIZATIONS: what the ideal was eliminated from
    parameter_variables: int
    coefficients: int  # non-zero coefficients of the chosen output entries
    numerical_degree: NumericalDegree | None = None
    script: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def ambient(self) -> int:
        return len(self.coordinates)


@dataclass(frozen=True)
class SingularLocusResult(Provenance, JsonResult):
    """Jacobian-criterion singular locus of the neurovariety, its components and their meaning."""

    architecture: Architecture
    one_coordinate: bool
    variety: dict  # dimension, codimension, degree of the implicit ideal
    singular_ideal: tuple[str, ...]  # empty when the strata method left a piece unresolved
    singular_dimension: int | None  # -1: smooth everywhere (unit ideal); None: not determined
    components: tuple[IdealComponent, ...] = ()  # whole-ideal method: the minimal primes of the singular ideal
    pieces: tuple[SingularPiece, ...] = ()  # strata method: the singular pieces on weight slices
    script: str | None = None
    notes: tuple[str, ...] = ()
    unresolved: tuple[UnresolvedPiece, ...] = ()  # strata method: pieces whose minors exceeded the budget
    complete: bool = True  # every point of the variety was examined


@dataclass(frozen=True)
class PointSingularityResult(Provenance, JsonResult):
    """Is φ_W a singular point of the neurovariety, and is W a critical point of W ↦ φ_W?"""

    architecture: Architecture
    point: dict
    phi_is_zero: bool
    singular: bool | None  # from the tangent space of the implicit ideal at φ_W (exact)
    tangent_rank: int | None
    codimension: int | None
    critical: bool  # rank of the differential of the parametrization below the generic rank
    differential_rank: int
    generic_rank: int
    notes: tuple[str, ...] = ()


# ---------------------------------------------------------------- running the template


def check_one_layer(arch: Architecture, one_coordinate: bool = False) -> None:
    """Refuse what the template cannot do, in one sentence, before M2 starts."""
    if arch.normalization != "none":
        raise UnsupportedError("implicit equations exist for polynomial (lightning) networks only; softmax is "
                               "not polynomial.")
    if arch.depth != 1:
        raise UnsupportedError(f"the geometry commands handle one layer; this architecture has depth {arch.depth}.")
    if arch.multihead:
        raise UnsupportedError("the geometry commands handle one head; for several heads use dim, verify or fiber.")
    d, e, a = arch.widths[0], arch.widths[1], arch.attention[0]
    # (V, A), (V, Z = sym A) at one token, or (Q, K, V) for a = 1 < d, t >= 2 (implicitModel in m2/LightningCAS.m2)
    variables = (e * d + d * (d + 1) // 2 if arch.tokens == 1 and a < d else e * d + d * d if a > 1 or a >= d
                 else arch.parameters)
    ambient = (1 if one_coordinate else e) * d * d * (d + 1) // 2
    if variables > MAX_PARAMETER_VARIABLES or ambient > MAX_AMBIENT:
        raise TooLargeError(f"elimination for d={d}, d'={e}, a={a} is beyond what finishes in minutes "
                            f"({variables} parameter variables); use `lightning-cas dim` for the dimension, "
                            "or --one-coordinate.")


# the strata method forms at most this many minors at once ((2,2,2) needs 2.4 million, 27 s)
MINOR_BUDGET = 3_000_000


def sympy_strings(rec: dict, key: str, script: str) -> tuple[str, ...]:
    """The polynomials under ``key``, checked, as sympy-parseable strings (M2's q_(1,2) is q_1_2)."""
    return tuple(str(p) for p in json_polynomials(rec, key, script))


def ideal_record(rec: dict, script: str) -> dict:
    """An ideal as the package's ``idealRecord`` writes it: generators (strings), dimension, degree."""
    return {"generators": list(sympy_strings(rec, "generators", script)),
            "dimension": json_int(rec, "dimension", script), "degree": json_int(rec, "degree", script)}


def _labels(arch: Architecture, rec: dict, script: str) -> tuple:
    width = 1 + arch.widths[0] * arch.tokens
    labels = []
    for i, label in enumerate(json_list(rec, "labels", script)):
        flat = json_int_list({"label": label}, "label", script) if isinstance(label, list) else None
        if flat is None or len(flat) != width:
            raise M2ParseError(f"coordinate label {i + 1} from Macaulay2 has the wrong shape: {str(label)[:100]}",
                               script)
        labels.append((flat[0], tuple(flat[1:])))
    return tuple(labels)


def _consensus(rec: dict, runs: int, script: str) -> NumericalDegree:
    got = json_list(rec, "numerical_degree_runs", script)
    if len(got) != runs:
        raise M2ParseError(f"{len(got)} numerical degree runs from Macaulay2, asked for {runs}", script)
    values = []
    for run in got:
        degree = json_get(run, "degree", script)
        if degree is not None:
            degree = json_int(run, "degree", script)
        values.append(DegreeRun(degree=degree, cpu_s=json_int(run, "cpu_ms", script) / 1000))
    counts = Counter(v.degree for v in values if v.degree is not None)
    value, votes = counts.most_common(1)[0] if counts else (None, 0)
    return NumericalDegree(value=value, runs=tuple(values), consensus=f"{votes} of {runs} runs",
                           unanimous=votes == runs)


def _flag(value, name: str) -> bool:
    if not isinstance(value, bool):
        raise InputError(f"{name} must be True or False, got {value!r}.")
    return value


def implicit(arch: Architecture, *, one_coordinate: bool = False, generators: bool = True,
             numerical_degree_runs: int = 0, ideal: bool = True, seed: int = 0, timeout: float | None = None,
             m2: str | None = None, session=None, reparametrize: bool = True) -> ImplicitResult:
    """Implicit ideal of a one-layer neurovariety (exact, over QQ), optionally a numerical degree.

    ``ideal=False`` with ``numerical_degree_runs > 0`` skips elimination: for cases it cannot reach.
    ``reparametrize=False`` eliminates from the weights (Q, K, V) themselves: the slow route, kept as an
    independent check of the (V, A) / (V, sym A) routes (docs/implicit.md).
    """
    opts = resolve("implicit", arch, seed=seed, timeout=timeout, m2=m2, session=session)
    one_coordinate, generators, ideal = (_flag(one_coordinate, "one_coordinate"), _flag(generators, "generators"),
                                         _flag(ideal, "ideal"))
    check_one_layer(arch, one_coordinate) if ideal else _check_numeric_only(arch)
    if isinstance(numerical_degree_runs, bool) or not isinstance(numerical_degree_runs, int) \
            or not 0 <= numerical_degree_runs <= 50:
        raise InputError("the number of numerical degree runs must be an integer between 0 and 50.")
    if not ideal and numerical_degree_runs == 0:
        raise InputError("nothing to compute: ask for the ideal or for numerical degree runs.")
    reparametrize = _flag(reparametrize, "reparametrize")
    with opts.deadline():
        start = time.perf_counter()
        script, rec = opts.macaulay2.run("implicit", {
            **one_head_params(arch), "oneCoord": int(one_coordinate), "reparam": int(reparametrize),
            "wantIdeal": int(ideal), "emitGenerators": int(generators), "numDegreeRuns": numerical_degree_runs,
            "seed": opts.seed})
        return implicit_from_record(arch, one_coordinate, rec, script, start, opts.seed, numerical_degree_runs,
                                    ideal)


def _check_numeric_only(arch: Architecture) -> None:
    if arch.normalization != "none" or arch.depth != 1 or arch.multihead:
        raise UnsupportedError("the geometry commands handle one lightning layer with one head.")


# implicitModel's parametrization codes: the ring the implicit ideal is eliminated from
PARAMETRIZATIONS = {0: "Q,K,V", 1: "V,A", 2: "V,A with rank A <= a", 3: "V,Z with Z = sym(A), rank Z <= 2a"}


def implicit_from_record(arch, one_coordinate, rec, script, start, seed, runs=0, ideal=True) -> ImplicitResult:
    """The ImplicitResult from the package's ``implicitRecord`` (the top level of every geometry record)."""
    route = json_int(rec, "parametrization", script)
    if route not in PARAMETRIZATIONS:
        raise M2ParseError(f"unknown parametrization code {route} from Macaulay2", script)
    if json_int(rec, "parameters", script) < 1:
        raise M2ParseError("Macaulay2 reports no parameter variables", script)
    get = (lambda k: json_int(rec, k, script)) if ideal else (lambda k: None)
    numeric = _consensus(rec, runs, script) if runs else None
    notes = []
    if ideal:
        notes.append(f"elimination (ker) took {get('implicit_cpu_ms') / 1000:.3g} s of M2 CPU time")
        if route == 2:
            notes.append(f"eliminated from (V, A) modulo the {arch.attention[0] + 1}-minors of A (A = K^T Q has rank "
                         "<= a; the minors ideal is prime and (Q, K) -> K^T Q is onto it, so the closure is the same)")
        if route == 3:
            notes.append("one token: phi depends on A only through Z = (A + A^T)/2, and these Z are dense in the "
                         "symmetric matrices of rank <= min(2a, d), so the ideal is eliminated from (V, Z) with Z "
                         "symmetric modulo its (2a+1)-minors (none when 2a >= d): the same closure")
        if numeric and numeric.value is not None and numeric.value != get("degree"):
            notes.append(f"numerical degree {numeric.value} DISAGREES with the exact degree {get('degree')}")
    return ImplicitResult(
        architecture=arch, one_coordinate=one_coordinate, dimension=get("dimension"),
        codimension=get("codimension"), degree=get("degree"),
        generator_degrees=tuple(json_int_list(rec, "generator_degrees", script)) if ideal else (),
        generators=sympy_strings(rec, "generators", script) if "generators" in rec else (),
        coordinates=sympy_strings(rec, "coordinates", script),
        coordinate_labels=_labels(arch, rec, script), parametrization=PARAMETRIZATIONS[route],
        parameter_variables=json_int(rec, "parameters", script),
        coefficients=json_int(rec, "coefficients", script),
        method="m2-ker" if ideal else "m2-numerical",
        method_detail=("elimination: kernel of the coefficient ring map over QQ" if ideal else
                       "NumericalImplicitization numericalImageDegree (monodromy); no elimination"),
        certainty="exact" if ideal else "numeric", seed=seed,
        elapsed_s=time.perf_counter() - start, m2_version=json_str(rec, "m2_version", script),
        numerical_degree=numeric, script=script, notes=tuple(notes))


# ---------------------------------------------------------------- exact evaluation at a point


def _require_one_layer_point(arch: Architecture, point: Point):
    if len(point) != 1:
        raise InputError("the point must have exactly one layer.")
    Q, K, V = (sympy.Matrix([[sympy.Rational(x.numerator, x.denominator) for x in row] for row in M])
               for M in point[0])
    return Q, K, V


def point_values(arch: Architecture, point: Point) -> dict:
    """Values of every parameter symbol the template may use: q/k/v weights, (V, A = K^T Q), Z = sym(A)."""
    Q, K, V = _require_one_layer_point(arch, point)
    A = K.T * Q
    values = {}
    for name, M in (("q", Q), ("k", K), ("v", V)):
        for r in range(M.rows):
            for c in range(M.cols):
                values[sympy.Symbol(f"{name}_1_{r + 1}_{c + 1}")] = M[r, c]
    for r in range(V.rows):
        for c in range(V.cols):
            values[sympy.Symbol(f"v_{r + 1}_{c + 1}")] = V[r, c]
    for r in range(A.rows):
        for c in range(A.cols):
            values[sympy.Symbol(f"a_{r + 1}_{c + 1}")] = A[r, c]
            values[sympy.Symbol(f"z_{r + 1}_{c + 1}")] = (A[r, c] + A[c, r]) / 2  # one-token route: Z = sym(A)
    return values


def phi_coordinates(result: ImplicitResult, point: Point) -> list[sympy.Rational]:
    """The coordinates y_1..y_n of φ_W, exactly."""
    values = point_values(result.architecture, point)
    return [sympy.sympify(c).xreplace(values) for c in result.coordinates]


def _y(n: int) -> list[sympy.Symbol]:
    return [sympy.Symbol(f"y_{i}") for i in range(1, n + 1)]


def vanishes(generators, coords) -> bool:
    """Do all the polynomials (strings in y_i) vanish at the coordinate vector?"""
    subs = dict(zip(_y(len(coords)), coords))
    return all(sympy.sympify(g).xreplace(subs) == 0 for g in generators)


def tangent_rank(generators, coords) -> int:
    """Rank of the Jacobian matrix of the ideal's generators at a point, exactly over QQ."""
    ys = _y(len(coords))
    subs = dict(zip(ys, coords))
    rows = [[sympy.diff(sympy.sympify(g), y).xreplace(subs) for y in ys] for g in generators]
    return rank_over_qq(rows)


def _weight_values(arch: Architecture, point: Point) -> dict:
    return {w: sympy.Rational(x.numerator, x.denominator) for w, x in zip(flat_weight_symbols(arch), flat_point(point))}


def differential_rank(arch: Architecture, point: Point) -> int:
    """Rank of d(W ↦ coefficients of φ_W) at W, exactly (all tokens, all output entries)."""
    subs = _weight_values(arch, point)
    ws = flat_weight_symbols(arch)
    rows = [[sympy.diff(c, w).xreplace(subs) for w in ws] for c in coefficient_map(arch).values()]
    return rank_over_qq(rows)


def _phi_is_zero(arch: Architecture, point: Point) -> bool:
    subs = _weight_values(arch, point)
    return all(c.xreplace(subs) == 0 for c in coefficient_map(arch).values())


def is_singular(arch: Architecture, point: Point, *, implicit_result: ImplicitResult | None = None, seed: int = 0,
                timeout: float | None = None, m2: str | None = None, session=None) -> PointSingularityResult:
    """Tangent-space test of φ_W against the implicit ideal (exact), and the critical-point test at W."""
    opts = resolve("is_singular", arch, seed=seed, timeout=timeout, m2=m2, session=session)
    _check_numeric_only(arch)
    point = check_point(arch, point)
    if implicit_result is not None and not isinstance(implicit_result, ImplicitResult):
        raise InputError(f"implicit_result must be an ImplicitResult, got {type(implicit_result).__name__}.")
    with opts.deadline():
        return _is_singular(arch, point, implicit_result, opts)


def _is_singular(arch, point, implicit_result, opts) -> PointSingularityResult:
    seed = opts.seed
    start = time.perf_counter()
    notes = []
    res = implicit_result
    if res is None:
        try:
            res = implicit(arch, seed=seed, m2=opts.macaulay2)
        except (TooLargeError, M2TimeoutError) as exc:  # the critical-point test still answers
            notes.append(f"no implicit ideal, so no tangent-space verdict: {exc}")
    d_rank = differential_rank(arch, point)
    # max over two points with large entries: one unlucky point (e.g. v parallel to k) under-estimates
    generic = max(differential_rank(arch, random_point(arch, seed=derived_seed(seed, 10_000 + i), bound=10**6))
                  for i in (0, 1))
    t_rank = singular = codim = None
    zero = _phi_is_zero(arch, point)
    if res is not None:
        coords = phi_coordinates(res, point)
        if not vanishes(res.generators, coords):
            raise M2ParseError("φ_W does not satisfy the computed implicit equations; the ideal or the coordinates "
                               "are inconsistent (please report this).")
        t_rank, codim = tangent_rank(res.generators, coords), res.codimension
        singular, zero = t_rank < codim, all(c == 0 for c in coords)
        if generic != res.dimension:
            notes.append(f"generic differential rank {generic} at random points differs from dim {res.dimension}")
    return PointSingularityResult(
        architecture=arch, point=point_to_dict(point), phi_is_zero=zero,
        singular=singular, tangent_rank=t_rank, codimension=codim,
        critical=d_rank < generic, differential_rank=d_rank, generic_rank=generic,
        method="tangent-space",
        method_detail="tangent space of the implicit ideal at phi_W; rank of the differential at W",
        certainty="exact" if res is not None else "probabilistic",
        certainty_detail=None if res is not None else "no implicit ideal: the critical-point test only, against "
                                                      "the generic rank at random points", seed=seed,
                                      elapsed_s=time.perf_counter() - start,
        m2_version=res.m2_version if res is not None else None, notes=tuple(notes))


# ---------------------------------------------------------------- singular locus

STRATA = {"rank11": "rank V = rank A = 1", "parallel": "rank V = rank A = 1, rowspace V = colspace A",
          "rankA": "rank A < a", "vertex": "the vertex 0"}


SINGULAR_METHODS = OPTION_SINGULAR_METHODS
SINGULAR_METHOD_SPELLINGS = OPTION_SINGULAR_METHODS + ("jacobian",)  # "jacobian": the former name of whole-ideal


def singular_locus(arch: Architecture, *, one_coordinate: bool = False, method: str = "strata",
                   minor_budget: int = MINOR_BUDGET, seed: int = 0, timeout: float | None = None,
                   m2: str | None = None, session=None) -> SingularLocusResult:
    """Singular locus of a one-layer neurovariety.

    ``strata`` (default): the Jacobian criterion pulled back to weight slices (V = [I_r 0; 0 0], A)
    and organised by G-orbits (singularStrata in m2/LightningCAS.m2 explains why this covers every
    point); exact, and it finishes where the whole-ideal minors do not ((2,2,1), (2,2,2), (3,1,1)).
    Its pieces are described in the weights. ``whole-ideal`` (formerly spelled ``jacobian``): I + minors of
    jacobian I on the whole ideal, then minimalPrimes (only the smallest cases finish); the two
    are cross-checked in the tests.
    """
    opts = resolve("singular_locus", arch, method=method, seed=seed, timeout=timeout, m2=m2, session=session)
    one_coordinate = _flag(one_coordinate, "one_coordinate")
    if isinstance(minor_budget, bool) or not isinstance(minor_budget, int) or not 1 <= minor_budget <= 10**9:
        raise InputError("the minor budget must be an integer between 1 and 10^9.")
    if opts.method == "strata":
        if one_coordinate:
            raise InputError("the strata method needs the full output (the G-action mixes output rows); "
                             "use --method whole-ideal with --one-coordinate.")
        check_one_layer(arch)
        with opts.deadline():
            return _singular_by_strata(arch, opts.seed, opts.macaulay2, minor_budget)
    check_one_layer(arch, one_coordinate)
    with opts.deadline():
        start = time.perf_counter()
        script, rec = opts.macaulay2.run("singular_whole", {**one_head_params(arch), "oneCoord": int(one_coordinate),
                                                            "seed": opts.seed})
    found = json_object(rec, "singular_locus", script)
    comps = []
    for comp in json_list(found, "components", script):
        inside = [name for name in json_list(comp, "strata", script) if isinstance(name, str) and name in STRATA]
        if json_int(comp, "dimension", script) == 0:
            inside.insert(0, "vertex")
        comps.append(IdealComponent(contained_in=tuple(STRATA[s] for s in inside), **ideal_record(comp, script)))
    sing = ideal_record(json_object(found, "singular", script), script)
    randomized = json_bool(found, "randomized", script)
    return SingularLocusResult(
        architecture=arch, one_coordinate=one_coordinate, variety=_variety(rec, script),
        singular_ideal=tuple(sing["generators"]), singular_dimension=sing["dimension"], components=tuple(comps),
        method="whole-ideal",
        method_detail=("Jacobian criterion (I + minors of size codim I of jacobian I), minimalPrimes" if not randomized
                       else "Jacobian criterion with dim V + 1 random combinations of the generators (sum of their "
                            "minors), minimalPrimes"),
        certainty="probabilistic" if randomized else "exact",
        certainty_detail="random combinations of the generators" if randomized else None,
        seed=opts.seed, elapsed_s=time.perf_counter() - start,
        m2_version=json_str(rec, "m2_version", script), script=script)


def _variety(rec: dict, script: str) -> dict:
    return {k: json_int(rec, k, script) for k in ("dimension", "codimension", "degree")}


def _slice_text(arch: Architecture, r: int) -> str:
    d, a = arch.widths[0], arch.attention[0]
    a_text = "A = (b_i_j)" if a >= d else "A = K^T Q with Q = (q_i_j), K = (k_i_j)"
    return f"V = [I_{r} 0; 0 0] (rank V = {r}), {a_text}"


def _strata_pieces(arch: Architecture, found: dict, script: str) -> tuple[list, list]:
    pieces, unresolved = [], []
    for piece in json_list(found, "pieces", script):
        r, name = json_int(piece, "rank_V", script), json_str(piece, "matches", script)
        pieces.append(SingularPiece(rank_V=r, slice=_slice_text(arch, r),
                                    slice_generators=sympy_strings(piece, "generators", script),
                                    jacobian_rank=json_int(piece, "jacobian_rank", script),
                                    codimension=json_int(piece, "codimension", script),
                                    image_dimension=json_int(piece, "image_dimension", script),
                                    rank_A=json_int(piece, "rank_A", script),
                                    colspace_A_in_rowspace_V=json_bool(piece, "colspace_A_in_rowspace_V", script),
                                    contained_in=(STRATA[name],) if name in STRATA else ()))
    for piece in json_list(found, "unresolved", script):
        r = json_int(piece, "rank_V", script)
        unresolved.append(UnresolvedPiece(rank_V=r, slice=_slice_text(arch, r),
                                          slice_generators=sympy_strings(piece, "generators", script),
                                          reason=f"too many {json_str(piece, 'reason', script)} (budget)"))
    return pieces, unresolved


def _singular_by_strata(arch, seed, m2: Macaulay2, minor_budget) -> SingularLocusResult:
    start = time.perf_counter()
    script, rec = m2.run("singular_strata", {**one_head_params(arch), "minorBudget": minor_budget,
                                             "samplesPerPiece": 1, "seed": seed})
    return singular_from_record(arch, rec, script, start, seed, minor_budget)


def singular_from_record(arch, rec, script, start, seed, minor_budget=MINOR_BUDGET) -> SingularLocusResult:
    """The strata singular locus from a record with ``singular_strata`` (shared with the boundary run)."""
    found = json_object(rec, "singular_strata", script)
    pieces, unresolved = _strata_pieces(arch, found, script)
    sing = json_get(found, "singular", script)
    complete = sing is not None
    notes = []
    if unresolved:
        notes.append(f"{len(unresolved)} piece(s) not examined: their minors exceed the budget of {minor_budget}")
    elif not complete:
        notes.append("a singular piece matches no stratum of docs/mathematics.md §5: "
                     "the singular ideal is not assembled "
                     "(see the pieces)")
    if json_bool(found, "factor_route", script):
        notes.append("d' = a = 1: phi = S (x) gamma, tested on the factor S = sym(v (x) k) (Sing X = Sing Y (x) C^d "
                     "off the vertex); jacobian_rank and codimension are those of the factor")
    sing = ideal_record(json_object(found, "singular", script), script) if complete else None
    return SingularLocusResult(
        architecture=arch, one_coordinate=False, variety=_variety(rec, script),
        singular_ideal=tuple(sing["generators"]) if sing else (),
        singular_dimension=sing["dimension"] if sing else None, pieces=tuple(pieces),
        method="strata",
        method_detail="Jacobian criterion on weight slices V = [I_r 0; 0 0] by G-orbit strata (exact ranks over the "
               "function fields of the pieces, minors of the action and of the Jacobian, minimalPrimes); "
               "singular ideal = intersection of the matched strata closures",
        certainty="exact", seed=seed, elapsed_s=time.perf_counter() - start,
        m2_version=json_str(rec, "m2_version", script), script=script, notes=tuple(notes),
        unresolved=tuple(unresolved), complete=complete and not unresolved)
