"""The learning coefficient's result: a bracket of exact rationals, each side with the theorem behind it."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from fractions import Fraction

from lightning_cas.core.learning import Bound
from lightning_cas.core.network import Network
from lightning_cas.core.numbers import rational_text
from lightning_cas.results.contract import JsonResult, Provenance, Record, optional


class Side(enum.StrEnum):
    """Which side of λ a bound is on; an equality decides it."""

    LOWER = "lower"
    UPPER = "upper"
    EQUAL = "equal"


def _text(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


@dataclass(frozen=True)
class LearningBound(Record):
    """One proved bound on λ: its side, its exact value ("p/q"), its reason, and the pole's order when an
    equality knows it."""

    side: Side
    value: str  # "p/q"
    reason: str
    multiplicity: int | None = None
    theorem: str = ""  # the theorem's short name ("splitting lemma", "Newton polyhedron", ...)

    @classmethod
    def of(cls, side: str, bound: Bound, multiplicity: int | None = None) -> "LearningBound":
        return cls(Side(side), _text(bound.value), bound.reason, multiplicity, bound.theorem)

    @property
    def rational(self) -> Fraction:
        value = rational_text(self.value)
        if value is None:
            raise ValueError(f'a bound\'s value is an exact rational "p/q", got {self.value!r}')
        return value


@dataclass(frozen=True)
class LearningCoefficientResult(Provenance, JsonResult):
    """λ(w*) as lower <= λ <= upper (exact rationals, "p/q"); ``learning_coefficient`` when they meet."""

    architecture: Network
    parameters: int
    lower: str
    upper: str
    learning_coefficient: str | None
    multiplicity: int | None
    rank_at_point: int
    generic_rank: tuple[int, ...]  # (a lower bound, an upper bound) of the generic rank r
    bounds: tuple[LearningBound, ...]
    setting: str
    lower_reason: str = ""
    upper_reason: str = ""
    lower_theorem: str = ""
    upper_theorem: str = ""
    explanation: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    primes: tuple[int, ...] = ()
    source: str | None = optional()  # where w* came from: a file, "given weights", or how it was drawn

    @classmethod
    def from_bounds(
        cls, *, bounds: tuple[LearningBound, ...], parameters: int, **fields
    ) -> "LearningCoefficientResult":
        """The tightest bracket of ``bounds`` (and n/2); a lower bound above an upper one is a bug, never shown."""
        top = LearningBound.of(
            "upper", Bound(Fraction(parameters, 2), f"n/2 = {parameters}/2: the number of weights", "dimension")
        )
        lowers = [b for b in bounds if b.side in ("lower", "equal")] or [
            LearningBound(Side.LOWER, "0", "λ >= 0", None, "positivity")
        ]
        uppers = [b for b in bounds if b.side in ("upper", "equal")] + [top]
        # ties go to an equality (it names the theorem that decides λ), then to the first found
        low = max(lowers, key=lambda b: (b.rational, b.side == "equal"))
        high = min(uppers, key=lambda b: (b.rational, b.side != "equal"))
        if low.rational > high.rational:
            raise AssertionError(
                f"the learning coefficient's bounds cross: {low.value} ({low.reason}) > {high.value} ({high.reason})"
            )
        met = low.rational == high.rational
        orders = {b.multiplicity for b in bounds if b.side == "equal" and b.multiplicity is not None}
        return cls(
            parameters=parameters,
            lower=low.value,
            upper=high.value,
            learning_coefficient=low.value if met else None,
            multiplicity=orders.pop() if met and len(orders) == 1 else None,
            bounds=bounds,
            lower_reason=low.reason,
            upper_reason=high.reason,
            lower_theorem=low.theorem,
            upper_theorem=high.theorem,
            method="ranks-fiber",
            certainty="exact" if met else "bounds",
            method_detail="exact ranks mod p (lower bounds of ranks over QQ), the orbit through w* over QQ, "
            "the fiber's tangent cone in Macaulay2 within its guard, and closed forms",
            certainty_detail="every bound is a theorem applied to a proved number: λ is exact when its ends meet"
            if met
            else "every bound is a theorem applied to a proved number: the bracket holds, λ inside it is not known",
            **fields,
        )

    def finish(self, *, source: str | None, elapsed_s: float) -> "LearningCoefficientResult":
        return dataclasses.replace(self, source=source, elapsed_s=elapsed_s)

    def text(self) -> str:
        lines = [f"learning coefficient at w* ({self.architecture}; {self.parameters} weights, w* {self.source}):"]
        if self.learning_coefficient is not None:
            order = "" if self.multiplicity is None else f" (pole of order {self.multiplicity})"
            lines.append(f"  λ = {self.learning_coefficient}{order}   [exact: {self.lower_theorem}]")
            lines.append(f"  because {self.lower_reason}")
            if self.upper_reason != self.lower_reason:
                lines.append(f"  and {self.upper_reason}")
        else:
            lines.append(f"  {self.lower} <= λ <= {self.upper}   [a proved bracket]")
            lines.append(f"  lower {self.lower} ({self.lower_theorem}): {self.lower_reason}")
            lines.append(f"  upper {self.upper} ({self.upper_theorem}): {self.upper_reason}")
        low, high = self.generic_rank
        generic = str(low) if low == high else f"between {low} and {high}"
        lines.append(f"  rank of the differential at w*: {self.rank_at_point}; generic rank {generic}")
        lines += [f"  {e}" for e in self.explanation]
        lines.append(f"  setting: {self.setting}")
        others = [b for b in self.bounds if b.reason not in (self.lower_reason, self.upper_reason)]
        if others:
            lines.append("  other bounds:")
            lines += [f"    {b.side} {b.value}: {b.reason}" for b in others]
        lines += [f"  note: {n}" for n in self.notes]
        lines.append(f"  method: {self.method} ({self.method_detail}); seed {self.seed}")
        return "\n".join(lines)
