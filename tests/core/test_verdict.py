"""The one verdict: the same computed number against the same prediction is judged the same way by
``verify``, a sweep's job, the heads table and the softmax/lightning comparison."""

from __future__ import annotations

import dataclasses

import pytest

from lightning_cas import api
from lightning_cas.backends.modp import dimension_modp
from lightning_cas.batch import executors, heads
from lightning_cas.batch.spec import Job
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.predictions import Prediction
from lightning_cas.core.theory import predict_dimension
from lightning_cas.core.verdict import Verdict, judge

TWO_HEADS = Architecture((3, 3), (3,), 2, heads=(2,))  # expected 34, head-mixing bound 32


def _bound(value, refined=None, kind="upper bound"):
    return Prediction("dimension", value, "f", "r", "derived", kind=kind, refined=refined)


@pytest.mark.parametrize(
    "computed, verdict",
    [
        (31, Verdict.DEFECT),
        (32, Verdict.DEFECT),
        (33, Verdict.DISAGREE),
        (34, Verdict.DISAGREE),
        (35, Verdict.DISAGREE),
    ],
)
def test_above_the_head_mixing_bound_is_a_discrepancy_below_the_expected_one_a_defect(computed, verdict):
    j = judge(_bound(34, refined=32), computed)
    assert j.verdict is verdict
    assert j.explained == (computed == 32)


def test_values_and_missing_predictions():
    assert judge(_bound(7, kind="value"), 7).verdict is Verdict.AGREE
    assert judge(_bound(7, kind="value"), 6).verdict is Verdict.DISAGREE
    assert judge(_bound(None), 6).verdict is Verdict.NO_PREDICTION
    assert judge(_bound(7), 7).verdict is Verdict.AGREE  # an upper bound attained


def test_a_computed_33_for_two_heads_is_a_discrepancy_everywhere(monkeypatch):
    """Found by review: verify said *disagree* (exit 3), a sweep *defect*, so the sweep summary never
    counted the discrepancy. The four places now share one judge."""
    pred = predict_dimension(TWO_HEADS)
    assert (pred.value, pred.refined) == (34, 32)
    real = dimension_modp(TWO_HEADS)
    fake = dataclasses.replace(real, dimension=33)
    monkeypatch.setattr(api, "_compute_dimension", lambda *a, **k: fake)
    assert api.verify(TWO_HEADS).verdict is Verdict.DISAGREE
    assert executors.run_job(Job(TWO_HEADS, "modp")).agreement == "disagree"
    rec = executors.run_job(Job(TWO_HEADS, "modp"))
    rows, problems = heads.build_rows([rec])
    assert rows[0]["status"] == "above bound" and problems
    assert "DISAGREES" in api._against_theory("lightning", pred, 33)
