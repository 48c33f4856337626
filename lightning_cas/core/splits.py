"""The defect split as plain data: what ``core.defects`` computes and a dimension result carries.

parameters - dimension = the named group's orbit + the causes' counts + what no mechanism names. The
split says it in words through ``lightning_cas.results.dimension.explained_lines``.
"""

from __future__ import annotations

from dataclasses import dataclass

from lightning_cas.core.data import Data
from lightning_cas.errors import ResultError


@dataclass(frozen=True)
class Cause(Data):
    """Kernel directions of one mechanism in one block (None: the whole network) and how many."""

    block: int | None
    mechanism: str  # filling, own defect, bottleneck, invisibility, secant defect
    count: int
    detail: str = ""


@dataclass(frozen=True)
class Explained(Data):
    """parameters - dimension = named_group + sum of the causes' counts + unexplained (core.defects)."""

    named_group: int  # the named group's orbit (rank of its tangents at the point)
    causes: tuple[Cause, ...]
    unexplained: int
    prime: int | None = None
    notes: tuple[str, ...] = ()
    proved_bound: str | None = None  # a proved upper bound the dimension meets, in words (the split's count of it)

    def __post_init__(self):
        Data.__post_init__(self)
        if self.unexplained < 0 or self.named_group < 0 or any(c.count <= 0 for c in self.causes):
            raise ResultError(
                f"a defect split with negative or empty parts: named {self.named_group}, unexplained {self.unexplained}"
            )

    @property
    def total(self) -> int:
        return self.named_group + sum(c.count for c in self.causes) + self.unexplained
