"""Theory: closed forms inside their regimes, agreement with the exact mod-p computation there,
and refusal (no number) outside."""

import pytest

from lightning_cas import Architecture, dimension
from lightning_cas.core.predictions import rho
from lightning_cas.core.theory import predict_dimension
from lightning_cas.results.theory import TheoryReport, theory_report


def test_rho():
    assert rho(1, 2) == 3 and rho(2, 2) == 4 and rho(2, 3) == 8 and rho(5, 3) == 9


IN_REGIME = [
    ((d, d2), (a,), t)
    for d in (2, 3, 4)
    for d2 in (1, 2, 3)
    for a in (1, 2, 3, 4)
    for t in (2, 3)
    if d * d2 + 2 * a * d <= 60
] + [
    ((3, 3, 3), (2, 2), 2),
    ((2, 3, 4), (2, 1), 2),
    ((2, 4, 2), (3, 2), 2),
    ((3, 3, 3, 3), (2, 2, 2), 2),
    ((2, 5, 3), (2, 2), 3),
    ((4, 4, 4), (3, 1), 2),
]


@pytest.mark.parametrize("widths, attention, tokens", IN_REGIME, ids=[str(c) for c in IN_REGIME])
def test_modp_matches_theory_inside_regime(widths, attention, tokens):
    arch = Architecture(widths, attention, tokens)
    pred = predict_dimension(arch)
    assert pred.value is not None, pred.reason
    assert dimension(arch, seed=7).dimension == pred.value


@pytest.mark.parametrize(
    "widths, attention, tokens, word",
    [
        ((3, 2, 3), (2, 2), 2, "bottleneck"),
        ((2, 2, 2), (1, 2), 2, "collapse"),
        ((3, 3), (2,), 1, "one token"),
        ((2, 2, 2), (2, 2), 1, "one token"),
    ],
)
def test_theory_refuses_outside_regime(widths, attention, tokens, word):
    arch = Architecture(widths, attention, tokens)
    pred = predict_dimension(arch)
    assert pred.value is None and pred.status == "no prediction" and word in pred.reason
    report = theory_report(arch)
    assert report.fiber_dimension.value is None


@pytest.mark.parametrize(
    "widths, attention, tokens",
    [((3, 2, 3), (2, 2), 2), ((2, 2, 2), (1, 2), 2), ((3, 3), (2,), 1), ((3, 3, 3), (1, 2), 2)],
)
def test_the_formula_really_fails_where_theory_refuses(widths, attention, tokens):
    """Outside the regime the paper's formula over-counts: the refusal is needed, not cautious."""
    arch = Architecture(widths, attention, tokens)
    d0 = widths[0]
    formula = d0 * widths[-1] + sum(rho(min(a, d0), d0) for a in attention) - len(attention)
    assert dimension(arch).dimension < formula


def test_softmax_predictions_drop_the_scaling_terms():
    light, soft = Architecture((3, 3, 3), (2, 2), 3), Architecture((3, 3, 3), (2, 2), 3, "softmax")
    assert predict_dimension(soft).value == predict_dimension(light).value + 2
    # equal widths, one head per layer: Konda's theorem (a claim until computed); otherwise the paper's conjecture
    assert predict_dimension(soft).status == "claim" and "Konda" in predict_dimension(soft).regime
    assert predict_dimension(Architecture((3, 4, 3), (2, 2), 3, "softmax")).status == "conjecture"
    assert predict_dimension(Architecture((3, 3), (2,), 2, "softmax")).status == "proved"
    # token collapse is a lightning phenomenon: softmax keeps its prediction
    assert predict_dimension(Architecture((2, 2, 2), (1, 2), 2, "softmax")).value == 4 + 3 + 4


def test_parameters_and_symmetry_group():
    rep = theory_report(Architecture((3, 4, 3), (2, 2), 2))
    assert rep.parameters.value == (2 * 2 * 3 + 12) + (2 * 2 * 4 + 12)
    assert rep.symmetry_group_dimension.value == 4 + 4 + 2 + 16


def test_report_round_trip():
    rep = theory_report(Architecture((3, 2, 3), (2, 2), 2))
    assert TheoryReport.from_dict(rep.to_dict()) == rep
