"""Where the alarm of a time limit may land, and where it waits: a limit always ends in its one error, with
its report, its cleanups and its imports run to the end and no alarm left armed behind it."""

from __future__ import annotations

import gc
import importlib
import signal
import sys
import time

import pytest

from lightning_cas.errors import InputError, TimeLimitError
from lightning_cas.system import deadline
from lightning_cas.system.deadline import current, shielded, time_limit

BUSY_S = 0.3  # several refire periods: an alarm that did not wait would surely land in it


@pytest.fixture
def prompt_alarm(monkeypatch):
    """The alarm at the limit itself (no grace), so that each test takes a fraction of a second."""
    monkeypatch.setattr(deadline, "ALARM_GRACE_S", 0.0)


def busy(seconds: float = BUSY_S) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def spin_until_stopped() -> None:
    end = time.monotonic() + 10
    while time.monotonic() < end:
        pass
    raise AssertionError("the alarm never came")


def test_the_report_of_an_error_is_not_cut_by_the_alarm(prompt_alarm):
    """The alarm lands while a refusal is being handled (reported, cleaned up): it waits for the handling to
    end (a second error raised there left the command with nothing on stderr), then stops the body."""
    finished = []
    with pytest.raises(TimeLimitError):
        with time_limit(0.01):
            try:
                raise InputError("refused")
            except InputError:
                busy()
                finished.append("report")
            spin_until_stopped()
    assert finished == ["report"]


def test_shielded_code_runs_to_its_end(prompt_alarm):
    finished = []

    @shielded
    def report():
        busy()
        finished.append("report")

    with pytest.raises(TimeLimitError):
        with time_limit(0.01):
            report()
            spin_until_stopped()
    assert finished == ["report"]


def test_an_alarm_dropped_in_a_destructor_says_nothing_and_fires_again(prompt_alarm, monkeypatch):
    """Python drops an exception raised in a __del__ or a gc callback and hands it to sys.unraisablehook,
    which prints 'Exception ignored in' and a traceback; a dropped alarm says nothing and comes again."""
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)

    class Slow:
        def __del__(self):
            busy()

    with pytest.raises(TimeLimitError):
        with time_limit(0.01):
            Slow()  # deleted at once: its __del__ is running when the alarm comes
            spin_until_stopped()
    gc.collect()
    assert reported == [] and sys.unraisablehook == reported.append


def test_an_import_is_not_cut_in_half(prompt_alarm, tmp_path, monkeypatch):
    """A half-run import leaves a broken module for the rest of the process (a sweep worker's next job):
    the alarm waits for the import, then stops the body."""
    (tmp_path / "slow_to_import.py").write_text(
        "import time\nend = time.monotonic() + %r\nwhile time.monotonic() < end:\n    pass\nloaded = True\n" % BUSY_S
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "slow_to_import", raising=False)
    with pytest.raises(TimeLimitError):
        with time_limit(0.01):
            module = importlib.import_module("slow_to_import")
            spin_until_stopped()
    assert module.loaded and sys.modules["slow_to_import"] is module


def test_no_alarm_outlives_its_limit(prompt_alarm):
    """Whatever the alarm interrupted, the limit's end disarms it and restores the handler there was."""
    before, hook = signal.getsignal(signal.SIGALRM), sys.unraisablehook
    for _ in range(3):
        with pytest.raises(TimeLimitError):
            with time_limit(0.01):
                try:
                    spin_until_stopped()
                finally:
                    busy(0.1)  # a cleanup during which the alarm fires again
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is before and sys.unraisablehook is hook and current().end is None


def test_an_inner_limit_gives_the_outer_alarm_back(prompt_alarm):
    with pytest.raises(TimeLimitError, match="0.3 s"):
        with time_limit(0.3):
            with time_limit(0.01), pytest.raises(TimeLimitError, match="0.01 s"):
                spin_until_stopped()
            spin_until_stopped()
