"""The progress protocol: what a computation reports is what its watcher reads, across a fork too."""

from __future__ import annotations

import os

from lightning_cas.system import progress
from lightning_cas.system.progress import Progress, Snapshot


def test_reports_reach_the_watcher_and_a_new_task_clears_the_count():
    state = Progress()
    assert state.snapshot() is None
    progress.report("nobody listens", done=3)  # no watcher: nothing happens, nothing fails
    with progress.watching(state):
        progress.report("exact rank mod 7, run 1 of 2")
        progress.report(done=384, unit="rows", detail="rank 12 of at most 40")
        assert state.snapshot() == Snapshot("exact rank mod 7, run 1 of 2", 384, None, "rows", "rank 12 of at most 40")
        progress.report("exact rank mod 5, run 2 of 2")
        assert state.snapshot() == Snapshot("exact rank mod 5, run 2 of 2")
        progress.report("spectra", done=1, total=3, unit="runs")
        assert state.snapshot() == Snapshot("spectra", 1, 3, "runs", "")
    progress.report("after the watcher", done=9)
    assert state.snapshot().task == "spectra"


def test_a_forked_child_reports_to_its_parent():
    """deadline.stoppable runs long C calls in a forked child; its reports must reach the display."""
    state = Progress()
    with progress.watching(state):
        progress.report("in the parent")
        pid = os.fork()
        if pid == 0:
            try:
                progress.report("in the child", done=12345, unit="rows", detail="rank 99")
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
    assert state.snapshot() == Snapshot("in the child", 12345, None, "rows", "rank 99")


def test_long_text_is_cut_not_refused():
    state = Progress()
    state.update("x" * 5000, detail="é" * 300)
    snap = state.snapshot()
    assert snap.task.startswith("xxx") and len(snap.task.encode()) <= 400
