"""Sweeps: a TOML spec expanded into jobs, run on a local process pool or Dask, cached on disk.

Why the pieces look the way they do:

* One JSON file per job, written to a temp file and ``os.replace``d, so a killed run never
  leaves half a file; a file that does not parse back is treated as missing and recomputed.
* The job function :func:`run_job` is pure (job in, record out, never raises) so the local pool
  and Dask run the very same code, and remote Dask workers need no shared filesystem: only the
  coordinator writes files.
* Before running a job the coordinator claims it with an ``O_EXCL`` lock file, so two sweeps into
  one directory never compute (or write) the same job twice; a lock whose owner process died is
  taken over.
"""

from __future__ import annotations

import concurrent.futures as cf
import csv
import hashlib
import io
import itertools
import json
import os
import re
import signal
import socket
import threading
import time
import tomllib
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from lightning_cas.core.architecture import Architecture, check_seed, check_timeout
from lightning_cas.errors import InputError, LightningError, M2TimeoutError
from lightning_cas.core.files import atomic_write_text
from lightning_cas.macaulay2.runner import die_with_parent
from lightning_cas.results import DimensionResult, JsonResult

METHODS = ("auto", "modp", "jacobian", "implicit", "numeric")
M2_METHODS = ("jacobian", "implicit")
STATUSES = ("ok", "timeout", "error")
SPEC_KEYS = ("widths", "attention", "tokens", "normalization", "method", "seed", "timeout")
TOP_KEYS = ("name", "timeout", "grid", "architecture")
RECORD_VERSION = 2  # 2: records carry a checksum of their content
CSV_NAME, JSONL_NAME = "results.csv", "results.jsonl"
CSV_COLUMNS = ("label", "status", "widths", "attention", "tokens", "normalization", "method", "seed",
               "parameters", "dimension", "predicted", "agreement", "certainty", "elapsed_s", "message")


# ---- jobs and spec ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Job:
    """One dimension computation: an architecture, a method, a seed and a time limit."""

    architecture: Architecture
    method: str = "auto"
    seed: int = 0
    timeout: float | None = None

    @property
    def label(self) -> str:
        """File-name-safe and unique per (architecture, method, seed): the cache key."""
        return f"{self.architecture.label()}_{self.method}_s{self.seed}"

    def to_dict(self) -> dict:
        return {"architecture": self.architecture.to_dict(), "method": self.method, "seed": self.seed,
                "timeout": self.timeout}

    @classmethod
    def from_dict(cls, data: dict) -> "Job":
        return cls(Architecture.from_dict(data["architecture"]), data["method"], data["seed"], data.get("timeout"))


@dataclass(frozen=True)
class Sweep:
    """An expanded spec: its jobs in order, and how many grid pairs were skipped as mismatched."""

    name: str
    jobs: tuple[Job, ...]
    mismatched: int = 0
    duplicates: int = 0


class _Lines:
    """Finds the line of a key in TOML text, so spec errors can point at it (tomllib gives no positions)."""

    _header = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-]+)\s*\]\]?")
    _key = re.compile(r"^\s*([A-Za-z0-9_\-]+)\s*=")

    def __init__(self, text: str):
        self.where: dict[tuple, int] = {}
        table, counts = (), {}
        for n, line in enumerate(text.splitlines(), start=1):
            m = self._header.match(line)
            if m:
                name = m.group(2)
                if m.group(1) == "[[":
                    counts[name] = counts.get(name, -1) + 1
                    table = (name, counts[name])
                else:
                    table = (name,)
                self.where.setdefault(table, n)
                continue
            m = self._key.match(line)
            if m:
                self.where.setdefault(table + (m.group(1),), n)

    def line(self, *path) -> int | None:
        while path:
            if path in self.where:
                return self.where[path]
            path = path[:-1]
        return None


def _refuse(source: str, lines: _Lines, path: tuple, message: str):
    n = lines.line(*path)
    where = f"{source} line {n}" if n else source
    raise InputError(f"{where}: {message}")


def _section_name(path: tuple) -> str:
    if path[0] == "grid":
        return "[grid]" if len(path) == 1 or not isinstance(path[1], int) else f"[[grid]] #{path[1] + 1}"
    if path[0] == "architecture":
        return f"[[architecture]] #{path[1] + 1}"
    return "top level"


