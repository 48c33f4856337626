"""The result store: one JSON record per job in a results directory, claimed by lock files.

Why it looks the way it does:

* One JSON file per job, written to a temp file and ``os.replace``d, so a killed run never
  leaves half a file; a file that does not parse back is treated as missing and recomputed.
* A results directory is data, not instructions: every record carries an HMAC-SHA256 under a
  per-user secret key (kept 0600 in the private directory). A record that fails it (edited by
  hand, written by someone else, or by another user's key) is never reused by a sweep, and
  ``report`` shows it as ``untrusted``; records are read through the bounded reader, never
  through a symlink.
* A job is claimed with an ``O_EXCL`` lock file when it starts (not all up front), refreshed while
  it runs; a lock whose process died, that was not refreshed for ``LOCK_TTL_S``, or that is
  malformed is reported and broken, never waited on forever.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import json
import os
import secrets
import socket
import stat
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from lightning_cas.batch.spec import Job
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.files import atomic_write_text, parse_json, private_dir, read_bytes, read_json
from lightning_cas.errors import InputError, LightningError
from lightning_cas.core.results import DimensionResult, JsonResult

STATUSES = ("ok", "timeout", "error")
RECORD_VERSION = 3  # 2: plain sha256 checksum; 3: HMAC-SHA256 under the user's key
MAX_RECORD_BYTES = 4 * 1024 * 1024
MAX_LOCK_BYTES = 4096
MAX_SCRIPT_BYTES = 16 * 1024 * 1024
LOCK_TTL_S = 120.0  # a lock not refreshed for this long is stale, whoever holds it
LOCK_REFRESH_S = 20.0  # how often a running sweep touches the locks it holds
LOCK_GRACE_S = 5.0  # a lock younger than this may still be being written
KEY_NAME = "record.key"
CSV_NAME, JSONL_NAME = "results.csv", "results.jsonl"
CSV_COLUMNS = ("label", "status", "widths", "attention", "heads", "tokens", "normalization", "method", "seed",
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
    agreement: str  # agree | disagree | defect (below an upper bound) | no prediction | not computed
    elapsed_s: float
    host: str
    script: str | None = None  # the M2 script (path in the results dir once stored)
    script_text: str | None = None  # carried from the worker to the coordinator, not stored
    version: int = RECORD_VERSION
    script_sha256: str | None = None  # of the stored script, so a swapped script file is detected

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





# ---- the per-user record key and the integrity check -------------------------------------------

_KEYS: dict[str, bytes] = {}


def record_key() -> bytes:
    """The user's secret record key: 32 random bytes in the private directory (file mode 0600),
    created on first use; a key file that is a symlink, foreign or readable by others is refused."""
    path = private_dir() / KEY_NAME
    cached = _KEYS.get(str(path))
    if cached is not None:
        return cached
    if not os.path.lexists(path):
        # written in full to a temp file, then hard-linked into place: a concurrent first use
        # sees no key or the whole key, never an empty one
        tmp = path.with_name(f".{KEY_NAME}.{os.getpid()}.{uuid.uuid4().hex[:8]}")
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_hex(32) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
        finally:
            os.unlink(tmp)
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise InputError(f"the record key {str(path)!r} is not a private file of this user (mode "
                         f"{stat.S_IMODE(info.st_mode):o}); refusing to use it.")
    text = read_bytes(path, "record key", max_bytes=256, follow_symlinks=False).decode("ascii", "replace").strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) < 16:
        raise InputError(f"the record key {str(path)!r} is damaged; delete it to make a new one "
                         "(records signed with it will then show as untrusted).")
    _KEYS[str(path)] = key
    return key


def _canonical(data: dict) -> bytes:
    body = {k: v for k, v in data.items() if k not in ("checksum", "mac")}
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def record_mac(data: dict, key: bytes | None = None) -> str:
    """HMAC-SHA256 of a record's canonical JSON (without the mac itself) under the user's key:
    a hand-edited number, or a record re-signed without the key, fails it."""
    return hmac.new(record_key() if key is None else key, _canonical(data), hashlib.sha256).hexdigest()


def record_checksum(data: dict) -> str:
    """Plain sha256 of a record's canonical JSON: what version-2 records carried (kept so they
    can be recognised; it proves nothing, anyone can recompute it)."""
    return hashlib.sha256(_canonical(data)).hexdigest()


@dataclass(frozen=True)
class RecordCheck:
    """What :func:`verify_record` found: ``trusted`` (our key signed it), ``untrusted`` (a
    well-formed record that our key did not sign; its numbers are claims, not results) or
    ``invalid`` (not a record at all). ``record`` is None only when invalid."""

    path: str
    status: str
    reason: str
    record: JobResult | None = None

    @property
    def trusted(self) -> bool:
        return self.status == "trusted"


def verify_record(path: str | os.PathLike, label: str | None = None, key: bytes | None = None) -> RecordCheck:
    """Read one record file (bounded, not through a symlink) and check its HMAC and its shape.

    This is the one function that decides whether a record on disk may be believed: sweeps
    reuse only trusted records, ``report`` marks the others untrusted, the notebook should
    embed only trusted ones."""
    where = str(path)
    try:
        data = read_json(path, "result record", max_bytes=MAX_RECORD_BYTES, follow_symlinks=False)
    except InputError as exc:
        return RecordCheck(where, "invalid", str(exc))
    if not isinstance(data, dict) or data.get("kind") != "JobResult":
        return RecordCheck(where, "invalid", "not a lightning-cas job record")
    body = {k: v for k, v in data.items() if k not in ("checksum", "mac")}
    try:
        rec = JobResult.from_dict(body)
        if Job.from_dict(rec.job).label != rec.label:
            return RecordCheck(where, "invalid", "its label does not match its job")
        if label is not None and rec.label != label:
            return RecordCheck(where, "invalid", f"it holds {rec.label}, not {label}")
        rec.architecture  # noqa: B018 - validates the architecture
    except (ValueError, TypeError, KeyError, AttributeError, LightningError) as exc:
        return RecordCheck(where, "invalid", f"malformed record ({type(exc).__name__})")
    mac = data.get("mac")
    if data.get("version") != RECORD_VERSION or not isinstance(mac, str):
        return RecordCheck(where, "untrusted", f"record version {data.get('version')!r} carries no key signature", rec)
    try:
        good = hmac.compare_digest(mac, record_mac(body, key))
    except (TypeError, ValueError):  # e.g. non-ASCII text in the mac field
        good = False
    if not good:
        return RecordCheck(where, "untrusted", "its signature does not match this user's record key", rec)
    return RecordCheck(where, "trusted", "signed with this user's record key", rec)


def load_record(path: str | os.PathLike, label: str | None = None) -> JobResult | None:
    """A trusted record, or None (absent, invalid or untrusted: then a sweep recomputes it)."""
    check = verify_record(path, label)
    return check.record if check.trusted else None


# ---- locks -------------------------------------------------------------------------------------

def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _start_time(pid: int) -> str | None:
    """A process's start time in clock ticks since boot (Linux), to tell a reused pid apart."""
    try:
        text = read_bytes(f"/proc/{pid}/stat", "process status", max_bytes=4096).decode("ascii", "replace")
    except InputError:
        return None
    fields = text.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


