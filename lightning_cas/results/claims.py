"""The claims of docs/mathematics.md §5 checked one by one, as a result: each claim, its verdict, its evidence."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from lightning_cas.core.network import Network
from lightning_cas.results.contract import JsonResult, Provenance, Record, how, lines_text


class ClaimVerdict(enum.StrEnum):
    AGREE = "agree"
    DISAGREE = "disagree"
    NOT_APPLICABLE = "not applicable"
    NOT_COMPUTED = "not computed"
    INFORMATION = "information"


@dataclass(frozen=True)
class Claim(Record):
    """One claim and its verdict: agree | disagree | not applicable | not computed | information."""

    claim: str
    verdict: ClaimVerdict
    evidence: str


@dataclass(frozen=True)
class ClaimsResult(Provenance, JsonResult):
    """Each claim about singular and boundary points for one architecture, with its verdict and evidence."""

    architecture: Network
    claims: tuple[Claim, ...]
    script: str | None = None

    @property
    def all_agree(self) -> bool:
        return all(c.verdict is not ClaimVerdict.DISAGREE for c in self.claims)

    def text(self) -> str:
        """What ``lightning-cas claims`` prints: each claim with its verdict and evidence."""
        lines = [f"{self.architecture}   ({how(self)})"]
        for c in self.claims:
            lines.append(f"{c.verdict:>14}: {c.claim}\n{'':>16}{c.evidence}")
        return lines_text(lines)
