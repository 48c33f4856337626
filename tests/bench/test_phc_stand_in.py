"""The phc stand-in's own parts: the Lagrange system in the inputs (a circle's two critical points, counted by the
real msolve), PHCpack's input format and summary, and the words of the verdict. The phc run itself is a benchmark
(`make critical`); where a `phc` binary is present, a two-conic system checks the format end to end."""

from __future__ import annotations

import shutil

import flint
import pytest

from benchmarks import phc_stand_in as stand_in


def test_a_circle_has_two_critical_points_from_an_outside_point():
    ctx = flint.fmpq_mpoly_ctx.get(("x1", "x2"), "degrevlex")
    x1, x2 = ctx.gens()
    system = stand_in.lagrange_in_inputs(x1**2 + x2**2 - 1, [2, 0])
    assert stand_in.exact_count(system, ["x1", "x2", "l"])[0] == 2
    ellipse = stand_in.lagrange_in_inputs(x1**2 + 4 * x2**2 - 1, [3, 2])  # a generic conic: ED degree 4
    assert stand_in.exact_count(ellipse, ["x1", "x2", "l"])[0] == 4


def test_the_phc_input_scales_each_equation_and_names_its_monomials():
    text = stand_in.phc_text([{(2, 0): 4, (0, 1): -2, (0, 0): 1}], ["x", "y"])
    head, poly = text.splitlines()
    assert head == "1 2"
    assert poly == " +1.00000000000000000e+00*x^2 -5.00000000000000000e-01*y +2.50000000000000000e-01;"


def test_the_summary_is_read_from_the_last_block_and_missing_counts_stay_unknown():
    text = "Number of regular solutions     : 3.\nNumber of real solutions : 1.\n" * 2
    text += "Number of regular solutions     : 5.\n"
    assert stand_in.read_summary(text) == {
        "phc_regular": 5,
        "phc_singular": None,
        "phc_real": 1,
        "phc_infinity": None,
    }


def test_the_verdict_names_lost_and_extra_paths():
    assert stand_in.verdict(333, 212) == "phc LOST 121 of 333"
    assert stand_in.verdict(36, 36) == "phc finds every critical point"
    assert "MORE" in stand_in.verdict(4, 6) and stand_in.verdict(None, 3) == "not compared"


@pytest.mark.skipif(shutil.which("phc") is None, reason="phcpack is a benchmark tool (make critical installs it)")
def test_phc_solves_two_conics_as_written():
    system = [{(2, 0): 1, (0, 2): 4, (0, 0): -1.5}, {(1, 1): 1, (0, 0): -0.2}]
    counts, _, note = stand_in.phc_solve(system, ["x", "y"], 60, shutil.which("phc"))
    assert (counts["phc_regular"], counts["phc_real"], note) == (4, 4, "")
