"""Results as Macaulay2 input and as LaTeX: what ``--format m2`` and ``--format latex`` print.

The Macaulay2 form is a script that loads the LightningCAS package (by name: install it once with
``lightning-cas notebook --install-package``) and defines, under names that say what they are:

* ``N`` the network, built by the package's ``neuralNetwork(inputWidth, tokens, {blocks})`` from the
  values the templates get (``macaulay2.network.network_call``), so ``neurovarietyDimension N`` and
  every other package function recompute the result on the same network;
* ``R`` the ring of the result's ideals (coordinates y_i, or the weights for a fiber);
* ``I`` the variety's ideal, ``S`` the singular locus, ``B`` the Zariski closure of the boundary,
  ``F`` the fiber's ideal, where the result has them;

plus the components or pieces as lists where the command has them, under names that neither
Macaulay2 nor the package takes. Where a command found no ideal (an incomplete locus, the fast path
of ``fiber``) the name is ``null`` and a comment says why. Everything else (provenance, verdicts,
what each y_i is) is in comments.

Every polynomial is read back through the strict parser and written again before it is printed, so a
result file that was tampered with cannot smuggle Macaulay2 code into the script; the network is
written from its validated integers only.
"""

from __future__ import annotations

import json
import re

from lightning_cas.core.network import Network
from lightning_cas.backends.m2 import JACOBIAN_MAX_ENTRIES, jacobian_size
from lightning_cas.core.display import escape, printable
from lightning_cas.core.results import DimensionResult
from lightning_cas.core.theory import TheoryReport
from lightning_cas.core.verdict import VerifyResult
from lightning_cas.errors import UnsupportedError
from lightning_cas.core.names import (coordinate_names, indexed_name, latex_name, parse_polynomial,
                                      polynomial_latex, polynomial_text)
from lightning_cas.geometry.fibers import FiberResult
from lightning_cas.geometry.network_fibers import NetworkFiberResult
from lightning_cas.geometry.records import BoundaryResult, ImplicitResult, Parametrization, SingularLocusResult
from lightning_cas.macaulay2.network import network_call, network_comments

FORMATS = ("text", "json", "m2", "latex")
LOAD_PACKAGE = 'needsPackage "LightningCAS"; -- installed once by: lightning-cas notebook --install-package'


def _comment(text: str, mark: str = "--") -> str:
    mode = "latex" if mark == "%" else "terminal"  # a record's fields stay inert in either file
    return "\n".join(f"{mark} {escape(line, mode)}" for line in str(text).splitlines() or [""])


def _header(res, mark: str = "--") -> list[str]:
    how = [res.method, res.certainty]
    if res.m2_version:
        how.append(f"Macaulay2 {res.m2_version}")
    how += [f"lightning_cas {res.lightning_cas_version}", f"seed {res.seed}"]
    return [_comment(f"lightning_cas {type(res).__name__}: {res.architecture}", mark),
            _comment("; ".join(map(str, how)), mark)]


def _network(arch) -> list[str]:
    """The lines that load the package and define ``N``, the result's network (softmax: refused)."""
    try:
        call = network_call(arch)
    except UnsupportedError:
        raise UnsupportedError("--format m2 builds the network in Macaulay2, which builds polynomial networks only; "
                               "this one has softmax attention (use --format text or json).") from None
    return [LOAD_PACKAGE, *network_comments(arch), f"N = {call};"]


def _one_layer_model(res) -> str:
    """The package's call that recomputes the variety's ideal of a one-layer result, in R's coordinates."""
    arch = res.architecture
    one = ", OneCoordinate => true" if getattr(res, "one_coordinate", False) else ""
    return (f"sub(implicitIdeal implicitModel({{{arch.widths[0]}, {arch.widths[1]}}}, {{{arch.attention[0]}}}, "
            f"{arch.tokens}{one}), R)")


def _text(poly: str) -> str:
    """A polynomial text checked and rewritten (ValueError if it is not a polynomial)."""
    return polynomial_text(parse_polynomial(poly))


