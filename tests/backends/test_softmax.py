"""Softmax networks: forward pass, Jacobian, and the numerically decided dimension.

No mocks: every rank comes from a real Jacobian (float64 or arb), checked against the proved
one-layer formula, the paper's sweep, the exact lightning backend and the theory module.
"""

from __future__ import annotations

import numpy as np
import pytest

from lightning_cas import api
from lightning_cas.api import compare_normalizations
from lightning_cas.backends.numeric import CLEAR_GAP_DECADES, analyze_spectrum, dimension_numeric, dimension_softmax
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.network import Attention, Network
from lightning_cas.core.predictions import rho
from lightning_cas.core.softmax import evaluate, evaluate_arb, jacobian, jacobian_arb, random_point
from lightning_cas.core.theory import predict_dimension
from lightning_cas.core.verdict import Verdict, judge
from lightning_cas.errors import InputError
from lightning_cas.results.dimension import DimensionResult


def soft(widths, attention, tokens=2):
    return Architecture(widths, attention, tokens, "softmax")


# ---------------------------------------------------------------- the network itself


def test_one_layer_forward_is_softmax_over_keys():
    """Direct formula: column j of the output is sum_i softmax_i(<K x_i, Q x_j>) V x_i."""
    arch = soft((3, 2), (2,), tokens=4)
    w, X = random_point(arch, seed=5, samples=3)
    Q, K, V = w[:6].reshape(2, 3), w[6:12].reshape(2, 3), w[12:].reshape(2, 3)
    for n in range(3):
        x = X[n]
        S = (K @ x).T @ (Q @ x)  # S[i, j]: key i, query j
        Pm = np.exp(S) / np.exp(S).sum(axis=0, keepdims=True)
        assert np.allclose(Pm.sum(axis=0), 1.0)
        assert np.allclose(evaluate(arch, w, X)[n], V @ x @ Pm, atol=1e-12)
        # softmax over the query index would be a different map: make sure the test can tell
        Pq = np.exp(S) / np.exp(S).sum(axis=1, keepdims=True)
        assert not np.allclose(V @ x @ Pq, V @ x @ Pm)


def test_jacobian_matches_finite_differences():
    arch = soft((3, 3, 2), (2, 2), tokens=3)
    w, X = random_point(arch, seed=1, samples=4)
    J = jacobian(arch, w, X)
    assert J.shape == (4 * 2 * 3, arch.parameters)
    h, E = 1e-6, np.eye(arch.parameters)
    fd = np.stack(
        [
            (evaluate(arch, w + h * E[k], X) - evaluate(arch, w - h * E[k], X)).reshape(-1) / (2 * h)
            for k in range(arch.parameters)
        ],
        axis=1,
    )
    assert np.abs(J - fd).max() < 1e-7 * max(1.0, np.abs(J).max())


def test_arb_forward_and_jacobian_agree_with_float64():
    arch = soft((2, 3, 2), (2, 1), tokens=3)
    w, X = random_point(arch, seed=2, samples=3)
    Z = np.vectorize(lambda x: float(x.mid()))(evaluate_arb(arch, w, X, dps=40))
    assert np.allclose(Z, evaluate(arch, w, X), rtol=1e-13, atol=1e-14)
    Ja = jacobian_arb(arch, w, X, dps=40)
    assert max(float(x.rad()) for x in Ja.ravel()) < 1e-30  # balls stay tight at 40 digits
    assert np.allclose(np.vectorize(lambda x: float(x.mid()))(Ja), jacobian(arch, w, X), atol=1e-12)


def test_gap_analysis_on_a_known_spectrum():
    s = np.array([3.0, 1.0, 2e-3, 1e-4, 1e-15, 0.0])
    info = analyze_spectrum(s, 100, 6)
    assert info["gap_rank"] == 4 and info["rank"] == 4
    assert 10.9 <= info["gap_decades"] <= 11.1 and info["clear"]
    # no clear gap: ranks by tolerance and gap disagree
    fuzzy = analyze_spectrum(np.logspace(0, -20, 21), 100, 21)
    assert not fuzzy["clear"]