def _check_int_list(value, what: str) -> tuple[int, ...]:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",")]
    if not isinstance(value, list) or not value:
        raise ValueError(f"{what} must be a non-empty list of integers such as [3, 3, 3], got {value!r}")
    out = []
    for v in value:
        if isinstance(v, str) and v.lstrip("+-").isdigit():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise ValueError(f"{what} must contain positive integers only, got {v!r}")
        out.append(v)
    return tuple(out)


def _check_value(key: str, value):
    """Validate one single value of a spec key (raise ValueError with a clause, caller adds where)."""
    if key in ("widths", "attention"):
        return _check_int_list(value, key)
    if key == "tokens":
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"tokens must be a positive integer, got {value!r}")
        return value
    if key == "seed":
        return check_seed(value)
    if key == "method":
        if value not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {value!r}")
        return value
    if key == "normalization":
        if value not in ("none", "softmax"):
            raise ValueError(f"normalization must be none or softmax, got {value!r}")
        return value
    if key == "timeout":
        if value is None:
            raise ValueError("timeout must be a positive number of seconds, got None")
        return check_timeout(value)
    raise ValueError(f"unknown key {key!r} (expected one of {', '.join(SPEC_KEYS)})")


def _architecture(source, lines, path, widths, attention, tokens, normalization) -> Architecture:
    try:
        return Architecture(widths, attention, tokens, normalization)
    except InputError as exc:
        _refuse(source, lines, path, f"{_section_name(path)} is not a valid architecture: {str(exc).rstrip('.')}.")


