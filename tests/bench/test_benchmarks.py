"""The benchmark's own code keeps working as the package moves: a module that no longer imports, or a
baseline built on a function that was renamed, turns every row of a 20-minute `make bench` into
"error" (it did once: the dimension section's workers all failed on a removed import, and the run
still exited 0). These tests run a real dimension worker, check the paper baseline's Jacobian against
the package's own, and check that a crashed worker fails the bench."""

from __future__ import annotations

import importlib
import pkgutil

import numpy as np
import pytest

import benchmarks
from benchmarks import bench, bench_dimension, bench_ratios
from benchmarks.bench_rank import _ratio
from benchmarks.paper_baseline import dimension_paper, jacobian_rows
from lightning_cas.backends.modp import dimension_modp
from lightning_cas.core import forward
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.arithmetic import Float64
from lightning_cas.core.theory import predict_dimension


@pytest.mark.parametrize("name", [m.name for m in pkgutil.iter_modules(benchmarks.__path__)])
def test_every_benchmark_module_imports(name):
    assert importlib.import_module(f"benchmarks.{name}").__name__ == f"benchmarks.{name}"


CASE = {"widths": (2, 2, 2), "attention": (2, 2), "tokens": 2}


def test_a_dimension_worker_runs_the_package_in_a_fresh_interpreter():
    row = bench_dimension.run_worker(CASE, "modp", seed=0, repeats=1, m2_timeout=60)
    assert row["status"] == "ok", row
    arch = Architecture(CASE["widths"], CASE["attention"], CASE["tokens"])
    assert row["dimension"] == dimension_modp(arch, seed=1).dimension == predict_dimension(arch).value


def test_the_paper_baseline_jacobian_is_the_package_jacobian():
    arch = Architecture((2, 3, 2), (2, 1), 3)
    rng = np.random.default_rng(7)
    w, X = rng.standard_normal(arch.parameters), rng.standard_normal((4, 2, 3))
    ours = forward.jacobian(arch, Float64(), w, X)
    theirs = jacobian_rows(arch, w, X)
    assert theirs.shape == ours.shape == (4 * 2 * 3, arch.parameters)
    assert np.allclose(theirs, ours, rtol=1e-10, atol=1e-9 * np.abs(ours).max())


def test_the_paper_protocol_finds_a_small_dimension():
    arch = Architecture(CASE["widths"], CASE["attention"], CASE["tokens"])
    res = dimension_paper(arch, seed=0, samples=20, trials=2, diagnostics=False)
    assert res.method == "paper" and res.certainty == "numeric"
    assert res.dimension == dimension_modp(arch, seed=0).dimension == predict_dimension(arch).value


def test_a_crashed_worker_fails_the_bench_and_a_refusal_does_not():
    results = {
        "sections": {
            "dimension": [
                {"modp": {"status": "ok"}, "jacobian": {"status": "refused (too large)", "error": "too big"}}
            ],
            "rank": [{"status": "timeout"}],
        }
    }
    assert bench.crashed_workers(results) == []
    results["sections"]["dimension"][0]["paper"] = {"status": "error", "error": "worker exit 1: ImportError: x"}
    assert bench.crashed_workers(results) == [("dimension[0].paper", "worker exit 1: ImportError: x")]


def test_a_section_worker_that_raises_is_a_crash_the_bench_sees():
    """Every section's rows say a dead worker the same way (bench.worker_failure), so one check finds them all."""
    row = bench_ratios.run_worker({"kind": "no such measurement"})
    assert row == {"status": "error", "error": "worker exit 1: ValueError: no such measurement"}
    assert bench.crashed_workers({"sections": {"ratios": [row]}}) == [("ratios[0]", row["error"])]


def test_a_product_too_quick_to_time_gives_no_ratio():
    assert _ratio(0.02, 0.0) == "-" and _ratio(1.0, 0.5) == "2.0"


def test_the_header_names_only_the_sections_an_earlier_run_measured():
    """Each section records the run it belongs to: a full run's sections started at different times, and
    only a section kept from an earlier run (``--only``) is named as such, with that run's own times."""
    runs = {
        "dimension": {"run": "B", "started": "B1", "finished": "B2"},
        "rank": {"run": "A", "started": "A1", "finished": "A2", "environment": {"loadavg_start": [1.5]}},
    }
    header = bench.render_markdown(
        {"sections": {"dimension": [], "rank": []}, "started": "B", "environment": {}, "section_runs": runs}
    ).splitlines()[2]
    kept = header.split("Sections kept from an earlier run")[1]
    assert "rank measured A1 to A2 (load average at start [1.5])" in kept and "dimension" not in kept
