"""The geometry results as the text a person reads: what the CLI prints and what ``str(result)`` gives.

One renderer per result type (implicit, singular, point singularity, boundary, claims, fiber, network
fiber); the CLI prints exactly these lines, and each result's ``__str__`` returns them. What only the
command line knows is a keyword: ``coordinates=True`` (``--coordinates``: every y_i with its polynomial).
"""

from __future__ import annotations

from lightning_cas.core.display import printable

SHORT_TABLE = 12  # coordinates listed before "... (n more: --coordinates)"
SHORT_GENERATORS = 20  # generators of an implicit ideal listed in full


def how(result) -> str:
    return f"{result.method}; {result.certainty}; Macaulay2 {result.m2_version}; {result.elapsed_s:.3g} s"


def _out(lines) -> str:
    return printable("\n".join(lines), keep_newlines=True)


def coordinate_lines(res, everything: bool = False) -> list[str]:
    """What each y_i is: the coefficient of which token monomial, in which output row (of output token 1)."""
    table = res.coordinate_table()
    if not table:
        return []
    lines = ["  y_i = coefficient of the token monomial in output row p of output token 1"
             + ("" if everything else " (--coordinates: as polynomials in the parameters)") + ":"]
    width = max(len(name) for name, *_ in table)
    for name, row, monomial, poly in table[:None if everything else SHORT_TABLE]:
        tail = f"  = {poly}" if everything and poly else ""
        lines.append(f"  {name:<{width}}  row {row}  {monomial}{tail}")
    if not everything and len(table) > SHORT_TABLE:
        lines.append(f"  ... ({len(table) - SHORT_TABLE} more: --coordinates)")
    return lines


def _count(values) -> dict:
    out: dict = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def implicit_text(res, coordinates: bool = False) -> str:
    lines = [f"{res.architecture}{'  (one output coordinate)' if res.one_coordinate else ''}",
             f"coordinates y_1..y_{res.ambient} (basis of the coefficient span); parametrization "
             f"{res.parametrization} with {res.parameter_variables} variables"]
    lines += coordinate_lines(res, coordinates)
    if res.dimension is not None:
        lines.append(f"dimension {res.dimension}, codimension {res.codimension}, degree {res.degree}   ({how(res)})")
        degs = ", ".join(f"{n} of degree {d}" for d, n in sorted(_count(res.generator_degrees).items()))
        lines.append(f"{len(res.generator_degrees)} minimal generators: {degs or 'none (linear space)'}")
        lines += [f"  {g}" for g in res.generators[:SHORT_GENERATORS]]
        if len(res.generators) > SHORT_GENERATORS:
            lines.append(f"  ... ({len(res.generators) - SHORT_GENERATORS} more; use --json or --format m2)")
    if res.numerical_degree:
        nd = res.numerical_degree
        lines.append(f"numerical degree {nd.value} (numeric; consensus {nd.consensus}: {[r.degree for r in nd.runs]})")
    lines += [f"note: {note}" for note in res.notes]
    return _out(lines)


def point_singularity_text(res) -> str:
    lines = [f"singular: {str(res.singular).lower()}   (tangent rank {res.tangent_rank} vs codimension "
             f"{res.codimension})",
             f"critical point of the parametrization: {str(res.critical).lower()}   (differential rank "
             f"{res.differential_rank}, generic {res.generic_rank})"]
    lines += [f"note: {note}" for note in res.notes]
    return _out(lines)


def singular_text(res, coordinates: bool = False) -> str:
    v = res.variety
    lines = [f"{res.architecture}: variety of dimension {v.dimension}, degree {v.degree}   ({how(res)})",
             f"coordinates y_1..y_{v.dimension + v.codimension} (basis of the coefficient span)"]
    lines += coordinate_lines(res, coordinates)
    if res.singular_dimension is not None and res.singular_dimension < 0:
        lines.append("smooth everywhere (the singular ideal is the unit ideal)")
    if res.method == "strata":
        return _out(lines + _strata_lines(res))
    for i, c in enumerate(res.components, start=1):
        inside = "; ".join(c.contained_in) or "no listed stratum"
        lines.append(f"component {i}: dimension {c.dimension}, degree {c.degree}, inside: {inside}")
        lines.append("  " + " ; ".join(c.generators[:8]) + (" ..." if len(c.generators) > 8 else ""))
    return _out(lines)


def _strata_lines(res) -> list[str]:
    lines = []
    if res.variety.codimension > 0:
        lines.append("singular: the vertex 0 (a cone that is not a linear space)")
    for i, c in enumerate(res.pieces, start=1):
        inside = "; ".join(c.contained_in) or "NO listed stratum"
        eqs = " ; ".join(c.slice_generators) or "the whole slice"
        lines.append(f"singular piece {i}: {c.slice}, where {eqs}: rank A = {c.rank_A}, Jacobian rank "
                     f"{c.jacobian_rank} < {c.codimension}; closure of dimension {c.image_dimension} = {inside}")
    for c in res.unresolved:
        lines.append(f"NOT EXAMINED: {c.slice}, where {' ; '.join(c.slice_generators) or 'the whole slice'}"
                     f" ({c.reason})")
    if res.complete and res.singular_dimension >= 0:
        lines.append(f"singular locus: dimension {res.singular_dimension}, {len(res.singular_ideal)} generators")
        lines.append("  " + " ; ".join(res.singular_ideal[:8]) + (" ..." if len(res.singular_ideal) > 8 else ""))
    return lines + [f"note: {note}" for note in res.notes]


