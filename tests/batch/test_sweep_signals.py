"""Sweeps stopped by signals: real sweeps (the command line, a process pool) started and killed.

A Macaulay2 job here runs a stand-in ``M2`` that sleeps and leaves a detached child, so that a job is
surely running when the signal comes; every process a test starts carries a tag in its environment,
so the test can find what outlived the sweep.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.support import wait_until

REPO = Path(__file__).resolve().parents[2]
SLEEPER = "#!/bin/sh\nsleep 300 &\nsleep 300\n"  # a Macaulay2 that never answers and leaves a child behind


def tagged(tag: str) -> set[int]:
    """The live (not zombie) processes whose environment holds the tag."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if tag.encode() in env and state != "Z":
            found.add(int(entry))
    return found


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # it has just ended
        return b""


def stat_field(pid: int, index: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[index]


def sleepers(tag: str) -> set[int]:
    return {p for p in tagged(tag) if b"sleep" in cmdline(p)}


class Sweep:
    """One ``lightning-cas sweep`` in its own session, its processes tagged; killed with all it left on exit."""

    def __init__(self, tmp: Path, spec: str, *args):
        self.tag = f"LCAS_SIGNAL_TEST={uuid.uuid4().hex}"
        fake = tmp / "M2"
        if not fake.exists():
            fake.write_text(SLEEPER)
            fake.chmod(0o755)
        (tmp / "s.toml").write_text(spec)
        self.out = tmp / "out"
        key, value = self.tag.split("=")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lightning_cas", "sweep", tmp / "s.toml", "--out", self.out, "--m2", fake, "-q"]
            + list(map(str, args)),
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, key: value},
            start_new_session=True,
        )

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for pid in tagged(self.tag):  # only what this test started
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.kill()
        self.proc.communicate()


TWO_M2_JOBS = '[grid]\nwidths = [[2, 2]]\nattention = [[2]]\nmethod = ["jacobian"]\nseed = [0, 1]\n'


@pytest.mark.parametrize(
    "sig, code, executor",
    [(signal.SIGTERM, 143, "local"), (signal.SIGINT, 130, "local"), (signal.SIGTERM, 143, "dask")],
)
def test_a_sweep_ends_within_seconds_of_a_signal_with_its_workers_and_leaves_no_lock(tmp_path, sig, code, executor):
    """Had outlived SIGTERM by minutes (the pool waited for its running jobs), holding its locks; Dask's local
    cluster, whose jobs are threads, by half a minute."""
    if executor == "dask":
        pytest.importorskip("distributed")
    with Sweep(tmp_path, TWO_M2_JOBS, "--jobs", 2, "--executor", executor) as run:
        assert wait_until(lambda: len(sleepers(run.tag)) == 4, 60), "the two Macaulay2 runs never started"
        assert len(list(run.out.glob("*.lock"))) == 2
        os.kill(run.proc.pid, sig)
        start = time.monotonic()
        try:
            run.proc.wait(15)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the sweep was still running 15 s after {sig.name}")
        assert time.monotonic() - start < 10 and run.proc.returncode == code
        assert wait_until(lambda: not tagged(run.tag), 5), f"left running: {tagged(run.tag)}"
        assert not list(run.out.glob("*.lock")) and not list(run.out.glob("*.json"))  # nothing half-done is stored
        assert (run.out / "results.csv").exists()  # the tables of what finished (nothing) are written


def test_sigkill_mid_sweep_then_resume_loses_nothing_and_duplicates_nothing(tmp_path):
    """Two quick jobs finish, the third hangs in Macaulay2 when the sweep is SIGKILLed: its Macaulay2 dies
    with it (it learns of its parent's death), its lock stays and names a dead process; the resumed sweep
    takes that job over, reuses the two, and every job ends with exactly one record."""
    spec = (
        '[grid]\nwidths = [[2, 2], [3, 3]]\nattention = [[2]]\nmethod = ["modp"]\n'
        '[[architecture]]\nwidths = [2, 2]\nattention = [1]\nmethod = "jacobian"\n'
    )
    with Sweep(tmp_path, spec) as run:
        assert wait_until(lambda: sleepers(run.tag), 90), "the Macaulay2 job never started"
        m2 = {p for p in tagged(run.tag) if b"/M2" in cmdline(p)}
        done = sorted(p.name for p in run.out.glob("*.json"))
        lock = next(run.out.glob("*.lock"))
        os.kill(run.proc.pid, signal.SIGKILL)
        run.proc.wait(10)
        assert len(done) == 2 and m2
        assert wait_until(lambda: not (m2 & tagged(run.tag)), 10), "Macaulay2 outlived the SIGKILLed sweep"
        owner = json.loads(lock.read_text())
        assert owner["pid"] == run.proc.pid and owner["host"]
    with Sweep(tmp_path, spec, "--timeout", 2) as again:
        out, err = again.proc.communicate(timeout=120)
        assert again.proc.returncode == 0, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["cached"] == 2 and summary["ran"] == 1 and summary["stale_locks_broken"] == 1
    assert summary["timeout"] == 1 and summary["jobs"] == 3
    records = sorted(p.name for p in run.out.glob("*.json"))
    assert len(records) == 3 and set(done) < set(records)
    assert not list(run.out.glob("*.lock"))


def test_a_worker_killed_from_outside_leaves_its_job_unrecorded_and_the_sweep_goes_on(tmp_path):
    """(The OOM killer, say.) Its job gets no record (the next sweep runs it), the others run in a new pool."""
    spec = (
        '[[architecture]]\nwidths = [2, 2]\nattention = [1]\nmethod = "jacobian"\n'
        '[[architecture]]\nwidths = [2, 2]\nattention = [2]\nmethod = "modp"\n'
    )
    with Sweep(tmp_path, spec) as run:
        assert wait_until(lambda: sleepers(run.tag), 90), "the Macaulay2 job never started"
        shell = int(stat_field(next(iter(sleepers(run.tag))), 1))  # the stand-in M2, whose parent is the worker
        worker = int(stat_field(shell, 1))
        assert worker != run.proc.pid
        os.kill(worker, signal.SIGKILL)
        out, err = run.proc.communicate(timeout=120)
        assert run.proc.returncode == 0, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["ran"] == 1 and summary["ok"] == 1 and summary["error"] == 0
    assert "its worker was killed; the next sweep runs it" in err
    assert len(list(run.out.glob("*.json"))) == 1 and not list(run.out.glob("*.lock"))
