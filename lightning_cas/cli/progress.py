"""The one progress display of every command: a rich spinner line on stderr, drawn from what the
computation reports through system.progress (Macaulay2 stages, rows, ranks, digits) with the elapsed
time and the command's limit; cleared when the run ends. Without a terminal, nothing, or (for the
Macaulay2 commands, whose runs take minutes) one line saying what runs, as logs want."""

from __future__ import annotations

import contextlib
import io
import os
import threading
import time

import click

from lightning_cas.results.display import printable
from lightning_cas.system import progress
from lightning_cas.system.deadline import shielded

SHOW_AFTER_S = 0.5  # runs shorter than this show nothing
REFRESH_S = 0.25


def _stderr_terminal_width() -> int | None:
    """The width of the terminal on stderr, or None when stderr is not a terminal."""
    try:
        if not os.isatty(2):
            return None
        return os.get_terminal_size(2).columns
    except (OSError, ValueError):
        return None


def describe_progress(label: str, snap: progress.Snapshot | None, elapsed: float, limit: float | None = None) -> str:
    """One line: what runs, how far it is, for how long and (with a limit) for how long at most."""
    parts = [label]
    if snap is not None and snap.task:
        parts.append(snap.task)
    line = ": ".join(parts)
    if snap is not None:
        count = ""
        if snap.done is not None:
            count = f"{snap.done:,}" + (f" of {snap.total:,}" if snap.total is not None else "")
            count += f" {snap.unit}" if snap.unit else ""
        extra = ", ".join(x for x in (count, snap.detail) if x)
        if extra:
            line += f": {extra}"
    return f"{line}  ({elapsed:.0f} s" + (f", limit {limit:g} s)" if limit else ")")


class _ProgressLine(threading.Thread):
    """Redraws one line on stderr from the shared state until stopped.

    It writes with os.write on the descriptor and renders with a console of its own: the
    computation may fork (deadline.stoppable) while this thread runs, and a child must never
    inherit a lock of sys.stderr or of a shared console held by this thread.
    """

    def __init__(self, label: str, state: progress.Progress, width: int, limit: float | None = None):
        super().__init__(name="lightning-cas progress", daemon=True)
        self.label, self.state, self.width, self.limit = label, state, max(20, width - 1), limit
        self.finished = threading.Event()
        self.shown = False
        # rich is imported here, in the caller's thread: were this thread importing while the computation
        # forks (deadline.stoppable), the child would inherit a held import lock and hang at its first import
        from rich.console import Console
        from rich.spinner import Spinner
        from rich.text import Text

        self.rich = (Console, Spinner, Text)
        # one render here too, so what rich imports on its first drawing is loaded in this thread as well
        Console(file=io.StringIO(), width=40, force_terminal=True).print(Spinner("dots", text=Text("")), end="")

    def run(self) -> None:
        Console, Spinner, Text = self.rich  # imported by the caller: this thread never imports (see start)
        start = time.monotonic()
        spinner = Spinner("dots")
        while not self.finished.wait(REFRESH_S):
            elapsed = time.monotonic() - start
            if elapsed < SHOW_AFTER_S:
                continue
            text = printable(describe_progress(self.label, self.state.snapshot(), elapsed, self.limit))
            spinner.update(text=Text(text, no_wrap=True, overflow="ellipsis"))
            buffer = io.StringIO()
            Console(file=buffer, width=self.width, force_terminal=True, highlight=False).print(spinner, end="")
            line = buffer.getvalue().split("\n", 1)[0]
            try:
                os.write(2, ("\r" + line + "\x1b[K").encode("utf-8", "replace"))
                self.shown = True
            except OSError:
                return

    @shielded  # the line is cleared even when the time limit runs out right then: the error line starts clean
    def stop(self) -> None:
        self.finished.set()
        self.join(2 * REFRESH_S + 1)
        if self.shown:
            try:
                os.write(2, b"\r\x1b[K")  # the line goes: stderr keeps only messages
            except OSError:
                pass


def run_label(command: str, method: str | None) -> str:
    """How the progress line names a run: the command, and the method when it is not the default."""
    if method in ("jacobian", "implicit", "m2"):
        return f"{command} (Macaulay2, {method})"
    return command if method in (None, "auto") else f"{command} ({method})"


@contextlib.contextmanager
def progress_display(
    label: str, *, quiet: bool = False, task: str | None = None, limit: float | None = None, announce: bool = False
):
    """While the body runs (in the caller's thread, where the command's deadline applies), a rich
    spinner on stderr says what the computation reports (system.progress), for how long, and the
    ``limit`` (seconds) when there is one; on a terminal only, never with --json or --quiet, and not
    for runs shorter than half a second. The line is cleared when the body ends. ``task``: what
    runs before the computation says more. ``announce``: without a terminal, print ``task`` once."""
    width = None if quiet else _stderr_terminal_width()
    if width is None:
        if announce and not quiet and task:
            click.echo(f"lightning-cas: {printable(task)} ...", err=True)
        yield None
        return
    state = progress.Progress()
    if task:
        state.update(task)
    line = _ProgressLine(label, state, width, limit)
    with progress.watching(state):
        line.start()
        try:
            yield state
        finally:
            line.stop()
