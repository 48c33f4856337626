"""One time limit per command, for Python work and Macaulay2 runs alike.

A verb opens ``time_limit(timeout)``; everything it calls shares that one ``Deadline``, enforced
three ways, each where it fits:

* Macaulay2 runs get ``deadline.left()`` as their own limit (the runner kills the process group);
* Python work in the main thread is interrupted by a ``SIGALRM`` between two bytecodes (sympy,
  loops over numpy calls), and loops call ``check()`` between steps (any thread);
* the few long *C* calls an alarm cannot interrupt (a python-flint rank of a large matrix, a
  float SVD, an arb high-precision spectrum: seconds each) go through ``stoppable``, which runs
  them in a forked child that is killed at the limit.

Children die with the command: a forked child and every Macaulay2 process ask Linux for SIGKILL
when their parent dies (``die_with_parent``, so even a SIGKILLed command leaves no orphan), and the
command line turns SIGTERM into an exit that runs every cleanup (``exit_on_terminate``, so the
process groups of Macaulay2 runs are killed as on any other exit path).

Why not a child process for everything: results, sessions and caches stay in this process
(an ``M2Session`` keeps working, nothing to pickle), and stopping pure-Python work costs nothing.
Why not the alarm alone: a C call would finish first (measured: 2-6 s over the limit on this
machine). Without a limit nothing forks, so results and speed are those of a plain call.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import threading
import time
from contextlib import contextmanager

from lightning_cas.errors import M2TimeoutError, TimeLimitError

_local = threading.local()
# the alarm is the backstop: it comes a moment after the end, so that a Macaulay2 run or a stoppable
# child reaching the limit first reports it with its own details (the script that was stopped)
ALARM_GRACE_S = 1.0


class Deadline:
    """A point in time after which the command stops; ``timeout=None`` means no limit."""

    def __init__(self, timeout: float | None):
        self.timeout = timeout
        self.end = None if timeout is None else time.monotonic() + timeout

    def expired_error(self, what: str = "") -> TimeLimitError:
        suffix = f" {what}" if what else ""
        return TimeLimitError(f"the {self.timeout:g} s time limit ran out{suffix}; raise --timeout or choose a "
                              "smaller architecture.")

    def left(self, what: str = "before the next step") -> float | None:
        """Seconds left (None: unlimited); raises TimeLimitError when none are."""
        if self.end is None:
            return None
        rest = self.end - time.monotonic()
        if rest <= 0:
            raise self.expired_error(what)
        return rest

    def check(self) -> None:
        """Cooperative check for Python loops."""
        self.left()


@contextmanager
def m2_limit(deadline: Deadline):
    """A Macaulay2 run given what was left of the command's limit reports that limit, not the remainder."""
    try:
        yield
    except M2TimeoutError as exc:
        if deadline.timeout is None:
            raise
        raise M2TimeoutError(f"Macaulay2 exceeded the {deadline.timeout:g} s time limit and was stopped",
                             exc.script, exc.output) from None


def current() -> Deadline:
    """The innermost active deadline of this thread (an unlimited one outside any verb)."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else Deadline(None)


def check() -> None:
    """Cooperative check against the current deadline (a no-op without one)."""
    current().check()


REFIRE_S = 0.05  # an expired alarm fires again this often until its exception gets through


def _alarm_allowed() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(timeout: float | None):
    """Run the body under ``timeout`` seconds, or under the enclosing limit if that ends sooner."""
    outer = current()
    deadline = Deadline(timeout)
    if outer.end is not None and (deadline.end is None or outer.end <= deadline.end):
        deadline = outer
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    stack.append(deadline)
    armed = deadline is not outer and deadline.end is not None and _alarm_allowed()
    if armed:
        def on_alarm(_signum, _frame):
            # Python drops an exception raised where it cannot propagate (a gc callback, a __del__): the
            # alarm is set again first, so a dropped one fires again until the limit reaches the body
            signal.setitimer(signal.ITIMER_REAL, REFIRE_S)
            raise deadline.expired_error()
        old_handler = signal.signal(signal.SIGALRM, on_alarm)
        old_delay, _ = signal.setitimer(signal.ITIMER_REAL,
                                        max(deadline.end + ALARM_GRACE_S - time.monotonic(), 1e-3))
        armed_at = time.monotonic()
    try:
        yield deadline
    finally:
        if armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_handler)
            if old_delay > 0:  # an outer alarm (e.g. a sweep job's) keeps its own end
                signal.setitimer(signal.ITIMER_REAL, max(old_delay - (time.monotonic() - armed_at), 1e-3))
        stack.pop()



def die_with_parent() -> None:
    """In a child (before exec, or right after fork): ask Linux to SIGKILL it when its parent dies,
    so a killed lightning-cas never leaves a computation or a Macaulay2 behind. Elsewhere a no-op:
    the time limits and process-group kills still apply."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    except Exception:
        pass


def _terminate(signum, _frame):
    raise SystemExit(128 + signum)


def exit_on_terminate() -> None:
    """SIGTERM becomes ``SystemExit(143)`` in the main thread: the ``finally`` blocks run, so the
    forked children are killed and reaped and Macaulay2's process groups (with anything M2 started)
    are killed, as when the command stops for any other reason."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)


def stoppable(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, in a forked child when a time limit is active, killed when it runs out.

    The value (or the exception) comes back pickled; without a limit, or without ``fork``, it is a
    plain call.
    """
    deadline = current()
    if deadline.end is None or not hasattr(os, "fork"):
        return fn(*args, **kwargs)
    deadline.check()
    read_end, write_end = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: compute, send, leave without running the parent's cleanup
        status = 1
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            die_with_parent()
            if os.getppid() != parent:  # the parent died before the request took effect
                os._exit(1)
            os.close(read_end)
            try:
                payload = pickle.dumps((True, fn(*args, **kwargs)))
            except BaseException as exc:  # noqa: BLE001 - handed to the parent, which re-raises it
                try:
                    payload = pickle.dumps((False, exc))
                except Exception:
                    payload = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
            with os.fdopen(write_end, "wb") as out:
                out.write(payload)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    chunks, reaped = [], False
    try:
        while True:
            left = deadline.end - time.monotonic()
            if left <= 0:
                raise deadline.expired_error()
            ready, _, _ = select.select([read_end], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(read_end, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        os.waitpid(pid, 0)
        reaped = True
    finally:
        os.close(read_end)
        if not reaped:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
    if not chunks:
        raise RuntimeError("the stoppable computation ended without a result")
    ok, value = pickle.loads(b"".join(chunks))
    if ok:
        return value
    raise value
