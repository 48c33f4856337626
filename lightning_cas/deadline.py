"""One time limit per command, for Python work and Macaulay2 runs alike.

A verb opens ``time_limit(timeout)``; everything it calls shares that one ``Deadline``:
Macaulay2 runs get ``deadline.left()`` as their own limit (the runner kills the process group),
Python loops call ``deadline.check()`` between steps, and in the main thread a ``SIGALRM``
interrupts long pure-Python, numpy or sympy work between two bytecodes. Why an alarm and not a
child process: the result objects, sessions and caches stay in this process (nothing to pickle,
an ``M2Session`` keeps working), and stopping costs nothing. The price: one long C call (a
python-flint rank, one numpy kernel) finishes before the alarm is seen, and outside the main
thread only the cooperative checks and the Macaulay2 limits apply.
"""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager

from lightning_cas.errors import TimeLimitError

_local = threading.local()


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


def current() -> Deadline:
    """The innermost active deadline of this thread (an unlimited one outside any verb)."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else Deadline(None)


def check() -> None:
    """Cooperative check against the current deadline (a no-op without one)."""
    current().check()


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
            raise deadline.expired_error()
        old_handler = signal.signal(signal.SIGALRM, on_alarm)
        old_delay, _ = signal.setitimer(signal.ITIMER_REAL, max(deadline.end - time.monotonic(), 1e-3))
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

