"""Macaulay2 failure paths, each provoked for real: timeout, missing binary, M2 error, signal,
out of memory, garbage output, and a persistent session that errs, hangs or is killed.

Every fault must surface as its own M2Error subclass naming the script; no M2 process may survive.
"""

from __future__ import annotations

import os
import secrets
import signal
import threading
import time
from pathlib import Path

import pytest

from lightning_cas.backends.m2 import dimension_jacobian
from lightning_cas.core.architecture import Architecture
from lightning_cas.errors import (
    LightningError,
    M2CrashError,
    M2Error,
    M2NotFoundError,
    M2ParseError,
    M2ScriptError,
    M2TimeoutError,
)
from lightning_cas.macaulay2.connection import Macaulay2
from lightning_cas.macaulay2.parse import (
    parse_int,
    parse_int_list,
    parse_polynomial,
    parse_polynomial_list,
    records,
    require,
)
from lightning_cas.macaulay2.runner import M2Session, run_script
from tests.support import wait_until


def survived(name: str) -> None:
    print(f"fault survived: {name}")


def script(tmp_path: Path, body: str) -> Path:
    """A script with a unique name, so its processes can be found in /proc by that name."""
    path = tmp_path / f"lcas-{secrets.token_hex(6)}.m2"
    path.write_text(body)
    return path


