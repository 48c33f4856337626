"""Running Macaulay2: one script per process (batch), or a persistent session (many small queries).

Both isolate M2: its own process group (so a timeout kills everything it started), a memory cap
through ``GC_MAXIMUM_HEAP_SIZE``, a private ``HOME``, a private working directory, a cap on what it
may print, and the seed set by the script itself. Every failure becomes a distinct ``M2Error``
subclass that names the script.

Why a private working directory: Macaulay2's ``path`` starts with ``./``, so ``needsPackage``
(JSON, NumericalImplicitization, ...) would load a file of that name from wherever M2 stands. M2
therefore never stands in the caller's directory or a results directory, only in ``m2work`` of the
private per-user directory (0700, owner-checked), and every rendered script also drops the relative
entries from ``path`` (``render.SEARCH_PATH_LINE``) for whoever reruns it by hand.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from lightning_cas.core.checks import check_timeout, shown
from lightning_cas.errors import (
    InputError,
    M2CrashError,
    M2Error,
    M2NotFoundError,
    M2OutputError,
    M2ScriptError,
    M2TimeoutError,
)
from lightning_cas.macaulay2.defaults import DEFAULT_HEAP, DEFAULT_TIMEOUT, MIN_HEAP_BYTES, check_heap  # noqa: F401
from lightning_cas.system.deadline import die_with_parent
from lightning_cas.system.files import private_dir
from lightning_cas.system.processes import (
    end_watch,
    kill_group,
    kill_quietly,
    read_capped,
    resolve_binary,
    watch_group,
)

# Far above any record we read (the largest, an implicit ideal with its generators, is a few MB);
# a program that is not Macaulay2 (`yes` given as --m2) is stopped here instead of filling memory.
MAX_OUTPUT_BYTES = 64 * 2**20
_POLL_S = 0.2
INSTALL_HINT = (
    "install it with `apt-get install -y --no-install-recommends macaulay2` (or `make setup`), "
    "or point --m2 / LIGHTNING_CAS_M2 at the binary"
)
_ERROR_LINE = re.compile(r"^.*\berror: .*$", re.MULTILINE)
_OOM = re.compile(r"out of memory|GC Warning: Out of Memory|Too many heap sections|cannot allocate", re.I)


def find_m2(m2: str | None = None) -> str:
    """The M2 binary: explicit argument, else $LIGHTNING_CAS_M2, else `M2` on PATH."""
    if isinstance(m2, os.PathLike):
        m2 = os.fspath(m2)
    if m2 is not None and (not isinstance(m2, str) or "\x00" in m2):
        raise InputError(f"m2 must be the path or name of the Macaulay2 binary, got {shown(m2)}.")
    name = m2 or os.environ.get("LIGHTNING_CAS_M2") or "M2"
    return resolve_binary(name, "Macaulay2 binary", M2NotFoundError, INSTALL_HINT)


def work_dir() -> Path:
    """The working directory of every Macaulay2 process we start (private, owner-checked)."""
    return private_dir("m2work")


def m2_environment(heap: str = DEFAULT_HEAP, home: str | os.PathLike | None = None) -> dict[str, str]:
    """Environment for an M2 child: memory cap and a private HOME (M2 writes ~/.Macaulay2).

    ``home``: another private HOME (the notebook kernel's, which holds the installed package)."""
    env = dict(os.environ)
    # never a shared /tmp path: M2 reads and writes its HOME (init.m2, packages by name)
    env["HOME"] = str(private_dir("m2home") if home is None else home)
    env["GC_MAXIMUM_HEAP_SIZE"] = check_heap(heap)
    env.pop("PWD", None)  # the caller's directory is nothing M2 should know about
    return env


def kernel_environment(home: str | os.PathLike, heap: str = DEFAULT_HEAP) -> dict[str, str]:
    """Environment for the Macaulay2 Jupyter kernel that checks notebooks: M2's (a private HOME,
    where the kernel's M2 finds LightningCAS by name, and the heap cap), a plain terminal (no
    escape codes in cell outputs), no user kernel configuration, a quiet debugger.

    The kernel starts M2 in its own installed assets directory, so ``./`` on M2's path is never the
    notebook's or the caller's directory; run the kernel itself from :func:`work_dir`."""
    env = {k: v for k, v in m2_environment(heap, home).items() if k != "M2JK_CONFIG"}
    env.update(TERM="dumb", PYDEVD_DISABLE_FILE_VALIDATION="1")
    return env


@dataclass(frozen=True)
class M2Run:
    """What one M2 run printed, and how long it took."""

    script: str
    stdout: str
    stderr: str
    elapsed_s: float


def first_error(text: str) -> str | None:
    match = _ERROR_LINE.search(text)
    return match.group(0).strip() if match else None


def run_script(
    script: Path | str, timeout: float | None = DEFAULT_TIMEOUT, m2: str | None = None, heap: str = DEFAULT_HEAP
) -> M2Run:
    """Run ``M2 --script`` on a file; raises a specific M2Error on any failure."""
    script = str(script)
    try:
        binary = find_m2(m2)
    except M2NotFoundError as exc:
        raise M2NotFoundError(str(exc), script) from None
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(
            [binary, "--script", script],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=m2_environment(heap),
            cwd=work_dir(),
            start_new_session=True,
            preexec_fn=die_with_parent,
        )
    except OSError as exc:
        raise M2NotFoundError(f"cannot start Macaulay2 {binary!r}: {exc}; {INSTALL_HINT}", script) from None
    watch_group(proc.pid)
    try:
        stdout, stderr = _read_capped(proc, timeout, script, binary)
    except BaseException:  # the limits, KeyboardInterrupt, SIGTERM's exit: never leave M2 behind
        kill_group(proc)
        raise
    finally:
        # children M2 may have started (it rarely does) go with the group
        kill_quietly(proc.pid)
        end_watch(proc.pid)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        both = stderr + "\n" + stdout
        if proc.returncode < 0:
            raise M2CrashError(f"Macaulay2 was killed by signal {-proc.returncode}", script, both)
        if _OOM.search(both):
            raise M2CrashError(
                f"Macaulay2 ran out of memory (heap cap {heap}; raise it or use a smaller network or --method modp)",
                script,
                both,
            )
        err = first_error(both)
        if err:
            raise M2ScriptError(f"Macaulay2 error: {err}", script, both)
        raise M2CrashError(f"Macaulay2 exited with status {proc.returncode} without an error message", script, both)
    return M2Run(script, stdout, stderr, elapsed)


def _too_much(binary: str, script: str | None) -> M2OutputError:
    return M2OutputError(
        f"Macaulay2 ({binary}) printed more than {MAX_OUTPUT_BYTES // 2**20} MiB without "
        "finishing and was stopped; is it really Macaulay2?",
        script,
    )


def _read_capped(proc: subprocess.Popen, timeout: float | None, script: str, binary: str) -> tuple[str, str]:
    def late() -> M2TimeoutError:
        return M2TimeoutError(f"Macaulay2 exceeded the {timeout:g} s time limit and was stopped", script)

    end = None if timeout is None else time.monotonic() + timeout
    return read_capped(proc, end, MAX_OUTPUT_BYTES, late, lambda: _too_much(binary, script))


_VERSION_CACHE: dict[str, str] = {}


def m2_version(m2: str | None = None) -> str:
    """The Macaulay2 version string (``M2 --version``), cached per binary."""
    binary = find_m2(m2)
    if binary not in _VERSION_CACHE:
        out = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=60, env=m2_environment(), cwd=work_dir()
        )
        _VERSION_CACHE[binary] = out.stdout.strip() or "unknown"
    return _VERSION_CACHE[binary]


