"""Where jobs run: the job function (pure, the same for every executor), a local process pool, Dask.

The job function :func:`run_job` is pure (job in, record out, never raises) so the local pool and
Dask run the very same code, and remote Dask workers need no shared filesystem: only the
coordinator writes files.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import socket
import time
import uuid

from lightning_cas import api
from lightning_cas.batch.spec import Job
from lightning_cas.batch.store import MAX_SCRIPT_BYTES, JobResult
from lightning_cas.core.files import read_text
from lightning_cas.core.verdict import judge
from lightning_cas.errors import InputError, LightningError, TimeLimitError
from lightning_cas.macaulay2.runner import die_with_parent


def run_job(job: Job, m2: str | None = None) -> JobResult:
    """Compute one job; never raises (status records what went wrong).

    The job's timeout is the verb's own deadline (lightning_cas.core.deadline): Macaulay2 runs get
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
    pred = api.predict(job.architecture).dimension
    agreement = "not computed" if result is None else str(judge(pred, result.dimension).verdict)
    text = None
    if script:
        try:
            text = read_text(script, "script", max_bytes=MAX_SCRIPT_BYTES)
        except InputError:
            text = None
    return JobResult(job.label, job.to_dict(), status, message, result, pred.value, pred.status, agreement,
                     elapsed, socket.gethostname(), script, text)



# ---- executors -------------------------------------------------------------------------------

class LocalExecutor:
    """A process pool: each job in a worker process, so a crash or a runaway job costs one worker."""

    name = "local"

    def __init__(self, jobs: int = 1):
        # workers die with the sweep (and their M2 with them): a killed sweep leaves nothing running
        self.pool = cf.ProcessPoolExecutor(max_workers=max(1, jobs), initializer=die_with_parent)

    def submit(self, job: Job, m2):
        return self.pool.submit(run_job, job, m2)

    def as_completed(self, futures):
        return cf.as_completed(futures)

    @staticmethod
    def wait_some(futures, timeout: float):
        """The futures that finished within ``timeout`` seconds (possibly none)."""
        return cf.wait(futures, timeout=timeout, return_when=cf.FIRST_COMPLETED).done

    @staticmethod
    def outcome(future):
        return future.result()

    def close(self):
        self.pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """Dask distributed: a scheduler at ``address`` (or DASK_SCHEDULER_ADDRESS), else a local cluster."""

    name = "dask"

    def __init__(self, jobs: int = 1, address: str | None = None):
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise InputError("the dask executor needs the optional 'distributed' package "
                             "(pip install 'lightning_cas[dask]').") from None
        address = address or os.environ.get("DASK_SCHEDULER_ADDRESS")
        self.cluster = None
        self.address = address or "local cluster"
        try:
            if address:
                self.client = Client(address, timeout="20s")
            else:
                # threads in this process: M2 runs as subprocesses anyway, and startup stays fast
                self.cluster = LocalCluster(n_workers=1, threads_per_worker=max(1, jobs), processes=False,
                                            dashboard_address=None)
                self.client = Client(self.cluster)
        except OSError as exc:
            raise InputError(f"cannot connect to the Dask scheduler {address}: {exc}.") from None

    def submit(self, job: Job, m2):
        return self.client.submit(run_job, job, m2, pure=False, key=f"lcas-{job.label}-{uuid.uuid4().hex[:8]}")

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

    def close(self):
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def make_executor(kind: str, jobs: int = 1, scheduler: str | None = None):
    if kind == "local":
        return LocalExecutor(jobs)
    if kind == "dask":
        return DaskExecutor(jobs, scheduler)
    raise InputError(f"executor must be local or dask, got {kind!r}.")