def _ideal(gens, ring: str = "R") -> str:
    texts = [_text(g) for g in gens]
    if not texts:
        return f"ideal(0_{ring})"
    if any(not re.search(r"[a-z]", t) for t in texts):  # a constant: promote it into the ring, not ZZ
        return f"ideal(matrix({ring}, {{{{{', '.join(texts)}}}}}))"
    return "ideal(" + ", ".join(texts) + ")"


def _ring(field: str, variables) -> str:
    return f"{field}[{', '.join(variables)}]"


def _y_ring(n: int) -> str:
    return f"QQ[y_1..y_{n}]" if n > 1 else _ring("QQ", coordinate_names(n))


def _coordinate_comments(res, with_polynomials: bool = False) -> list[str]:
    if not res.coordinate_labels:
        return []
    lines = ["-- y_i is the coefficient of a token monomial in output row p of output token 1:"]
    for name, row, monomial, poly in res.coordinate_table():
        tail = f" = {poly}" if with_polynomials and poly else ""
        lines.append(_comment(f"  {name}: row {row}, {monomial}{tail}"))
    return lines


def _parameters(arch: Network, route: Parametrization) -> tuple[list[str], str | None]:
    """The parameter variables of the parametrization and the ideal it lives on (None: none)."""
    d, e, a = arch.widths[0], arch.widths[1], arch.attention[0]
    v = [indexed_name("v", p + 1, q + 1) for p in range(e) for q in range(d)]
    if route is Parametrization.QKV:
        names = [indexed_name(m, 1, r + 1, c + 1) for m, rows in (("q", a), ("k", a), ("v", e))
                 for r in range(rows) for c in range(d)]
        return names, None
    if route is Parametrization.VZ:
        z = {(r, c): indexed_name("z", min(r, c) + 1, max(r, c) + 1) for r in range(d) for c in range(d)}
        names = v + [z[r, c] for r in range(d) for c in range(r, d)]
        size = 2 * a + 1
    else:
        z = {(r, c): indexed_name("a", r + 1, c + 1) for r in range(d) for c in range(d)}
        names = v + [z[r, c] for r in range(d) for c in range(d)]
        size = a + 1
    if route is Parametrization.VA or size > d:
        return names, None
    matrix = "matrix {" + ", ".join("{" + ", ".join(z[r, c] for c in range(d)) + "}" for r in range(d)) + "}"
    return names, f"minors({size}, {matrix})"


def _m2_implicit(res: ImplicitResult) -> list[str]:
    lines = _coordinate_comments(res)
    lines += [f"R = {_y_ring(res.ambient)};"]
    if res.dimension is None:
        lines += ["I = null; -- no elimination was asked for (numerical degree only)"]
    else:
        lines += [f"-- dimension {res.dimension}, codimension {res.codimension}, degree {res.degree}",
                  f"I = {_ideal(res.generators)};"]
    names, rank = _parameters(res.architecture, res.parametrization)
    # phi is homogeneous once each y_i has the degree of its image (the package's graded kernel): fast
    degree = max((_degree(c) for c in res.coordinate_polynomials), default=1)
    lines += [f"-- the parametrization {res.parametrization}: I == sub(ker phi, R)",
              f"P = {_ring('QQ', names)};"]
    if rank is not None:
        lines += [f"P = P / {rank};"]
    lines += [f"Rphi = newRing(R, Degrees => toList({res.ambient}:{degree}));",
              "phi = map(P, Rphi, {" + ", ".join(_text(c) for c in res.coordinates) + "});", "use R;"]
    return lines


def _degree(poly) -> int:
    import sympy

    return sympy.Poly(poly, *sorted(poly.free_symbols, key=str)).total_degree() if poly.free_symbols else 0