def boundary_text(res, coordinates: bool = False) -> str:
    lines = [f"{res.architecture}"]  # first, as implicit and singular do: the coordinate table follows
    if res.point is not None:
        verdict = "unknown" if res.boundary is None else str(res.boundary).lower()
        lines.append(f"boundary: {verdict}   ({res.evidence})")
        if res.in_critical_image is not None:
            lines.append(f"in the Zariski closure of the critical image: {str(res.in_critical_image).lower()}")
    if res.coordinate_labels:
        lines.append(f"coordinates y_1..y_{len(res.coordinate_labels)} (basis of the coefficient span)")
        lines += coordinate_lines(res, coordinates)
    if res.critical_image_dimension is not None:
        lines.append(f"image of the critical points: dimension {res.critical_image_dimension}")
    for i, c in enumerate(res.components, start=1):
        flags = ", ".join(str(s.boundary).lower() for s in c.samples)
        lines.append(f"candidate {i}: closure of {c.stratum} (from the {' and '.join(c.source)}), dimension "
                     f"{c.dimension}, degree {c.degree}: {c.verdict} (sample verdicts: {flags})")
    if res.closure_complete is not None:
        if res.boundary_closure:
            gens = res.boundary_closure
            lines.append(f"Zariski closure of the boundary: dimension {res.boundary_closure_dimension}"
                         + ("" if res.closure_complete else " (INCOMPLETE: undecided candidates)"))
            lines.append("  " + " ; ".join(gens[:8]) + (" ..." if len(gens) > 8 else ""))
        else:
            lines.append("Zariski closure of the boundary: " + ("at most the vertex" if res.closure_complete
                                                                else "not determined (undecided candidates)"))
    lines.append(f"({how(res)})")
    lines += [f"note: {note}" for note in res.notes]
    return _out(lines)


def claims_text(res) -> str:
    lines = [f"{res.architecture}   ({how(res)})"]
    for c in res.claims:
        lines.append(f"{c.verdict:>14}: {c.claim}\n{'':>16}{c.evidence}")
    return _out(lines)


def _point_line(res) -> str:
    """Where W came from: drawn (the verb says how), a file (the CLI or the weight reader says which), or
    given from Python."""
    told = getattr(res, "point_source", None)
    if told:
        return f"point: {told}"
    source = getattr(res, "source", None)
    if isinstance(source, dict) and source.get("source"):
        return f"point: file {source['source']}"
    return "point: given"


def _compact(point: dict) -> str:
    def mat(M):
        return "[" + "; ".join(" ".join(str(v) for v in row) for row in M) + "]"
    return "  ".join(f"{name}{i}={mat(layer[name])}" for i, layer in enumerate(point["layers"], 1)
                     for name in ("Q", "K", "V"))


def fiber_text(res) -> str:
    """What ``lightning-cas fiber`` prints for the paper's network."""
    lines = [f"{res.architecture}", _point_line(res)]
    how_ = [res.method, res.certainty, f"field {res.field}", f"seed {res.seed}"]
    if res.m2_version:
        how_.append(f"Macaulay2 {res.m2_version}")
    how_.append(f"{res.elapsed_s:.3g} s")
    lines.append(f"fiber dimension {res.fiber_dimension}   ({'; '.join(how_)})")
    lines.append(f"symmetry orbit dimension {res.symmetry_orbit_dimension} "
                 f"(named group dimension {res.symmetry_group_dimension})")
    for n, comp in enumerate(res.components, 1):
        mark = "contains W" if comp.contains_point else "does not contain W"
        lines.append(f"component {n}: dimension {comp.dimension}, degree {comp.degree}, {mark}")
        lines += [f"    {g}" for g in comp.generators]
        if comp.witness is not None:
            lines.append(f"    witness point: {_compact(comp.witness)}")
    lines.append(f"verdict: {res.verdict}: {res.message}")
    lines += [f"note: {note}" for note in res.notes]
    return _out(lines)


def network_fiber_text(res) -> str:
    """What ``lightning-cas fiber`` prints for a network of blocks (tangent ranks)."""
    lines = [f"{res.architecture}", _point_line(res)]
    how_ = f"{res.method}; {res.certainty}; primes {', '.join(map(str, res.primes))}; seed {res.seed}"
    lines.append(f"generic fiber dimension {res.generic_fiber_dimension}   ({how_}; {res.elapsed_s:.3g} s)")
    lines.append(f"tangent space of the fiber at W {res.tangent_dimension}, named orbit at W "
                 f"{res.symmetry_orbit_dimension} (named group dimension {res.symmetry_group_dimension})")
    for d in res.extra:
        lines.append(f"    {d.count} direction(s) beyond the orbit moving {', '.join(d.matrices)}")
    lines.append(f"verdict: {res.verdict}: {res.message}")
    lines += [f"note: {note}" for note in res.notes]
    return _out(lines)
