"""The Macaulay2 connection: everything a run needs, passed as one object.

A ``Macaulay2`` carries the binary, the heap cap, an optional persistent ``M2Session`` and the
deadline the runs share; ``run`` renders one template, runs it (as a script, or in the session)
under what is left of that deadline, and returns the script's path and its one JSON record. The
verbs build it once (``lightning_cas.options.resolve``) and hand it down, so no function below a
verb takes a timeout, a binary or a session of its own, and there is one time limit per command.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lightning_cas.macaulay2.defaults import DEFAULT_HEAP, DEFAULT_TIMEOUT, check_heap
from lightning_cas.system.deadline import Deadline, current, m2_limit

if TYPE_CHECKING:
    from lightning_cas.macaulay2.runner import M2Session


# the session every connection without its own runs in (see share_session), and the process that
# shared it; None: one process per script
_SHARED: dict = {"session": None, "pid": None}


def share_session(session: M2Session | None) -> M2Session | None:
    """Let every connection that names no session of its own run in ``session``; None goes back to one
    process per script. Returns the session shared before.

    For a program that calls many verbs in one process (a test suite, a notebook, a long-lived
    worker): Macaulay2 starts and loads the package once. Only connections to the session's own
    binary with its heap cap use it; any other binary or heap still gets a process of its own, and
    so does every forked child (a pool worker must never talk to its parent's Macaulay2).
    """
    previous = _SHARED["session"]
    _SHARED.update(session=session, pid=os.getpid())
    return previous


def shared_session() -> M2Session | None:
    """The session :func:`share_session` installed in this process, or None."""
    return _SHARED["session"] if _SHARED["pid"] == os.getpid() else None


@dataclass(frozen=True)
class Macaulay2:
    """How to reach Macaulay2 for the runs of one command.

    ``binary``: a path or name (None: ``$LIGHTNING_CAS_M2``, else ``M2`` on PATH), looked up at the
    first run, so a command that never needs Macaulay2 never asks for it. ``session``: when given,
    every run is a ``load`` in that process (its own binary and heap apply). ``deadline``: None
    means the command's current one (``lightning_cas.system.deadline.current()`` at the time of the
    run), which is what a verb wants: it opens its time limit after building the connection.
    """

    binary: str | None = None
    heap: str = DEFAULT_HEAP
    session: M2Session | None = None
    deadline: Deadline | None = None

    def __post_init__(self):
        check_heap(self.heap)  # an invalid cap would be ignored by Macaulay2's collector: no cap at all

    def limit(self) -> Deadline:
        """The deadline the next run is bounded by."""
        return self.deadline if self.deadline is not None else current()

    def session_to_use(self) -> M2Session | None:
        """This connection's session, else the shared one when it runs this binary with this heap, else None."""
        if self.session is not None:
            return self.session
        shared = _SHARED["session"]
        if shared is None or shared.heap != self.heap or _SHARED["pid"] != os.getpid():
            return None
        from lightning_cas.errors import M2Error
        from lightning_cas.macaulay2.runner import find_m2

        try:
            return shared if find_m2(self.binary) == shared.binary else None
        except M2Error:
            return None

    def run(self, template: str, params: dict) -> tuple[str, dict]:
        """Render ``m2/templates/<template>.m2`` with ``params``, run it, and return (script path, its JSON record).

        Without any limit a script still stops after ``DEFAULT_TIMEOUT`` seconds (a session after
        its own timeout): Macaulay2 never runs unbounded.
        """
        # the renderer, the parser and the process machinery load at the first run, not with the connection
        from lightning_cas.macaulay2.parse import json_record
        from lightning_cas.macaulay2.render import write_script
        from lightning_cas.macaulay2.runner import run_script

        deadline = self.limit()
        left = deadline.left("before the next Macaulay2 run")
        script = write_script(template, **params)
        session = self.session_to_use()
        with m2_limit(deadline):
            if session is not None:
                out = session.run(script, timeout=left)
            else:
                out = run_script(
                    script, timeout=DEFAULT_TIMEOUT if left is None else left, m2=self.binary, heap=self.heap
                )
        return str(script), json_record(out.stdout, str(script))
