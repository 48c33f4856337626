"""The geometry commands' progress display: work in the caller's thread, display on the side."""

from __future__ import annotations

import io
import threading
import time

import pytest
from rich.console import Console

from lightning_cas.cli.geometry import run_with_progress, spinner
from lightning_cas.system.deadline import time_limit
from lightning_cas.errors import TimeLimitError
from tests.support import wait_until


def test_the_work_runs_in_the_main_thread_so_the_one_deadline_stops_python_work():
    buf = io.StringIO()
    seen = {}

    def busy():
        seen["main"] = threading.current_thread() is threading.main_thread()
        with time_limit(0.5):
            while True:  # pure Python: only the deadline's alarm (main thread only) can stop it
                pass

    before = threading.active_count()
    start = time.monotonic()
    with pytest.raises(TimeLimitError):
        run_with_progress("busy", busy, 0.5, Console(file=buf, force_terminal=True))
    assert seen["main"] and time.monotonic() - start < 5
    # nothing left spinning behind the error (rich's refresh thread ends on its own, unjoined: wait for it)
    assert wait_until(lambda: threading.active_count() == before, 2, step=0.01), threading.enumerate()
    assert "busy" in buf.getvalue() and "stopped after" in buf.getvalue()


def test_the_spinner_shows_the_elapsed_time_and_the_limit_and_a_closing_line():
    buf = io.StringIO()
    with spinner(Console(file=buf, force_terminal=True, width=100), "waiting", 9, every_s=0.05):
        time.sleep(0.3)
    text = buf.getvalue()
    assert "waiting" in text and "(limit 9 s)" in text and "waiting: done in" in text


def test_without_a_terminal_one_line_and_the_plain_result(capsys):
    assert run_with_progress("quiet work", lambda: 42) == 42
    assert capsys.readouterr().err.strip() == "lightning-cas: quiet work ..."
