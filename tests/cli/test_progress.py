"""What a user sees while one long run works: a spinner on stderr in a real terminal (a pexpect
pseudo-terminal), nothing with --json or --quiet, nothing when stderr is not a terminal."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
# 1728 weights: 0.4 s (a quick machine) to 2 s of exact rank mod p
LONG = ["dim", "--widths", "24,24,24", "--attention", "6,6", "--tokens", "3"]
# The child shows its line at once and redraws it every 20 ms, so what is tested does not hang on how quick the
# machine is against the half second after which a real run shows itself (a quick machine ranks LONG in less)
QUICK_DISPLAY = (
    "import lightning_cas.cli.progress as p; p.SHOW_AFTER_S = 0.0; p.REFRESH_S = 0.02; "
    "from lightning_cas.cli import main; main()"
)
SPINNER_LINE = re.compile(r"\r\S dim: exact rank mod \d+, run [12] of 2: [\d,]+ rows, rank \d+ of at most 1728")


def in_terminal(*args, timeout=300) -> tuple[str, int]:
    child = pexpect.spawn(
        sys.executable,
        ["-c", QUICK_DISPLAY, *args],
        env=ENV,
        cwd=str(REPO),
        encoding="utf-8",
        timeout=timeout,
        dimensions=(24, 160),
    )
    out = child.read()
    child.close()
    return out, child.exitstatus


def test_a_long_run_shows_what_it_does_then_clears_the_line():
    out, status = in_terminal(*LONG)
    assert status == 0, out[-2000:]
    assert SPINNER_LINE.search(out), out[-2000:]
    assert "run 2 of 2" in out  # both repetitions are shown
    before, answer = out.rsplit("\r\x1b[K", 1)  # the line is cleared before the answer is printed
    assert answer.startswith("widths=24,24,24") and "dimension " in answer
    assert "exact rank" not in answer


def test_a_run_in_a_forked_child_reports_too():
    """With --timeout the rank runs in a forked child (deadline.stoppable): its reports reach the line."""
    out, status = in_terminal(*LONG, "--timeout", "600")
    assert status == 0, out[-2000:]
    assert SPINNER_LINE.search(out), out[-2000:]


def test_json_and_quiet_show_nothing_even_in_a_terminal():
    out, status = in_terminal(*LONG, "--json")
    assert status == 0 and out.lstrip().startswith('{"kind": "DimensionResult"') and "exact rank" not in out
    out, status = in_terminal(*LONG, "--quiet")
    assert status == 0 and out.startswith("widths=24,24,24") and "exact rank" not in out and "\x1b" not in out


def test_nothing_on_stderr_when_it_is_not_a_terminal():
    proc = subprocess.run(
        [sys.executable, "-m", "lightning_cas", *LONG], cwd=REPO, env=ENV, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0 and proc.stderr == "" and proc.stdout.startswith("widths=24,24,24")


def test_a_macaulay2_run_shows_its_elapsed_time(m2):
    out, status = in_terminal("dim", "--widths", "2,2,2", "--attention", "1,1", "--method", "jacobian", "--m2", m2)
    assert status == 0, out[-2000:]
    assert re.search(r"\r\S dim \(Macaulay2, jacobian\)  \(\d+ s\)", out), out[-2000:]
