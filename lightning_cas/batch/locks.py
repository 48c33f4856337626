"""Job locks in a results directory: a job is claimed with an ``O_EXCL`` file when it starts.

A lock holds the claiming sweep's host, pid and process start time and is refreshed while the
job runs. A lock whose process died (or whose pid now belongs to another process), that was not
refreshed for ``LOCK_TTL_S``, that is dated in the future (a clock or a planted file: it would
otherwise look fresh forever), or that is malformed is stale: it is reported and broken, never
waited on forever.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from lightning_cas.errors import InputError
from lightning_cas.system.files import parse_json, read_bytes

MAX_LOCK_BYTES = 4096
LOCK_TTL_S = 120.0  # a lock not refreshed for this long is stale, whoever holds it
LOCK_REFRESH_S = 20.0  # how often a running sweep touches the locks it holds
LOCK_GRACE_S = 5.0  # a lock younger than this may still be being written
FUTURE_SLACK_S = 2.0  # clocks of hosts sharing a disk may differ a little, not more


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


class Locks:
    """The ``<label>.lock`` files of one results directory, and the stale ones this sweep broke."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        self.broken: list[tuple[str, str]] = []  # (label, reason)

    def path(self, label: str) -> Path:
        return self.root / f"{label}.lock"

    def claim(self, label: str) -> bool:
        """Take the job's lock (breaking a stale one, which is recorded in ``broken``)."""
        lock = self.path(label)
        for _ in range(2):
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o644)
            except FileExistsError:
                state = self.state(label)
                if state.status == "held":
                    return False
                if state.status == "stale":
                    self.break_lock(label, state.reason)
                continue
            with os.fdopen(fd, "w") as fh:
                json.dump(
                    {
                        "host": socket.gethostname(),
                        "pid": os.getpid(),
                        "since": time.time(),
                        "start": _start_time(os.getpid()),
                    },
                    fh,
                )
            return True
        return False

    def state(self, label: str) -> LockState:
        """Whether the job's lock is held, absent or stale (and why); never raises, never blocks."""
        lock = self.path(label)
        try:
            info = os.lstat(lock)
        except FileNotFoundError:
            return LockState("absent")
        except OSError as exc:
            return LockState("stale", f"unreadable lock ({exc.strerror})")
        age = time.time() - info.st_mtime
        if age < -FUTURE_SLACK_S:
            return LockState("stale", f"dated {-age:.0f} s in the future")
        try:
            data = parse_json(
                read_bytes(lock, "lock", max_bytes=MAX_LOCK_BYTES, follow_symlinks=False).decode("utf-8"),
                "lock",
                max_depth=2,
            )
        except (InputError, UnicodeDecodeError):
            data = None  # unreadable, a FIFO, a symlink, not JSON, or gone meanwhile (checked below)
        ok = (
            isinstance(data, dict)
            and isinstance(data.get("host"), str)
            and type(data.get("pid")) is int
            and 0 < data["pid"] < 2**22
        )
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
        lock = self.path(label)
        aside = lock.with_name(f".{lock.name}.{uuid.uuid4().hex[:8]}.stale")
        try:
            os.replace(lock, aside)
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
                os.utime(self.path(label), follow_symlinks=False)
            except OSError:
                pass

    def release(self, label: str) -> None:
        self.path(label).unlink(missing_ok=True)
