"""Result objects: frozen, self-describing (method, certainty, seed, primes, versions, time),
and lossless through JSON.

``certainty`` is one of ``exact`` (symbolic, over QQ), ``probabilistic`` (exact arithmetic at
random points mod p: can only under-estimate, with a stated bound) and ``numeric`` (floating
point with a reported tolerance or gap).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields

from lightning_cas.core.architecture import Architecture

CERTAINTIES = ("exact", "probabilistic", "numeric")


def freeze(value):
    """Lists from JSON (and nested tuples) as the tuples the frozen dataclasses hold."""
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return {k: freeze(v) for k, v in value.items()}
    return value


def _thaw(value):
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    if isinstance(value, dict):
        return {k: _thaw(v) for k, v in value.items()}
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return value


class JsonResult:
    """Mixin: ``to_dict``/``from_dict``/``to_json``/``from_json`` for result dataclasses."""

    def to_dict(self) -> dict:
        data = {"kind": type(self).__name__}
        for f in fields(self):
            data[f.name] = _thaw(getattr(self, f.name))
        return data

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, data: dict):
        data = dict(data)
        data.pop("kind", None)
        names = {f.name for f in fields(cls)}
        kwargs = {k: (Architecture.from_dict(v) if k == "architecture" else freeze(v))
                  for k, v in data.items() if k in names}
        return cls(**kwargs)

    @classmethod
    def from_json(cls, text: str):
        return cls.from_dict(json.loads(text))


@dataclass(frozen=True)
class DimensionResult(JsonResult):
    """The dimension of the neurovariety of one architecture, and how it was obtained."""

    architecture: Architecture
    dimension: int
    parameters: int
    ambient_dimension: int
    method: str
    certainty: str
    seed: int | None
    elapsed_s: float
    m2_version: str | None = None
    primes: tuple[int, ...] = ()
    samples: int | None = None
    runs: tuple = ()  # one dict per repetition: prime, seed, rank, rows
    consistent: bool = True  # False when repetitions disagreed (never averaged away)
    failure_bound: float | None = None  # Schwartz-Zippel bound on under-estimating, per run
    script: str | None = None
    notes: tuple[str, ...] = ()

    def __post_init__(self):
        if self.certainty not in CERTAINTIES:
            raise ValueError(f"certainty must be one of {CERTAINTIES}")

    @property
    def fiber_dimension(self) -> int:
        return self.parameters - self.dimension


@dataclass(frozen=True)
class VerifyResult(JsonResult):
    """A computed dimension next to the theory's prediction."""

    architecture: Architecture
    computed: DimensionResult
    predicted: int | None
    prediction_status: str
    regime: str
    reason: str | None
    verdict: str  # "agree" | "disagree" | "defect" (below an upper bound, several heads) | "no prediction"
    message: str = ""
    details: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict):
        data = dict(data)
        data["computed"] = DimensionResult.from_dict(data["computed"])
        return super().from_dict(data)
