"""Progress of one long computation: reported where the work is done, shown by whoever asked.

The backends say what they do at their natural steps, with :func:`report`: the exact rank streams
rows and knows its rank so far, the numeric backend counts its runs, a Macaulay2 run has only its
elapsed time (the watcher keeps that). Nothing here draws and nothing imports rich: the command line
shows the state on a terminal (``cli.progress.progress_display``), and without a watcher ``report``
costs one context-variable lookup.

The state lives in a small shared memory page, not in Python objects: ``deadline.stoppable`` runs
long C calls in a forked child, and the child's reports must reach the parent that draws. A
sequence number, odd while a report is being written, lets the reader skip a half-written state.
"""

from __future__ import annotations

import contextlib
import contextvars
import mmap
import struct
from dataclasses import dataclass

_HEAD = struct.Struct("<Qqq")  # sequence (odd while writing), done, total (-1: not known)
_TEXT_BYTES = 400  # task, unit and detail, UTF-8, separated by \x1f
_SEP = "\x1f"


@dataclass(frozen=True)
class Snapshot:
    """What the computation last reported."""

    task: str = ""
    done: int | None = None
    total: int | None = None
    unit: str = ""
    detail: str = ""


class Progress:
    """One computation's state, writable from this process and from its forked children."""

    def __init__(self):
        self._page = mmap.mmap(-1, _HEAD.size + 2 + _TEXT_BYTES)  # anonymous and shared across fork
        self._last = Snapshot()

    def update(
        self,
        task: str | None = None,
        *,
        done: int | None = None,
        total: int | None = None,
        unit: str | None = None,
        detail: str | None = None,
    ) -> None:
        """Set what is given; a new ``task`` clears the count and the detail of the previous one."""
        old = self.snapshot() or self._last
        if task is not None and task != old.task:
            old = Snapshot(task=task)
        new = Snapshot(
            old.task,
            old.done if done is None else int(done),
            old.total if total is None else int(total),
            old.unit if unit is None else unit,
            old.detail if detail is None else detail,
        )
        text = _SEP.join((new.task, new.unit, new.detail)).encode("utf-8")[:_TEXT_BYTES]
        seq = _HEAD.unpack_from(self._page, 0)[0]
        seq += 1 if seq % 2 == 0 else 2  # odd: being written
        _HEAD.pack_into(self._page, 0, seq, -1, -1)
        struct.pack_into(f"<H{_TEXT_BYTES}s", self._page, _HEAD.size, len(text), text)
        _HEAD.pack_into(
            self._page, 0, seq + 1, -1 if new.done is None else new.done, -1 if new.total is None else new.total
        )
        self._last = new

    def snapshot(self) -> Snapshot | None:
        """The last complete report (None while one is being written, or before the first)."""
        for _ in range(3):
            seq, done, total = _HEAD.unpack_from(self._page, 0)
            if seq == 0:
                return None
            size, raw = struct.unpack_from(f"<H{_TEXT_BYTES}s", self._page, _HEAD.size)
            if seq % 2 == 0 and _HEAD.unpack_from(self._page, 0)[0] == seq:
                task, unit, detail = (raw[:size].decode("utf-8", "replace").split(_SEP) + ["", "", ""])[:3]
                return Snapshot(task, None if done < 0 else done, None if total < 0 else total, unit, detail)
        return None


_current: contextvars.ContextVar[Progress | None] = contextvars.ContextVar("lightning_cas_progress", default=None)


@contextlib.contextmanager
def watching(state: Progress):
    """Make ``state`` the one that :func:`report` writes to, in this context (and its forked children)."""
    token = _current.set(state)
    try:
        yield state
    finally:
        _current.reset(token)


def report(
    task: str | None = None,
    *,
    done: int | None = None,
    total: int | None = None,
    unit: str | None = None,
    detail: str | None = None,
) -> None:
    """Tell the watcher, if there is one, what the computation is doing (see :meth:`Progress.update`)."""
    state = _current.get()
    if state is not None:
        state.update(task, done=done, total=total, unit=unit, detail=detail)
