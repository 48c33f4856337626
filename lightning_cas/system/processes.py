"""What the external solvers share (Macaulay2 and msolve): finding a binary with a one-line answer for what is
wrong, killing a run's whole process group, and the private directory where scripts and inputs are kept so a
failed run names a file the user can rerun."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

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


def kill_group(proc: subprocess.Popen) -> None:
    """Kill a run and everything in its process group, then reap it."""
    kill_quietly(proc.pid)
    try:
        proc.communicate(timeout=5)
    except Exception:
        pass


def script_dir() -> Path:
    """Where rendered scripts and solver inputs are kept (so an error message can name a file the user can
    rerun): ``$LIGHTNING_CAS_SCRIPT_DIR`` or ``scripts/`` in the private per-user directory; either way
    created 0700 and refused if it belongs to someone else, is open to others, or is a symlink."""
    explicit = os.environ.get("LIGHTNING_CAS_SCRIPT_DIR")
    if explicit:
        return make_private(explicit, "script directory")
    return private_dir("scripts")
