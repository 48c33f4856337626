"""The degree of the neurovariety by msolve: a generic linear section counted on a gauge slice, the same degree
as Macaulay2's elimination within its guard, two primes that agree, refusals in one line before any work."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from lightning_cas import Architecture, degree
from lightning_cas.cli import main
from lightning_cas.core.blocks.linear import Linear
from lightning_cas.core.blocks.power import Power
from lightning_cas.core.network import Network
from lightning_cas.errors import InputError, MsolveNotFoundError, TooLargeError
from lightning_cas.geometry.degree.m2 import m2_text, plan_degree
from lightning_cas.geometry.degree.msolve import MSOLVE_PRIMES
from lightning_cas.geometry.degree.msolve_degree import msolve_degree, section_systems
from lightning_cas.results.degrees import DegreeResult

SEGRE = Architecture((2, 1), (1,), tokens=2)  # the cone over P^1 x P^2: degree 3


@pytest.mark.parametrize(
    "arch, expected",
    [
        (SEGRE, 3),
        (Architecture((2, 1), (2,), tokens=2), 4),  # a quartic hypersurface
        (Network(2, 1, (Linear(2, bias=True), Power(2), Linear(1))), 3),  # biases: the affine variety's degree
        (Network(2, 1, (Linear(1, bias=True), Power(3))), 9),
        (Architecture((2, 2), (1,), tokens=2), 20),
    ],
)
def test_msolve_agrees_with_the_implicit_ideal(msolve_binary, m2, arch, expected):
    mine = degree(arch, method="msolve")
    theirs = degree(arch, method="implicit")
    assert mine.degree == theirs.degree == expected
    assert (mine.dimension, mine.coordinates) == (theirs.dimension, theirs.coordinates)
    assert mine.method == "msolve" and mine.primes == MSOLVE_PRIMES and mine.certainty == "probabilistic"
    assert any("points of the slice over X cap L" in n for n in mine.notes)


def test_another_seed_another_section_the_same_degree(msolve_binary):
    assert [msolve_degree(SEGRE, seed=s).degree for s in (1, 2, 3)] == [3, 3, 3]


def test_a_variety_that_fills_its_space_has_degree_one(msolve_binary):
    res = msolve_degree(Architecture((2, 1), (1,), tokens=1))
    assert res.degree == 1 and res.dimension == res.coordinates and "fills" in res.notes[0]


def test_beyond_the_elimination_guard_known_degrees(msolve_binary):
    """Sums of three squares of linear forms in 4 variables: 15 weights, which the implicit method refuses
    (14), and the symmetric 4 x 4 matrices of rank <= 3, the determinant's hypersurface: degree 4. One
    square in k variables: the Veronese variety v_2(P^(k-1)), degree 2^(k-1)."""
    sums = Network(4, 1, (Linear(3), Power(2), Linear(1)))
    with pytest.raises(TooLargeError, match="limits 14 weights"):
        plan_degree(sums, "implicit")
    assert plan_degree(sums, "msolve").first.method == "msolve"
    assert [msolve_degree(sums, seed=s).degree for s in (0, 1)] == [4, 4]
    veronese = [msolve_degree(Network(k, 1, (Linear(1), Power(2)))) for k in (3, 5)]
    assert [(r.degree, r.dimension, r.coordinates) for r in veronese] == [(4, 3, 6), (16, 5, 15)]


def test_the_section_is_m_equations_and_the_determinant():
    names, section, fiber, (n, m) = section_systems(SEGRE, 0, MSOLVE_PRIMES[0])
    assert (n, m, len(names), len(section)) == (6, 4, 4, 5) and section[-1] == fiber[-1]


def test_the_result_round_trips_and_has_no_macaulay2_text(msolve_binary):
    res = msolve_degree(SEGRE)
    assert DegreeResult.from_json(res.to_json()) == res
    assert f"mod {MSOLVE_PRIMES[0]} and {MSOLVE_PRIMES[1]}" in res.text()
    with pytest.raises(InputError, match="--method implicit"):
        m2_text(res)


def test_the_command_line_runs_msolve(msolve_binary):
    out = CliRunner().invoke(main, ["degree", "--widths", "2,1", "--attention", "1", "--method", "msolve", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert (data["degree"], data["method"], data["primes"]) == (3, "msolve", list(MSOLVE_PRIMES))


@pytest.mark.parametrize(
    "args, message",
    [
        (["--method", "msolve", "--format", "m2"], "not a Macaulay2 computation"),
        (["--method", "implicit", "--msolve", "msolve"], "--method implicit does not run it"),
        (["--method", "msolve", "--msolve", "/nonexistent/msolve"], "not found"),
        (["--method", "msolve", "--normalization", "softmax"], "polynomial"),
    ],
)
def test_the_command_line_refuses_in_one_line(args, message):
    out = CliRunner().invoke(main, ["degree", "--widths", "2,1", "--attention", "1", *args])
    assert out.exit_code != 0 and message in out.output and out.output.count("\n") == 1


def test_refusals_before_any_work(tmp_path):
    with pytest.raises(MsolveNotFoundError):
        plan_degree(SEGRE, "msolve", str(tmp_path / "none"))
    with pytest.raises(TooLargeError, match="limit 40"):
        plan_degree(Architecture((5, 5), (2,), tokens=2), "msolve")
    assert [r.method for r in plan_degree(SEGRE, "auto").routes] == ["implicit", "msolve", "numerical"]  # exact first