# ---------------------------------------------------------------- dimensions


@pytest.mark.parametrize(
    "widths,a,t", [((2, 2), 1, 2), ((2, 2), 2, 2), ((3, 3), 2, 2), ((3, 2), 1, 3), ((3, 1), 3, 2), ((4, 2), 2, 3)]
)
def test_one_layer_matches_proved_formula(widths, a, t):
    """Softmax, one layer, t >= 2 (proved): dim = d d' + rho(a, d), no scaling term."""
    d, e = widths
    r = dimension_numeric(soft(widths, (a,), t), seed=3)
    assert r.dimension == d * e + rho(a, d) == predict_dimension(r.architecture).value
    assert r.certainty == "numeric" and r.method == "numeric" and r.consistent
    float_runs = [run for run in r.runs if run["precision"] == "float64"]
    assert len(float_runs) == 3 and len({run["seed"] for run in float_runs}) == 3
    assert all(run["gap_decades"] >= CLEAR_GAP_DECADES for run in float_runs)


@pytest.mark.parametrize("delta", [3, 4, 5, 6])
def test_paper_sweep_smaller_half(delta):
    """The paper's Figure 3: L = 2, t = 3, a = 2, N = 250 -> delta^2 + 8 delta - 8."""
    r = dimension_numeric(soft((delta,) * 3, (2, 2), 3), seed=0)
    assert r.dimension == delta * delta + 8 * delta - 8 == predict_dimension(r.architecture).value
    assert r.samples == 250 and all(run["rows"] == 250 * delta * 3 for run in r.runs)
    assert r.consistent and all(run["clear"] for run in r.runs)


def test_deterministic_with_a_seed_and_json_roundtrip():
    arch = soft((3, 3, 3), (2, 2), 3)
    a, b = dimension_numeric(arch, seed=11, samples=30), dimension_numeric(arch, seed=11, samples=30)
    assert a.runs == b.runs and a.dimension == b.dimension
    c = dimension_numeric(arch, seed=12, samples=30)
    assert c.runs != a.runs and c.dimension == a.dimension  # other point, same generic rank
    back = DimensionResult.from_json(a.to_json())
    assert back.runs == a.runs and back.dimension == a.dimension


@pytest.mark.slow  # high-precision balls: 5 s, so not in the fast loop
def test_rank_decided_only_in_high_precision():
    """Depth 4, widths 3, a = 2, fan-in weights: softmax averages the tokens layer after layer,
    the Jacobian's genuine singular values sink into float64 noise and no run has a clear gap
    at the conjectured rank 41. Recomputing at 50 and 100 digits separates them by a wide gap."""
    arch = soft((3, 3, 3, 3, 3), (2, 2, 2, 2), 3)
    expected = predict_dimension(arch).value
    assert expected == 41
    never = dimension_softmax(arch, seed=0, samples=60, confirm="never")
    assert not never.consistent
    assert not all(run["clear"] and run["gap_rank"] == expected for run in never.runs)
    r = dimension_softmax(arch, seed=0, samples=60)
    hp = [run for run in r.runs if run["precision"] != "float64"]
    assert len(hp) == 1 and hp[0]["clear"] and hp[0]["gap_decades"] >= 10
    assert r.dimension == hp[0]["rank"] == expected and r.consistent


def test_high_precision_agrees_where_float_is_clear():
    arch = soft((2, 2), (1,), 2)
    r = dimension_softmax(arch, seed=4, samples=20, confirm="always")
    hp = r.runs[-1]
    assert hp["precision"].startswith("arb") and hp["clear"]
    assert r.dimension == hp["rank"] == r.runs[0]["gap_rank"] == 7


def test_one_token_softmax_is_linear():
    """t = 1: softmax of a single entry is 1, so phi = V_2 V_1 x: 3x3 matrices, dimension 9."""
    r = dimension_numeric(soft((3, 3, 3), (2, 2), 1), seed=0, samples=40)
    assert r.dimension == 9 and r.consistent


