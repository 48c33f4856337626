"""Job records: what one job of a sweep produced, typed, with the JSON versions it was stored in.

A record is data that crossed a boundary (from a worker process, a Dask worker on another host,
or a file in a results directory someone may have edited), so:

* its numbers are checked where they enter (:func:`check_numbers`): a dimension between 0 and
  min(parameters, ambient dimension), the parameter and ambient counts of the job's own
  architecture, a failure bound in [0, 1);
* what it says about the theory (``predicted``, ``prediction_status``, ``agreement``: a
  ``core.verdict.Verdict``, *not computed* without a dimension) is never believed: :func:`judged`
  recomputes it with :func:`lightning_cas.core.verdict.judge`, and every reader (sweep, report,
  notebook) calls it.

Versions: 2 carried a plain sha256 (it proves nothing), 3 an HMAC under the user's key, with the
implicit ideal's degree and spans as free-text notes; 4 (this one) has those numbers as the typed
``DimensionResult.implicit``, the signer's key id, and the re-check of a claim it replaced.
:func:`record_from_dict` reads all three.
"""

from __future__ import annotations

import enum
import functools
import math
import re
from dataclasses import dataclass, replace

from lightning_cas import api
from lightning_cas.batch.spec import Job
from lightning_cas.core.network import Network
from lightning_cas.core.verdict import Verdict, judge
from lightning_cas.errors import InputError, ResultError, TooLargeError
from lightning_cas.results.contract import JsonResult, Record
from lightning_cas.results.dimension import DimensionResult, ImplicitSummary, check_dimension_numbers

RECORD_VERSION = 4
READABLE_VERSIONS = (2, 3, 4)


class Status(enum.StrEnum):
    """How a job ended: a result, its time limit, or an error (with the message)."""

    OK = "ok"
    TIMEOUT = "timeout"
    ERROR = "error"


class Origin(enum.StrEnum):
    """Where a record's numbers come from, as far as this user can tell."""

    HERE = "here"  # signed with this user's record key: computed by this user's sweeps
    CLAIM = "claim"  # well-formed, but not signed by this key: someone else's numbers


STATUSES = tuple(s.value for s in Status)


@dataclass(frozen=True)
class Recheck(Record):
    """A claim this record replaced by recomputing it, and whether it was reproduced."""

    status: Status
    dimension: int | None
    host: str
    signer: str | None
    reproduced: bool


@dataclass(frozen=True)
class JobResult(JsonResult):
    """What one job produced: a DimensionResult when ``status`` is ok, else the message; and the
    prediction with the verdict (recomputed by :func:`judged` whenever a record is read)."""

    label: str
    job: Job
    status: Status
    message: str | None
    result: DimensionResult | None
    predicted: int | None
    prediction_status: str
    agreement: Verdict
    elapsed_s: float
    host: str
    script: str | None = None  # the M2 script (path in the results dir once stored)
    script_text: str | None = None  # carried from the worker to the coordinator, not stored
    version: int = RECORD_VERSION
    script_sha256: str | None = None  # of the stored script, so a swapped script file is detected
    signer: str | None = None  # key id of the record key that signed it (see store.key_id)
    recheck: Recheck | None = None

    def __post_init__(self):
        for name, kind in (("status", Status), ("agreement", Verdict)):
            value = getattr(self, name)
            try:
                object.__setattr__(self, name, kind(value))
            except ValueError:
                raise ValueError(f"{name} must be one of {', '.join(kind)}, got {value!r}") from None
        if not isinstance(self.job, Job):
            raise ValueError(f"job must be a Job, got {type(self.job).__name__}")
        if (self.status is Status.OK) != (self.result is not None):
            raise ValueError("a result is present exactly when the status is ok")
        if self.label != self.job.label:
            raise ValueError(f"the label {self.label!r} is not its job's ({self.job.label})")
        super().__post_init__()

    @property
    def architecture(self) -> Network:
        return self.job.architecture

    @property
    def method(self) -> str:
        """The method that computed it (the job's, with ``auto`` resolved when there is a result)."""
        return self.result.method if self.result is not None else self.job.method


def failed(
    job: Job,
    status: Status,
    message: str,
    host: str,
    elapsed_s: float = 0.0,
    script: str | None = None,
    script_text: str | None = None,
) -> JobResult:
    """The record of a job that produced no dimension."""
    return judged(
        JobResult(
            job.label, job, status, message, None, None, "", Verdict.NOT_COMPUTED, elapsed_s, host, script, script_text
        )
    )


