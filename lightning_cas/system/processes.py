"""What the external solvers share (Macaulay2 and msolve): finding a binary with a one-line answer for what is
wrong, killing a run's whole process group, and the private directory where scripts and inputs are kept so a
failed run names a file the user can rerun."""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable

from lightning_cas.system.files import make_private, private_dir


def resolve_binary(name: str, what: str, error: type[Exception], hint: str) -> str:
    """The absolute path of the program ``name`` (a path or a name on PATH), or ``error`` saying what is
    there instead: a directory, a file that is not executable, nothing. Absolute, since runs start in a
    private working directory where a relative path would be looked up."""
    if os.sep in name:  # a path: say what is there, not only that it is no program
        if os.path.isdir(name):
            raise error(f"{what} {name!r} is a directory, not an executable; {hint}")
        if os.path.exists(name) and not (os.path.isfile(name) and os.access(name, os.X_OK)):
            raise error(f"{what} {name!r} is not an executable file; {hint}")
    found = shutil.which(name)
    if not found:
        raise error(f"{what} {name!r} not found; {hint}")
    return os.path.abspath(found)


def kill_quietly(pgid: int) -> None:
    """SIGKILL to a process group that may be gone already."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# the watchdog: waits for the end of its input, then kills the process group named by its argument
_WATCH = 'cat >/dev/null; kill -s KILL -- "-$0" 2>/dev/null'
_RUNS: dict[int, int | None] = {}  # the process groups of the runs in progress here -> their watchdogs' pipes


def watch_group(pgid: int) -> None:
    """Register a run's process group (``kill_runs`` reaches it) and start its watchdog, for the one way
    this process can end without its cleanup (SIGKILL): a shell, in a session of its own, reads a pipe
    that only this process holds open, and when the pipe ends (``end_watch``, or this process died) kills
    the group. PR_SET_PDEATHSIG reaches the run's own process; this reaches what the run started (a
    detached child of Macaulay2)."""
    _RUNS[pgid] = None  # first: a kill_runs from another thread meanwhile reaches it already
    read, write = os.pipe()  # not inherited by other programs this process starts
    try:
        subprocess.Popen(
            ["/bin/sh", "-c", _WATCH, str(pgid)],
            stdin=read,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        os.close(write)
        return
    finally:
        os.close(read)
    if pgid in _RUNS:
        _RUNS[pgid] = write
    else:  # the run ended meanwhile (another thread's end_watch): so does its watchdog
        os.close(write)


def end_watch(pgid: int) -> None:
    """The run of this process group is over (its group killed): its watchdog ends too."""
    fd = _RUNS.pop(pgid, None)
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass


def kill_runs() -> None:
    """Kill the process group of every run in progress in this process, from any thread: a stopped sweep's
    jobs in threads (Dask's local cluster), which no signal of theirs can reach, then end at once."""
    for pgid in list(_RUNS):
        kill_quietly(pgid)


def kill_group(proc: subprocess.Popen) -> None:
    """Kill a run and everything in its process group, then reap it."""
    kill_quietly(proc.pid)
    try:
        proc.communicate(timeout=5)
    except Exception:
        pass


POLL_S = 0.2
EXIT_GRACE_S = 1.0  # after a program exits, how long a child that left its process group may keep its outputs


def read_capped(
    proc: subprocess.Popen, end: float | None, cap: int, late: Callable[[], Exception], much: Callable[[], Exception]
) -> tuple[str, str]:
    """Both outputs of ``proc`` until it exits: by ``end`` (monotonic time; None, no limit), else ``late()``
    is raised, and at most ``cap`` bytes together, else ``much()`` (``communicate`` would buffer without a
    cap); decoded with replacement, so a stray byte is no crash. When the program exits while a child of
    its own still holds its outputs (a detached ``sleep &``), the child's process group is killed then and
    there, not waited on until the limit."""
    chunks: dict = {proc.stdout: [], proc.stderr: []}
    total, exited = 0, None
    with selectors.DefaultSelector() as sel:
        for stream in chunks:
            sel.register(stream, selectors.EVENT_READ)
        while sel.get_map():
            now = time.monotonic()
            if end is not None and now >= end:
                raise late()
            if exited is None and proc.poll() is not None:
                exited = now
                kill_quietly(proc.pid)  # what it left in its group holds the outputs open
            elif exited is not None and now - exited > EXIT_GRACE_S:
                break  # a child that left the group (setsid): its output is not the program's
            for key, _ in sel.select(POLL_S if end is None else min(POLL_S, end - now)):
                data = os.read(key.fd, 1 << 16)
                if not data:
                    sel.unregister(key.fileobj)
                    continue
                chunks[key.fileobj].append(data)
                total += len(data)
                if total > cap:
                    raise much()
    try:
        proc.wait(timeout=None if end is None else max(end - time.monotonic(), 0.01))
    except subprocess.TimeoutExpired:  # closed its outputs but kept running
        raise late() from None
    out, err = (b"".join(chunks[s]).decode("utf-8", "replace") for s in (proc.stdout, proc.stderr))
    return out, err


def script_dir() -> Path:
    """Where rendered scripts and solver inputs are kept (so an error message can name a file the user can
    rerun): ``$LIGHTNING_CAS_SCRIPT_DIR`` or ``scripts/`` in the private per-user directory; either way
    created 0700 and refused if it belongs to someone else, is open to others, or is a symlink."""
    explicit = os.environ.get("LIGHTNING_CAS_SCRIPT_DIR")
    if explicit:
        return make_private(explicit, "script directory")
    return private_dir("scripts")
