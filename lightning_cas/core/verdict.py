"""The one verdict: how a computed dimension stands against its prediction.

Every place that compares (``verify``, a sweep's job, the heads table, the softmax/lightning
comparison) calls :func:`judge`, so the same two numbers get the same verdict everywhere:

* no number predicted: *no prediction*;
* an upper bound (several heads, blocks): *defect* below it, *agree* when attained, *disagree*
  above it or above the sharper head-mixing bound (every bound is proved, so exceeding one is a
  discrepancy: a bug or a wrong claim, never a finding to file away);
* a value (a closed form inside its regime): *agree* or *disagree*.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from lightning_cas.core.network import Network
from lightning_cas.core.predictions import Prediction
from lightning_cas.core.results import DimensionResult, Explained, JsonResult, Provenance, optional


class Verdict(enum.StrEnum):
    AGREE = "agree"
    DISAGREE = "disagree"
    DEFECT = "defect"
    NO_PREDICTION = "no prediction"


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


def describe(prediction: Prediction, judgement: Judgement, computed_how: str) -> str:
    """The verdict in one sentence, as ``verify`` prints it (``computed_how``: "method, certainty")."""
    c, value = judgement.computed, prediction.value
    if judgement.verdict is Verdict.NO_PREDICTION:
        return f"computed {c}; no closed form applies: {prediction.reason}"
    if judgement.verdict is Verdict.DISAGREE and judgement.above == "head-mixing bound":
        return (f"DISCREPANCY: computed {c} ({computed_how}) is above the head-mixing upper bound "
                f"{prediction.refined} (expected {value}, {prediction.formula})")
    if judgement.verdict is Verdict.DEFECT:
        message = (f"computed {c} < expected {value} ({prediction.formula}; upper bound): "
                   f"defect {judgement.defect}")
        if prediction.refined is not None:
            message += ("; explained by head mixing (bound " + str(prediction.refined) + ")"
                        if prediction.refined == c else
                        f"; below the head-mixing bound {prediction.refined} too: not explained by head mixing")
        return message
    if judgement.verdict is Verdict.AGREE:
        attained = "; upper bound attained" if prediction.kind == "upper bound" else ""
        return f"computed {c} = predicted {value} ({prediction.formula}; {prediction.status}{attained})"
    what = "upper bound" if prediction.kind == "upper bound" else "predicted"
    return (f"DISCREPANCY: computed {c} ({computed_how}) but {what} {value} ({prediction.formula}; "
            f"regime: {prediction.regime}; {prediction.status})")


@dataclass(frozen=True)
class VerifyResult(Provenance, JsonResult):
    """A computed dimension next to the theory's prediction (provenance: that of the computation)."""

    architecture: Network
    computed: DimensionResult
    predicted: int | None
    prediction_status: str
    regime: str
    reason: str | None
    verdict: Verdict  # agree | disagree | defect (below an upper bound) | no prediction
    message: str = ""
    details: dict = field(default_factory=dict)
    explained: "Explained | None" = optional()  # parameters - dimension split into its causes (core.defects)

    def text(self) -> str:
        from lightning_cas.core.text import verify_text

        return verify_text(self)