def _m2_singular(res: SingularLocusResult) -> list[str]:
    v = res.variety
    lines = _coordinate_comments(res) + [f"R = {_y_ring(v.dimension + v.codimension)};",
                                         f"-- the variety: dimension {v.dimension}, codimension {v.codimension}, "
                                         f"degree {v.degree} (its ideal recomputed by the package)",
                                         f"I = {_one_layer_model(res)};", "use R;"]
    if res.singular_dimension is None:
        lines += ["S = null; -- the singular ideal was not assembled (see the pieces)"]
    else:
        lines += [f"-- the singular locus: dimension {res.singular_dimension}", f"S = {_ideal(res.singular_ideal)};"]
    if res.components:
        lines += ["singularComponents = {"]
        for i, c in enumerate(res.components, 1):
            comma = "," if i < len(res.components) else ""
            inside = "; ".join(c.contained_in) or "no listed stratum"
            lines += [f"    {_ideal(c.generators)}{comma} -- dimension {c.dimension}, degree {c.degree}, inside: "
                      f"{printable(inside)}"]
        lines += ["    };"]
    pieces = res.pieces + res.unresolved
    if pieces:
        names = _slice_variables(res.architecture)
        lines += ["-- pieces on weight slices V = [I_r 0; 0 0], in the slice coordinates",
                  f"sliceRing = {_ring('QQ', names)};", "slicePieces = {"]
        for i, p in enumerate(pieces, 1):
            comma = "," if i < len(pieces) else ""
            what = (f"closure of dimension {p.image_dimension} = {'; '.join(p.contained_in) or 'no listed stratum'}"
                    if hasattr(p, "image_dimension") else f"NOT EXAMINED ({p.reason})")
            lines += [f"    {_ideal(p.slice_generators, 'sliceRing')}{comma} -- rank V = {p.rank_V}: "
                      f"{printable(what)}"]
        lines += ["    };", "use R;"]
    return lines


def _boundary_ambient(res: BoundaryResult) -> int:
    if not res.coordinate_labels:
        raise ValueError("this boundary result carries no coordinates (no closure was computed, or it was written "
                         "before results carried them), so the ring of its ideals is not known")
    return len(res.coordinate_labels)


def _slice_variables(arch: Network) -> list[str]:
    d, a = arch.widths[0], arch.attention[0]
    if a >= d:
        return [indexed_name("b", i + 1, j + 1) for i in range(d) for j in range(d)]
    return [indexed_name(m, i + 1, j + 1) for m in "qk" for i in range(a) for j in range(d)]


def _m2_boundary(res: BoundaryResult) -> list[str]:
    lines = _coordinate_comments(res)
    if res.point is not None:
        verdict = "unknown" if res.boundary is None else str(res.boundary).lower()
        lines += [_comment(f"the point: boundary {verdict} ({res.evidence})")]
    lines += [f"R = {_y_ring(_boundary_ambient(res))};",
              "-- the variety (its ideal recomputed by the package)", f"I = {_one_layer_model(res)};", "use R;"]
    if res.boundary_closure:
        state = "" if res.closure_complete else " (INCOMPLETE: undecided candidates)"
        lines += [f"-- the Zariski closure of the boundary: dimension {res.boundary_closure_dimension}{state}",
                  f"B = {_ideal(res.boundary_closure)};"]
    else:
        why = "at most the vertex" if res.closure_complete else "not determined (undecided candidates)"
        lines += [f"B = null; -- the Zariski closure of the boundary: {why}"]
    if res.critical_image_dimension is not None:
        lines += [f"-- the image of the critical points: dimension {res.critical_image_dimension}",
                  f"criticalImageIdeal = {_ideal(res.critical_image)};"]
    if res.components:
        lines += ["boundaryCandidates = {"]
        for i, c in enumerate(res.components, 1):
            comma = "," if i < len(res.components) else ""
            ideal = _ideal(c.generators) if c.generators else "null"
            lines += [f"    {ideal}{comma} -- closure of {c.stratum} (from the {' and '.join(c.source)}): {c.verdict}"]
        lines += ["    };"]
    return lines


