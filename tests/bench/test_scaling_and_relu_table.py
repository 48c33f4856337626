"""The scaling table's cases are the families it names, its stopping rule stops, and the ReLU table's rows compare
a proved rank with parameters - hidden."""

from __future__ import annotations

from benchmarks import bench_scaling, relu_table


def test_scaling_families_have_the_sizes_they_name():
    assert bench_scaling.network("lightning", 32).parameters == 6144
    assert bench_scaling.network("polynomial x^6", 40).parameters == 5040
    assert bench_scaling.network("polynomial x^6", 80).parameters == 19680
    sizes = [
        bench_scaling.network("poly transformer", w).parameters for w in bench_scaling.FAMILIES["poly transformer"]
    ]
    assert sizes == sorted(sizes) and sizes[0] < 1000 < 10**5 < sizes[-1]


def test_a_route_over_budget_is_stopped_with_its_reason():
    rows = bench_scaling.run_scaling_bench(quick=True, budget=0.0, progress=lambda m: None)
    assert rows and all(r["status"] == "stopped" and "over the budget" in r["why"] for r in rows)
    assert "stopped" in bench_scaling.scaling_markdown(rows)


def test_relu_rows_compare_the_rank_with_parameters_minus_hidden():
    r = relu_table.row((2, 2, 1), seeds=3)
    assert (r["parameters"], r["hidden"], r["expected"]) == (9, 2, 7)
    assert r["theorem_applies"] and r["rank"] <= r["expected"]
    assert r["agrees"] == (r["rank"] == 7)
    assert not relu_table.row((2, 1, 2), seeds=1)["theorem_applies"]
