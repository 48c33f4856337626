"""The standard and data ED degrees by msolve: Macaulay2's coordinates exactly, the same counts as the Lagrange
ideal where both run (degenerate data metrics included), the result's fields and words as the Lagrange route's."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
import sympy
from click.testing import CliRunner

from lightning_cas import Architecture, ed_degree
from lightning_cas.cli import main
from lightning_cas.core.blocks.linear import Linear
from lightning_cas.core.blocks.power import Power
from lightning_cas.core.network import Network
from lightning_cas.errors import InputError
from lightning_cas.geometry.degree.forms import data_form, evaluations
from lightning_cas.geometry.degree.msolve import MSOLVE_PRIMES, coordinate_polynomials, msolve_ed
from lightning_cas.macaulay2.network import network_call
from lightning_cas.macaulay2.render import package_file
from lightning_cas.macaulay2.runner import run_script

SEGRE = Architecture((2, 1), (1,), tokens=2)
FULL_A = Architecture((2, 1), (2,), tokens=2)
SQUARES = Network(2, 1, (Linear(2), Power(2)))  # two squared linear forms: 16 in both metrics
BIASED = Network(2, 1, (Linear(2, bias=True), Power(2), Linear(1)))


def _m2_coordinates(net, tmp_path) -> list[sympy.Expr]:
    """Macaulay2's own basis of the coefficient span (lcasSpanCoordinates, what its standard form uses)."""
    script = tmp_path / "span.m2"
    script.write_text(
        f'needsPackage("LightningCAS", FileName => "{package_file().as_posix()}");\ndebug LightningCAS;\n'
        f"N = {network_call(net)};\n"
        'print("SPAN " | toString((lcasSpanCoordinates(N, QQ, 1))#1));\n'
    )
    line = next(s for s in run_script(script).stdout.splitlines() if s.startswith("SPAN "))
    text = line[5:].strip().strip("{}")
    for i, name in sorted(enumerate(net.weight_names()), key=lambda p: -len(p[1])):
        text = text.replace(name, f"w{i}")
    return [sympy.sympify(p) for p in text.split(",")]


@pytest.mark.parametrize("net", [SEGRE, BIASED, Architecture((2, 2), (1,), tokens=2)])
def test_the_coordinates_are_macaulay2s_basis_in_its_order(m2, net, tmp_path):
    """The standard form is the identity on these: the same polynomials, in the same order, as Macaulay2's."""
    _ctx, coords = coordinate_polynomials(net)
    mine = [sympy.sympify(str(c)) for c in coords]
    theirs = _m2_coordinates(net, tmp_path)
    assert len(mine) == len(theirs) and all(sympy.expand(a - b) == 0 for a, b in zip(mine, theirs))


@pytest.mark.parametrize("net, expected", [(SEGRE, 10), (FULL_A, 14), (SQUARES, 16), (BIASED, 13)])
def test_the_standard_metric_agrees_with_the_lagrange_ideal(msolve_binary, m2, net, expected):
    mine = ed_degree(net, metric="standard", method="msolve")
    theirs = ed_degree(net, metric="standard", method="lagrange")
    assert mine.ed_degree == theirs.ed_degree == expected
    assert (mine.dimension, mine.coordinates, mine.metric) == (theirs.dimension, theirs.coordinates, theirs.metric)
    assert mine.primes == MSOLVE_PRIMES and any("standard form" in n for n in mine.notes)


@pytest.mark.parametrize("samples, degenerate", [(6, False), (2, True), (1, True)])
def test_the_data_metric_agrees_with_the_lagrange_ideal_degenerate_or_not(msolve_binary, m2, samples, degenerate):
    X = np.random.default_rng(1).integers(-5, 6, size=(samples, 2, 2))
    mine = ed_degree(SEGRE, metric="data", inputs=X, method="msolve", layout="features-tokens")
    theirs = ed_degree(SEGRE, metric="data", inputs=X, method="lagrange", layout="features-tokens")
    fields = lambda r: (r.ed_degree, r.degenerate, r.span, r.coordinates, r.dimension)
    assert fields(mine) == fields(theirs) and mine.degenerate is degenerate
    assert mine.inputs == theirs.inputs and mine.inputs.count == samples
    assert any(("degenerate" in n) == degenerate for n in mine.notes)
    assert (mine.ed_degree == 1) == (mine.dimension == mine.coordinates)  # a zero-loss fiber: one point


def test_rational_inputs_give_the_count_of_their_integer_multiples(msolve_binary):
    """f is homogeneous in X: inputs scaled by 1/7 scale the data form, not its ED degree; the rationals stay
    exact (the coordinates are made integral one by one, the form by a common denominator)."""
    net = Network(2, 1, (Linear(1), Power(2)))
    X = np.array([[[1], [0]], [[0], [1]], [[1], [2]]])
    plain = msolve_ed(net, metric="data", inputs=X.tolist())
    scaled = msolve_ed(net, metric="data", inputs=[[[Fraction(v, 7) for v in r] for r in m] for m in X.tolist()])
    assert plain.ed_degree == scaled.ed_degree and (plain.coordinates, plain.span) == (3, 3)


def test_the_data_form_reproduces_every_evaluation():
    """E = C^T B: A B is the evaluations times one common scalar."""
    X = np.random.default_rng(3).integers(-3, 4, size=(2, 2, 2)).tolist()
    basis, A = data_form(SEGRE, X)
    evals = evaluations(SEGRE, X)
    assert len(A) == len(evals) and all(len(row) == len(basis) for row in A)
    combined = [{} for _ in A]
    for k, row in enumerate(A):
        for c, b in zip(row, basis):
            for mono, v in b.items():
                combined[k][mono] = combined[k].get(mono, 0) + c * v
    ratios = {Fraction(combined[k][m]) / e[m] for k, e in enumerate(evals) for m in e}
    assert len(ratios) == 1 and 0 not in ratios


def test_the_command_line_counts_the_data_metric_with_msolve(msolve_binary, tmp_path):
    path = tmp_path / "inputs.json"
    path.write_text(json.dumps(np.random.default_rng(1).integers(-5, 6, size=(6, 2, 2)).tolist()))
    out = CliRunner().invoke(
        main,
        ["ed", "--widths", "2,1", "--attention", "1", "--inputs", str(path), "--layout", "features-tokens"]
        + ["--method", "msolve", "--json"],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert (data["ed_degree"], data["metric"], data["method"], data["span"]) == (10, "data", "msolve", 6)


def test_inputs_go_with_the_data_metric_only():
    with pytest.raises(InputError, match="data metric needs inputs"):
        msolve_ed(SEGRE, metric="data")
    with pytest.raises(InputError, match="data metric needs inputs"):
        msolve_ed(SEGRE, metric="standard", inputs=[[[1, 0], [0, 1]]])
