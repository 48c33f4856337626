"""The implicit ideal of a one-layer neurovariety (and what every geometry run shares: the size guard
and the reading of the implicit record at the top of every record).

Everything symbolic runs in Macaulay2, in the LightningCAS package (``implicitModel``,
``implicitRecord``; one small template per question, so the ideal is computed once per run) and comes
back as one JSON record. Coordinates are a basis of the linear span of the coefficients of output
token 1 (all rows, or row 1 with ``one_coordinate``): an injective linear image of the neurovariety,
so dimension, degree and singularities are those of the neurovariety (docs/implicit.md).
"""

from __future__ import annotations

import time
from collections import Counter

from lightning_cas.core.checks import count_value
from lightning_cas.core.names import polynomial_text
from lightning_cas.core.network import Network
from lightning_cas.errors import InputError, M2ParseError, TooLargeError, UnsupportedError
from lightning_cas.macaulay2.network import one_head_params
from lightning_cas.macaulay2.parse import json_get, json_int, json_int_list, json_list, json_polynomials, json_str
from lightning_cas.options import resolve
from lightning_cas.results.ideals import Parametrization
from lightning_cas.results.implicit import DegreeRun, IdealComponent, ImplicitResult, NumericalDegree

# Beyond these sizes elimination does not finish in minutes (measured; see bench_geometry).
MAX_PARAMETER_VARIABLES = 21
MAX_AMBIENT = 40


def check_one_layer(arch: Network, one_coordinate: bool = False) -> None:
    """Refuse what the templates cannot do, in one sentence, before M2 starts."""
    if arch.normalization != "none":
        raise UnsupportedError(
            "implicit equations exist for polynomial (lightning) networks only; softmax is not polynomial."
        )
    if arch.depth != 1:
        raise UnsupportedError(f"the geometry commands handle one layer; this architecture has depth {arch.depth}.")
    if arch.multihead:
        raise UnsupportedError("the geometry commands handle one head; for several heads use dim, verify or fiber.")
    d, e, a = arch.widths[0], arch.widths[1], arch.attention[0]
    # (V, A), (V, Z = sym A) at one token, or (Q, K, V) for a = 1 < d, t >= 2 (implicitModel in m2/LightningCAS.m2)
    variables = (
        e * d + d * (d + 1) // 2
        if arch.tokens == 1 and a < d
        else e * d + d * d
        if a > 1 or a >= d
        else arch.parameters
    )
    ambient = (1 if one_coordinate else e) * d * d * (d + 1) // 2
    if variables > MAX_PARAMETER_VARIABLES or ambient > MAX_AMBIENT:
        raise TooLargeError(
            f"elimination for d={d}, d'={e}, a={a} is beyond what finishes in minutes "
            f"({variables} parameter variables); use `lightning-cas dim` for the dimension, "
            "or --one-coordinate."
        )


def check_lightning_one_head(arch: Network) -> None:
    """What needs no elimination (a numerical degree, a point test) still needs one lightning head."""
    if arch.normalization != "none" or arch.depth != 1 or arch.multihead:
        raise UnsupportedError("the geometry commands handle one lightning layer with one head.")


def polynomial_texts(rec: dict, key: str, script: str) -> tuple[str, ...]:
    """The polynomials under ``key``, checked, in the one text form (core.names)."""
    return tuple(polynomial_text(p) for p in json_polynomials(rec, key, script))


def ideal_record(rec: dict, script: str, contained_in=()) -> IdealComponent:
    """An ideal as the package's ``idealRecord`` writes it: generators, dimension, degree."""
    return IdealComponent(
        generators=polynomial_texts(rec, "generators", script),
        dimension=json_int(rec, "dimension", script),
        degree=json_int(rec, "degree", script),
        contained_in=tuple(contained_in),
    )


def coordinate_labels(arch: Network, rec: dict, script: str) -> tuple:
    """Per coordinate y_i: (output row, exponent vector of its token monomial), from the record's labels."""
    width = 1 + arch.widths[0] * arch.tokens
    labels = []
    for i, label in enumerate(json_list(rec, "labels", script)):
        flat = json_int_list({"label": label}, "label", script) if isinstance(label, list) else None
        if flat is None or len(flat) != width:
            raise M2ParseError(
                f"coordinate label {i + 1} from Macaulay2 has the wrong shape: {str(label)[:100]}", script
            )
        labels.append((flat[0], tuple(flat[1:])))
    return tuple(labels)


def coordinates_of(arch: Network, rec: dict, script: str) -> dict:
    """The coordinates and their labels, as the result fields of the same names."""
    coords, labels = polynomial_texts(rec, "coordinates", script), coordinate_labels(arch, rec, script)
    if len(coords) != len(labels):
        raise M2ParseError(f"{len(coords)} coordinates but {len(labels)} coordinate labels from Macaulay2", script)
    return {"coordinates": coords, "coordinate_labels": labels}


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
    return NumericalDegree(
        value=value, runs=tuple(values), consensus=f"{votes} of {runs} runs", unanimous=votes == runs
    )


