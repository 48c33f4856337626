"""Singular locus by G-orbit strata (real Macaulay2), cross-checked three ways: against the whole-ideal
Jacobian criterion where that finishes, against exact tangent ranks at points of the claimed strata
(Python/sympy, independent of the M2 script), and against the dimensions of the strata closures."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from lightning_cas.cli import main
from lightning_cas.core.architecture import Architecture
from lightning_cas.geometry.one_layer import claims
from lightning_cas.geometry.one_layer.implicit import implicit
from lightning_cas.geometry.one_layer.pointwise import is_singular, phi_coordinates, vanishes
from lightning_cas.geometry.one_layer.singular import singular_locus
from lightning_cas.results.ideals import Stratum

RANK11, PARALLEL = Stratum.RANK11, Stratum.PARALLEL
# (d, d', a) -> the stratum docs/mathematics.md §5 says is singular besides the vertex (None: the vertex only)
CLAIMED = {(2, 1, 1): None, (2, 1, 2): RANK11, (3, 1, 1): PARALLEL, (2, 2, 1): RANK11, (2, 2, 2): RANK11}


def arch_of(case):
    d, e, a = case
    return Architecture((d, e), (a,), 2)


@pytest.fixture(scope="module")
def loci(m2):
    return {case: singular_locus(arch_of(case), m2=m2, timeout=600) for case in CLAIMED}


@pytest.fixture(scope="module")
def ideals(m2):
    return {case: implicit(arch_of(case), m2=m2, timeout=120) for case in CLAIMED}


@pytest.mark.parametrize("case", list(CLAIMED))
def test_pieces_are_the_claimed_strata(loci, case):
    res = loci[case]
    assert res.complete and not res.unresolved and res.certainty == "exact"
    assert res.variety.codimension > 0  # so the vertex is singular too
    if CLAIMED[case] is None:
        assert res.pieces == () and res.components == () and res.singular_dimension == 0
        return
    assert len(res.pieces) == 1 and res.components == ()  # strata pieces and whole-ideal components are apart
    piece = res.pieces[0]
    assert piece.contained_in == (CLAIMED[case],)
    assert piece.jacobian_rank < piece.codimension
    assert piece.rank_V == 1 and piece.rank_A == 1
    assert res.singular_dimension == piece.image_dimension


@pytest.mark.parametrize("case", list(CLAIMED))
def test_singular_ideal_against_exact_tangent_ranks(loci, ideals, case):
    """Points of the claimed stratum: singular (sympy tangent rank) and in the M2 singular ideal;
    a generic point: smooth and outside it."""
    res, ideal = loci[case], ideals[case]
    arch = arch_of(case)
    points = claims.stratum_points(arch, seed=7)
    name = {RANK11: "rank11", PARALLEL: "parallel", None: "vertex"}[CLAIMED[case]]
    for label, inside in (("generic", False), (name, True), ("vertex", True)):
        p = points[label]
        coords = phi_coordinates(ideal, p)
        assert vanishes(res.singular_ideal, coords) is inside, label
        assert is_singular(arch, p, implicit_result=ideal).singular is inside, label


@pytest.mark.parametrize("case", [(2, 1, 1), (2, 1, 2)])
def test_strata_agree_with_whole_ideal_jacobian_criterion(loci, ideals, m2, case):
    whole = singular_locus(arch_of(case), m2=m2, timeout=300, method="whole-ideal")
    assert whole.method == "whole-ideal" and whole.pieces == ()
    res = loci[case]
    assert whole.singular_dimension == res.singular_dimension
    # the same zero set: every generator of each ideal vanishes on random points of the other's pieces
    for p in claims.stratum_points(arch_of(case), seed=11).values():
        coords = phi_coordinates(ideals[case], p)
        assert vanishes(whole.singular_ideal, coords) == vanishes(res.singular_ideal, coords)


def test_budget_leaves_pieces_unresolved_and_says_so(m2):
    res = singular_locus(arch_of((2, 1, 2)), m2=m2, timeout=120, minor_budget=1)
    assert not res.complete and res.unresolved and res.singular_ideal == () and res.singular_dimension is None
    assert "budget" in res.unresolved[0].reason and any("budget" in n for n in res.notes)


def test_cli_strata_text_and_refusals(m2):
    runner = CliRunner()
    out = runner.invoke(main, ["singular", "--widths", "3,1", "--attention", "1", "--m2", m2])
    assert out.exit_code == 0, out.output
    assert "singular piece 1" in out.output and PARALLEL in out.output and "the vertex 0" in out.output
    out = runner.invoke(main, ["singular", "--widths", "3,1", "--attention", "1", "--one-coordinate", "--m2", m2])
    assert out.exit_code == 2 and "Traceback" not in out.output and "--method whole-ideal" in out.output
    out = runner.invoke(main, ["singular", "--widths", "2,1", "--attention", "1", "--method", "nope"])
    assert out.exit_code == 2 and "Traceback" not in out.output