def _m2_fiber(res: FiberResult) -> list[str]:
    from lightning_cas.core.model import flat_weight_symbols
    from lightning_cas.core.weights import flat, point_from_dict

    field = res.field if re.fullmatch(r"ZZ/\d+", res.field) else "QQ"  # GF(p) of the fast path: no ideal
    arch = res.architecture
    names = [str(s) for s in flat_weight_symbols(arch)]
    # a result holds its point frozen (tuples); the reader wants the JSON form (lists)
    values = [str(x) for x in flat(point_from_dict(arch, json.loads(json.dumps(res.point))))]
    lines = [f"R = {_ring(field, names)};", "weightPoint = {" + ", ".join(values) + "}; -- W, in the order of gens R"]
    if not res.components:
        lines += [f"F = null; -- no decomposition ({res.method}): fiber dimension {res.fiber_dimension}"]
        return lines
    lines += ["fiberComponents = {"]
    for i, c in enumerate(res.components, 1):
        comma = "," if i < len(res.components) else ""
        mark = "contains W" if c.contains_point else "does not contain W"
        lines += [f"    {_ideal(c.generators)}{comma} -- dimension {c.dimension}, degree {c.degree}, {mark}"]
    lines += ["    };", f"-- the fiber (its radical): dimension {res.fiber_dimension}",
              "F = intersect fiberComponents;", _comment(f"verdict: {res.verdict}: {res.message}")]
    return lines


def _m2_dimension(res: DimensionResult) -> list[str]:
    how = f"{res.method}, {res.certainty}" + (f", failure bound {res.failure_bound:.2g} per run"
                                             if res.failure_bound is not None else "")
    at_point = res.generic_dimension is not None or res.at is not None or res.inputs is not None
    if at_point:
        lines = [f"-- the rank at the given point or inputs: {res.dimension} ({how}); not a generic dimension"]
        if res.generic_dimension is not None:
            lines += [f"-- the generic dimension: {res.generic_dimension} (neurovarietyDimension N)"]
    else:
        lines = [f"-- the dimension of the neurovariety: {res.dimension} ({how}): neurovarietyDimension N"]
    generic = res.generic_dimension if at_point else res.dimension
    fiber = "" if generic is None else f", generic fiber dimension {res.parameters - generic}"
    lines += [f"-- parameters {res.parameters} (N#\"parameters\"){fiber}, ambient dimension {res.ambient_dimension}"]
    entries = jacobian_size(res.architecture)
    if entries > JACOBIAN_MAX_ENTRIES:
        lines += [f"-- note: the package's coefficient Jacobian of N has {entries:,} entries, beyond what Macaulay2 "
                  "finishes; N is still the network (its weights, blocks and forward map)"]
    elif res.method == "jacobian" and res.primes and not at_point:
        lines += [f"-- the same computation (its prime and seed): setRandomSeed {res.seed or 0}; "
                  f"neurovarietyDimension(N, CoefficientRing => ZZ/{res.primes[0]})"]
    return lines


def _m2_verify(res: VerifyResult) -> list[str]:
    pred = "no prediction" if res.predicted is None else f"predicted {res.predicted} ({res.prediction_status})"
    return [_comment(f"verdict: {res.verdict}: {res.message}"), f"-- {pred}",
            *_m2_dimension(res.computed)]


def _m2_theory(res: TheoryReport) -> list[str]:
    lines = []
    for pred in (res.dimension, res.parameters, res.symmetry_group_dimension, res.fiber_dimension):
        said = (f"no prediction ({pred.reason})" if pred.value is None else
                f"{pred.kind if pred.kind != 'value' else 'predicted'} {pred.value} ({pred.formula}; {pred.status})")
        lines.append(_comment(f"{pred.quantity}: {said}"))
    return lines + ["-- compare: neurovarietyDimension N, N#\"parameters\""]


def _m2_network_fiber(res: NetworkFiberResult) -> list[str]:
    return [f"-- the fiber through W: generic fiber dimension {res.generic_fiber_dimension}, tangent space at W "
            f"{res.tangent_dimension} ({res.method}: tangent ranks, no ideal)",
            "F = null; -- the fiber of a network of blocks is computed by tangent ranks, without an ideal",
            _comment(f"verdict: {res.verdict}: {res.message}")]


M2_FORMS = ((ImplicitResult, _m2_implicit), (SingularLocusResult, _m2_singular), (BoundaryResult, _m2_boundary),
            (FiberResult, _m2_fiber), (DimensionResult, _m2_dimension), (VerifyResult, _m2_verify),
            (NetworkFiberResult, _m2_network_fiber), (TheoryReport, _m2_theory))


