"""Sweeps: a spec's jobs run on an executor into a results directory, reusing what is stored.

The pieces live in their own modules (spec parsing in :mod:`~lightning_cas.batch.spec`, records in
:mod:`~lightning_cas.batch.records`, the signed store in :mod:`~lightning_cas.batch.store`, locks in
:mod:`~lightning_cas.batch.locks`, the job function and executors in
:mod:`~lightning_cas.batch.executors`, make rules in :mod:`~lightning_cas.batch.makerules`); this
module is the loop that ties them together. Their main public names are re-exported here.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections import deque
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

from lightning_cas.batch.executors import DaskExecutor, LocalExecutor, admit, make_executor, run_job
from lightning_cas.batch.locks import LOCK_REFRESH_S
from lightning_cas.batch.makerules import make_rules
from lightning_cas.batch.records import RECORD_VERSION, STATUSES, JobResult, Origin, Recheck, Status, failed
from lightning_cas.batch.spec import M2_METHODS, METHODS, SPEC_KEYS, TOP_KEYS, Job, Sweep, load_spec, parse_spec
from lightning_cas.batch.store import ResultStore, load_record, record_checksum, verify_record
from lightning_cas.batch.tables import CSV_COLUMNS, CSV_NAME, JSONL_NAME
from lightning_cas.core.checks import string_sequence
from lightning_cas.core.verdict import Verdict
from lightning_cas.errors import InputError
from lightning_cas.options import resolve
from lightning_cas.results.display import printable

__all__ = [
    "CSV_COLUMNS",
    "CSV_NAME",
    "JSONL_NAME",
    "DaskExecutor",
    "Job",
    "JobResult",
    "LocalExecutor",
    "METHODS",
    "M2_METHODS",
    "RECORD_VERSION",
    "ResultStore",
    "SPEC_KEYS",
    "STATUSES",
    "Sweep",
    "SweepSummary",
    "TOP_KEYS",
    "load_record",
    "load_spec",
    "make_executor",
    "make_rules",
    "parse_spec",
    "record_checksum",
    "run_job",
    "run_sweep",
    "verify_record",
]


@dataclass
class SweepSummary:
    """Counts for one sweep invocation (printed as one JSON line)."""

    spec: str
    out: str
    executor: str
    jobs: int = 0
    ran: int = 0
    cached: int = 0
    ok: int = 0
    timeout: int = 0
    error: int = 0
    agree: int = 0
    disagree: int = 0
    defect: int = 0  # below an upper bound (several heads): a finding, not a disagreement
    no_prediction: int = 0
    claims: int = 0  # jobs whose record came from elsewhere, left as claims (``--recheck`` recomputes them)
    reproduced: int = 0  # claims recomputed here that came out the same
    differs: int = 0  # claims recomputed here that came out different
    refused: int = 0  # worker answers refused (impossible numbers, another job, not a record)
    mismatched_skipped: int = 0
    duplicates_skipped: int = 0
    waited_for_other_sweep: int = 0
    stale_locks_broken: int = 0
    scheduler: str | None = None
    elapsed_s: float = 0.0
    csv: str | None = None
    jsonl: str | None = None
    labels: list = field(default_factory=list)
    broken_locks: list = field(default_factory=list)  # "label: reason", for the warnings
    notes: list = field(default_factory=list)  # "label: what happened", for the warnings (claims, refusals)

    def count(self, rec: JobResult) -> None:
        setattr(self, rec.status, getattr(self, rec.status) + 1)
        name = {
            Verdict.AGREE: "agree",
            Verdict.DISAGREE: "disagree",
            Verdict.DEFECT: "defect",
            Verdict.NO_PREDICTION: "no_prediction",
        }.get(rec.agreement)
        if name:
            setattr(self, name, getattr(self, name) + 1)

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("labels", "broken_locks", "notes")}


def recheck_of(claim: JobResult, rec: JobResult) -> Recheck:
    """How a recomputation stands against the claim it replaces: reproduced when it ended the same
    way with the same dimension."""
    got = None if rec.result is None else rec.result.dimension
    said = None if claim.result is None else claim.result.dimension
    return Recheck(claim.status, said, claim.host, claim.signer, claim.status == rec.status and said == got)


def run_sweep(
    sweep: Sweep,
    out: str | os.PathLike,
    *,
    executor: str = "local",
    jobs: int = 1,
    scheduler: str | None = None,
    force: bool = False,
    retry_failed: bool = False,
    recheck: bool = False,
    timeout: float | None = None,
    only: Iterable[str] | None = None,
    aggregate: bool = True,
    m2: str | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    spec_name: str = "",
    poll_s: float = 0.2,
) -> SweepSummary:
    """Run every job of ``sweep`` not already stored in ``out``; return the counts.

    ``timeout`` overrides the spec's per-job limit; ``only`` restricts to the given labels (what
    the generated make rules use); ``force`` recomputes stored results; ``retry_failed`` redoes
    stored timeouts/errors. A job whose record came from elsewhere (a claim: not signed with this
    user's key) is left as it is, unless ``recheck`` (or ``force``) recomputes it; the new record
    then says whether the claim was reproduced.
    """
    started = time.perf_counter()
    store = ResultStore(out)
    todo = list(sweep.jobs)
    if only is not None:
        if isinstance(only, (str, bytes)):
            raise InputError("only must be a list of job labels, not one string.")
        wanted = list(only)
        known = {j.label for j in todo}
        missing = [w for w in wanted if w not in known]
        if missing:
            raise InputError(f"--only names a job that the spec does not contain: {printable(missing[0])}.")
        todo = [j for j in todo if j.label in set(wanted)]
    if timeout is not None:
        todo = [Job(j.architecture, j.method, j.seed, timeout) for j in todo]
    summary = SweepSummary(
        spec_name,
        str(store.root),
        executor,
        jobs=len(todo),
        mismatched_skipped=sweep.mismatched,
        duplicates_skipped=sweep.duplicates,
    )
    claims: dict[str, JobResult] = {}  # label -> the claim a recomputation will be compared with

    def stored(job: Job) -> tuple[str, JobResult | None]:
        """("reuse", record), ("claim", record) to leave as it is, or ("run", claim or None)."""
        check = store.check(job.label)
        if check.record is not None and check.status == Origin.CLAIM:
            if force or recheck:
                claims[job.label] = check.record
                return "run", check.record
            return "claim", check.record
        rec = check.record if check.trusted else None
        if rec is None or force or (retry_failed and rec.status is not Status.OK):
            return "run", None
        return "reuse", rec

    done = 0

    def finished(rec, label: str) -> None:
        """Count a job's result (computed, cached or another sweep's) and advance the progress bar."""
        nonlocal done
        summary.count(rec)
        done += 1
        if progress:
            progress(done, len(todo), label)

    def settled(what: str, rec: JobResult, label: str) -> None:
        """A job not run: this user's stored result (counted), or a claim left as it is (not counted
        as a result: its numbers are someone else's)."""
        nonlocal done
        if what == "reuse":
            summary.cached += 1
            finished(rec, label)
            return
        summary.claims += 1
        done += 1
        if progress:
            progress(done, len(todo), label)

    pending: list[Job] = []
    for job in todo:
        what, rec = stored(job)
        if what == "run":
            pending.append(job)
        else:
            settled(what, rec, job.label)

    forced = set(j.label for j in pending) if force else set()
    ex = make_executor(executor, jobs, scheduler) if pending else None
    summary.scheduler = getattr(ex, "address", None)
    queue, waiting, running = deque(pending), [], {}
    capacity = max(1, jobs)
    refreshed = time.monotonic()
    host = socket.gethostname()
    stopped: BaseException | None = None
    try:
        while queue or waiting or running:
            # a job is locked when it starts, never before: a killed sweep leaves at most `jobs` locks
            while queue and len(running) < capacity:
                job = queue.popleft()
                if not store.locks.claim(job.label):
                    waiting.append(job)
                    continue
                what, rec = ("run", None) if job.label in forced else stored(job)  # done meanwhile by another sweep?
                if what != "run":
                    store.locks.release(job.label)
                    settled(what, rec, job.label)
                    continue
                running[ex.submit(job, m2)] = job
            for fut in ex.wait_some(list(running), min(LOCK_REFRESH_S, 5.0)) if running else ():
                job = running.pop(fut)
                try:
                    rec = admit(job, ex.outcome(fut), host)
                except BrokenProcessPool:  # its worker was killed from outside: no answer, the job stays to do
                    store.locks.release(job.label)
                    summary.notes.append(f"{job.label}: its worker was killed; the next sweep runs it")
                    continue
                except Exception as exc:  # the worker itself failed (a lost Dask worker)
                    rec = failed(
                        job, Status.ERROR, f"the worker running this job failed ({type(exc).__name__}: {exc}).", host
                    )
                if rec.message and rec.message.startswith("the worker's answer was refused"):
                    summary.refused += 1
                    summary.notes.append(f"{job.label}: {rec.message}")
                claim = claims.pop(job.label, None)
                if claim is not None:
                    rec = replace(rec, recheck=recheck_of(claim, rec))
                    if rec.recheck.reproduced:
                        summary.reproduced += 1
                    else:
                        summary.differs += 1
                        summary.notes.append(
                            f"{job.label}: the claim ({claim.status}, dimension "
                            f"{rec.recheck.dimension}, from {claim.host}) was not reproduced "
                            f"({rec.status}, dimension "
                            f"{None if rec.result is None else rec.result.dimension})"
                        )
                try:
                    rec = store.save(rec)
                finally:
                    store.locks.release(job.label)
                summary.ran += 1
                summary.labels.append(job.label)
                finished(rec, job.label)
            if time.monotonic() - refreshed > LOCK_REFRESH_S:
                store.locks.refresh(j.label for j in running.values())
                refreshed = time.monotonic()
            # jobs another sweep holds: wait for its result, or take over when its lock goes stale
            still = []
            for job in waiting:
                state = store.locks.state(job.label)
                if state.status == "held":
                    still.append(job)
                    continue
                rec = store.load(job.label)
                if rec is not None:
                    summary.waited_for_other_sweep += 1
                    finished(rec, job.label)
                else:
                    queue.append(job)  # claim() breaks the stale lock and records why
            waiting = still
            if waiting and not queue and not running:
                time.sleep(poll_s)
    except BaseException as exc:  # SIGTERM's exit, Ctrl-C, a failed write: the workers end now, no lock stays
        stopped = exc
        raise
    finally:
        if ex is not None:
            ex.close(now=stopped is not None)
        for job in running.values():
            store.locks.release(job.label)
        if isinstance(stopped, (SystemExit, KeyboardInterrupt)) and aggregate:
            with contextlib.suppress(Exception):  # the tables of what finished, if they can be written
                store.write_aggregates()
        summary.stale_locks_broken = len(store.locks.broken)
        summary.broken_locks = [f"{label}: {reason}" for label, reason in store.locks.broken]
    if summary.claims:
        summary.notes.append(
            f"{summary.claims} job(s) hold records from elsewhere (not signed with your record "
            "key), left as claims; --recheck recomputes them"
        )
    if aggregate:
        csv_path, jsonl_path = store.write_aggregates()
        summary.csv, summary.jsonl = str(csv_path), str(jsonl_path)
    summary.elapsed_s = round(time.perf_counter() - started, 3)
    return summary


