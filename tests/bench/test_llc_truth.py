"""The ground-truth set: 50+ distinct points of the right sizes, and the writer's table from real rows."""

from __future__ import annotations

from fractions import Fraction

import pytest

from benchmarks import llc_truth


def test_the_set_has_fifty_distinct_points_of_the_right_sizes():
    cases = llc_truth.cases()
    assert len(cases) >= 50 and len({name for name, _, _ in cases}) == len(cases)
    assert all(len(w) == net.parameters for _, net, w in cases)
    kinds = {name.split()[0] for name, _, _ in cases}
    assert kinds == {"linear", "attention", "mlp"}


@pytest.mark.m2
def test_real_rows_are_written_with_their_theorem(m2, tmp_path):
    """Two linear points and the sum-of-squares point, through the real llc: the table gives each value and the
    theorem behind it, and the exact rows say λ (Aoyagi at the least rank; Newton at U = 0, D = 1)."""
    picked = [c for c in llc_truth.cases() if c[0] in ("linear 2-2-2 rank 1", "mlp 1-3-1 U=0 D=(1,1,1)")]
    rows = [{"case": n, "model": net.label(), "weights": w, **llc_truth.truth(net, w)} for n, net, w in picked]
    llc_truth.write(rows, tmp_path)
    table = (tmp_path / "llc_truth.md").read_text()
    by = {r["case"]: r for r in rows}
    assert Fraction(by["mlp 1-3-1 U=0 D=(1,1,1)"]["exact"]) == Fraction(3, 4)
    assert by["linear 2-2-2 rank 1"]["theorem"].startswith("Aoyagi 2024, least-rank")
    assert all(r["case"] in table and r["theorem"] in table for r in rows)
    assert (tmp_path / "llc_truth.csv").read_text().count("\n") == 1 + len(rows)
