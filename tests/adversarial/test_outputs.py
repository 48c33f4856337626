"""What the command line writes, tried against targets that are not files and readers that go away.

Real devices, FIFOs, directories, real pipes closed by `head` and the real /dev/full: no mocks.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PY = [sys.executable, "-m", "lightning_cas"]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def cli(*args, **kwargs):
    return subprocess.run(
        [*PY, *map(str, args)], cwd=REPO, capture_output=True, text=True, timeout=120, env=ENV, **kwargs
    )


def one_line(proc, code, *phrases):
    assert proc.returncode == code, (proc.returncode, proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lightning-cas: error:"), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def device(tmp_path):
    """A character device: a private null device node as root (the real /dev/null must never be at risk
    from a code path that would replace it); /dev/null itself otherwise, which a user cannot replace."""
    if os.geteuid() == 0:
        node = tmp_path / "null-device"
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        return node
    return Path("/dev/null")


def test_save_point_onto_a_character_device_is_refused(device):
    before = os.lstat(device)
    proc = cli("fiber", "--widths", "2,1", "--attention", "1", "--method", "modp", "--save-point", device)
    one_line(proc, 2, "is a device", "refusing to replace it")
    after = os.lstat(device)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev and after.st_ino == before.st_ino
    assert proc.stdout == ""  # refused before any work


def test_save_point_onto_a_fifo_or_a_directory_is_refused(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for target, word in ((fifo, "FIFO"), (tmp_path, "directory")):
        proc = cli("fiber", "--widths", "2,1", "--attention", "1", "--method", "modp", "--save-point", target)
        one_line(proc, 2, word)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_save_point_writes_a_point_fiber_reads_back(tmp_path):
    saved = tmp_path / "w.json"
    first = cli("fiber", "--widths", "2,1", "--attention", "1", "--method", "modp", "--save-point", saved, "--json")
    assert first.returncode == 0, first.stderr
    again = cli("fiber", "--widths", "2,1", "--attention", "1", "--method", "modp", "--at", saved, "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(first.stdout)["point"] == json.loads(again.stdout)["point"]


@pytest.mark.parametrize(
    "args",
    [
        ["dim", "--widths", "2,2", "--attention", "1", "--json"],
        ["dim", "--widths", "2,2", "--attention", "1"],
        ["predict", "--widths", "2,2", "--attention", "1", "--json"],
        ["verify", "--widths", "2,2", "--attention", "1"],
        ["--help"],
    ],
)
def test_standard_output_on_a_full_disk_is_one_line(args):
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [*PY, *args], cwd=REPO, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120, env=ENV
        )
    one_line(proc, 1, "cannot write to standard output", "No space left on device")


def test_a_reader_that_goes_away_is_a_quiet_exit():
    """`fiber | head -3`: whether fiber is still writing when head leaves is a race; either way no message."""
    proc = subprocess.run(
        f'{" ".join(PY)} fiber --widths 2,1 --attention 1 --method modp | head -3; echo "status ${{PIPESTATUS[0]}}"',
        shell=True,
        executable="/bin/bash",
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
    )
    lines = proc.stdout.splitlines()
    assert len(lines) == 4 and lines[0].startswith("widths=2,1") and lines[-1] in ("status 0", "status 141")
    assert proc.stderr == "", proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["fiber", "--widths", "2,1", "--attention", "1", "--method", "modp"],
        ["dim", "--widths", "2,2", "--attention", "1"],
        ["dim", "--widths", "2,2", "--attention", "1", "--json"],
        ["predict", "--widths", "3,3", "--attention", "2"],
        ["verify", "--widths", "2,2", "--attention", "1", "--json"],
    ],
)
def test_a_reader_that_is_gone_before_the_first_line_is_a_quiet_exit(args):
    """The deterministic form of `| head`: the read end is closed before the command starts."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [*PY, *args], cwd=REPO, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120, env=ENV
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 141 and proc.stderr == "", (proc.returncode, proc.stderr)


def test_help_into_a_closed_pipe_is_quiet():
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [*PY, "--help"], cwd=REPO, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120, env=ENV
        )
    finally:
        os.close(write_end)
    assert proc.returncode != 0 and proc.stderr == "", (proc.returncode, proc.stderr)


def test_bare_command_prints_its_usage_as_lines():
    proc = cli()
    assert proc.returncode == 2
    text = proc.stdout + proc.stderr
    assert "\\x0a" not in text and "Usage:" in text
    assert len(text.splitlines()) > 5 and any(line.strip().startswith("dim") for line in text.splitlines())


def test_a_network_fibers_save_point_onto_a_device_is_refused_before_any_work(device, tmp_path):
    net = tmp_path / "net.toml"
    net.write_text('input = 2\ntokens = 2\n[[block]]\nkind = "attention"\nattention = 1\ncausal = true\n')
    before = os.lstat(device)
    proc = cli("fiber", "--arch", net, "--save-point", device)
    one_line(proc, 2, "is a device", "refusing to replace it")
    assert proc.stdout == "" and os.lstat(device).st_rdev == before.st_rdev
    saved = tmp_path / "w.json"
    ok = cli("fiber", "--arch", net, "--save-point", saved, "--json")
    assert ok.returncode == 0, ok.stderr
    again = cli("fiber", "--arch", net, "--at", saved, "--json")  # the saved point is the one used
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["point"] == json.loads(ok.stdout)["point"]