def parse_spec(text: str, source: str = "<spec>") -> Sweep:
    """Expand a sweep spec (TOML text) into jobs; any malformed part is refused with its line."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        what = re.sub(r"\s*\(at (line|end of document).*\)", "", str(exc)).rstrip(".")
        where = f"{source} line {m.group(1)} column {m.group(2)}" if m else source
        if not m and "end of document" in str(exc):
            where = f"{source} line {max(1, len(text.splitlines()))} (end of file)"
        raise InputError(f"{where}: not valid TOML: {what[:1].lower() + what[1:]}.") from None
    lines = _Lines(text)
    for key in data:
        if key not in TOP_KEYS:
            _refuse(source, lines, (key,), f"unknown top-level key {key!r} (expected {', '.join(TOP_KEYS)}).")
    name = data.get("name", Path(source).stem)
    if not isinstance(name, str):
        _refuse(source, lines, ("name",), f"name must be a string, got {name!r}.")
    default_timeout = None
    if "timeout" in data:
        try:
            default_timeout = _check_value("timeout", data["timeout"])
        except ValueError as exc:
            _refuse(source, lines, ("timeout",), f"{str(exc).rstrip('.')}.")
    grids = data.get("grid", [])
    if isinstance(grids, dict):
        grids = [((("grid",)), grids)]
    elif isinstance(grids, list):
        grids = [(("grid", i), g) for i, g in enumerate(grids)]
    else:
        _refuse(source, lines, ("grid",), "grid must be a table [grid] or tables [[grid]].")
    entries = data.get("architecture", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        _refuse(source, lines, ("architecture",), "architecture must be given as [[architecture]] tables.")
    if not grids and not entries:
        raise InputError(f"{source} has neither a [grid] table nor [[architecture]] entries, so there is nothing to run.")

    jobs: list[Job] = []
    mismatched = 0
    for path, grid in grids:
        if not isinstance(grid, dict):
            _refuse(source, lines, path, f"{_section_name(path)} must be a table.")
        values = {}
        for key, raw in grid.items():
            if key not in SPEC_KEYS:
                _refuse(source, lines, path + (key,),
                        f"{_section_name(path)} has unknown key {key!r} (expected {', '.join(SPEC_KEYS)}).")
            if key == "timeout":
                items = [raw]
            elif not isinstance(raw, list) or not raw:
                _refuse(source, lines, path + (key,),
                        f"{_section_name(path)} {key} must be a non-empty list of values, got {raw!r}.")
            else:
                items = raw
            try:
                values[key] = [_check_value(key, v) for v in items]
            except ValueError as exc:
                _refuse(source, lines, path + (key,), f"{_section_name(path)} {str(exc).rstrip('.')}.")
        for key in ("widths", "attention"):
            if key not in values:
                _refuse(source, lines, path, f"{_section_name(path)} is missing {key}.")
        timeout = values.get("timeout", [default_timeout])[0]
        for widths, attention, tokens, norm, method, seed in itertools.product(
                values["widths"], values["attention"], values.get("tokens", [2]),
                values.get("normalization", ["none"]), values.get("method", ["auto"]), values.get("seed", [0])):
            if len(attention) != len(widths) - 1:
                mismatched += 1
                continue
            arch = _architecture(source, lines, path, widths, attention, tokens, norm)
            jobs.append(Job(arch, method, seed, timeout))
    for i, entry in enumerate(entries):
        path = ("architecture", i)
        vals = {}
        for key, raw in entry.items():
            try:
                vals[key] = _check_value(key, raw)
            except ValueError as exc:
                _refuse(source, lines, path + (key,), f"{_section_name(path)} {str(exc).rstrip('.')}.")
        for key in ("widths", "attention"):
            if key not in vals:
                _refuse(source, lines, path, f"{_section_name(path)} is missing {key}.")
        arch = _architecture(source, lines, path, vals["widths"], vals["attention"], vals.get("tokens", 2),
                             vals.get("normalization", "none"))
        jobs.append(Job(arch, vals.get("method", "auto"), vals.get("seed", 0), vals.get("timeout", default_timeout)))
    unique: dict[str, Job] = {}
    for job in jobs:
        unique.setdefault(job.label, job)
    return Sweep(name, tuple(unique.values()), mismatched, len(jobs) - len(unique))


def load_spec(path: str | os.PathLike) -> Sweep:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read the sweep spec {p}: {exc.strerror or exc}.") from None
    except UnicodeDecodeError:
        raise InputError(f"the sweep spec {p} is not UTF-8 text.") from None
    return parse_spec(text, str(p))


# ---- the job function (same for every executor) ------------------------------------------------

@dataclass(frozen=True)
class JobResult(JsonResult):
    """What one job produced: a DimensionResult when ``status == "ok"``, else the message; and the prediction."""

    label: str
    job: dict
    status: str  # ok | timeout | error
    message: str | None
    result: DimensionResult | None
    predicted: int | None
    prediction_status: str
    agreement: str  # agree | disagree | no prediction | not computed
    elapsed_s: float
    host: str
    script: str | None = None  # the M2 script (path in the results dir once stored)
    script_text: str | None = None  # carried from the worker to the coordinator, not stored
    version: int = RECORD_VERSION

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}")
        if (self.status == "ok") != (self.result is not None):
            raise ValueError("a result is present exactly when the status is ok")

    @classmethod
    def from_dict(cls, data: dict):
        data = dict(data)
        data.pop("kind", None)
        if data.get("result") is not None:
            data["result"] = DimensionResult.from_dict(data["result"])
        return cls(**data)

    @property
    def architecture(self) -> Architecture:
        return Architecture.from_dict(self.job["architecture"])


class _SoftTimeout(Exception):
    pass


def _alarm(_signum, _frame):
    raise _SoftTimeout()


def run_job(job: Job, m2: str | None = None) -> JobResult:
    """Compute one job; never raises (status records what went wrong).

    M2 methods get the timeout (the M2 process group is killed). Python methods (modp, numeric)
    get a SIGALRM limit when running in a process's main thread (the local pool); in a Dask
    thread only the M2 limit applies.
    """
    from lightning_cas import api  # imported here so Dask workers import lazily, too

    start = time.perf_counter()
    status, message, result, script = "ok", None, None, None
    use_alarm = (job.timeout is not None and job.method not in M2_METHODS and hasattr(signal, "setitimer")
                 and threading.current_thread() is threading.main_thread())
    old = None
    try:
        if use_alarm:
            old = signal.signal(signal.SIGALRM, _alarm)
            signal.setitimer(signal.ITIMER_REAL, job.timeout)
        result = api.dimension(job.architecture, method=job.method, seed=job.seed, timeout=job.timeout, m2=m2)
        script = result.script
    except _SoftTimeout:
        status, message = "timeout", f"the {job.method} computation exceeded the {job.timeout:g} s time limit."
    except M2TimeoutError as exc:
        status, message, script = "timeout", str(exc), exc.script
    except LightningError as exc:
        status, message = "error", str(exc)
        script = getattr(exc, "script", None)
    except Exception as exc:  # a bug in one job must not stop the sweep; record it plainly
        status, message = "error", f"internal error ({type(exc).__name__}: {exc})"
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    elapsed = time.perf_counter() - start
    pred = api.predict(job.architecture).dimension
    if result is None:
        agreement = "not computed"
    elif pred.value is None:
        agreement = "no prediction"
    else:
        agreement = "agree" if pred.value == result.dimension else "disagree"
    text = None
    if script:
        try:
            text = Path(script).read_text(encoding="utf-8")
        except OSError:
            text = None
    return JobResult(job.label, job.to_dict(), status, message, result, pred.value, pred.status, agreement,
                     elapsed, socket.gethostname(), script, text)


# ---- the result store ------------------------------------------------------------------------

def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ResultStore:
    """A results directory: ``<label>.json`` per job, ``<label>.lock`` while a sweep computes it."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            (self.root / "scripts").mkdir(exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create the results directory {self.root}: {exc.strerror or exc}.") from None

    def path(self, label: str) -> Path:
        return self.root / f"{label}.json"

    def load(self, label: str) -> JobResult | None:
        """The stored result, or None when absent or not a complete, valid record (then it is redone)."""
        return load_record(self.path(label), label)

    def save(self, record: JobResult) -> JobResult:
        script = record.script
        if record.script_text is not None:
            dest = self.root / "scripts" / f"{record.label}.m2"
            atomic_write_text(dest, record.script_text)
            script = str(Path("scripts") / dest.name)
        data = record.to_dict()
        data["script"], data["script_text"] = script, None
        stored = {**data, "checksum": record_checksum(data)}
        atomic_write_text(self.path(record.label), json.dumps(stored, indent=1) + "\n")
        return JobResult.from_dict(data)

    # claims: O_EXCL lock files holding host and pid of the claiming sweep
    def _lock(self, label: str) -> Path:
        return self.root / f"{label}.lock"

    def claim(self, label: str) -> bool:
        lock = self._lock(label)
        for _ in range(2):
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if not self._stale(lock):
                    return False
                try:  # take the stale lock over: rename first, so only one sweep removes it
                    os.replace(lock, lock.with_name(f".{lock.name}.{uuid.uuid4().hex[:8]}.stale"))
                except FileNotFoundError:
                    pass
                for stale in self.root.glob(f".{lock.name}.*.stale"):
                    stale.unlink(missing_ok=True)
                continue
            with os.fdopen(fd, "w") as fh:
                json.dump({"host": socket.gethostname(), "pid": os.getpid(), "since": time.time()}, fh)
            return True
        return False

    def _stale(self, lock: Path) -> bool:
        try:
            info = json.loads(lock.read_text())
        except FileNotFoundError:
            return True
        except (OSError, ValueError):
            # being written right now, or garbage: stale only if old
            try:
                return time.time() - lock.stat().st_mtime > 60
            except FileNotFoundError:
                return True
        return info.get("host") == socket.gethostname() and not _pid_alive(int(info.get("pid", 0)))

    def release(self, label: str) -> None:
        self._lock(label).unlink(missing_ok=True)

    def records(self) -> list[JobResult]:
        out = []
        for p in sorted(self.root.glob("*.json")):
            rec = load_record(p, p.stem)
            if rec is not None:
                out.append(rec)
        return out

    def write_aggregates(self) -> tuple[Path, Path]:
        """results.csv / results.jsonl from every valid result in the directory (written atomically)."""
        recs = self.records()
        jsonl = "".join(json.dumps(r.to_dict()) + "\n" for r in recs)
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for r in recs:
            writer.writerow(csv_row(r))
        csv_path, jsonl_path = self.root / CSV_NAME, self.root / JSONL_NAME
        atomic_write_text(jsonl_path, jsonl)
        atomic_write_text(csv_path, buf.getvalue())
        return csv_path, jsonl_path