def m2_script(res) -> str:
    """The result as Macaulay2 input (see the module docstring); ValueError for a result without a
    Macaulay2 form, UnsupportedError for a network Macaulay2 cannot build (softmax)."""
    for cls, body in M2_FORMS:
        if isinstance(res, cls):
            return "\n".join(_header(res) + _network(res.architecture) + body(res)) + "\n"
    raise ValueError(f"no Macaulay2 form for a {type(res).__name__}")


# ---------------------------------------------------------------- LaTeX


def _latex_ideal(name: str, gens, ring: str) -> str:
    polys = [polynomial_latex(parse_polynomial(g)) for g in gens] or ["0"]
    body = ",\\\\\n  & ".join(polys)
    return f"\\begin{{align*}}\n  {name} = \\langle\\, & {body} \\,\\rangle \\subseteq {ring}\n\\end{{align*}}"


def _latex_ring(n: int) -> str:
    return rf"\mathbb{{Q}}[y_{{1}}, \ldots, y_{{{n}}}]" if n > 1 else r"\mathbb{Q}[y_{1}]"


def _latex_coordinates(res) -> list[str]:
    if not res.coordinate_labels:
        return []
    rows = [f"  ${latex_name(name)}$ & {row} & ${polynomial_latex(parse_polynomial(monomial))}$ \\\\"
            for name, row, monomial, _ in res.coordinate_table()]
    return ["% y_i is the coefficient of a token monomial in output row p of output token 1",
            "\\begin{tabular}{lll}", "  coordinate & output row & coefficient of \\\\", *rows, "\\end{tabular}"]


def latex_document(res) -> str:
    """The result's ideals (and coordinates) as a LaTeX fragment; ValueError for a result without ideals."""
    lines = _header(res, "%")
    if isinstance(res, ImplicitResult):
        if res.dimension is not None:
            lines += [_latex_ideal("I", res.generators, _latex_ring(res.ambient)),
                      f"% dimension {res.dimension}, codimension {res.codimension}, degree {res.degree}"]
        lines += _latex_coordinates(res)
    elif isinstance(res, SingularLocusResult):
        if res.singular_dimension is not None:
            lines += [_latex_ideal(r"I_{\mathrm{sing}}", res.singular_ideal,
                                   _latex_ring(res.variety.dimension + res.variety.codimension)),
                      f"% the singular locus: dimension {res.singular_dimension}"]
        for i, c in enumerate(res.components, 1):
            lines += [_latex_ideal(f"P_{{{i}}}", c.generators,
                                   _latex_ring(res.variety.dimension + res.variety.codimension)),
                      f"% component {i}: dimension {c.dimension}, degree {c.degree}"]
        lines += _latex_coordinates(res)
    elif isinstance(res, BoundaryResult):
        ring = _latex_ring(_boundary_ambient(res)) if res.boundary_closure or res.critical_image else ""
        if res.boundary_closure:
            lines += [_latex_ideal(r"I_{\partial}", res.boundary_closure, ring),
                      f"% the Zariski closure of the boundary: dimension {res.boundary_closure_dimension}"]
        if res.critical_image_dimension is not None:
            lines += [_latex_ideal(r"I_{\mathrm{crit}}", res.critical_image, ring),
                      f"% the image of the critical points: dimension {res.critical_image_dimension}"]
        lines += _latex_coordinates(res)
    elif isinstance(res, FiberResult):
        for i, c in enumerate(res.components, 1):
            lines += [_latex_ideal(f"F_{{{i}}}", c.generators, r"\mathbb{Q}[W]" if res.field == "QQ"
                                   else rf"\mathbb{{F}}_{{{res.field[3:]}}}[W]"),
                      f"% component {i}: dimension {c.dimension}, degree {c.degree}"]
        if not res.components:
            lines += [f"% no decomposition ({res.method}): fiber dimension {res.fiber_dimension}"]
    else:
        raise ValueError(f"no LaTeX form for a {type(res).__name__}")
    return "\n".join(lines) + "\n"