def processes_with(marker: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains ``marker``: a /proc scan."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z":
            found.append(int(entry))
    return found


# ---- run_script -----------------------------------------------------------------------------


def test_timeout_kills_m2_and_everything_it_started(m2, tmp_path):
    # The script starts a background `sleep` (same process group) and then loops forever.
    naptime = f"{300 + secrets.randbelow(10**6) / 10**7:.7f}"  # unique command line for the sleep
    path = script(tmp_path, f'run "sleep {naptime} &";\nwhile true do null;\n')
    seen = {}

    def watch():
        seen["m2"] = wait_until(lambda: processes_with(path.name), 20)
        seen["sleep"] = wait_until(lambda: processes_with(f"sleep {naptime}"), 20)

    watcher = threading.Thread(target=watch)
    watcher.start()
    start = time.monotonic()
    with pytest.raises(M2TimeoutError) as err:
        run_script(path, timeout=3, m2=m2)
    elapsed = time.monotonic() - start
    watcher.join()
    assert seen == {"m2": True, "sleep": True}, "the looping M2 and its child were never running"
    assert str(path) in str(err.value) and "3 s time limit" in str(err.value)
    assert elapsed < 15
    # the whole process group is gone: M2 and the sleep it started
    assert wait_until(lambda: not processes_with(path.name) and not processes_with(f"sleep {naptime}"), 5), (
        processes_with(path.name),
        processes_with(f"sleep {naptime}"),
    )
    survived("timeout (M2 + child sleep killed)")


def test_missing_binary_says_how_to_install(tmp_path, monkeypatch):
    path = script(tmp_path, 'print "hi";\n')
    with pytest.raises(M2NotFoundError) as err:
        run_script(path, m2=str(tmp_path / "no-such-M2"))
    assert "apt-get install" in str(err.value) and str(path) in str(err.value)
    monkeypatch.setenv("LIGHTNING_CAS_M2", str(tmp_path / "also-missing"))
    with pytest.raises(M2NotFoundError) as err:
        run_script(path)
    assert "also-missing" in str(err.value) and "LIGHTNING_CAS_M2" in str(err.value)
    with pytest.raises(M2NotFoundError):
        M2Session()
    # a file that exists but is not an executable Macaulay2
    fake = tmp_path / "M2"
    fake.write_text("not a program")
    fake.chmod(0o755)
    with pytest.raises(M2Error):
        run_script(path, m2=str(fake))
    survived("missing M2 binary (option, env, session, non-executable)")


def test_cli_missing_binary_is_one_line(tmp_path):
    from click.testing import CliRunner

    from lightning_cas.cli import main

    res = CliRunner().invoke(
        main, ["dim", "--widths", "2,2", "--attention", "1", "--method", "jacobian", "--m2", str(tmp_path / "nope")]
    )
    assert res.exit_code != 0 and isinstance(res.exception, SystemExit)
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "apt-get install" in lines[0] and lines[0].startswith("lightning-cas: error:")


def test_a_relative_m2_path_is_the_callers_not_the_scratch_directorys(m2, tmp_path, monkeypatch):
    """--m2 ./wrapper names a file in the caller's directory; Macaulay2 runs stand in a private scratch
    directory, where the same relative path names nothing."""
    import json

    from click.testing import CliRunner

    from lightning_cas.cli import main

    used = tmp_path / "wrapper-ran"
    wrapper = tmp_path / "m2wrap"
    wrapper.write_text(f'#!/bin/sh\ntouch "{used}"\nexec "{m2}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    args = ["dim", "--widths", "2,2", "--attention", "1", "--json"]
    res = CliRunner().invoke(main, [*args, "--method", "jacobian", "--m2", "./m2wrap"])
    assert res.exit_code == 0, res.stderr
    assert used.exists()  # the wrapper ran, not the M2 on PATH
    modp = CliRunner().invoke(main, [*args, "--method", "modp"])
    assert json.loads(res.stdout)["dimension"] == json.loads(modp.stdout)["dimension"]


def test_m2_error_is_a_script_error_with_the_message(m2, tmp_path):
    path = script(tmp_path, 'x = 1;\nerror "boom";\n')
    with pytest.raises(M2ScriptError) as err:
        run_script(path, m2=m2)
    assert "boom" in str(err.value) and str(path) in str(err.value)
    assert err.value.script == str(path) and "back trace" in err.value.output
    survived("M2 error")


def test_nonzero_exit_without_message_is_a_crash(m2, tmp_path):
    path = script(tmp_path, "exit 3;\n")
    with pytest.raises(M2CrashError, match="status 3") as err:
        run_script(path, m2=m2)
    assert str(path) in str(err.value)
    survived("exit 3")


def test_signal_is_a_crash(m2, tmp_path):
    path = script(tmp_path, 'print "@@LCAS@@ rank 3";\nrun("kill -9 " | toString processID());\nprint "after";\n')
    with pytest.raises(M2CrashError, match="signal 9") as err:
        run_script(path, m2=m2)
    assert str(path) in str(err.value)
    assert not processes_with(path.name)
    survived("SIGKILL")


def test_out_of_memory_is_named(m2, tmp_path):
    # M2 1.21 prints " *** out of memory trying to allocate N bytes, exiting ***" and exits 1
    path = script(tmp_path, 'L = for i from 1 to 100000000 list random(10^100);\nprint "done";\n')
    start = time.monotonic()
    with pytest.raises(M2CrashError, match="ran out of memory") as err:
        run_script(path, m2=m2, heap="50M", timeout=60)
    assert time.monotonic() - start < 30
    assert "out of memory" in err.value.output and str(path) in str(err.value)
    assert not isinstance(err.value, M2ScriptError)
    survived("out of memory (GC_MAXIMUM_HEAP_SIZE=50M)")


# ---- parsing garbage and truncated output ----------------------------------------------------


def test_garbage_from_real_m2_is_refused_with_the_text(m2, tmp_path):
    # what M2 prints when a template goes wrong: a 2-D matrix, a non-integer, a cut-off list
    path = script(
        tmp_path,
        'print("@@LCAS@@ rank " | toString(3/2));\n'
        'print("@@LCAS@@ degrees {1, 2");\n'
        'print("@@LCAS@@ ideal " | toString(matrix{{1,2},{3,4}}));\n'
        "print matrix{{1,2},{3,4}};\n",
    )
    out = run_script(path, m2=m2)
    recs = records(out.stdout, str(path))
    with pytest.raises(M2ParseError, match=r"'3/2'"):
        parse_int(recs["rank"], str(path))
    with pytest.raises(M2ParseError, match=r"\{1, 2") as err:
        parse_int_list(recs["degrees"], str(path))
    assert str(path) in str(err.value)
    with pytest.raises(M2ParseError, match="matrix"):
        parse_polynomial_list(recs["ideal"], str(path))
    with pytest.raises(M2ParseError, match="lacks the record 'dimension'"):
        require(recs, "dimension", str(path))
    survived("garbage M2 output")


@pytest.mark.parametrize("text", ["@@LCAS@@ rank 1\n@@LCAS@@ rank 2\n", "@@LCAS@@  3\n"])
def test_repeated_or_keyless_records_are_refused(text):
    with pytest.raises(M2ParseError, match="malformed or repeated"):
        records(text)


@pytest.mark.parametrize("bad", ["12abc", "", "1e5", "٣", "1 2", "99999999999999999999x", "0x10"])
def test_parse_int_refuses(bad):
    with pytest.raises(M2ParseError) as err:
        parse_int(bad)
    assert repr(bad[:200]) in str(err.value)


@pytest.mark.parametrize(
    "bad",
    [
        "__import__(os)",
        "exit()",
        "x(1)",
        "9^99999999",
        "2^(2^(2^99))",
        "((2^999)^999)^999",
        "1/0",
        "x**2",
        "x; y",
        "x = 1",
        "lambda x",
        "x^-1",
        "open(f)",
        "q_(1,2",
    ],
)
def test_parse_polynomial_refuses_code_and_bombs(bad):
    start = time.monotonic()
    with pytest.raises(M2ParseError):
        parse_polynomial(bad)
    assert time.monotonic() - start < 2


def test_parse_polynomial_reads_m2_forms():
    import sympy

    q, y = sympy.Symbol("q_(1,2,3)"), sympy.Symbol("y_4")  # the names Macaulay2 prints (core.names)
    assert parse_polynomial("q_(1,2,3)^2*y_4 - 3/4*y_4") == q**2 * y - sympy.Rational(3, 4) * y
    assert parse_polynomial_list("y_4 ; 2*y_4^3") == [y, 2 * y**3]


# ---- the persistent session -----------------------------------------------------------------


def test_session_is_faster_and_gives_the_same_answers(m2):
    arch = Architecture((2, 2), (1,), 2)
    n = 8
    t0 = time.perf_counter()
    batch = [dimension_jacobian(arch, Macaulay2(m2), seed=s, prime=32003).dimension for s in range(n)]
    per_script = (time.perf_counter() - t0) / n
    with M2Session(m2=m2, timeout=60) as session:
        t0 = time.perf_counter()
        connection = Macaulay2(session=session)
        persistent = [dimension_jacobian(arch, connection, seed=s, prime=32003).dimension for s in range(n)]
        per_session = (time.perf_counter() - t0) / n
        assert session.restarts == 0
    assert batch == persistent
    ratio = per_script / per_session
    print(f"M2 per query: run_script {per_script:.3f} s, session {per_session:.3f} s, speedup {ratio:.1f}x")
    assert ratio > 1.5


def test_session_resyncs_after_an_error(m2, tmp_path):
    ok = script(tmp_path, 'print("@@LCAS@@ x " | toString(2+3));\n')
    bad = script(tmp_path, 'error "boom in session";\n')
    half = script(tmp_path, 'print "@@LCAS@@ partial 1";\nerror "after output";\n')
    with M2Session(m2=m2, timeout=60) as session:
        assert records(session.run(ok).stdout) == {"x": "5"}
        with pytest.raises(M2ScriptError, match="boom in session") as err:
            session.run(bad)
        assert str(bad) in str(err.value)
        assert records(session.run(ok).stdout) == {"x": "5"}
        with pytest.raises(M2ScriptError, match="after output"):
            session.run(half)
        # nothing of the failed request leaks into the next one
        assert records(session.run(ok).stdout) == {"x": "5"}
        assert session.restarts == 0
    survived("session: M2 error then resync")


def test_session_killed_mid_request_restarts_and_retries_once(m2, tmp_path):
    slow = script(tmp_path, 'sleep 2;\nprint("@@LCAS@@ done " | toString(6*7));\n')
    with M2Session(m2=m2, timeout=60) as session:
        first_pid = session.child.pid

        def assassin():
            time.sleep(0.7)
            os.kill(first_pid, signal.SIGKILL)

        killer = threading.Thread(target=assassin)
        killer.start()
        out = session.run(slow)
        killer.join()
        assert records(out.stdout) == {"done": "42"}
        assert session.restarts == 1 and session.child.pid != first_pid
        assert not processes_with_pid(first_pid)
    survived("session killed mid-request (retried)")


def processes_with_pid(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_session_that_dies_twice_reports_a_crash(m2, tmp_path):
    suicide = script(tmp_path, 'run("kill -9 " | toString processID());\n')
    ok = script(tmp_path, 'print "@@LCAS@@ ok 1";\n')
    with M2Session(m2=m2, timeout=60) as session:
        with pytest.raises(M2CrashError, match="died") as err:
            session.run(suicide)
        assert str(suicide) in str(err.value)
        assert session.restarts == 1  # retried exactly once
        assert records(session.run(ok).stdout) == {"ok": "1"}
        assert session.restarts == 2
    survived("session: request kills M2 twice")


def test_session_timeout_kills_and_next_request_works(m2, tmp_path):
    loop = script(tmp_path, "while true do null;\n")
    ok = script(tmp_path, 'print "@@LCAS@@ ok 1";\n')
    with M2Session(m2=m2, timeout=60) as session:
        pid = session.child.pid
        with pytest.raises(M2TimeoutError) as err:
            session.run(loop, timeout=2)
        assert str(loop) in str(err.value)
        assert wait_until(lambda: not processes_with_pid(pid), 5)
        assert records(session.run(ok).stdout) == {"ok": "1"}
        assert session.restarts == 1
    survived("session timeout")


def test_session_out_of_memory_is_named(m2, tmp_path):
    hog = script(tmp_path, "L = for i from 1 to 100000000 list random(10^100);\n")
    with M2Session(m2=m2, heap="50M", timeout=60) as session:
        with pytest.raises(M2CrashError, match="ran out of memory"):
            session.run(hog)
    survived("session out of memory")


def test_session_prompt_cannot_be_forged_by_output(m2, tmp_path):
    with M2Session(m2=m2, timeout=60) as session, M2Session(m2=m2, timeout=60) as other:
        assert session.token != other.token
        # a script that prints everything a prompt is made of, except the secret token itself
        forged = script(
            tmp_path,
            "\n".join(
                [
                    'print "@@LCAS-PROMPT-";',
                    f'print "{other.token}";',
                    f'print "{session.token[:10]}";',
                    'print "@@LCAS@@ after 1";',
                    "sleep 1;",
                    'print "@@LCAS@@ last 2";',
                ]
            )
            + "\n",
        )
        out = session.run(forged)
        assert records(out.stdout) == {"after": "1", "last": "2"}
        assert other.token in out.stdout
        ok = script(tmp_path, 'print "@@LCAS@@ ok 1";\n')
        assert records(session.run(ok).stdout) == {"ok": "1"}


def test_session_refuses_unquotable_paths(m2):
    with M2Session(m2=m2, timeout=60) as session:
        for bad in ['/tmp/a"; run "touch /tmp/pwned', "/tmp/a\nprint 1", "/tmp/a\\"]:
            with pytest.raises(M2Error, match="cannot be quoted"):
                session.run(bad)
    assert not Path("/tmp/pwned").exists()


def test_all_m2_errors_are_lightning_errors():
    for cls in (M2CrashError, M2NotFoundError, M2ParseError, M2ScriptError, M2TimeoutError):
        assert issubclass(cls, LightningError)


def test_parse_int_refuses_integers_python_cannot_convert():
    with pytest.raises(M2ParseError, match="too long"):
        parse_int("9" * 5000)
    with pytest.raises(M2ParseError, match="too long"):
        parse_int_list("{1, " + "9" * 5000 + "}")
