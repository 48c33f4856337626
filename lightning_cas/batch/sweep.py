"""Sweeps: a spec's jobs run on an executor into a results directory, reusing what is stored.

The pieces live in their own modules (spec parsing in :mod:`~lightning_cas.batch.spec`, records and
locks in :mod:`~lightning_cas.batch.store`, the job function and executors in
:mod:`~lightning_cas.batch.executors`, make rules in :mod:`~lightning_cas.batch.makerules`); this
module is the loop that ties them together. Their public names are re-exported here.
"""

from __future__ import annotations

import os
import socket
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterable

from lightning_cas.batch.executors import DaskExecutor, LocalExecutor, make_executor, run_job
from lightning_cas.batch.makerules import make_rules
from lightning_cas.batch.spec import METHODS, M2_METHODS, SPEC_KEYS, TOP_KEYS, Job, Sweep, load_spec, parse_spec
from lightning_cas.batch.store import (CSV_COLUMNS, CSV_NAME, JSONL_NAME, LOCK_REFRESH_S, RECORD_VERSION, STATUSES,
                                       JobResult, ResultStore, csv_row, load_record, record_checksum,
                                       verify_record)
from lightning_cas.core.checks import string_sequence
from lightning_cas.errors import InputError
from lightning_cas.options import resolve

__all__ = ["CSV_COLUMNS", "CSV_NAME", "JSONL_NAME", "DaskExecutor", "Job", "JobResult", "LocalExecutor",
           "METHODS", "M2_METHODS", "RECORD_VERSION", "ResultStore", "SPEC_KEYS", "STATUSES", "Sweep",
           "SweepSummary", "TOP_KEYS", "csv_row", "load_record", "load_spec", "make_executor", "make_rules",
           "parse_spec", "record_checksum", "run_job", "run_sweep", "verify_record"]



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

    def count(self, rec: JobResult) -> None:
        setattr(self, rec.status, getattr(self, rec.status) + 1)
        if rec.agreement == "agree":
            self.agree += 1
        elif rec.agreement == "disagree":
            self.disagree += 1
        elif rec.agreement == "defect":
            self.defect += 1
        elif rec.agreement == "no prediction":
            self.no_prediction += 1

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("labels", "broken_locks")}


def run_sweep(sweep: Sweep, out: str | os.PathLike, *, executor: str = "local", jobs: int = 1,
              scheduler: str | None = None, force: bool = False, retry_failed: bool = False,
              timeout: float | None = None, only: Iterable[str] | None = None, aggregate: bool = True,
              m2: str | None = None, progress: Callable[[int, int, str], None] | None = None,
              spec_name: str = "", poll_s: float = 0.2) -> SweepSummary:
    """Run every job of ``sweep`` not already stored in ``out``; return the counts.

    ``timeout`` overrides the spec's per-job limit; ``only`` restricts to the given labels (what
    the generated make rules use); ``force`` recomputes stored results; ``retry_failed`` redoes
    stored timeouts/errors.
    """
    started = time.perf_counter()
    store = ResultStore(out)
    todo = list(sweep.jobs)
    if only is not None:
        wanted = list(only)
        known = {j.label for j in todo}
        missing = [w for w in wanted if w not in known]
        if missing:
            raise InputError(f"--only names a job that the spec does not contain: {missing[0]}.")
        todo = [j for j in todo if j.label in set(wanted)]
    if timeout is not None:
        todo = [Job(j.architecture, j.method, j.seed, timeout) for j in todo]
    summary = SweepSummary(spec_name, str(store.root), executor, jobs=len(todo),
                           mismatched_skipped=sweep.mismatched, duplicates_skipped=sweep.duplicates)

    def reusable(job: Job) -> JobResult | None:
        if force:
            return None
        rec = store.load(job.label)
        if rec is not None and retry_failed and rec.status != "ok":
            return None
        return rec

    done = 0

    def finished(rec, label: str) -> None:
        """Count a job's result (computed, cached or another sweep's) and advance the progress bar."""
        nonlocal done
        summary.count(rec)
        done += 1
        if progress:
            progress(done, len(todo), label)

    pending: list[Job] = []
    for job in todo:
        rec = reusable(job)
        if rec is not None:
            summary.cached += 1
            finished(rec, job.label)
        else:
            pending.append(job)

    forced = set(j.label for j in pending) if force else set()
    ex = make_executor(executor, jobs, scheduler) if pending else None
    summary.scheduler = getattr(ex, "address", None)
    queue, waiting, running = deque(pending), [], {}
    capacity = max(1, jobs)
    refreshed = time.monotonic()
    try:
        while queue or waiting or running:
            # a job is locked when it starts, never before: a killed sweep leaves at most `jobs` locks
            while queue and len(running) < capacity:
                job = queue.popleft()
                if not store.claim(job.label):
                    waiting.append(job)
                    continue
                rec = None if job.label in forced else reusable(job)  # finished by another sweep meanwhile?
                if rec is not None:
                    store.release(job.label)
                    summary.cached += 1
                    finished(rec, job.label)
                    continue
                running[ex.submit(job, m2)] = job
            for fut in (ex.wait_some(list(running), min(LOCK_REFRESH_S, 5.0)) if running else ()):
                job = running.pop(fut)
                try:
                    rec = ex.outcome(fut)
                except Exception as exc:  # the worker itself died (crash, killed, lost)
                    rec = JobResult(job.label, job.to_dict(), "error",
                                    f"the worker running this job failed ({type(exc).__name__}: {exc}).",
                                    None, None, "not computed", "not computed", 0.0, socket.gethostname())
                try:
                    rec = store.save(rec)
                finally:
                    store.release(job.label)
                summary.ran += 1
                summary.labels.append(job.label)
                finished(rec, job.label)
            if time.monotonic() - refreshed > LOCK_REFRESH_S:
                store.refresh(j.label for j in running.values())
                refreshed = time.monotonic()
            # jobs another sweep holds: wait for its result, or take over when its lock goes stale
            still = []
            for job in waiting:
                state = store.lock_state(job.label)
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
    finally:
        if ex is not None:
            ex.close()
        summary.stale_locks_broken = len(store.broken)
        summary.broken_locks = [f"{label}: {reason}" for label, reason in store.broken]
    if aggregate:
        csv_path, jsonl_path = store.write_aggregates()
        summary.csv, summary.jsonl = str(csv_path), str(jsonl_path)
    summary.elapsed_s = round(time.perf_counter() - started, 3)
    return summary


def sweep(spec, *, out: str | os.PathLike, executor: str = "local", jobs: int = 1, timeout: float | None = None,
          m2: str | None = None, force: bool = False, retry_failed: bool = False, only=None,
          scheduler: str | None = None, aggregate: bool = True):
    """Run a sweep (a spec file path, or a parsed ``Sweep``) into the results directory ``out``.

    ``timeout`` overrides every job's own limit. Returns the
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
    return run_sweep(spec, out, executor=executor, jobs=opts.jobs, scheduler=scheduler, force=bool(force),
                           retry_failed=bool(retry_failed), timeout=opts.timeout, only=only,
                           aggregate=bool(aggregate), m2=opts.m2, spec_name=name)
