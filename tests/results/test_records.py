"""The typed records of the one-layer geometry, without Macaulay2: result files written before the naming
scheme still load (schema 1 -> 2), certificates are typed with predicates, enumerated fields are
StrEnums with the strings JSON always carried, and results show themselves in Jupyter (HTML with
provenance, escaped; LaTeX for ideals; sympy generators).

tests/results/data/legacy/ holds results written by the code before this form (commit 5eb77b6).
"""

from __future__ import annotations

import html.parser
import json
import re
from pathlib import Path

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from lightning_cas.api import load_result, result_from_dict
from lightning_cas.core.names import parse_polynomial
from lightning_cas.errors import InputError
from lightning_cas.geometry.formats import latex_document, m2_script
from lightning_cas.results.boundary import BoundaryResult
from lightning_cas.results.certificates import (
    BranchCertificate,
    Certificate,
    ConeCertificate,
    SubmersionCertificate,
    WitnessCurveCertificate,
)
from lightning_cas.results.claims import ClaimVerdict
from lightning_cas.results.fibers import FiberResult
from lightning_cas.results.ideals import Parametrization, SampleVerdict, Source, Stratum
from lightning_cas.results.implicit import ImplicitResult
from lightning_cas.results.singular import SingularLocusResult

LEGACY = Path(__file__).parent / "data" / "legacy"
FILES = sorted(p.name for p in LEGACY.glob("*.json"))
OLD_NAME = re.compile(r"\b[a-z]+_\d+(?:_\d+)+\b")


def old(name: str) -> dict:
    return json.loads((LEGACY / name).read_text())


def _old_texts(data, found):
    """Every polynomial text of a schema-1 result, as (key path, text)."""
    keys = {"generators", "coordinates", "singular_ideal", "slice_generators", "critical_image", "boundary_closure"}
    if isinstance(data, dict):
        for k, v in data.items():
            if k in keys and isinstance(v, list):
                found.extend(v)
            else:
                _old_texts(v, found)
    elif isinstance(data, list):
        for v in data:
            _old_texts(v, found)
    return found


def test_the_legacy_files_are_the_old_form():
    """The fixtures really are schema 1: sympy syntax and q_1_1_1 names (what the reader must convert)."""
    texts = [t for name in FILES for t in _old_texts(old(name), [])]
    assert len(FILES) == 13 and len(texts) > 50
    assert any("**" in t for t in texts) and any(OLD_NAME.search(t) for t in texts)
    assert all("schema" not in old(name) for name in FILES)


@pytest.mark.parametrize("name", FILES)
def test_every_result_written_before_still_loads(name):
    res = load_result(LEGACY / name)
    data = old(name)
    assert type(res).__name__ == data["kind"]
    again = result_from_dict(json.loads(res.to_json()))
    assert again == res  # today's form round-trips
    new_texts = _old_texts(json.loads(res.to_json()), [])
    old_texts = _old_texts(data, [])
    assert len(new_texts) == len(old_texts)
    for before, now in zip(old_texts, new_texts):
        assert "**" not in now and not OLD_NAME.search(now), now
        renamed = {
            s: sympy.Symbol(re.sub(r"_(\d+(?:_\d+)+)$", lambda m: "_(" + m.group(1).replace("_", ",") + ")", s.name))
            for s in sympy.sympify(before).free_symbols
        }
        assert parse_polynomial(now) == sympy.sympify(before).xreplace(renamed)  # the same polynomial


def test_schema_2_is_written_by_the_classes_whose_form_changed():
    for name, schema in (
        ("implicit_211.json", 2),
        ("singular_whole_211.json", 2),
        ("boundary_211_vertex.json", 2),
        ("fiber_211_m2.json", 2),
        ("claims_211.json", None),
        ("point_singular_212.json", None),
    ):
        assert json.loads(load_result(LEGACY / name).to_json()).get("schema") == schema, name


