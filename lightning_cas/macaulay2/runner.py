"""Running Macaulay2: one script per process (batch), or a persistent session (many small queries).

Both isolate M2: its own process group (so a timeout kills everything it started), a memory cap
through ``GC_MAXIMUM_HEAP_SIZE``, a private ``HOME``, and the seed set by the script itself.
Every failure becomes a distinct ``M2Error`` subclass that names the script.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from lightning_cas.core.checks import check_timeout
from lightning_cas.core.files import private_dir
from lightning_cas.errors import M2CrashError, M2Error, M2NotFoundError, M2ScriptError, M2TimeoutError

DEFAULT_TIMEOUT = 600.0
DEFAULT_HEAP = "8G"
INSTALL_HINT = ("install it with `apt-get install -y --no-install-recommends macaulay2` (or `make setup`), "
                "or point --m2 / LIGHTNING_CAS_M2 at the binary")
_ERROR_LINE = re.compile(r"^.*\berror: .*$", re.MULTILINE)
_OOM = re.compile(r"out of memory|GC Warning: Out of Memory|Too many heap sections|cannot allocate", re.I)


def find_m2(m2: str | None = None) -> str:
    """The M2 binary: explicit argument, else $LIGHTNING_CAS_M2, else `M2` on PATH."""
    name = m2 or os.environ.get("LIGHTNING_CAS_M2") or "M2"
    found = shutil.which(name)
    if not found:
        raise M2NotFoundError(f"Macaulay2 binary {name!r} not found; {INSTALL_HINT}")
    return found


def m2_environment(heap: str = DEFAULT_HEAP) -> dict[str, str]:
    """Environment for an M2 child: memory cap and a private HOME (M2 writes ~/.Macaulay2)."""
    env = dict(os.environ)
    home = private_dir("m2home")  # never a shared /tmp path: M2 reads and writes its HOME
    env["HOME"] = str(home)
    env["GC_MAXIMUM_HEAP_SIZE"] = heap
    return env


def die_with_parent() -> None:
    """In the child before exec: ask Linux to SIGKILL M2 when its parent dies, so a killed
    lightning-cas never leaves an orphan M2 (it runs in its own session, out of reach otherwise)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    except Exception:  # not Linux: the timeout and process-group kill still apply
        pass


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


def run_script(script: Path | str, timeout: float | None = DEFAULT_TIMEOUT, m2: str | None = None,
               heap: str = DEFAULT_HEAP) -> M2Run:
    """Run ``M2 --script`` on a file; raises a specific M2Error on any failure."""
    script = str(script)
    try:
        binary = find_m2(m2)
    except M2NotFoundError as exc:
        raise M2NotFoundError(str(exc), script) from None
    start = time.perf_counter()
    try:
        proc = subprocess.Popen([binary, "--script", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, env=m2_environment(heap), start_new_session=True,
                                text=True, encoding="utf-8", errors="replace",  # a non-UTF-8 byte is no crash
                                preexec_fn=die_with_parent)
    except OSError as exc:
        raise M2NotFoundError(f"cannot start Macaulay2 {binary!r}: {exc}; {INSTALL_HINT}", script) from None
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        raise M2TimeoutError(f"Macaulay2 exceeded the {timeout:g} s time limit and was stopped", script) from None
    except BaseException:  # KeyboardInterrupt included: never leave M2 behind
        kill_group(proc)
        raise
    finally:
        # children M2 may have started (it rarely does) go with the group
        _kill_quietly(proc.pid)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        both = stderr + "\n" + stdout
        if proc.returncode < 0:
            raise M2CrashError(f"Macaulay2 was killed by signal {-proc.returncode}", script, both)
        if _OOM.search(both):
            raise M2CrashError(f"Macaulay2 ran out of memory (heap cap {heap}; raise it or use a smaller "
                               "network or --method modp)", script, both)
        err = first_error(both)
        if err:
            raise M2ScriptError(f"Macaulay2 error: {err}", script, both)
        raise M2CrashError(f"Macaulay2 exited with status {proc.returncode} without an error message", script, both)
    return M2Run(script, stdout, stderr, elapsed)


def kill_group(proc: subprocess.Popen) -> None:
    """Kill M2 and everything in its process group, then reap it."""
    _kill_quietly(proc.pid)
    try:
        proc.communicate(timeout=5)
    except Exception:
        pass


def _kill_quietly(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


_VERSION_CACHE: dict[str, str] = {}


def m2_version(m2: str | None = None) -> str:
    """The Macaulay2 version string (``M2 --version``), cached per binary."""
    binary = find_m2(m2)
    if binary not in _VERSION_CACHE:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60,
                             env=m2_environment())
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
        self.heap = heap
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
            self.child = pexpect.spawn(self.binary, ["--no-readline", "--silent", "--no-debug", "-q"],
                                       env=m2_environment(self.heap), encoding="utf-8", codec_errors="replace",
                                       echo=False,
                                       timeout=self.timeout, maxread=65536, preexec_fn=die_with_parent)
        except pexpect.ExceptionPexpect as exc:
            raise M2NotFoundError(f"cannot start Macaulay2 {self.binary!r}: {exc}; {INSTALL_HINT}") from None
        self.starts += 1
        # the prompt is built by concatenation so the echoed command never contains the token itself
        half = len(self.token) // 2
        prompt = f'concatenate(newline, "{self.token[:half]}", "{self.token[half:]}", newline)'
        private = 'value Core#"private dictionary"#'
        self.child.sendline(f'ZZ#{{Standard,{private}"InputPrompt"}} = lineno -> {prompt}; '
                            f'ZZ#{{Standard,{private}"InputContinuationPrompt"}} = lineno -> "";')
        self._expect_prompt(None, 60)

    def _expect_prompt(self, script: str | None, timeout: float | None) -> str:
        import pexpect

        try:
            self.child.expect_exact(self.token, timeout=timeout)
        except pexpect.TIMEOUT:
            self._kill()
            raise M2TimeoutError(f"Macaulay2 session exceeded the {timeout:g} s time limit and was stopped",
                                 script) from None
        except pexpect.EOF:
            out = self.child.before or ""
            self._kill()
            if _OOM.search(out):
                raise M2CrashError(f"Macaulay2 session ran out of memory (heap cap {self.heap})", script,
                                   out) from None
            raise M2CrashError("Macaulay2 session died", script, out) from None
        return self.child.before or ""

    def _kill(self) -> None:
        if self.child is not None:
            _kill_quietly(self.child.pid)
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
