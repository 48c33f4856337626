"""The one door every output file goes through: whole files or nothing, never onto what is not a file.

Full disks are a real small tmpfs when this process may mount one, file size limits a real
RLIMIT_FSIZE in a child process; only where neither can be provoked (no mount permission) is the
disk-full error injected.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lightning_cas.errors import InputError, OutputError
from lightning_cas.system import files
from lightning_cas.system.files import atomic_write_text, write_file

REPO = Path(__file__).resolve().parents[2]


def leftovers(directory: Path, name: str) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(f".{name}.") and p.name.endswith(".tmp"))


def make_device(path: Path) -> Path:
    """A character device node: a private copy of /dev/null when we may create one, else /dev/null."""
    if os.geteuid() == 0:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        return path
    return Path("/dev/null")


def special_target(kind: str, tmp_path: Path) -> Path:
    path = tmp_path / f"target-{kind}"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "symlink":
        (tmp_path / "real.txt").write_text("keep me\n")
        path.symlink_to(tmp_path / "real.txt")
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
    else:
        path = make_device(path)
    return path


def test_writes_whole_files_and_replaces_regular_ones(tmp_path):
    target = tmp_path / "out.json"
    write_file(target, "first\n")
    assert target.read_text() == "first\n"
    atomic_write_text(target, "second ✓\n")
    assert target.read_text(encoding="utf-8") == "second ✓\n"
    write_file(target, b"\x00\x01bytes")
    assert target.read_bytes() == b"\x00\x01bytes"
    assert leftovers(tmp_path, "out.json") == []


@pytest.mark.parametrize(
    "kind, word",
    [
        ("fifo", "FIFO"),
        ("directory", "directory"),
        ("symlink", "symbolic link"),
        ("socket", "socket"),
        ("device", "device"),
    ],
)
def test_a_target_that_is_not_a_regular_file_is_refused_and_left_alone(kind, word, tmp_path):
    target = special_target(kind, tmp_path)
    before = os.lstat(target)
    with pytest.raises(InputError, match=word) as info:
        write_file(target, "payload\n", "notebook")
    assert "\n" not in str(info.value) and "refusing to replace it" in str(info.value)
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino, after.st_rdev) == (before.st_mode, before.st_ino, before.st_rdev)
    assert leftovers(target.parent, target.name) == []
    if kind == "symlink":
        assert (tmp_path / "real.txt").read_text() == "keep me\n"


@pytest.mark.parametrize("kind", ["fifo", "symlink", "socket"])
def test_inside_our_own_directories_a_planted_entry_is_replaced_not_followed(kind, tmp_path):
    target = special_target(kind, tmp_path)
    write_file(target, "fresh\n", "record", replace_entries=True)
    assert stat.S_ISREG(os.lstat(target).st_mode) and target.read_text() == "fresh\n"
    if kind == "symlink":
        assert (tmp_path / "real.txt").read_text() == "keep me\n"


def test_even_inside_our_own_directories_a_directory_is_refused(tmp_path):
    (tmp_path / "planted.json").mkdir()
    with pytest.raises(InputError, match="directory"):
        write_file(tmp_path / "planted.json", "x", "record", replace_entries=True)


@pytest.mark.parametrize("bad", [None, 3, b"bytes.json", "", "with\x00nul"])
def test_a_name_that_is_not_a_file_name_is_one_input_error(bad):
    with pytest.raises(InputError, match="must be a file name"):
        write_file(bad, "x")


def test_a_missing_directory_is_one_sentence(tmp_path):
    with pytest.raises(OutputError, match="No such file or directory"):
        write_file(tmp_path / "missing" / "out.csv", "x")


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KiB tmpfs, when this process may mount one (root); None otherwise."""
    mount = tmp_path / "small"
    mount.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True)
    if proc.returncode != 0:
        yield None
        return
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)


def test_a_full_disk_is_one_sentence_and_leaves_the_old_file(small_disk, tmp_path, monkeypatch):
    where = small_disk or tmp_path
    target = where / "table.csv"
    target.write_text("old contents\n")
    if small_disk is None:  # cannot mount a small filesystem here: inject what a full disk answers

        def full(fd, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(files.os, "write", full)
    with pytest.raises(OutputError, match="No space left on device") as info:
        write_file(target, "y" * (1 << 20), "table")
    assert "\n" not in str(info.value)
    monkeypatch.undo()
    assert target.read_text() == "old contents\n"
    assert leftovers(where, "table.csv") == []


def test_a_file_size_limit_is_one_sentence_and_leaves_the_old_file(tmp_path):
    """RLIMIT_FSIZE makes write() fail with EFBIG (Python ignores SIGXFSZ), in a child process."""
    target = tmp_path / "big.json"
    target.write_text("old\n")
    child = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 16, 1 << 16))
        from lightning_cas.system.files import write_file
        from lightning_cas.errors import OutputError
        try:
            write_file({str(target)!r}, "z" * (1 << 20), "result")
        except OutputError as exc:
            print(exc)
            sys.exit(7)
    """)
    proc = subprocess.run(
        [sys.executable, "-c", child],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=60,
    )
    assert proc.returncode == 7, proc.stderr
    assert "File too large" in proc.stdout and proc.stdout.count("\n") == 1
    assert target.read_text() == "old\n"
    assert leftovers(tmp_path, "big.json") == []