class M2Session:
    """A persistent M2 process for many small queries, without paying start-up each time.

    A unique prompt marks the end of every request; each request is one line, ``load "script"``.
    After an M2 error the session is back at the prompt (resynced) and the error is raised; if
    the process dies mid-request it is restarted and the request retried once.
    """

    def __init__(self, m2: str | None = None, heap: str = DEFAULT_HEAP, timeout: float = DEFAULT_TIMEOUT):
        self.timeout = check_timeout(timeout, "the session timeout")
        self.binary = find_m2(m2)
        self.heap = check_heap(heap)
        self.token = "@@LCAS-PROMPT-" + secrets.token_hex(8) + "@@"
        self.child = None
        self.starts = 0
        self._start()

    @property
    def restarts(self) -> int:
        """How many times M2 had to be started again (after a death, a timeout or a kill)."""
        return self.starts - 1

    def _start(self) -> None:
        import pexpect

        try:
            # searchwindowsize: the prompt is looked for in the newest output only, not in all of it again
            self.child = pexpect.spawn(
                self.binary,
                ["--no-readline", "--silent", "--no-debug", "-q"],
                env=m2_environment(self.heap),
                cwd=str(work_dir()),
                encoding="utf-8",
                codec_errors="replace",
                echo=False,
                timeout=self.timeout,
                maxread=65536,
                searchwindowsize=4 * len(self.token) + 65536,
                preexec_fn=die_with_parent,
            )
        except pexpect.ExceptionPexpect as exc:
            raise M2NotFoundError(f"cannot start Macaulay2 {self.binary!r}: {exc}; {INSTALL_HINT}") from None
        self.starts += 1
        watch_group(self.child.pid)
        # the prompt is built by concatenation so the echoed command never contains the token itself
        half = len(self.token) // 2
        prompt = f'concatenate(newline, "{self.token[:half]}", "{self.token[half:]}", newline)'
        private = 'value Core#"private dictionary"#'
        self.child.sendline(
            f'ZZ#{{Standard,{private}"InputPrompt"}} = lineno -> {prompt}; '
            f'ZZ#{{Standard,{private}"InputContinuationPrompt"}} = lineno -> "";'
        )
        self._expect_prompt(None, 60)

    def _expect_prompt(self, script: str | None, timeout: float) -> str:
        """What M2 printed up to the next prompt; at most ``timeout`` seconds and ``MAX_OUTPUT_BYTES``
        (checked between short waits: pexpect itself keeps all output until the prompt)."""
        import pexpect

        end = time.monotonic() + timeout
        try:
            while True:
                left = end - time.monotonic()
                if left <= 0:
                    self._kill()
                    raise M2TimeoutError(
                        f"Macaulay2 session exceeded the {timeout:g} s time limit and was stopped", script
                    )
                try:
                    self.child.expect_exact(self.token, timeout=min(_POLL_S, left))
                    break
                except pexpect.TIMEOUT:
                    if len(self.child.before or "") > MAX_OUTPUT_BYTES:
                        self._kill()
                        raise _too_much(self.binary, script) from None
        except pexpect.EOF:
            out = self.child.before or ""
            self._kill()
            if _OOM.search(out):
                raise M2CrashError(f"Macaulay2 session ran out of memory (heap cap {self.heap})", script, out) from None
            raise M2CrashError("Macaulay2 session died", script, out) from None
        return self.child.before or ""

    def _kill(self) -> None:
        if self.child is not None:
            kill_quietly(self.child.pid)
            end_watch(self.child.pid)
            try:
                self.child.close(force=True)
            except Exception:
                pass
        self.child = None

    @property
    def alive(self) -> bool:
        return self.child is not None and self.child.isalive()

    def run(self, script: Path | str, timeout: float | None = None) -> M2Run:
        """Load one script; returns what it printed. Retries once on a dead process."""
        script = str(script)
        if '"' in script or "\n" in script or "\\" in script:
            raise M2Error("script path contains characters that cannot be quoted for Macaulay2", script)
        for attempt in (0, 1):
            if not self.alive:
                self._kill()
                self._start()
            start = time.perf_counter()
            try:
                self.child.sendline(f'load "{script}"')
                out = self._expect_prompt(script, timeout or self.timeout)
            except M2OutputError:
                raise  # a restart would print as much again
            except M2CrashError:
                if attempt == 0:
                    continue
                raise
            except BaseException:  # the command's time limit (an alarm) or Ctrl-C mid-request: M2 is out of sync
                self._kill()
                raise
            err = first_error(out)
            if err:
                raise M2ScriptError(f"Macaulay2 error: {err}", script, out)
            return M2Run(script, out.replace("\r\n", "\n"), "", time.perf_counter() - start)
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.alive:
            try:
                self.child.sendline("exit 0")
                self.child.expect(__import__("pexpect").EOF, timeout=5)
            except Exception:
                pass
        self._kill()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
