"""Where jobs run: the job function (pure, the same for every executor), a local process pool, Dask.

The job function :func:`run_job` is pure (job in, record out, never raises) so the local pool and
Dask run the very same code, and remote Dask workers need no shared filesystem: only the
coordinator writes files.

What comes back from a worker is an answer, not a result: :func:`admit` takes it apart and
rebuilds it, refuses impossible numbers or an answer to another job, keeps a script only when it
is what this coordinator renders for the job, and recomputes the verdict. Only then is it
signed (docs/security.md states the trust model of a cluster).
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import re
import signal
import socket
import time
import uuid
from dataclasses import replace

from lightning_cas import api
from lightning_cas.batch.records import JobResult, Status, check_numbers, failed, judged
from lightning_cas.batch.spec import Job
from lightning_cas.batch.store import MAX_SCRIPT_BYTES
from lightning_cas.core.verdict import Verdict
from lightning_cas.errors import InputError, LightningError, TimeLimitError
from lightning_cas.results.display import printable
from lightning_cas.system.deadline import die_with_parent, exit_on_terminate
from lightning_cas.system.files import read_text
from lightning_cas.system.processes import kill_runs


def run_job(job: Job, m2: str | None = None, judge: bool = True) -> JobResult:
    """Compute one job; never raises (status records what went wrong). ``judge=False`` leaves the
    prediction and verdict out (the executors ask that: the coordinator judges every answer itself,
    so a worker need not spend the prediction's time too).

    The job's timeout is the verb's own deadline (lightning_cas.system.deadline): Macaulay2 runs get
    what is left of it, Python work is stopped by its alarm in a process's main thread (the local
    pool) and by its checks and killable children in any thread (Dask).
    """
    start = time.perf_counter()
    status, message, result, script = "ok", None, None, None
    try:
        result = api.dimension(job.architecture, method=job.method, seed=job.seed, timeout=job.timeout, m2=m2)
        script = result.script
    except TimeLimitError as exc:  # Macaulay2's limit or the verb's own deadline (Python work)
        status, message, script = "timeout", str(exc), getattr(exc, "script", None)
    except LightningError as exc:
        status, message = "error", str(exc)
        script = getattr(exc, "script", None)
    except Exception as exc:  # a bug in one job must not stop the sweep; record it plainly
        status, message = "error", f"internal error ({type(exc).__name__}: {exc})"
    elapsed = time.perf_counter() - start
    text = None
    if script:
        try:
            text = read_text(script, "script", max_bytes=MAX_SCRIPT_BYTES)
        except InputError:
            text = None
    rec = JobResult(
        job.label,
        job,
        Status(status),
        message,
        result,
        None,
        "",
        Verdict.NOT_COMPUTED,
        elapsed,
        socket.gethostname(),
        script,
        text,
    )
    return judged(rec) if judge else rec


def job_script(job: Job, rec: JobResult) -> str | None:
    """The Macaulay2 script lightning-cas renders for this job (None for Python methods)."""
    from lightning_cas.backends.m2 import M2_PRIME
    from lightning_cas.macaulay2.network import package_params
    from lightning_cas.macaulay2.render import render

    base = {**package_params(job.architecture), "charP": 0, "seed": job.seed, "columns": 1}
    if job.method == "jacobian":
        primes = rec.result.primes if rec.result is not None and rec.result.primes else (M2_PRIME,)
        return render("dimension_jacobian", **{**base, "charP": primes[0]})
    if job.method == "implicit":
        return render("dimension_implicit", **base, emitGenerators=0)
    return None


def admit(job: Job, answer, host: str) -> JobResult:
    """A worker's answer to ``job`` as a record this coordinator can sign: rebuilt from its JSON
    form (nothing of the worker's objects survives), its numbers checked against the job's own
    architecture, its script kept only if it is exactly what this coordinator renders for the job,
    and its verdict recomputed here. A refused answer becomes an error record saying why."""
    refusal = None
    if type(answer) is not JobResult:
        refusal = f"a {type(answer).__name__}, not a job record"
    else:
        try:
            rec = JobResult.from_dict(answer.to_dict())
            if rec.job != job:
                refusal = f"it answers the job {rec.label}, not this one"
            else:
                check_numbers(rec)
        except (LightningError, ValueError, TypeError, AttributeError) as exc:
            refusal = str(exc).rstrip(".") or type(exc).__name__
    if refusal is not None:
        return failed(job, Status.ERROR, f"the worker's answer was refused: {printable(refusal)}.", host)
    if rec.script_text is not None and rec.script_text != job_script(job, rec):
        rec = replace(rec, script=None, script_text=None)
    return judged(replace(rec, host=printable(rec.host)))


# ---- executors -------------------------------------------------------------------------------


STOP_GRACE_S = 5.0  # what a stopped sweep gives its workers to kill their Macaulay2 runs before SIGKILL


def _worker_start() -> None:
    """A pool worker dies with the sweep (SIGKILL when its parent dies, and its Macaulay2 with it), leaves
    Ctrl-C to the sweep (which stops it), and ends on SIGTERM through its cleanups (``_in_worker``)."""
    die_with_parent()
    signal.signal(signal.SIGINT, _ignore)  # a handler, not SIG_IGN: Macaulay2 would inherit SIG_IGN through exec
    exit_on_terminate()


def _ignore(_signum, _frame) -> None:
    pass


def _in_worker(job: Job, m2):
    """``run_job`` in a pool worker. SIGTERM's exit has come through the job's cleanups (a Macaulay2 or
    msolve run's process group killed) when it gets here: the worker ends at once, and its job is not
    answered (the sweep leaves it for the next run)."""
    try:
        return run_job(job, m2, False)
    except (SystemExit, KeyboardInterrupt):
        os._exit(143)


class LocalExecutor:
    """A process pool: each job in a worker process, so a crash or a runaway job costs one worker."""

    name = "local"

    def __init__(self, jobs: int = 1):
        self.jobs = max(1, jobs)
        self.pool = cf.ProcessPoolExecutor(max_workers=self.jobs, initializer=_worker_start)

    def submit(self, job: Job, m2):
        if getattr(self.pool, "_broken", False):  # a worker was killed from outside: a new pool for the rest
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = cf.ProcessPoolExecutor(max_workers=self.jobs, initializer=_worker_start)
        return self.pool.submit(_in_worker, job, m2)

    def as_completed(self, futures):
        return cf.as_completed(futures)

    @staticmethod
    def wait_some(futures, timeout: float):
        """The futures that finished within ``timeout`` seconds (possibly none)."""
        return cf.wait(futures, timeout=timeout, return_when=cf.FIRST_COMPLETED).done

    @staticmethod
    def outcome(future):
        return future.result()

    def close(self, now: bool = False):
        """Wait for the running jobs, or with ``now`` (the sweep was stopped) end the workers within
        seconds: SIGTERM, through which each kills its Macaulay2 runs, then SIGKILL."""
        if not now:
            self.pool.shutdown(wait=True, cancel_futures=True)
            return
        workers = list((getattr(self.pool, "_processes", None) or {}).values())  # no public handle on them
        for worker in workers:
            worker.terminate()
        end = time.monotonic() + STOP_GRACE_S
        for worker in workers:
            worker.join(max(end - time.monotonic(), 0.01))
        for worker in workers:
            if worker.is_alive():
                worker.kill()
                worker.join(1)
        self.pool.shutdown(wait=False, cancel_futures=True)


class DaskExecutor:
    """Dask distributed: a scheduler at ``address`` (or DASK_SCHEDULER_ADDRESS), else a local cluster."""

    name = "dask"

    def __init__(self, jobs: int = 1, address: str | None = None):
        address = check_scheduler(address or os.environ.get("DASK_SCHEDULER_ADDRESS") or None, inproc=True)
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise InputError(
                "the dask executor needs the optional 'distributed' package (pip install 'lightning_cas[dask]')."
            ) from None
        self.cluster = None
        self.address = address or "local cluster"
        try:
            if address:
                self.client = Client(address, timeout="20s")
            else:
                # threads in this process: M2 runs as subprocesses anyway, and startup stays fast
                self.cluster = LocalCluster(
                    n_workers=1, threads_per_worker=max(1, jobs), processes=False, dashboard_address=None
                )
                self.client = Client(self.cluster)
        except (OSError, ValueError, TimeoutError) as exc:
            raise InputError(
                f"cannot connect to the Dask scheduler {printable(address)}: {printable(str(exc).rstrip('.'))}."
            ) from None

    def submit(self, job: Job, m2):
        return self.client.submit(run_job, job, m2, False, pure=False, key=f"lcas-{job.label}-{uuid.uuid4().hex[:8]}")

    def as_completed(self, futures):
        from distributed import as_completed

        return as_completed(futures)

    @staticmethod
    def wait_some(futures, timeout: float):
        """The futures that finished within ``timeout`` seconds (possibly none)."""
        from distributed import wait

        try:
            wait(futures, timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            pass
        return [f for f in futures if f.done()]

    @staticmethod
    def outcome(future):
        return future.result()

    def close(self, now: bool = False):
        """With ``now`` (the sweep was stopped) the Macaulay2 and msolve runs of this process's own
        cluster are killed first: its jobs are threads, which the signal cannot reach."""
        if now and self.cluster is not None:
            kill_runs()
        self.client.close()
        if self.cluster is not None:
            if now:
                kill_runs()  # and what a job started while the client closed
            self.cluster.close()


_ADDRESS = re.compile(
    r"(?:(?:tcp|tls)://)?(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])"
    r":([0-9]{1,5})",
    re.ASCII,
)


def check_scheduler(address: str | None, inproc: bool = False) -> str | None:
    """A Dask scheduler address ``[tcp://|tls://]host:port``, or None (a local cluster). ``inproc``
    also lets through the ``inproc://`` address of a cluster in this very process (the Python API
    can be given one; a command line cannot reach it)."""
    if address is None:
        return None
    if inproc and isinstance(address, str) and address.startswith("inproc://"):
        return address
    m = _ADDRESS.fullmatch(address) if isinstance(address, str) else None
    if m is None or not 1 <= int(m.group(1)) <= 65535:
        raise InputError(f"the Dask scheduler address must look like tcp://host:8786, got {printable(repr(address))}.")
    return address


def make_executor(kind: str, jobs: int = 1, scheduler: str | None = None):
    if kind == "local":
        return LocalExecutor(jobs)
    if kind == "dask":
        return DaskExecutor(jobs, scheduler)
    raise InputError(f"executor must be local or dask, got {kind!r}.")