# ---- numbers are checked where they enter -----------------------------------------------------


def check_numbers(rec: JobResult) -> None:
    """Refuse (InputError, one line) a record whose numbers cannot be true for its own job."""
    elapsed = rec.elapsed_s
    if isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)) or not 0 <= elapsed < math.inf:
        raise InputError(f"elapsed time {rec.elapsed_s!r} is not a duration")
    r = rec.result
    if r is None:
        return
    arch = rec.architecture
    if r.architecture != arch:
        raise InputError(f"its result is for {r.architecture.label()}, not for its job's {arch.label()}")
    if rec.job.method != "auto" and r.method != rec.job.method:
        raise InputError(f"its result was computed by {r.method}, not by its job's method {rec.job.method}")
    try:  # the result contract's own check: a worker's unpickled result never ran its constructor
        check_dimension_numbers(r)
    except ResultError as exc:
        raise InputError(str(exc).removeprefix("the DimensionResult's ")) from None
    ambient = arch.ambient_dimension  # None for softmax networks (not polynomial)
    s = r.implicit
    if s is not None and not (
        s.degree >= 1 and r.dimension <= s.linear_span <= (ambient or 0) and all(g >= 1 for g in s.generator_degrees)
    ):
        raise InputError(f"its implicit ideal's numbers (degree {s.degree}, span {s.linear_span}) are impossible")


@functools.lru_cache(maxsize=4096)
def _prediction(arch: Network):
    return api.predict(arch).dimension


def judged(rec: JobResult) -> JobResult:
    """``rec`` with its prediction and verdict recomputed here (whatever it said before); a network whose
    bounds would not fit in memory (a wide polynomial network's orbit rank) keeps its dimension, with no
    prediction (the sweep goes on)."""
    try:
        pred = _prediction(rec.architecture)
    except TooLargeError as exc:
        return replace(rec, predicted=None, prediction_status=f"not predicted: {exc}", agreement=Verdict.NO_PREDICTION)
    if rec.result is None:
        agreement = Verdict.NOT_COMPUTED
    else:
        agreement = judge(pred, rec.result.dimension).verdict
    return replace(rec, predicted=pred.value, prediction_status=pred.status, agreement=agreement)


# ---- JSON versions ----------------------------------------------------------------------------

_LEGACY_NOTES = {
    "degree": re.compile(r"^degree (\d+) "),
    "linear_span": re.compile(r"^(\d+) linearly independent coefficients$"),
    "generator_degrees": re.compile(r"^minimal generator degrees \[([\d, ]*)\]$"),
}


def legacy_implicit(notes) -> ImplicitSummary | None:
    """The implicit ideal's numbers from the notes an implicit result carried before version 4."""
    found = {}
    for note in notes:
        for key, pattern in _LEGACY_NOTES.items():
            m = pattern.match(note) if isinstance(note, str) else None
            if m:
                found[key] = m.group(1)
    if set(found) != set(_LEGACY_NOTES):
        return None
    degrees = tuple(int(v) for v in found["generator_degrees"].split(",") if v.strip())
    return ImplicitSummary(int(found["degree"]), int(found["linear_span"]), degrees)


def upgrade_result(result: DimensionResult) -> DimensionResult:
    """A DimensionResult written before ``implicit`` existed, with it filled from its notes."""
    if result.method != "implicit" or result.implicit is not None:
        return result
    summary = legacy_implicit(result.notes)
    return result if summary is None else replace(result, implicit=summary)


def record_from_dict(data: dict, judge: bool = True) -> JobResult:
    """A stored record of any readable version (InputError if it is not one), its numbers checked
    and its verdict recomputed (``judge=False`` only for readers that never look at the verdict:
    a prediction can take seconds for several heads)."""
    if not isinstance(data, dict) or data.get("kind") != "JobResult":
        raise InputError("not a lightning-cas job record")
    version = data.get("version")
    if version not in READABLE_VERSIONS:
        raise InputError(
            f"record version {version!r} is not one this lightning_cas reads ({', '.join(map(str, READABLE_VERSIONS))})"
        )
    body = {k: v for k, v in data.items() if k not in ("mac", "checksum")}
    rec = JobResult.from_dict(body)
    if rec.result is not None and version < 4:
        rec = replace(rec, result=upgrade_result(rec.result))
    check_numbers(rec)
    return judged(rec) if judge else rec
