"""A computed dimension beside its prediction, and the verdict in words.

:func:`verdict_sentence` is the one place a verdict (``core.verdict.judge``) becomes a sentence: as
``verify`` prints it, or as a clause of the lightning/softmax comparison. :class:`VerifyResult` is
what ``verify`` returns, with its text and its Macaulay2 form beside its fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lightning_cas.core.network import Network
from lightning_cas.core.predictions import Prediction
from lightning_cas.core.splits import Explained  # noqa: F401  (the annotation of the defect split)
from lightning_cas.core.verdict import Judgement, Verdict
from lightning_cas.results.contract import JsonResult, Provenance, optional
from lightning_cas.results.dimension import DimensionResult, dimension_m2_lines, explained_lines
from lightning_cas.results.display import printable
from lightning_cas.results.formats import M2Context, comment


def verdict_sentence(
    prediction: Prediction,
    judgement: Judgement,
    computed_how: str = "",
    subject: str | None = None,
    with_status: bool = False,
) -> str | None:
    """The verdict in one sentence: as ``verify`` prints it (``computed_how``: "method, certainty"), or, for
    ``subject`` (a normalization: "lightning", "softmax"), as a clause of the comparison of the two, which
    says nothing (None) when the computation agrees (``with_status``: the prediction's status after a
    disagreement)."""
    c, value, verdict = judgement.computed, prediction.value, judgement.verdict
    if verdict is Verdict.NO_PREDICTION:
        return (
            f"{subject} has no closed form here ({prediction.reason})"
            if subject
            else f"computed {c}; no closed form applies: {prediction.reason}"
        )
    if verdict is Verdict.NOT_COMPUTED:
        return f"{subject} was not computed" if subject else "no dimension was computed"
    if verdict is Verdict.DEFECT:
        if subject:
            return f"{subject} is defective: computed {c}, below the expected {value} (an upper bound)"
        message = f"computed {c} < expected {value} ({prediction.formula}; upper bound): defect {judgement.defect}"
        if prediction.refined is not None:
            message += (
                "; explained by head mixing (bound " + str(prediction.refined) + ")"
                if prediction.refined == c
                else f"; below the head-mixing bound {prediction.refined} too: not explained by head mixing"
            )
        return message
    if verdict is Verdict.AGREE:
        if subject:
            return None
        attained = "; upper bound attained" if prediction.kind == "upper bound" else ""
        return f"computed {c} = predicted {value} ({prediction.formula}; {prediction.status}{attained})"
    if subject:  # DISAGREE
        return f"{subject} DISAGREES with theory: computed {c}, predicted {value}" + (
            f" ({prediction.status})" if with_status else ""
        )
    if judgement.above == "head-mixing bound":
        return (
            f"DISCREPANCY: computed {c} ({computed_how}) is above the head-mixing upper bound "
            f"{prediction.refined} (expected {value}, {prediction.formula})"
        )
    what = "upper bound" if prediction.kind == "upper bound" else "predicted"
    return (
        f"DISCREPANCY: computed {c} ({computed_how}) but {what} {value} ({prediction.formula}; "
        f"regime: {prediction.regime}; {prediction.status})"
    )


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
        """What ``lightning-cas verify`` prints: the verdict and why, and the defect split."""
        lines = [f"{self.verdict}: {self.message}"]
        if self.explained is not None:
            lines += explained_lines(self.explained)
        return printable("\n".join(lines), keep_newlines=True)

    def m2_lines(self, context: M2Context) -> list[str]:
        pred = "no prediction" if self.predicted is None else f"predicted {self.predicted} ({self.prediction_status})"
        return [
            comment(f"verdict: {self.verdict}: {self.message}"),
            f"-- {pred}",
            *dimension_m2_lines(self.computed, context),
        ]
