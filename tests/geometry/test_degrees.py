"""Degree and ED degree: two methods on every case both reach, the counts docs/critical.md states, and the
refusals of `degree` and `ed` (one line each, before any work)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from lightning_cas import Architecture, degree, ed_degree
from lightning_cas.api import result_from_dict
from lightning_cas.cli import main
from lightning_cas.core.network import Linear, Network, Power
from lightning_cas.core.primes import is_prime
from lightning_cas.errors import InputError, TooLargeError, UnsupportedError
from lightning_cas.geometry.degree.m2 import ED_PRIME, m2_text
from lightning_cas.macaulay2.runner import M2Session
from lightning_cas.results.degrees import DegreeResult, EDDegreeResult

SEGRE = Architecture((2, 1), (1,), tokens=2)  # the cone over the Segre P^1 x P^2
FULL_A = Architecture((2, 1), (2,), tokens=2)


@pytest.fixture(scope="module")
def session(m2):
    with M2Session(m2=m2, timeout=300) as s:
        yield s


@pytest.mark.parametrize("arch, expected", [(SEGRE, 3), (FULL_A, 4)])
def test_exact_and_numerical_degrees_agree(session, arch, expected):
    exact = degree(arch, method="implicit", session=session)
    numeric = degree(arch, method="numerical", session=session)
    assert (exact.degree, exact.certainty, exact.lower_bound) == (expected, "exact", False)
    assert numeric.degree == exact.degree and numeric.dimension == exact.dimension
    assert numeric.trace_test_passed and numeric.trace_residual < 1e-5 and numeric.certainty == "numeric"


def test_generic_ed_degree_of_the_segre_cone_is_ten_and_a_rich_data_metric_agrees(session):
    generic = ed_degree(SEGRE, metric="generic", session=session, method="lagrange")
    assert (generic.ed_degree, generic.dimension, generic.certainty) == (10, 4, "probabilistic")
    # enough generic inputs: the data form is non-degenerate, and generic enough to give the same count
    inputs = np.random.default_rng(1).integers(-5, 6, size=(6, 2, 2))
    data = ed_degree(SEGRE, metric="data", inputs=inputs, session=session, method="lagrange", layout="features-tokens")
    assert (data.ed_degree, data.degenerate, data.span, data.coordinates) == (10, False, 6, 6)


def test_inputs_the_prime_divides_give_the_count_of_harmless_inputs_mod_another_prime(session, tmp_path):
    # f is homogeneous in X, so scaling every input by c scales the data form by c^(2 deg f) and leaves its
    # ED degree alone: multiples of 32003, and 32003 in every denominator, must give the plain count, mod
    # another prime the result names (mod 32003 they would be zero, or have no residue)
    net = Network(2, 1, (Linear(1), Power(2)))  # (w . x)^2: a quadric cone, three inputs make the form definite
    X = np.array([[[1], [0]], [[0], [1]], [[1], [2]]])
    plain = ed_degree(net, metric="data", inputs=X, session=session, method="lagrange")
    assert plain.prime == ED_PRIME and not plain.degenerate and not any(str(ED_PRIME) in n for n in plain.notes)
    over = tmp_path / "over.json"  # exact rationals come from a file
    over.write_text(json.dumps([[[f"{v}/{ED_PRIME}" for v in r] for r in m] for m in X.tolist()]))
    for inputs in (X * ED_PRIME, str(over)):
        res = ed_degree(net, metric="data", inputs=inputs, session=session, method="lagrange")
        assert (res.ed_degree, res.span, res.coordinates) == (plain.ed_degree, plain.span, plain.coordinates)
        assert res.prime != ED_PRIME and is_prime(res.prime) and any(f"mod {res.prime}" in n for n in res.notes)


def test_monodromy_sees_the_same_data_metric_at_any_scale_of_the_inputs(session):
    # inputs scaled by 2^-600 or 2^900 (exactly, in float64): the coordinates are the plain ones times
    # 2^(-1200) or 2^1800, which Macaulay2 rescales exactly before going to floating point, so the same seed
    # gives the same run (unscaled, CC rounded them to 0 or infinity: "ED degree >= 0", or no end)
    net = Network(2, 1, (Linear(1), Power(2)))
    X = np.array([[[1.0], [0.0]], [[0.0], [1.0]], [[1.0], [2.0]]])
    runs = [
        ed_degree(net, metric="data", inputs=X * scale, method="monodromy", repeats=1, seed=4, session=session)
        for scale in (1.0, 2.0**-600, 2.0**900)
    ]
    assert runs[0].ed_degree >= 1
    assert [(r.ed_degree, r.solutions) for r in runs[1:]] == [(runs[0].ed_degree, runs[0].solutions)] * 2


def test_generic_ed_degree_of_the_full_attention_layer_is_fourteen(session):
    assert ed_degree(FULL_A, session=session, method="lagrange").ed_degree == 14


def test_a_few_inputs_give_a_degenerate_metric_counted_on_the_projection(session):
    rng = np.random.default_rng(2)
    one = ed_degree(
        SEGRE,
        metric="data",
        inputs=rng.integers(-5, 6, size=(1, 2, 2)),
        session=session,
        method="lagrange",
        layout="features-tokens",
    )
    # one input: two output entries, and the projection fills the plane: one critical point, zero loss
    assert (one.degenerate, one.coordinates, one.dimension, one.ed_degree) == (True, 2, 2, 1)
    assert any("degenerate" in n for n in one.notes) and any("zero-loss" in n for n in one.notes)
    two = ed_degree(
        SEGRE,
        metric="data",
        inputs=rng.integers(-5, 6, size=(2, 2, 2)),
        session=session,
        method="lagrange",
        layout="features-tokens",
    )
    assert two.degenerate and two.coordinates == 4 and two.dimension == 3 and two.ed_degree < 10


def test_results_round_trip_and_recompute_in_macaulay2(session, tmp_path):
    res = degree(SEGRE, method="implicit", session=session)
    assert DegreeResult.from_json(res.to_json()) == res and result_from_dict(json.loads(res.to_json())) == res
    assert "<table" in res._repr_html_() or "<" in res._repr_html_()
    ed = ed_degree(SEGRE, metric="standard", session=session, method="lagrange")
    assert EDDegreeResult.from_json(ed.to_json()) == ed
    for r in (res, ed):  # the --format m2 text runs, and its assert holds
        script = tmp_path / f"{type(r).__name__}.m2"
        script.write_text(m2_text(r))
        out = session.run(script)
        assert "error" not in str(out).lower()


@pytest.mark.slow
def test_monodromy_reports_a_lower_bound_below_the_exact_count(session, tmp_path):
    # no msolve: no exact count to stop at, so monodromy's count is a lower bound
    res = ed_degree(SEGRE, method="monodromy", session=session, repeats=5, msolve=str(tmp_path / "none"))
    assert res.lower_bound and res.certainty == "numeric" and 1 <= res.ed_degree <= 10
    assert "lower bound" in res.text() and any("msolve was not found" in n for n in res.notes)


def test_monodromy_stops_at_msolves_exact_count(session):
    # the Segre cone's 10 (the Lagrange count): monodromy is told msolve's number on the slice
    res = ed_degree(SEGRE, method="monodromy", session=session, repeats=3)
    lagrange = ed_degree(SEGRE, method="lagrange", session=session)
    assert (res.ed_degree, res.lower_bound, res.certainty) == (lagrange.ed_degree, False, "probabilistic")
    assert res.primes and any("msolve" in n for n in res.notes)
    assert "lower bound" not in res.text()


def test_refusals_before_any_work():
    soft = Architecture((2, 1), (1,), tokens=2, normalization="softmax")
    with pytest.raises(UnsupportedError, match="softmax"):
        degree(soft)
    with pytest.raises(UnsupportedError, match="softmax"):
        ed_degree(soft)
    with pytest.raises(TooLargeError, match="42 weights"):
        degree(Architecture((3, 3, 3), (2, 2), tokens=2), method="numerical")
    with pytest.raises(InputError, match="needs inputs"):
        ed_degree(SEGRE, metric="data")
    with pytest.raises(InputError, match=r"shape \(N, 2, 2\)"):
        ed_degree(SEGRE, metric="data", inputs=np.zeros((3, 2, 3)))
    with pytest.raises(InputError, match="every input is zero"):  # the zero form: nothing to count
        ed_degree(SEGRE, metric="data", inputs=np.zeros((3, 2, 2)), layout="features-tokens")


@pytest.mark.parametrize(
    "args, message",
    [
        (["ed", "--widths", "2,1", "--attention", "1", "--targets", "y.npy"], "--targets needs --inputs"),
        (["ed", "--widths", "2,1", "--attention", "1", "--boundary", "--metric", "data"], "--boundary"),
        (["ed", "--widths", "2,1", "--attention", "1", "--readout", "w.npy"], "--readout goes with --boundary"),
        (["ed", "--widths", "2,1", "--attention", "1", "--metric", "data"], "--metric data needs --inputs"),
        (["ed", "--widths", "2,1", "--attention", "1", "--normalization", "softmax"], "softmax"),
        (["degree", "--widths", "2,1", "--attention", "1", "--normalization", "softmax"], "softmax"),
        (["degree", "--widths", "3,3,3", "--attention", "2,2", "--method", "numerical"], "42 weights"),
    ],
)
def test_the_command_line_refuses_in_one_line(args, message):
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 2, out.output
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], out.output


def test_inputs_of_the_wrong_shape_one_line(tmp_path):
    bad = tmp_path / "x.npy"
    np.save(bad, np.zeros((2, 3, 2)))
    out = CliRunner().invoke(main, ["ed", "--widths", "2,1", "--attention", "1", "--inputs", str(bad)])
    assert out.exit_code == 2 and "shape" in out.output and len(out.output.strip().splitlines()) == 1


def test_the_whole_command_timeout_stops_the_run(m2):
    out = CliRunner().invoke(
        main, ["degree", "--widths", "3,1", "--attention", "1", "--method", "numerical", "--timeout", "1"]
    )
    assert out.exit_code != 0 and "time" in out.output.lower()


def test_a_network_of_blocks_has_its_degree_too(session):
    """Linear, square, linear from 3 inputs through 2: the quadrics of rank <= 2 in 3 variables, i.e.
    the symmetric 3 x 3 matrices of zero determinant, a cubic hypersurface (degree 3, dimension 5)."""
    from lightning_cas import Linear, Network, Power

    net = Network(3, 1, (Linear(2), Power(2), Linear(1)))
    exact = degree(net, method="implicit", session=session)
    numeric = degree(net, method="numerical", session=session)
    assert (exact.degree, exact.dimension, exact.coordinates) == (3, 5, 6)
    assert numeric.degree == 3 and numeric.trace_test_passed


@pytest.mark.parametrize("command", ["degree", "ed"])
@pytest.mark.parametrize(
    "option, value", [("--timeout", "nan"), ("--timeout", "-1"), ("--seed", "-1"), ("--seed", "4294967296")]
)
def test_bad_seeds_and_timeouts_are_refused_before_macaulay2(command, option, value):
    out = CliRunner().invoke(
        main, [command, "--widths", "2,1", "--attention", "1", option, value, "--m2", "/nonexistent/M2"]
    )
    lines = [line for line in out.output.splitlines() if line.strip() and "running" not in line]
    assert out.exit_code == 2 and len(lines) == 1 and option[2:] in lines[0], out.output


def test_the_degree_table_has_a_row_per_case_with_its_methods(session, tmp_path):
    from lightning_cas.batch.degree_table import degree_rows, write_table

    write_table(degree_rows(ds=(2,), outs=(1,), attentions=(1,), session=session), str(tmp_path))
    rows = (tmp_path / "degrees.csv").read_text().splitlines()
    assert rows[0].startswith("d,d_out,a") and len(rows) == 2
    assert rows[1].startswith("2,1,1,2,4,3,implicit,") and ",10,msolve," in rows[1]  # auto: msolve, as sure, quicker
    assert (tmp_path / "degrees.md").read_text().count("\n") == 3


def test_the_lagrange_guard_names_the_coordinates_and_auto_passes_it_over():
    from lightning_cas.geometry.degree.m2 import plan_ed

    with pytest.raises(TooLargeError, match="12 coordinates"):
        plan_ed(Architecture((2, 2), (1,), tokens=2), "lagrange")
    assert [r.method for r in plan_ed(Architecture((2, 2), (1,), tokens=2), "auto").routes] == ["msolve", "monodromy"]
    assert plan_ed(SEGRE, "auto").first.method == "msolve"


@pytest.mark.parametrize("value", ["nan", "0", "-3", "1e9"])
def test_the_degrees_command_is_one_of_the_cli_commands_and_refuses_a_bad_timeout(value):
    out = CliRunner().invoke(main, ["degrees", "--timeout", value, "--out", "/nonexistent/never"])
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert out.exit_code == 2 and len(lines) == 1 and "timeout" in lines[0], out.output
    assert "degrees" in CliRunner().invoke(main, ["--help"]).output
