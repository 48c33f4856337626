"""The one verdict: how a computed dimension stands against its prediction.

Every place that compares (``verify``, a sweep's job, the heads table, the softmax/lightning
comparison) calls :func:`judge`, so the same two numbers get the same verdict everywhere:

* no number predicted: *no prediction*;
* an upper bound (several heads, blocks): *defect* below it, *agree* when attained, *disagree*
  above it or above the sharper head-mixing bound (every bound is proved, so exceeding one is a
  discrepancy: a bug or a wrong claim, never a finding to file away);
* a value (a closed form inside its regime): *agree* or *disagree*.

A job that computed no dimension is *not computed* (a sweep's record says so); :func:`judge` never
gives it. The verdict in words is ``results.verify.verdict_sentence``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from lightning_cas.core.predictions import Prediction


class Verdict(enum.StrEnum):
    """How a computed dimension stands against its prediction (the values a job record's ``agreement`` holds)."""

    AGREE = "agree"
    DISAGREE = "disagree"
    DEFECT = "defect"
    NO_PREDICTION = "no prediction"
    NOT_COMPUTED = "not computed"  # no dimension was computed (a job that failed or ran out of time)


@dataclass(frozen=True)
class Judgement:
    """A verdict and what it rests on: the bound compared with, the defect, whether head mixing
    explains it (None when no head-mixing bound applies)."""

    verdict: Verdict
    computed: int
    predicted: int | None
    defect: int | None = None  # predicted - computed, for an upper bound
    refined: int | None = None  # the head-mixing bound, when there is one
    explained: bool | None = None  # the computed value equals the least bound (None: no refined bound)
    above: str | None = None  # for DISAGREE above a bound: which bound ("upper bound", "head-mixing bound")

    @property
    def discrepancy(self) -> bool:
        return self.verdict is Verdict.DISAGREE


def judge(prediction: Prediction, computed: int) -> Judgement:
    """The verdict on ``computed`` against ``prediction`` (the module docstring gives the rule)."""
    value, refined = prediction.value, prediction.refined
    if value is None:
        return Judgement(Verdict.NO_PREDICTION, computed, None)
    least = value if refined is None else min(value, refined)
    explained = None if refined is None else computed == least
    if prediction.kind == "upper bound":
        defect = value - computed
        if refined is not None and computed > refined:
            return Judgement(Verdict.DISAGREE, computed, value, defect, refined, explained, "head-mixing bound")
        if computed > value:
            return Judgement(Verdict.DISAGREE, computed, value, defect, refined, explained, "upper bound")
        verdict = Verdict.DEFECT if computed < value else Verdict.AGREE
        return Judgement(verdict, computed, value, defect, refined, explained)
    verdict = Verdict.AGREE if computed == value else Verdict.DISAGREE
    return Judgement(verdict, computed, value, None, refined, explained)
