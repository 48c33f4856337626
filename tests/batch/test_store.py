"""The result store and its locks, against planted entries and failing disks: entries read by
descriptor (no symlinks, no hard links), nothing written through a planted link, a damaged key or a
damaged directory said as such, a full disk one line with nothing half written, future-dated locks stale."""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lightning_cas.batch.locks import Locks
from lightning_cas.batch.spec import parse_spec
from lightning_cas.batch.store import ResultStore, read_entry, verify_record
from lightning_cas.batch.sweep import run_sweep
from lightning_cas.errors import InputError

REPO = Path(__file__).resolve().parents[2]
FAST = 'name = "fast"\n[grid]\nwidths = [[2, 2]]\nattention = [[1], [2]]\nmethod = ["modp"]\n'


def cli(*args, preexec_fn=None, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "lightning_cas", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=preexec_fn,
    )


def one_line(proc, code, *phrases):
    assert proc.returncode == code, (proc.returncode, proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lightning-cas: error:"), proc.stderr[-2000:]
    for phrase in phrases:
        assert phrase in lines[0], lines[0]


@pytest.fixture
def swept(tmp_path):
    spec = tmp_path / "fast.toml"
    spec.write_text(FAST)
    out = tmp_path / "r"
    assert run_sweep(parse_spec(FAST, str(spec)), out).ok == 2
    return spec, out


def test_read_entry_refuses_links_and_odd_files_and_reads_the_rest(tmp_path):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "ok.m2").write_text("print 1")
    assert read_entry(tmp_path, "scripts/ok.m2") == b"print 1"
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.m2").write_text("x")
    (tmp_path / "via").symlink_to(tmp_path / "real")
    (tmp_path / "scripts" / "link.m2").symlink_to(tmp_path / "real" / "a.m2")
    (tmp_path / "secret").write_text("root:x:0:0")
    os.link(tmp_path / "secret", tmp_path / "scripts" / "hard.m2")
    os.mkfifo(tmp_path / "scripts" / "fifo.m2")
    for bad, words in (
        ("via/a.m2", "not a plain directory"),
        ("scripts/link.m2", "following a link"),
        ("scripts/hard.m2", "2 hard links"),
        ("scripts/fifo.m2", "not a regular file"),
        ("/etc/passwd", "absolute"),
        ("..", "leaves"),
        ("scripts/../scripts/ok.m2", "leaves"),
        ("", "not a plain relative path"),
        ("scripts", "not a regular file"),
        ("scripts/nope.m2", "cannot be opened"),
        ("scripts\\ok.m2", "not a plain"),
    ):
        with pytest.raises(InputError, match=words):
            read_entry(tmp_path, bad)
    with pytest.raises(InputError, match="limit 3"):
        read_entry(tmp_path, "scripts/ok.m2", max_bytes=3)


def test_a_hard_linked_record_is_not_a_record(swept):
    _, out = swept
    label = parse_spec(FAST).jobs[0].label
    os.link(out / f"{label}.json", out / "copy.json")
    assert verify_record(out / f"{label}.json").status == "invalid"
    assert "hard links" in verify_record(out / "copy.json").reason


def test_a_planted_scripts_symlink_is_never_written_through(tmp_path):
    """`sweep --force` into a results directory whose scripts/ points elsewhere used to write its
    Macaulay2 scripts there."""
    spec = tmp_path / "m.toml"
    spec.write_text('name = "m"\n[[architecture]]\nwidths = [2, 2]\nattention = [1]\nmethod = "jacobian"\n')
    out = tmp_path / "r"
    out.mkdir()
    target = tmp_path / "elsewhere"
    target.mkdir()
    (out / "scripts").symlink_to(target)
    one_line(cli("sweep", spec, "--out", out, "--force", "--quiet"), 2, "symbolic link", "scripts")
    assert not list(target.iterdir()) and not list(out.glob("*.json"))


def test_a_damaged_record_key_is_an_error_not_every_record_unsigned(swept, tmp_path):
    spec, out = swept
    key = Path(os.environ["LIGHTNING_CAS_PRIVATE_DIR"]) / "record.key"
    good = key.read_bytes()
    try:
        key.write_text("not hex at all\n")
        from lightning_cas.batch import store

        store._KEYS.clear()
        for args in (("report", out, "--no-plot"), ("sweep", spec, "--out", out, "--quiet")):
            one_line(cli(*args), 2, "record key", "damaged")
    finally:
        key.write_bytes(good)


def test_a_directory_of_damaged_records_says_so(tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    (out / "a.json").write_text("{not json")
    (out / "b.json").write_text(json.dumps({"kind": "JobResult", "label": "x"}))
    one_line(cli("report", out), 2, "2 record file(s)", "damaged")
    (tmp_path / "empty").mkdir()
    one_line(cli("report", tmp_path / "empty"), 2, "holds no job results")


def _small_files():
    """A 1000-byte limit on every file this process writes, the way a full disk stops a write (EFBIG,
    with SIGXFSZ ignored so the write fails instead of killing the process)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))


def test_a_write_that_fails_is_one_line_and_leaves_nothing_half_written(tmp_path):
    spec = tmp_path / "fast.toml"
    spec.write_text(FAST)
    out = tmp_path / "r"
    out.mkdir()
    proc = cli("sweep", spec, "--out", out, "--quiet", preexec_fn=_small_files)
    one_line(proc, 1, "cannot write the record", "too large")
    left = sorted(p.name for p in out.iterdir())
    assert left == ["scripts"], left  # no record, no temp file, no lock


def test_a_lock_dated_in_the_future_is_stale(tmp_path):
    locks = Locks(tmp_path)
    label = "w2-2_a1_t2_none_modp_s0"
    lock = locks.path(label)
    lock.write_text(json.dumps({"host": socket.gethostname(), "pid": 1, "since": time.time()}))  # pid 1 is alive
    assert locks.state(label).status == "held"
    future = time.time() + 10 * 365 * 86400
    os.utime(lock, (future, future))
    state = locks.state(label)
    assert state.status == "stale" and "in the future" in state.reason
    # a sweep takes it over at once instead of waiting for it forever
    spec = parse_spec('[grid]\nwidths=[[2,2]]\nattention=[[1]]\nmethod=["modp"]\n')
    summary = run_sweep(spec, tmp_path, poll_s=0.05)
    assert summary.ran == 1 and summary.stale_locks_broken == 1 and not lock.exists()
    assert ResultStore(tmp_path).load(label).result.dimension == 6
