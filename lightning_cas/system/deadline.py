"""One time limit per command, for Python work and Macaulay2 runs alike.

A verb opens ``time_limit(timeout)``; everything it calls shares that one ``Deadline``, enforced
three ways, each where it fits:

* Macaulay2 runs get ``deadline.left()`` as their own limit (the runner kills the process group);
* Python work in the main thread is interrupted by a ``SIGALRM`` between two bytecodes (sympy,
  loops over numpy calls), and loops call ``check()`` between steps (any thread). The alarm never
  cuts what must finish: the report of an error already on its way, a cleanup, a limit's own set-up
  and clean-up, an import (``_must_wait``); there it waits and fires again a moment later, so a time
  limit always ends in its one line and leaves no alarm armed behind it;
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
import sys
import threading
import time
from contextlib import contextmanager

from lightning_cas.errors import LightningError, M2TimeoutError, TimeLimitError

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
        return TimeLimitError(
            f"the {self.timeout:g} s time limit ran out{suffix}; raise --timeout or choose a smaller architecture."
        )

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
        raise M2TimeoutError(
            f"Macaulay2 exceeded the {deadline.timeout:g} s time limit and was stopped", exc.script, exc.output
        ) from None


def current() -> Deadline:
    """The innermost active deadline of this thread (an unlimited one outside any verb)."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else Deadline(None)


def check() -> None:
    """Cooperative check against the current deadline (a no-op without one)."""
    current().check()


REFIRE_S = 0.05  # an expired alarm fires again this often until its exception gets through
# while one of these is being handled the command (or the sweep job) is ending already: its report and its
# cleanups (killing a child, a Macaulay2 process group) run to the end, and the alarm only fires again later
_ENDING = (LightningError, SystemExit, KeyboardInterrupt)
_SHIELDED: set = set()  # the code of functions an alarm never cuts (see shielded)


def shielded(fn):
    """Mark ``fn`` as code the alarm never cuts: an alarm landing in it, or in anything it calls, waits
    REFIRE_S and tries again. For short code that must finish: the one-line report of an error, a limit's
    own set-up and clean-up. A raise there would replace the report by a bare exception (nothing on
    stderr), or leave an alarm armed and a deadline on the stack after the limit's end."""
    _SHIELDED.add(fn.__code__)
    return fn


def _must_wait(frame) -> bool:
    """Whether an alarm landing at ``frame`` must wait: an ending exception is being handled, the frame
    is (called from) shielded code, or a module is being imported (a half-run import leaves the module
    broken for the rest of the process, e.g. a sweep worker's next job; an import ends on its own)."""
    if isinstance(sys.exc_info()[1], _ENDING):
        return True
    while frame is not None:
        code = frame.f_code
        if code in _SHIELDED or code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _alarm_allowed() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


class _Limit:
    """The context manager of ``time_limit``; a class, not a generator, so that its set-up and clean-up
    are shielded functions (a generator's clean-up runs from contextlib's ``__exit__``, where an alarm
    could land first and skip it)."""

    def __init__(self, timeout: float | None):
        self.timeout = timeout
        self.armed = self.live = False

    @shielded
    def __enter__(self) -> Deadline:
        outer = current()
        deadline = Deadline(self.timeout)
        if outer.end is not None and (deadline.end is None or outer.end <= deadline.end):
            deadline = outer
        self.deadline = deadline
        self.stack = getattr(_local, "stack", None)
        if self.stack is None:
            self.stack = _local.stack = []
        self.stack.append(deadline)
        self.armed = self.live = deadline is not outer and deadline.end is not None and _alarm_allowed()
        if self.armed:
            self.old_hook = sys.unraisablehook
            sys.unraisablehook = self._dropped
            self.old_handler = signal.signal(signal.SIGALRM, self._on_alarm)
            self.old_delay, _ = signal.setitimer(
                signal.ITIMER_REAL, max(deadline.end + ALARM_GRACE_S - time.monotonic(), 1e-3)
            )
            self.armed_at = time.monotonic()
        return deadline

    def _on_alarm(self, _signum, frame):
        if not self.live:
            return
        # set again first: Python drops an exception raised where it cannot propagate (a gc callback, a
        # __del__), and library code may swallow it; the alarm fires again until the limit reaches the body
        signal.setitimer(signal.ITIMER_REAL, REFIRE_S)
        if _must_wait(frame):
            return
        raise self.deadline.expired_error()

    def _dropped(self, unraisable):
        """A dropped alarm is not news: it fires again; anything else goes to the hook there was."""
        if self.live and isinstance(unraisable.exc_value, TimeLimitError):
            return
        self.old_hook(unraisable)

    @shielded
    def __exit__(self, *_exc) -> bool:
        if self.armed:
            self.live = False  # first: from here on the handler does nothing
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.old_handler)
            sys.unraisablehook = self.old_hook
            if self.old_delay > 0:  # an outer alarm (e.g. a sweep job's) keeps its own end
                signal.setitimer(signal.ITIMER_REAL, max(self.old_delay - (time.monotonic() - self.armed_at), 1e-3))
        self.stack.pop()
        return False


def time_limit(timeout: float | None) -> _Limit:
    """Run the body under ``timeout`` seconds, or under the enclosing limit if that ends sooner
    (``with time_limit(t) as deadline:``)."""
    return _Limit(timeout)


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
