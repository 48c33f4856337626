"""The relu benchmark compares like with like only if its hand-written Jacobian is the network's own, its
field rank is numpy's matrix_rank where the batch rule keeps every input, and the batch rule drops what the
field's loop drops."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import bench_relu
from lightning_cas.core import forward
from lightning_cas.core.arithmetic import Float64

TINY = (2, 3, 1)  # 13 weights, 10 identifiable: batches of 10 inputs


def test_the_case_list_builds_every_net_size_and_scale():
    cases = bench_relu.cases()
    assert len(cases) == len(bench_relu.NETS) * len(bench_relu.SIZES) * len(bench_relu.SCALES)
    assert {c["net"] for c in cases} == {"4-16-16-1", "3-8-8-1"} and {c["n"] for c in cases} == {500, 5000}
    assert bench_relu.network(bench_relu.NETS["4-16-16-1"]).parameters == 369
    assert bench_relu.network(bench_relu.NETS["3-8-8-1"]).parameters == bench_relu.parameters((3, 8, 8, 1)) == 113


def test_inputs_and_weights_are_float32_numbers_and_scale_multiplies_one_draw():
    w = bench_relu.weights((3, 8, 8, 1))
    X1, X3 = bench_relu.inputs((3, 8, 8, 1), 7, 1.0), bench_relu.inputs((3, 8, 8, 1), 7, 3.0)
    for a in (w, X1, X3):
        assert np.array_equal(a, a.astype(np.float32).astype(np.float64))
    assert np.allclose(X3, 3 * X1, rtol=1e-6)


@pytest.mark.parametrize("widths", [TINY, (3, 8, 8, 1)])
def test_the_hand_jacobian_is_lightning_cas_forward_jacobian(widths):
    net, w, X = bench_relu.network(widths), bench_relu.weights(widths), bench_relu.inputs(widths, 20, 1.0)
    ours = forward.jacobian(net, Float64(), w, X[:, :, None])
    assert np.allclose(bench_relu.relu_jacobian(w, widths, X), ours, rtol=1e-12, atol=1e-12)
    f32 = bench_relu.relu_jacobian(w, widths, X, np.float32)
    assert f32.dtype == np.float32 and np.allclose(f32, ours, rtol=1e-4, atol=1e-4)


def test_the_field_rank_is_numpys_matrix_rank_when_no_input_is_dropped():
    w, X = bench_relu.weights(TINY), bench_relu.inputs(TINY, 30, 1.0)  # 30 = 3 full batches of 10
    got = bench_relu.field_rank(w, TINY, X, np.float64)
    assert (got["batch"], got["used"]) == (10, 30)
    assert got["rank"] == np.linalg.matrix_rank(bench_relu.relu_jacobian(w, TINY, X))


def test_the_batch_rule_drops_the_last_n_mod_batch_inputs():
    w, X = bench_relu.weights(TINY), bench_relu.inputs(TINY, 27, 1.0)
    got = bench_relu.field_rank(w, TINY, X, np.float64)
    assert (got["batch"], got["used"]) == (10, 20)
    assert got["rank"] == np.linalg.matrix_rank(bench_relu.relu_jacobian(w, TINY, X[:20]))
    assert bench_relu.field_rank(w, TINY, X[:5], np.float64)["used"] == 5  # batch = min(1000, N, P_identif)


def test_findings_name_a_float_rank_off_the_exact_one():
    exact = {"rank": 5, "lower": 5, "upper": 5, "certified": True}
    row = {"status": "ok", "net": "n", "n": 9, "scale": 1.0, "batch_used": exact}
    row |= {"float32": {"rank": 6, "used": 8}, "float64": {"rank": 5, "used": 8}}
    assert bench_relu.relu_findings([row]) == [
        "relu n N=9 x1: the field's float32 rank is 6, the exact rank on the same 8 inputs 5"
    ]
    assert bench_relu.relu_findings([row | {"batch_used": exact | {"upper": 6, "certified": False}}]) == []


def test_one_small_row_renders(tmp_path, monkeypatch):
    monkeypatch.setattr(bench_relu, "NETS", {"2-3-1": TINY})
    monkeypatch.setattr(bench_relu, "SIZES", (27,))
    monkeypatch.setattr(bench_relu, "SCALES", (1.0,))
    rows = bench_relu.run_relu_bench(progress=lambda m: None, out_dir=tmp_path)
    (row,) = rows
    assert row["batch"]["certified"] and row["batch"]["rank"] <= 10 and row["float32"]["used"] == 20
    assert row["batch_used"]["rank"] <= row["batch"]["rank"] <= row["at_w"]["upper"]
    assert (tmp_path / "relu.csv").read_text().count("\n") == 2
    assert "| 2-3-1 (13) | 27 | 1 |" in (tmp_path / "relu.md").read_text()
