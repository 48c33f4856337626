"""A prediction: one quantity's closed form with the regime it relies on, or no number and why (plain
data: ``results.theory.TheoryReport`` carries it, the result contract writes and reads it).

Shared by the closed forms of ``theory`` and the bounds of ``multihead`` (neither imports the other
for it).
"""

from __future__ import annotations

from dataclasses import dataclass

from lightning_cas.core.data import Data


def rho(a: int, d: int) -> int:
    """Dimension of d x d matrices of rank <= a: a(2d - a) if a < d, else d^2.

    >>> rho(1, 2), rho(2, 3), rho(5, 3)
    (3, 8, 9)
    """
    return a * (2 * d - a) if a < d else d * d


@dataclass(frozen=True)
class Prediction(Data):
    """One predicted quantity: a value, or None with the reason no closed form applies."""

    quantity: str
    value: int | None
    formula: str | None
    regime: str
    status: str  # "proved" | "derived" | "claim" | "conjecture" | "definition" | "no prediction"
    reason: str | None = None
    kind: str = "value"  # "value": the quantity itself; "upper bound": the quantity is at most value
    bounds: tuple = ()  # the justified bounds value is the least of: ((name, value, why), ...)
    refined: int | None = None  # several heads: a sharper proved bound from head mixing (see core.multihead)


def no_prediction(quantity: str, reason: str) -> Prediction:
    return Prediction(quantity, None, None, "outside every regime with a closed form", "no prediction", reason)