def flag(value, name: str) -> bool:
    if not isinstance(value, bool):
        raise InputError(f"{name} must be True or False, got {value!r}.")
    return value


def implicit(
    arch: Network,
    *,
    one_coordinate: bool = False,
    generators: bool = True,
    numerical_degree_runs: int = 0,
    ideal: bool = True,
    seed: int = 0,
    timeout: float | None = None,
    m2: str | None = None,
    session=None,
    reparametrize: bool = True,
) -> ImplicitResult:
    """Implicit ideal of a one-layer neurovariety (exact, over QQ), optionally a numerical degree.

    ``ideal=False`` with ``numerical_degree_runs > 0`` skips elimination: for cases it cannot reach.
    ``reparametrize=False`` eliminates from the weights (Q, K, V) themselves: the slow route, kept as an
    independent check of the (V, A) / (V, sym A) routes (docs/implicit.md).
    """
    opts = resolve("implicit", arch, seed=seed, timeout=timeout, m2=m2, session=session)
    one_coordinate, generators, ideal = (
        flag(one_coordinate, "one_coordinate"),
        flag(generators, "generators"),
        flag(ideal, "ideal"),
    )
    check_one_layer(arch, one_coordinate) if ideal else check_lightning_one_head(arch)
    numerical_degree_runs = count_value(numerical_degree_runs, "the number of numerical degree runs", 0, 50)
    if not ideal and numerical_degree_runs == 0:
        raise InputError("nothing to compute: ask for the ideal or for numerical degree runs.")
    reparametrize = flag(reparametrize, "reparametrize")
    with opts.deadline():
        start = time.perf_counter()
        script, rec = opts.macaulay2.run(
            "implicit",
            {
                **one_head_params(arch),
                "oneCoord": int(one_coordinate),
                "reparam": int(reparametrize),
                "wantIdeal": int(ideal),
                "emitGenerators": int(generators),
                "numDegreeRuns": numerical_degree_runs,
                "seed": opts.seed,
            },
        )
        return implicit_from_record(arch, one_coordinate, rec, script, start, opts.seed, numerical_degree_runs, ideal)


def _notes(arch: Network, route: Parametrization, rec: dict, script: str, numeric) -> list[str]:
    notes = [f"elimination (ker) took {json_int(rec, 'implicit_cpu_ms', script) / 1000:.3g} s of M2 CPU time"]
    if route is Parametrization.VA_RANK:
        notes.append(
            f"eliminated from (V, A) modulo the {arch.attention[0] + 1}-minors of A (A = K^T Q has rank "
            "<= a; the minors ideal is prime and (Q, K) -> K^T Q is onto it, so the closure is the same)"
        )
    if route is Parametrization.VZ:
        notes.append(
            "one token: phi depends on A only through Z = (A + A^T)/2, and these Z are dense in the "
            "symmetric matrices of rank <= min(2a, d), so the ideal is eliminated from (V, Z) with Z "
            "symmetric modulo its (2a+1)-minors (none when 2a >= d): the same closure"
        )
    degree = json_int(rec, "degree", script)
    if numeric and numeric.value is not None and numeric.value != degree:
        notes.append(f"numerical degree {numeric.value} DISAGREES with the exact degree {degree}")
    return notes


def implicit_from_record(arch, one_coordinate, rec, script, start, seed, runs=0, ideal=True) -> ImplicitResult:
    """The ImplicitResult from the package's ``implicitRecord`` (the top level of every geometry record)."""
    code = json_int(rec, "parametrization", script)
    route = Parametrization.from_code(code)
    if route is None:
        raise M2ParseError(f"unknown parametrization code {code} from Macaulay2", script)
    if json_int(rec, "parameters", script) < 1:
        raise M2ParseError("Macaulay2 reports no parameter variables", script)
    get = (lambda k: json_int(rec, k, script)) if ideal else (lambda k: None)
    numeric = _consensus(rec, runs, script) if runs else None
    return ImplicitResult(
        architecture=arch,
        one_coordinate=one_coordinate,
        dimension=get("dimension"),
        codimension=get("codimension"),
        degree=get("degree"),
        generator_degrees=tuple(json_int_list(rec, "generator_degrees", script)) if ideal else (),
        generators=polynomial_texts(rec, "generators", script) if "generators" in rec else (),
        **coordinates_of(arch, rec, script),
        parametrization=route,
        parameter_variables=json_int(rec, "parameters", script),
        coefficients=json_int(rec, "coefficients", script),
        method="m2-ker" if ideal else "m2-numerical",
        method_detail=(
            "elimination: kernel of the coefficient ring map over QQ"
            if ideal
            else "NumericalImplicitization numericalImageDegree (monodromy); no elimination"
        ),
        certainty="exact" if ideal else "numeric",
        seed=seed,
        elapsed_s=time.perf_counter() - start,
        m2_version=json_str(rec, "m2_version", script),
        numerical_degree=numeric,
        script=script,
        notes=tuple(_notes(arch, route, rec, script, numeric) if ideal else ()),
    )
