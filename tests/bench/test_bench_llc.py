"""The llc benchmark compares devinterp's estimate with lightning_cas's λ only if both are about one function:
every case builds, its TorchNetwork at w* computes the network's own forward, and the data are drawn from it.
The estimator is run once, on a tiny budget, only to check that the call matches the installed devinterp."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("devinterp")

from benchmarks import bench_llc, llc_report  # noqa: E402
from lightning_cas.core import forward  # noqa: E402
from lightning_cas.core.arithmetic import Float64  # noqa: E402


@pytest.mark.parametrize("name", list(bench_llc.CASES))
def test_each_cases_torch_model_at_w_star_is_the_network(name):
    net, point, model = bench_llc.build_case(name)
    assert [float(v) for v in model.point().values] == [float(v) for v in point.values]  # w* held exactly
    X, Y = bench_llc.make_data(model, n=16, seed=3)
    with torch.no_grad():
        theirs = model(X).numpy()
    ours = np.swapaxes(forward.evaluate(net, Float64(), point.floats(), np.swapaxes(X.numpy(), 1, 2)), 1, 2)
    assert theirs.shape == ours.shape == (16, net.tokens, net.output)
    assert np.allclose(theirs, ours, rtol=1e-12, atol=1e-12)
    noise = (Y - torch.from_numpy(ours)).numpy()
    assert 0 < np.abs(noise).max() < 10 * bench_llc.NOISE  # y = f_{w*}(X) + small noise, not some other f


def test_the_cases_span_the_points_the_brief_names():
    kinds = {name.split(" ")[0] for name in bench_llc.CASES}
    assert kinds == {"linear", "attention", "poly"}
    points = [w for _, w, _ in bench_llc.CASES.values()]
    assert any(all(v == 0 for v in w) for w in points) and any(any(v != 0 for v in w) for w in points)


def test_relative_error_is_zero_inside_a_bracket_and_signed_outside():
    assert bench_llc.relative_error("1", "2", 1.5) == 0.0
    assert bench_llc.relative_error("1", "1", 1.5) == pytest.approx(0.5)
    assert bench_llc.relative_error("1", "2", 0.5) == pytest.approx(-0.5)
    assert bench_llc.relative_error("0", "1", 3.0) == pytest.approx(2.0)


@pytest.mark.slow  # importing devinterp (pandas, matplotlib) and 50 SGLD steps: about 5 s
def test_the_estimator_call_matches_the_installed_devinterp(monkeypatch):
    """A few SGLD steps at a regular point: the call's keywords are accepted and a finite number comes back."""
    monkeypatch.setattr(bench_llc, "DRAWS", 20)
    monkeypatch.setattr(bench_llc, "BURNIN", 5)
    _, _, model = bench_llc.build_case("linear 2-2-2 rank 1")
    X, Y = bench_llc.make_data(model, n=200)
    run = bench_llc.estimate(model, X, Y, bench_llc.CONFIGS["lr=0.0001 γ=1"])
    assert run["status"] == "ok" and np.isfinite(run["mean"]) and len(run["chains"]) == bench_llc.CHAINS
    assert run["draws"] == 20 and run["nbeta"] == pytest.approx(200 / np.log(200))


def test_the_tables_render_from_rows():
    row = {
        "case": "c",
        "status": "ok",
        "point": "p",
        "parameters": 2,
        "lower": "1",
        "upper": "1",
        "exact": "1",
        "multiplicity": 1,
        "truth_s": 0.1,
        "runs": {
            k: {"status": "ok", "mean": 1.1, "std": 0.1, "seconds": 1.0, "relative_error": 0.1}
            for k in bench_llc.CONFIGS
        },
    }
    md = llc_report.llc_markdown([row, {"case": "d", "status": "timeout"}])
    assert "1.10 ± 0.10" in md and "**d: timeout" in md
    assert llc_report.csv_text([row]).count("\n") == 1 + len(bench_llc.CONFIGS)
