"""One-layer geometry against the real Macaulay2: implicit ideal, singular locus, boundary, claims.

Cross-checks: the ideal's dimension against the modp backend and the theory formula; membership of
random images by exact substitution; the numerical degree against the exact one; the singular
verdict against the claimed rank-drop strata; the claims of docs/mathematics.md §5 for (2,1,1). The boundary has its
own file (test_real_boundary.py).
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
import sympy
from click.testing import CliRunner

from lightning_cas import api
from lightning_cas.cli import main
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.names import parse_polynomial
from lightning_cas.core.theory import predict_dimension
from lightning_cas.core.weights import random_point
from lightning_cas.errors import UnsupportedError
from lightning_cas.geometry.one_layer import claims
from lightning_cas.geometry.one_layer.implicit import implicit, implicit_from_record
from lightning_cas.geometry.one_layer.pointwise import is_singular, phi_coordinates, vanishes
from lightning_cas.geometry.one_layer.singular import singular_locus
from lightning_cas.results.ideals import Stratum
from lightning_cas.results.implicit import ImplicitResult
from lightning_cas.system.points import save_point

A211 = Architecture((2, 1), (1,), 2)
A212 = Architecture((2, 1), (2,), 2)


def pt(q, k, v):
    """A one-layer point from row lists (Q, K, V each given as a list of rows)."""
    return (
        (
            tuple(tuple(Fraction(x) for x in r) for r in q),
            tuple(tuple(Fraction(x) for x in r) for r in k),
            tuple(tuple(Fraction(x) for x in r) for r in v),
        ),
    )


@pytest.fixture(scope="module")
def ideal211(m2):
    return implicit(A211, m2=m2, timeout=120)


@pytest.fixture(scope="module")
def ideal212(m2):
    return implicit(A212, numerical_degree_runs=3, m2=m2, timeout=120)


@pytest.mark.parametrize("which,arch,dim,degree", [("ideal211", A211, 4, 3), ("ideal212", A212, 5, 4)])
def test_dimension_degree_and_cross_checks(request, which, arch, dim, degree):
    res = request.getfixturevalue(which)
    assert (res.dimension, res.degree) == (dim, degree)
    assert res.codimension == res.ambient - res.dimension
    assert res.dimension == api.dimension(arch, method="modp").dimension  # independent backend
    assert res.dimension == predict_dimension(arch).value  # docs/mathematics.md §4 one-layer formula
    assert len(res.generators) == len(res.generator_degrees) > 0
    for g in res.generators:  # sympy-parseable, only in y_1..y_n
        assert {s.name for s in parse_polynomial(g).free_symbols} <= {f"y_{i}" for i in range(1, res.ambient + 1)}


def test_numerical_degree_agrees_with_exact(ideal212):
    nd = ideal212.numerical_degree
    assert nd.certainty == "numeric" and len(nd.runs) == 3
    assert nd.value == ideal212.degree


@pytest.mark.parametrize("which,arch", [("ideal211", A211), ("ideal212", A212)])
def test_random_images_satisfy_the_equations_and_random_vectors_do_not(request, which, arch):
    res = request.getfixturevalue(which)
    for seed in range(3):
        assert vanishes(res.generators, phi_coordinates(res, random_point(arch, seed)))
    assert not vanishes(res.generators, [sympy.Integer(i * i + 1) for i in range(res.ambient)])


def test_one_coordinate_option(m2):
    res = implicit(Architecture((2, 2), (2,), 2), one_coordinate=True, m2=m2, timeout=120)
    assert all(row == 1 for row, _ in res.coordinate_labels)
    assert (res.dimension, res.degree) == (5, 4)  # row 1 of (2,2,2) is the (2,1,2) variety


def test_singular_locus_of_212_is_the_rank_one_stratum(m2):
    res = singular_locus(A212, m2=m2, timeout=120)
    assert res.variety.codimension == 1 and res.singular_dimension == 4
    assert len(res.pieces) == 1 and "rank V = rank A = 1" in res.pieces[0].contained_in


def test_point_singularity_212(ideal212):
    rank_one = pt([[1, 2], [0, 0]], [[3, -1], [0, 0]], [[2, 5]])  # rank A = rank V = 1 (claimed singular)
    generic = random_point(A212, 7)
    sing = is_singular(A212, rank_one, implicit_result=ideal212)
    assert sing.singular is True and sing.tangent_rank == 0 and sing.critical is True
    gen = is_singular(A212, generic, implicit_result=ideal212)
    assert gen.singular is False and gen.critical is False
    assert gen.differential_rank == gen.generic_rank == ideal212.dimension


def test_point_singularity_211_critical_but_smooth(ideal211):
    parallel = pt([[1, 2]], [[3, -1]], [[6, -2]])  # v parallel to k: critical, yet smooth for d = 2
    res = is_singular(A211, parallel, implicit_result=ideal211)
    assert res.critical is True and res.differential_rank < res.generic_rank
    assert res.singular is False
    vertex = is_singular(A211, pt([[0, 0]], [[3, -1]], [[1, 5]]), implicit_result=ideal211)
    assert vertex.phi_is_zero and vertex.singular is True


def test_claims_211_agree(m2):
    res = claims.check_claims(A211, m2=m2, timeout=120)
    verdicts = {c.claim: c.verdict for c in res.claims}
    assert res.all_agree, res.claims
    assert sum(v == "agree" for v in verdicts.values()) >= 8
    assert verdicts["the Zariski closure of the boundary is the closure of {V = c v^T, A = ±v g^T}"] == "agree"


def test_cli_singular_and_boundary_json(m2, tmp_path):
    runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()
    interior, parallel = tmp_path / "in.json", tmp_path / "bd.json"
    save_point(pt([[1, 2]], [[3, -1]], [[1, 5]]), interior)
    save_point(pt([[1, 2]], [[3, -1]], [[6, -2]]), parallel)
    base = ["--widths", "2,1", "--attention", "1", "--json", "--m2", m2]
    out = runner.invoke(main, ["boundary", *base, "--at", str(interior)])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["boundary"] is False
    out = runner.invoke(main, ["singular", *base, "--at", str(parallel)])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["singular"] is False and data["critical"] is True


def test_cli_refuses_depth_two_in_one_line():
    out = CliRunner().invoke(main, ["implicit", "--widths", "2,2,2", "--attention", "1,1"])
    assert out.exit_code == 2 and "depth 2" in out.output and "Traceback" not in out.output
    with pytest.raises(UnsupportedError):
        implicit(Architecture((2, 2, 2), (1, 1), 2))


def test_too_large_for_elimination_still_reports_the_critical_test():
    arch = Architecture((3, 3), (2,), 2)  # ideal out of reach: singular is None, critical still exact
    rank_one = pt([[1, 0, 2], [0, 0, 0]], [[1, 1, 0], [0, 0, 0]], [[1, 2, 3], [2, 4, 6], [0, 0, 0]])
    res = is_singular(arch, rank_one)
    assert res.singular is None and res.critical is True and res.certainty == "probabilistic"
    assert res.generic_rank == predict_dimension(arch).value == 16


def test_results_survive_json(ideal212):
    again = ImplicitResult.from_json(ideal212.to_json())
    assert again.to_json() == ideal212.to_json()
    assert again.generators == ideal212.generators and again.numerical_degree.value == 4


def test_pointwise_claims_212_include_the_rank_one_stratum(m2):
    res = claims.check_claims(A212, m2=m2, timeout=60, full=False)
    verdict = {c.claim: c.verdict for c in res.claims}
    assert verdict["pointwise: a point with rank V = rank A = 1 is singular"] == "agree"
    assert verdict["pointwise: a generic point is smooth (sanity check)"] == "agree"
    assert verdict["whole singular locus, critical image and boundary closure"] == "not computed"


A222 = Architecture((2, 2), (2,), 2)


def test_cli_boundary_verdict_only_222(m2, tmp_path):
    path = tmp_path / "w.json"
    save_point(pt([[1, 2], [3, -1]], [[2, 5], [-3, 1]], [[1, 3], [2, -7]]), path)
    out = CliRunner().invoke(
        main,
        ["boundary", "--widths", "2,2", "--attention", "2", "--json", "--m2", m2, "--verdict-only", "--at", str(path)],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output[out.output.index("{") :])
    assert data["boundary"] is False and data["critical_image_dimension"] is None
    assert data["certificate"]["kind"] == "submersion" and data["closure_complete"] is None


def test_progress_spinner_on_a_terminal(m2, monkeypatch, capfd):
    from lightning_cas.cli import progress as display
    from lightning_cas.cli.progress import progress_display
    from lightning_cas.errors import M2TimeoutError

    monkeypatch.setattr(display, "_stderr_terminal_width", lambda: 100)  # the one display, as on a terminal
    monkeypatch.setattr(display, "SHOW_AFTER_S", 0.0)
    monkeypatch.setattr(display, "REFRESH_S", 0.02)
    from tests.cli.test_geometry import drawn

    with progress_display("implicit (Macaulay2)", task="implicit (2,1,1)", limit=60):
        res = implicit(A211, m2=m2, timeout=60)
        err = drawn(capfd, "limit 60 s)")  # a run in a warm session can end before the first redraw
    assert res.dimension == 4
    assert "implicit (Macaulay2): implicit (2,1,1)" in err and "limit 60 s)" in err
    with pytest.raises(M2TimeoutError):  # the runner's timeout still applies, and the error reaches the caller
        with progress_display("singular (Macaulay2)", task="slow", limit=1.5):
            singular_locus(A222, m2=m2, timeout=1.5)
    assert capfd.readouterr().err.endswith("\r\x1b[K")  # the line is cleared on the way out


# ---- the package's geometry records, read without Macaulay2 ------------------------------------


def _record(**changes) -> dict:
    """A well-formed implicitRecord for (2,1), a = 1, t = 2 (the shape the package prints)."""
    rec = {
        "m2_version": "1.21",
        "package_version": "0.1.0",
        "parametrization": 0,
        "parameters": 6,
        "coefficients": 6,
        "linear_span": 2,
        "labels": [[1, 3, 0, 0, 0], [1, 2, 1, 0, 0]],
        "coordinates": ["q_(1,1,1)*k_(1,1,1)*v_(1,1,1)", "q_(1,1,2)*k_(1,1,1)*v_(1,1,1)"],
        "numerical_degree_runs": [],
        "dimension": 2,
        "codimension": 0,
        "degree": 1,
        "generator_degrees": [],
        "implicit_cpu_ms": 3,
        "generators": [],
    }
    rec.update(changes)
    return rec


def test_an_implicit_record_reads_back():
    res = implicit_from_record(A211, False, _record(), "s.m2", 0.0, 0)
    assert res.coordinate_labels == ((1, (3, 0, 0, 0)), (1, (2, 1, 0, 0)))
    assert res.coordinates[0] == "k_(1,1,1)*q_(1,1,1)*v_(1,1,1)" and res.parametrization == "Q,K,V"
    assert (res.dimension, res.codimension, res.degree) == (2, 0, 1)


@pytest.mark.parametrize(
    "changes",
    [
        {"labels": [[1, 3, 0], [1, 2, 1, 0, 0]]},
        {"labels": "{1, 3}"},
        {"labels": [[1, 3, 0, 0, True]] * 2},
        {"coordinates": ["__import__('os').system('x')"]},
        {"parametrization": 7},
        {"parameters": "6"},
        {"dimension": 2.0},
        {"generator_degrees": [2, "2"]},
        {"m2_version": 1.21},
    ],
)
def test_malformed_implicit_records_are_refused(changes):
    from lightning_cas.errors import M2ParseError

    with pytest.raises(M2ParseError):
        implicit_from_record(A211, False, _record(**changes), "s.m2", 0.0, 0)


def test_numerical_degree_runs_need_their_count_and_integers():
    from lightning_cas.errors import M2ParseError

    runs = [{"degree": 3, "cpu_ms": 5}, {"degree": None, "cpu_ms": 7}, {"degree": 3, "cpu_ms": 6}]
    res = implicit_from_record(A211, False, _record(numerical_degree_runs=runs), "s.m2", 0.0, 0, runs=3)
    assert res.numerical_degree.value == 3 and not res.numerical_degree.unanimous
    with pytest.raises(M2ParseError):
        implicit_from_record(A211, False, _record(numerical_degree_runs=runs), "s.m2", 0.0, 0, runs=2)
    with pytest.raises(M2ParseError):
        implicit_from_record(
            A211, False, _record(numerical_degree_runs=[{"degree": "3", "cpu_ms": 5}]), "s.m2", 0.0, 0, runs=1
        )


def test_slice_piece_points_are_exact_or_refused():
    from lightning_cas.errors import M2ParseError
    from lightning_cas.geometry.one_layer.strata import read_slices

    piece = {
        "rank_V": 1,
        "matches": "parallel",
        "generators": ["k_(1,2)"],
        "points": [[[["145/8", 2]], [["9", "3/4"]], [["5", "-5/12"]]]],
    }
    record = {"unresolved": [], "critical_image": None, "base_locus_V_or_A": True}
    (got,) = read_slices({**record, "pieces": [piece]}, "s.m2", singular=False).pieces
    ((Q, K, V),) = got.points[0]
    assert Q == ((Fraction(145, 8), Fraction(2)),) and V == ((Fraction(5), Fraction(-5, 12)),)
    assert got.generators == ("k_(1,2)",) and got.stratum is Stratum.PARALLEL
    for bad in (
        [[["1/0", 1]], [[1, 1]], [[1, 1]]],
        [[[0.5, 1]], [[1, 1]], [[1, 1]]],
        [[["1", 1]], [[1, 1]]],
        [[["nan", 1]], [[1, 1]], [[1, 1]]],
    ):
        with pytest.raises(M2ParseError):
            read_slices({**record, "pieces": [{**piece, "points": [bad]}]}, "s.m2", singular=False)
