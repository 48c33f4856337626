"""The theory's predictions for one architecture as a result: :class:`TheoryReport`, with its text.

The closed forms are mathematics (``core.theory``: each a plain ``Prediction``); the report gathers
them with the provenance of a result (method "theory", certainty "exact").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lightning_cas.core.network import Network
from lightning_cas.core.predictions import Prediction
from lightning_cas.core.theory import (
    predict_dimension,
    predict_fiber_dimension,
    predict_parameters,
    predict_symmetry_dimension,
)
from lightning_cas.results.contract import JsonResult, Provenance
from lightning_cas.results.display import printable
from lightning_cas.results.formats import M2Context, comment


@dataclass(frozen=True)
class TheoryReport(Provenance, JsonResult):
    """All predictions for one architecture (closed forms: method "theory", certainty "exact"; each
    prediction's ``status`` says whether its formula is proved, derived or conjectured)."""

    architecture: Network
    dimension: Prediction
    parameters: Prediction
    symmetry_group_dimension: Prediction
    fiber_dimension: Prediction
    ambient_dimension: int | None
    method: str = field(default="theory", kw_only=True)
    certainty: str = field(default="exact", kw_only=True)

    def text(self) -> str:
        return theory_text(self)

    def m2_lines(self, context: M2Context) -> list[str]:
        """Each prediction as a comment, and the package's calls that compute what it predicts."""
        lines = []
        for pred in (self.dimension, self.parameters, self.symmetry_group_dimension, self.fiber_dimension):
            kind = pred.kind if pred.kind != "value" else "predicted"
            said = (
                f"no prediction ({pred.reason})"
                if pred.value is None
                else f"{kind} {pred.value} ({pred.formula}; {pred.status})"
            )
            lines.append(comment(f"{pred.quantity}: {said}"))
        return lines + ['-- compare: neurovarietyDimension N, N#"parameters"']


def theory_text(report) -> str:
    """What ``lightning-cas predict`` prints: each prediction with its formula, regime and status."""
    lines = [f"{report.architecture}"]
    for pred in (report.dimension, report.parameters, report.symmetry_group_dimension, report.fiber_dimension):
        if pred.value is None:
            lines.append(f"{pred.quantity}: no prediction ({pred.reason})")
        elif pred.kind != "value":
            lines.append(f"{pred.quantity}: {pred.kind} {pred.value}   [{pred.formula}; {pred.regime}; {pred.status}]")
            for name, value, why in pred.bounds:
                lines.append(f"    {name}: {value}   ({why})")
            if pred.refined is not None:
                lines.append(
                    f"    head-mixing bound: {pred.refined}   (sharper, proved; with head mixing, see "
                    "docs/multihead.md)"
                )
        else:
            lines.append(f"{pred.quantity}: {pred.value}   [{pred.formula}; {pred.regime}; {pred.status}]")
    lines.append(f"ambient_dimension: {report.ambient_dimension}")
    return printable("\n".join(lines), keep_newlines=True)


def theory_report(arch: Network) -> TheoryReport:
    """Every closed-form prediction for ``arch``, each with its regime."""
    dim = predict_dimension(arch)
    return TheoryReport(
        arch,
        dim,
        predict_parameters(arch),
        predict_symmetry_dimension(arch),
        predict_fiber_dimension(arch, dim),
        arch.ambient_dimension,
        seed=None,
        certainty_detail="closed forms, no computation; see each prediction's status",
    )
