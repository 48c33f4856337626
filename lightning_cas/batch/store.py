"""The result store: one JSON record per job in a results directory, claimed by lock files.

Why it looks the way it does:

* One JSON file per job, written to a temp file and ``os.replace``d, so a killed run never
  leaves half a file; a file that does not parse back is treated as missing and recomputed.
* Before running a job the coordinator claims it with an ``O_EXCL`` lock file, so two sweeps into
  one directory never compute (or write) the same job twice; a lock whose owner process died is
  taken over.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import socket
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from lightning_cas.batch.spec import Job
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.files import atomic_write_text
from lightning_cas.errors import InputError, LightningError
from lightning_cas.results import DimensionResult, JsonResult

STATUSES = ("ok", "timeout", "error")
RECORD_VERSION = 2  # 2: records carry a checksum of their content
CSV_NAME, JSONL_NAME = "results.csv", "results.jsonl"
CSV_COLUMNS = ("label", "status", "widths", "attention", "tokens", "normalization", "method", "seed",
               "parameters", "dimension", "predicted", "agreement", "certainty", "elapsed_s", "message")


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


