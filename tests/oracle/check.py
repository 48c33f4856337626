"""One draw checked end to end: the real API's certificate against the oracle's rank.

Outcomes: "certified" (the bounds meet and equal the oracle), "open" (the oracle lies between bounds
that do not meet), "refused" (the API refused the input in one line, e.g. a ReLU input on a kink),
"inconclusive" (the oracle could not decide the rank: an undecided singular value, a saturated point,
or a ReLU argument at a kink the API did not refuse) and "wrong" (the oracle's rank lies outside the
certificate, or even its lower bound, the singular values that are certainly real, exceeds the
certificate's upper bound: a bound lies); "error" is any other exception (a refusal must be an
InputError, one line).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from lightning_cas import dimension
from lightning_cas.errors import InputError
from lightning_cas.system.points import WeightPoint
from tests.oracle.jacobian import OracleRank, oracle_rank
from tests.oracle.networks import Case

OUTCOMES = ("certified", "open", "refused", "inconclusive", "wrong", "error")


@dataclass(frozen=True)
class Outcome:
    kind: str
    case: Case
    oracle: OracleRank | None = None
    lower: int | None = None
    upper: int | None = None
    upper_by: str = ""
    lower_by: str = ""
    refusal: str = ""
    seconds: float = 0.0  # the API's

    def report(self) -> str:
        """Everything the certifier's author needs to reproduce the draw."""
        lines = [f"{self.kind}: {self.case.family}", self.case.python()]
        if self.refusal:
            lines.append(f"refused: {self.refusal}")
        if self.lower is not None:
            lines.append(f"certificate: lower {self.lower}, upper {self.upper}")
            lines.append(f"  lower_by: {self.lower_by}")
            lines.append(f"  upper_by: {self.upper_by}")
        if self.oracle is not None:
            lines.append(
                f"oracle: rank {self.oracle.rank} ({self.oracle.status}); singular values / largest: "
                + ", ".join(f"{r:.1e}" for r in self.oracle.ratios)
            )
        return "\n".join(lines)


def certificate_of(case: Case):
    """The API's result for the case (dimension at the point on exactly those inputs)."""
    point = WeightPoint(case.network, case.weights)
    inputs = np.array(case.inputs, dtype=np.int64)
    return dimension(case.network, at=point, inputs=inputs, layout="features-tokens")


def check(case: Case) -> Outcome:
    start = time.perf_counter()
    try:
        result = certificate_of(case)
    except InputError as exc:
        return Outcome("refused", case, refusal=str(exc), seconds=time.perf_counter() - start)
    except Exception as exc:  # not a one-line refusal: the house rules count it as a failure too
        return Outcome(
            "error",
            case,
            refusal=f"{type(exc).__module__}.{type(exc).__name__}: {exc}",
            seconds=time.perf_counter() - start,
        )
    seconds = time.perf_counter() - start
    cert = result.certificate
    if cert is None:  # every non-polynomial rank at a point carries one; its absence is a failure too
        raise AssertionError(f"no certificate for a non-polynomial network:\n{case.python()}")
    oracle = oracle_rank(case.network, case.weights, case.inputs)
    common = dict(
        case=case,
        oracle=oracle,
        lower=cert.lower,
        upper=cert.upper,
        upper_by=cert.upper_by,
        lower_by=cert.lower_by,
        seconds=seconds,
    )
    if oracle.lower is not None and oracle.lower > cert.upper:  # more real singular values than the bound
        return Outcome("wrong", **common)
    if not oracle.ok:
        return Outcome("inconclusive", **common)
    if not cert.lower <= oracle.rank <= cert.upper or (cert.certified and result.dimension != oracle.rank):
        return Outcome("wrong", **common)
    return Outcome("certified" if cert.certified else "open", **common)