@dataclass(frozen=True)
class LockState:
    """``held`` (someone is computing the job), ``absent``, or ``stale`` with the reason."""

    status: str
    reason: str = ""


class ResultStore:
    """A results directory: ``<label>.json`` per job, ``<label>.lock`` while a sweep computes it."""

    def __init__(self, root: str | os.PathLike, create: bool = True):
        self.root = Path(root)
        self.broken: list[tuple[str, str]] = []  # (label, reason) of stale locks this store broke
        if not create:
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            (self.root / "scripts").mkdir(exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create the results directory {self.root}: {exc.strerror or exc}.") from None

    def path(self, label: str) -> Path:
        return self.root / f"{label}.json"

    def load(self, label: str) -> JobResult | None:
        """The stored result, or None when absent or not a complete, trusted record (then it is redone)."""
        return load_record(self.path(label), label)

    def save(self, record: JobResult) -> JobResult:
        script, digest = record.script, record.script_sha256
        if record.script_text is not None:
            dest = self.root / "scripts" / f"{record.label}.m2"
            atomic_write_text(dest, record.script_text, "script", replace_entries=True)
            script = str(Path("scripts") / dest.name)
            digest = hashlib.sha256(record.script_text.encode()).hexdigest()
        data = record.to_dict()
        data["script"], data["script_text"], data["script_sha256"] = script, None, digest
        stored = {**data, "mac": record_mac(data)}
        atomic_write_text(self.path(record.label), json.dumps(stored, indent=1) + "\n", "record",
                          replace_entries=True)
        return JobResult.from_dict(data)

    def script_text(self, record: JobResult) -> str | None:
        """The text of a record's stored script, only if it is ``scripts/<label>.m2`` inside this
        directory (no absolute path, no ``..``, no symlink) and hashes to the value the record
        carries; else None. What a notebook may embed."""
        if record.script != f"scripts/{record.label}.m2" or not record.script_sha256:
            return None
        scripts = self.root / "scripts"
        try:
            if not stat.S_ISDIR(os.lstat(scripts).st_mode):
                return None
            data = read_bytes(scripts / f"{record.label}.m2", "script", max_bytes=MAX_SCRIPT_BYTES,
                              follow_symlinks=False)
        except (OSError, InputError):
            return None
        if not hmac.compare_digest(hashlib.sha256(data).hexdigest(), record.script_sha256):
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    # claims: O_EXCL lock files holding host, pid and process start time of the claiming sweep
    def lock_path(self, label: str) -> Path:
        return self.root / f"{label}.lock"

    def claim(self, label: str) -> bool:
        """Take the job's lock (breaking a stale one, which is recorded in ``broken``)."""
        lock = self.lock_path(label)
        for _ in range(2):
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o644)
            except FileExistsError:
                state = self.lock_state(label)
                if state.status == "held":
                    return False
                if state.status == "stale":
                    self.break_lock(label, state.reason)
                continue
            with os.fdopen(fd, "w") as fh:
                json.dump({"host": socket.gethostname(), "pid": os.getpid(), "since": time.time(),
                           "start": _start_time(os.getpid())}, fh)
            return True
        return False

    def lock_state(self, label: str) -> LockState:
        """Whether the job's lock is held, absent or stale (and why); never raises, never blocks."""
        lock = self.lock_path(label)
        try:
            info = os.lstat(lock)
        except FileNotFoundError:
            return LockState("absent")
        except OSError as exc:
            return LockState("stale", f"unreadable lock ({exc.strerror})")
        age = time.time() - info.st_mtime
        try:
            data = parse_json(read_bytes(lock, "lock", max_bytes=MAX_LOCK_BYTES, follow_symlinks=False)
                              .decode("utf-8"), "lock", max_depth=2)
        except (InputError, UnicodeDecodeError):
            data = None  # unreadable, a FIFO, a symlink, not JSON, or gone meanwhile (checked below)
        ok = (isinstance(data, dict) and isinstance(data.get("host"), str) and type(data.get("pid")) is int
              and 0 < data["pid"] < 2 ** 22)
        if not ok:
            if not os.path.lexists(lock):
                return LockState("absent")
            if age < LOCK_GRACE_S:
                return LockState("held")  # probably being written this very moment
            return LockState("stale", "malformed lock file")
        if age > LOCK_TTL_S:
            return LockState("stale", f"not refreshed for {age:.0f} s (its sweep is gone)")
        if data["host"] == socket.gethostname():
            pid = data["pid"]
            if not _pid_alive(pid):
                return LockState("stale", f"its process {pid} has exited")
            start = data.get("start")
            if isinstance(start, str) and _start_time(pid) not in (None, start):
                return LockState("stale", f"its process id {pid} now belongs to another process")
        return LockState("held")

    def break_lock(self, label: str, reason: str) -> None:
        """Remove a stale lock: rename first, so only one of several sweeps removes it."""
        lock = self.lock_path(label)
        aside = lock.with_name(f".{lock.name}.{uuid.uuid4().hex[:8]}.stale")
        try:
            os.replace(lock, aside)
        except FileNotFoundError:
            return
        except OSError:
            return
        self.broken.append((label, reason))
        try:
            if os.path.isdir(aside) and not os.path.islink(aside):
                os.rmdir(aside)
            else:
                os.unlink(aside)
        except OSError:
            pass

    def refresh(self, labels) -> None:
        """Touch the locks this sweep holds, so others see it is alive."""
        for label in labels:
            try:
                os.utime(self.lock_path(label), follow_symlinks=False)
            except OSError:
                pass

    def release(self, label: str) -> None:
        self.lock_path(label).unlink(missing_ok=True)

    def checks(self) -> list[RecordCheck]:
        """What :func:`verify_record` says of every ``*.json`` in the directory, in name order."""
        return [verify_record(p, p.stem) for p in sorted(self.root.glob("*.json"))]

    def records(self) -> list[JobResult]:
        """Every trusted record in the directory."""
        return [c.record for c in self.checks() if c.trusted]

    def write_aggregates(self) -> tuple[Path, Path]:
        """results.csv / results.jsonl from every trusted result in the directory (written atomically)."""
        recs = self.records()
        jsonl = "".join(json.dumps(r.to_dict()) + "\n" for r in recs)
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for r in recs:
            writer.writerow(csv_row(r))
        csv_path, jsonl_path = self.root / CSV_NAME, self.root / JSONL_NAME
        atomic_write_text(jsonl_path, jsonl, "results table", replace_entries=True)
        atomic_write_text(csv_path, buf.getvalue(), "results table", replace_entries=True)
        return csv_path, jsonl_path


def csv_row(r: JobResult) -> dict:
    arch = r.architecture
    res = r.result
    return {"label": r.label, "status": r.status, "widths": "-".join(map(str, arch.widths)),
            "attention": "-".join(map(str, arch.attention)), "heads": "-".join(map(str, arch.heads)),
            "tokens": arch.tokens,
            "normalization": arch.normalization, "method": res.method if res else r.job["method"],
            "seed": r.job["seed"], "parameters": arch.parameters,
            "dimension": res.dimension if res else "", "predicted": "" if r.predicted is None else r.predicted,
            "agreement": r.agreement, "certainty": res.certainty if res else "",
            "elapsed_s": f"{r.elapsed_s:.3f}", "message": r.message or ""}