def sweep(
    spec,
    *,
    out: str | os.PathLike,
    executor: str = "local",
    jobs: int = 1,
    timeout: float | None = None,
    m2: str | None = None,
    force: bool = False,
    retry_failed: bool = False,
    recheck: bool = False,
    only=None,
    scheduler: str | None = None,
    aggregate: bool = True,
):
    """Run a sweep (a spec file path, or a parsed ``Sweep``) into the results directory ``out``.

    ``timeout`` overrides every job's own limit; ``recheck`` recomputes the jobs whose records came
    from elsewhere (claims) and says which were reproduced. Returns the
    ``SweepSummary`` (counts of ok / timeout / error and agreement with the theory).
    """
    opts = resolve("sweep", None, timeout=timeout, m2=m2, jobs=jobs)
    if isinstance(spec, (str, os.PathLike)):
        name = os.fspath(spec)
        spec = load_spec(spec)
    elif isinstance(spec, Sweep):
        name = "<spec>"
    else:
        raise InputError(f"sweep() needs a spec file path or a Sweep, got {type(spec).__name__}.")
    if not isinstance(out, (str, os.PathLike)) or not os.fspath(out):
        raise InputError(f"out must be a directory path, got {out!r}.")
    if executor not in ("local", "dask"):
        raise InputError(f"executor must be local or dask, got {executor!r}.")
    if only is not None:
        only = string_sequence(only, "only")
    return run_sweep(
        spec,
        out,
        executor=executor,
        jobs=opts.jobs,
        scheduler=scheduler,
        force=bool(force),
        retry_failed=bool(retry_failed),
        recheck=bool(recheck),
        timeout=opts.timeout,
        only=only,
        aggregate=bool(aggregate),
        m2=opts.macaulay2.binary,
        spec_name=name,
    )