def test_api_routes_softmax_to_numeric():
    r = api.dimension(soft((2, 2), (2,), 2), method="auto", seed=1)
    assert r.method == "numeric" and r.dimension == 8


def test_lightning_float_baseline_still_works():
    r = dimension_numeric(Architecture((3, 3, 3), (2, 2), 2), seed=0)
    assert r.dimension == 23 and r.samples == 250
    assert r.runs[0]["gap_rank"] == 23 and r.runs[0]["precision"] == "float64"


def test_bad_requests_are_refused():
    with pytest.raises(InputError):
        dimension_softmax(Architecture((2, 2), (1,), 2), seed=0)
    with pytest.raises(InputError):
        dimension_softmax(soft((2, 2), (1,), 2), confirm="maybe")
    with pytest.raises(InputError):
        dimension_softmax(soft((2, 2), (1,), 2), samples=0)
    with pytest.raises(InputError):
        dimension_softmax(soft((2, 2), (1,), 2), dps=5)
    with pytest.raises(InputError):
        dimension_softmax(soft((2, 2), (1,), 2), scale="huge")


# ---------------------------------------------------------------- softmax vs lightning


def test_softmax_minus_lightning_is_the_scaling_torus_in_the_regime():
    c = compare_normalizations(Architecture((3, 3, 3), (2, 2), 2), seed=0)
    assert c["lightning"]["dimension"] == c["lightning"]["predicted"] == 23
    assert c["softmax"]["dimension"] == c["softmax"]["predicted"] == 25
    assert c["difference"] == 2 == c["depth"]


def test_token_collapse_costs_lightning_only():
    """a_1 = 1 before the last layer: lightning's tokens collapse (no closed form); softmax does
    not collapse and keeps its formula, so the difference exceeds the L scalings."""
    c = compare_normalizations(Architecture((3, 3, 3), (1, 2), 2), seed=0)
    assert c["lightning"]["predicted"] is None
    assert c["softmax"]["dimension"] == c["softmax"]["predicted"] == 22
    assert c["lightning"]["certainty"] == "probabilistic"
    assert c["difference"] > c["depth"]
    assert "beyond the scaling" in c["explanation"]


# ---- the published softmax formulas, reproduced by the numeric backend -------------------------------


@pytest.mark.parametrize(
    "net, value",
    [
        # Henry (2026), causal softmax with merged weights (a = d): without residual connections 2Lkd^2 - (L-1)d^2
        (Network(3, 3, (Attention(3, causal=True, normalization="softmax"),)), 18),
        (Network(3, 3, (Attention(3, causal=True, normalization="softmax"),) * 2), 2 * 2 * 9 - 9),
        # with residual connections 2Lkd^2 (d >= kL + 1)
        (Network(3, 3, (Attention(3, causal=True, residual=True, normalization="softmax"),)), 18),
        (Network(3, 3, (Attention(3, causal=True, residual=True, normalization="softmax"),) * 2), 36),
        # Henry (2026), one factored multi-head softmax layer: 4kda - 2ka^2
        (Network(4, 3, (Attention(2, heads=2, value=2, normalization="softmax"),)), 4 * 2 * 4 * 2 - 2 * 2 * 4),
    ],
    ids=lambda x: x.label() if hasattr(x, "label") else str(x),
)
def test_the_published_softmax_formulas_are_found_again(net, value):
    pred = predict_dimension(net)
    assert pred.kind == "value" and pred.value == value and pred.status == "claim"
    result = dimension_numeric(net)
    assert result.dimension == value and judge(pred, result.dimension).verdict is Verdict.AGREE


def test_konda_deep_softmax_rank():
    """Konda (2026): one head per layer, V invertible: rank d^2 + sum r_i (2d - r_i) (d = 4, a = 2, L = 3: 52)."""
    arch = Architecture((4, 4, 4, 4), (2, 2, 2), 3, "softmax")
    assert predict_dimension(arch).value == 16 + 3 * 2 * (8 - 2) == 52
    assert dimension_numeric(arch).dimension == 52