def test_a_schema_from_the_future_is_refused_in_one_line():
    data = json.loads(load_result(LEGACY / "implicit_211.json").to_json())
    for bad in (3, 0, "2", True, None):
        with pytest.raises(InputError, match="schema") as err:
            ImplicitResult.from_dict({**data, "schema": bad})
        assert "\n" not in str(err.value)


def test_legacy_certificates_become_their_classes():
    kinds = {name: load_result(LEGACY / name).certificate for name in FILES if name.startswith("boundary_")}
    assert isinstance(kinds["boundary_222_submersion.json"], SubmersionCertificate)
    assert isinstance(kinds["boundary_212_branches.json"], BranchCertificate)
    witness = kinds["boundary_211_parallel.json"]
    assert (
        isinstance(witness, WitnessCurveCertificate)
        and witness.s0 == old("boundary_211_parallel.json")["certificate"]["s0"]
        and witness.blocks == "V,K"
    )
    cone = kinds["boundary_211_vertex.json"]
    assert isinstance(cone, ConeCertificate) and isinstance(cone.witness, WitnessCurveCertificate)
    assert cone.is_vertex and cone.is_boundary and not cone.is_interior
    assert witness.is_boundary and not witness.is_vertex
    assert kinds["boundary_212_branches.json"].is_interior and not kinds["boundary_212_branches.json"].is_boundary
    # today's form: only the fields of the kind
    assert json.loads(load_result(LEGACY / "boundary_222_submersion.json").to_json())["certificate"] == {
        "kind": "submersion",
        "regular_preimages": 1,
    }


def test_certificates_are_strict():
    with pytest.raises(TypeError):
        Certificate()  # abstract
    good = {"kind": "submersion", "regular_preimages": 2}
    assert Certificate.from_dict(good) == SubmersionCertificate(regular_preimages=2)
    for bad in (
        {"kind": "magic"},
        {"regular_preimages": 2},
        {**good, "s0": None},
        {**good, "s0": "1"},
        [],
        {"kind": "cone over a witness", "at": {}, "witness": good},
    ):
        with pytest.raises(InputError):
            Certificate.from_dict(bad)
    data = json.loads(load_result(LEGACY / "boundary_222_submersion.json").to_json())
    data["certificate"]["blocks"] = None  # the null fields of other kinds belong to schema 1 only
    with pytest.raises(InputError):
        BoundaryResult.from_dict(data)


def test_enumerated_fields_are_str_enums_with_the_old_strings():
    sing = load_result(LEGACY / "singular_strata_212.json")
    assert sing.pieces[0].contained_in == (Stratum.RANK11,) and isinstance(sing.pieces[0].contained_in[0], Stratum)
    bd = load_result(LEGACY / "boundary_211_parallel.json")
    (comp,) = bd.components
    assert comp.stratum is Stratum.PARALLEL and comp.verdict is SampleVerdict.BOUNDARY
    assert comp.source == (Source.CRITICAL_IMAGE,)
    assert load_result(LEGACY / "implicit_222.json").parametrization is Parametrization.VA
    assert load_result(LEGACY / "implicit_211_t1.json").parametrization is Parametrization.VZ
    claims = load_result(LEGACY / "claims_211.json")
    assert {c.verdict for c in claims.claims} <= set(ClaimVerdict) and claims.all_agree
    assert [Stratum.from_code(c) for c in ("rank11", "parallel", "rankA", "vertex", "none", 3)] == [
        Stratum.RANK11,
        Stratum.PARALLEL,
        Stratum.RANK_A,
        Stratum.VERTEX,
        None,
        None,
    ]
    assert (
        json.loads(bd.to_json())["components"][0]["stratum"]
        == old("boundary_211_parallel.json")["components"][0]["stratum"]
    )


