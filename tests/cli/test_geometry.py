"""The one progress display, as the geometry commands (and every other) use it: the work runs in the
caller's thread, the line is drawn on the side with the elapsed time and the limit, then cleared."""

from __future__ import annotations

import threading
import time

import pytest

from lightning_cas.cli import progress as display
from lightning_cas.cli.progress import progress_display
from lightning_cas.errors import TimeLimitError
from lightning_cas.system import progress
from lightning_cas.system.deadline import time_limit
from tests.support import wait_until


@pytest.fixture
def terminal(monkeypatch):
    """stderr taken for a 100-column terminal (the line is written to descriptor 2: read it with capfd)."""
    monkeypatch.setattr(display, "_stderr_terminal_width", lambda: 100)
    monkeypatch.setattr(display, "SHOW_AFTER_S", 0.0)
    monkeypatch.setattr(display, "REFRESH_S", 0.05)


def drawn(capfd, text: str, seconds: float = 20.0) -> str:
    """What the line wrote to stderr, read until it holds ``text`` (the first draw loads rich: slow when busy)."""
    seen = []

    def holds():
        seen.append(capfd.readouterr().err)
        return text in "".join(seen)

    wait_until(holds, seconds)
    return "".join(seen)


@pytest.mark.slow  # waits for a deadline: 4 s, so not in the fast loop
def test_the_work_runs_in_the_main_thread_so_the_one_deadline_stops_python_work(terminal, capfd):
    seen = {}
    before = threading.active_count()
    start = time.monotonic()
    with pytest.raises(TimeLimitError):
        with progress_display("implicit (Macaulay2)", task="busy", limit=3):
            seen["main"] = threading.current_thread() is threading.main_thread()
            with time_limit(3):
                while True:  # pure Python: only the deadline's alarm (main thread only) can stop it
                    pass
    assert seen["main"] and time.monotonic() - start < 5
    assert wait_until(lambda: threading.active_count() == before, 2, step=0.01), threading.enumerate()
    err = capfd.readouterr().err
    assert "implicit (Macaulay2): busy" in err and "limit 3 s" in err
    assert err.endswith("\r\x1b[K")  # the line is cleared, nothing stays behind on stderr


def test_the_line_shows_what_the_computation_reports_the_elapsed_time_and_the_limit(terminal, capfd):
    with progress_display("sweep", limit=9):
        progress.report("job 3", done=3, total=10, unit="jobs")
        err = drawn(capfd, "limit 9 s)")
    assert "sweep: job 3: 3 of 10 jobs" in err and "s, limit 9 s)" in err
    assert capfd.readouterr().err.endswith("\r\x1b[K")


def test_without_a_terminal_one_line_when_announced_and_nothing_otherwise(capfd):
    with progress_display("implicit (Macaulay2)", task="quiet work", announce=True):
        pass
    assert capfd.readouterr().err.strip() == "lightning-cas: quiet work ..."
    with progress_display("dim", task="quiet work"):
        pass
    with progress_display("implicit (Macaulay2)", task="quiet work", announce=True, quiet=True):
        pass
    assert capfd.readouterr().err == ""
