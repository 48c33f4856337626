"""The Macaulay2 connection: everything a run needs, passed as one object.

A ``Macaulay2`` carries the binary, the heap cap, an optional persistent ``M2Session`` and the
deadline the runs share; ``run`` renders one template, runs it (as a script, or in the session)
under what is left of that deadline, and returns the script's path and its one JSON record. The
verbs build it once (``lightning_cas.options.resolve``) and hand it down, so no function below a
verb takes a timeout, a binary or a session of its own, and there is one time limit per command.
"""

from __future__ import annotations

from dataclasses import dataclass

from lightning_cas.system.deadline import Deadline, current, m2_limit
from lightning_cas.macaulay2.parse import json_record
from lightning_cas.macaulay2.render import write_script
from lightning_cas.macaulay2.runner import DEFAULT_HEAP, DEFAULT_TIMEOUT, M2Session, check_heap, run_script


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

    def run(self, template: str, params: dict) -> tuple[str, dict]:
        """Render ``m2/templates/<template>.m2`` with ``params``, run it, and return (script path, its JSON record).

        Without any limit a script still stops after ``DEFAULT_TIMEOUT`` seconds (a session after
        its own timeout): Macaulay2 never runs unbounded.
        """
        deadline = self.limit()
        left = deadline.left("before the next Macaulay2 run")
        script = write_script(template, **params)
        with m2_limit(deadline):
            if self.session is not None:
                out = self.session.run(script, timeout=left)
            else:
                out = run_script(script, timeout=DEFAULT_TIMEOUT if left is None else left, m2=self.binary,
                                 heap=self.heap)
        return str(script), json_record(out.stdout, str(script))