def test_generators_are_sympy_objects_and_typeset():
    res = load_result(LEGACY / "implicit_211.json")
    y = sympy.symbols("y_1:7")
    assert res.polynomials[0] == -y[2] * y[5] + y[3] * y[4] - y[4] ** 2
    assert all(isinstance(p, sympy.Expr) for p in res.polynomials + res.coordinate_polynomials)
    assert sympy.Symbol("q_(1,1,1)") in res.coordinate_polynomials[0].free_symbols
    latex = res._repr_latex_()
    assert latex.startswith("$\\left\\langle") and "y_{5}^{2}" in latex and "**" not in latex
    fiber = load_result(LEGACY / "fiber_211_m2.json")
    assert fiber.components[0].polynomials == tuple(fiber.component_ideal(0))
    assert "q_{1,1,1}" in fiber.components[0]._repr_latex_() or "k_{1,1,1}" in fiber.components[0]._repr_latex_()
    sing = load_result(LEGACY / "singular_strata_212.json")
    assert sing.pieces[0].polynomials == (
        -sympy.Symbol("b_(1,1)") * sympy.Symbol("b_(2,2)") + sympy.Symbol("b_(1,2)") * sympy.Symbol("b_(2,1)"),
    )


def test_a_tampered_polynomial_is_never_typeset_or_pasted():
    data = json.loads(load_result(LEGACY / "implicit_211.json").to_json())
    data["generators"] = ['y_1); run "id > /tmp/x"; (y_2']
    res = ImplicitResult.from_dict(data)
    assert res._repr_latex_() is None
    with pytest.raises(ValueError):
        m2_script(res)
    with pytest.raises(ValueError):
        latex_document(res)


# ---- Jupyter: every result as HTML, provenance included, nothing injected ----------------------

ALLOWED_TAGS = {"div", "p", "b", "details", "summary", "table", "tr", "th", "td", "ol", "li", "code"}
ALLOWED_ATTRS = {("class", "lightning-cas-result"), ("style", "text-align:left"), ("open", None)}


class _Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.text = set(), [], []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


def _parsed(markup: str) -> _Tags:
    parser = _Tags()
    parser.feed(markup)
    return parser


@pytest.mark.parametrize("name", FILES)
def test_results_show_as_html_with_their_provenance(name):
    res = load_result(LEGACY / name)
    page = _parsed(res._repr_html_())
    text = "".join(page.text)
    assert page.tags <= ALLOWED_TAGS and set(page.attrs) <= ALLOWED_ATTRS
    assert (
        type(res).__name__ in text
        and "provenance" in text
        and res.method in text
        and "lightning_cas_version" in text
        and str(res.architecture) in text
    )
    if getattr(res, "certificate", None) is not None:  # nested records are tables, not reprs
        assert res.certificate.kind in text and "Certificate(" not in text


def test_a_hostile_note_is_shown_not_run():
    data = json.loads(load_result(LEGACY / "boundary_211_vertex.json").to_json())
    data["notes"] = ['<script>alert("x")</script><img src=x onerror=alert(1)>', "\x1b]0;title\x07"]
    data["evidence"] = "</td></tr></table><b onclick='x'>"
    res = BoundaryResult.from_dict(data)
    markup = res._repr_html_()
    page = _parsed(markup)
    assert page.tags <= ALLOWED_TAGS and set(page.attrs) <= ALLOWED_ATTRS
    assert "<script>alert" in "".join(page.text) and "onclick" in "".join(page.text)  # shown as text


@pytest.fixture(scope="module")
def result_strategies():
    from tests.adversarial.test_contract import _all_result_classes, record_strategy

    return st.one_of([record_strategy(cls) for cls in _all_result_classes()])


@settings(max_examples=60)
@given(data=st.data())
def test_no_result_injects_markup(result_strategies, data):
    res = data.draw(result_strategies)
    page = _parsed(res._repr_html_())
    assert page.tags <= ALLOWED_TAGS and set(page.attrs) <= ALLOWED_ATTRS


def test_schema_1_singular_and_fiber_results_have_the_new_form():
    sing = load_result(LEGACY / "singular_whole_211.json")
    assert isinstance(sing, SingularLocusResult) and sing.coordinate_labels == () and sing.components
    assert all("^" in g or "*" in g or "y_" in g for g in sing.singular_ideal)
    fiber = load_result(LEGACY / "fiber_211_m2.json")
    assert isinstance(fiber, FiberResult) and all("_(" in g for c in fiber.components for g in c.generators)