def record_checksum(data: dict) -> str:
    """sha256 of a record's canonical JSON (without the checksum itself): a hand-edited or
    bit-flipped number in a cached result is detected and the job recomputed, never reused."""
    body = {k: v for k, v in data.items() if k != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def load_record(path: Path, label: str | None = None) -> JobResult | None:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("kind") != "JobResult" or data.get("version") != RECORD_VERSION:
            return None
        if data.get("checksum") != record_checksum(data):
            return None
        data.pop("checksum")
        rec = JobResult.from_dict(data)
        if label is not None and rec.label != label:
            return None
        if Job.from_dict(rec.job).label != rec.label:
            return None
        return rec
    except (OSError, ValueError, TypeError, KeyError, LightningError):
        return None


def csv_row(r: JobResult) -> dict:
    arch = r.architecture
    res = r.result
    return {"label": r.label, "status": r.status, "widths": "-".join(map(str, arch.widths)),
            "attention": "-".join(map(str, arch.attention)), "tokens": arch.tokens,
            "normalization": arch.normalization, "method": res.method if res else r.job["method"],
            "seed": r.job["seed"], "parameters": arch.parameters,
            "dimension": res.dimension if res else "", "predicted": "" if r.predicted is None else r.predicted,
            "agreement": r.agreement, "certainty": res.certainty if res else "",
            "elapsed_s": f"{r.elapsed_s:.3f}", "message": r.message or ""}


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


# ---- the sweep -------------------------------------------------------------------------------

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
    no_prediction: int = 0
    mismatched_skipped: int = 0
    duplicates_skipped: int = 0
    waited_for_other_sweep: int = 0
    scheduler: str | None = None
    elapsed_s: float = 0.0
    csv: str | None = None
    jsonl: str | None = None
    labels: list = field(default_factory=list)

    def count(self, rec: JobResult) -> None:
        setattr(self, rec.status, getattr(self, rec.status) + 1)
        if rec.agreement == "agree":
            self.agree += 1
        elif rec.agreement == "disagree":
            self.disagree += 1
        elif rec.agreement == "no prediction":
            self.no_prediction += 1

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "labels"}


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
    try:
        waiting: list[Job] = []
        while pending or waiting:
            futures = {}
            for job in pending:
                if store.claim(job.label):
                    rec = None if job.label in forced else reusable(job)  # finished by another sweep meanwhile?
                    if rec is not None:
                        store.release(job.label)
                        summary.cached += 1
                        finished(rec, job.label)
                        continue
                    futures[ex.submit(job, m2)] = job
                else:
                    waiting.append(job)
            pending = []
            for fut in ex.as_completed(list(futures)):
                job = futures[fut]
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
            # jobs another sweep holds: wait for its result, or take over when its lock goes stale
            still = []
            for job in waiting:
                lock = store._lock(job.label)
                if lock.exists() and not store._stale(lock):
                    still.append(job)
                    continue
                rec = store.load(job.label)
                if rec is not None:
                    summary.waited_for_other_sweep += 1
                    finished(rec, job.label)
                else:
                    pending.append(job)
            waiting = still
            if waiting and not pending:
                time.sleep(poll_s)
    finally:
        if ex is not None:
            ex.close()
    if aggregate:
        csv_path, jsonl_path = store.write_aggregates()
        summary.csv, summary.jsonl = str(csv_path), str(jsonl_path)
    summary.elapsed_s = round(time.perf_counter() - started, 3)
    return summary


def make_rules(sweep: Sweep, spec_path: str, out: str, command: str) -> str:
    """A makefile with one target per result file, so ``make -j N`` runs jobs in parallel and resumes."""
    def q(s):
        return "'" + str(s).replace("'", "'\\''") + "'"
    lines = [f"# generated by lightning-cas sweep --make-rules from {spec_path}; do not edit",
             f"LCAS_OUT := {out}",
             "LCAS_RESULTS := " + " ".join(f"$(LCAS_OUT)/{j.label}.json" for j in sweep.jobs),
             "", ".PHONY: all", "all: $(LCAS_OUT)/results.csv", "",
             "$(LCAS_OUT)/results.csv: $(LCAS_RESULTS)",
             f"\t{command} sweep {q(spec_path)} --out {q(out)} --quiet", ""]
    for j in sweep.jobs:
        lines.append(f"$(LCAS_OUT)/{j.label}.json:")
        lines.append(f"\t{command} sweep {q(spec_path)} --out {q(out)} --only {j.label} --no-aggregate --quiet")
    return "\n".join(lines) + "\n"
