"""The Macaulay2 connection: one object carries the binary, the session and the deadline, and every
run of a command goes through it under what is left of that command's one time limit."""

from __future__ import annotations

import os
import time

import pytest

from lightning_cas.api import dimension
from lightning_cas.core.architecture import Architecture
from lightning_cas.errors import InputError, M2TimeoutError, TimeLimitError
from lightning_cas.macaulay2.connection import Macaulay2
from lightning_cas.macaulay2.network import package_params
from lightning_cas.macaulay2.runner import M2Session
from lightning_cas.options import resolve
from lightning_cas.system.deadline import Deadline, time_limit

A22 = Architecture((2, 2), (1,), 2)
JACOBIAN = {**package_params(A22), "charP": 32003, "seed": 0, "columns": 1}


def fake_binary(tmp_path, body: str):
    path = tmp_path / "fake-M2"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


def test_a_run_after_the_deadline_never_starts_macaulay2(tmp_path):
    marker = tmp_path / "started"
    m2 = Macaulay2(fake_binary(tmp_path, f"touch {marker}"), deadline=Deadline(1e-9))
    time.sleep(0.01)
    with pytest.raises(TimeLimitError, match="before the next Macaulay2 run"):
        m2.run("dimension_jacobian", JACOBIAN)
    assert not marker.exists()


def test_a_run_gets_what_is_left_of_the_command_limit_and_reports_that_limit(tmp_path):
    m2 = Macaulay2(fake_binary(tmp_path, "sleep 30"))
    start = time.monotonic()
    with time_limit(1.5), pytest.raises(M2TimeoutError, match="the 1.5 s time limit") as err:
        m2.run("dimension_jacobian", JACOBIAN)
    assert time.monotonic() - start < 5
    assert err.value.script and err.value.script.endswith(".m2")


def test_a_bound_deadline_bounds_only_that_connection(tmp_path):
    m2 = Macaulay2(fake_binary(tmp_path, "sleep 30"), deadline=Deadline(0.5))
    assert m2.limit() is m2.deadline
    with time_limit(60):
        start = time.monotonic()
        with pytest.raises(M2TimeoutError, match="the 0.5 s time limit"):
            m2.run("dimension_jacobian", JACOBIAN)
        assert time.monotonic() - start < 4


def test_resolve_builds_one_connection_and_passes_a_given_one_through(m2):
    opts = resolve("dimension", A22, m2=m2)
    assert opts.macaulay2 == Macaulay2(binary=m2)
    given = Macaulay2(binary=m2, heap="1G")
    assert resolve("dimension", A22, m2=given).macaulay2 is given
    with M2Session(m2=m2, timeout=60) as session:
        assert resolve("dimension", A22, m2=m2, session=session).macaulay2.session is session
        with pytest.raises(InputError, match="inside the Macaulay2 connection"):
            resolve("dimension", A22, m2=given, session=session)


def test_a_verb_given_a_connection_with_a_session_runs_in_that_session(m2):
    with M2Session(m2=m2, timeout=60) as session:
        pid = session.child.pid
        connection = Macaulay2(session=session)
        first = dimension(A22, method="jacobian", m2=connection)
        second = dimension(A22, method="jacobian", m2=connection, seed=1)
        assert first.dimension == second.dimension == 6
        assert session.child.pid == pid and session.restarts == 0
        script, rec = connection.run("dimension_jacobian", JACOBIAN)
        assert rec["rank"] == 6 and rec["prime"] == 32003 and script.endswith(".m2")


def test_a_shared_session_serves_every_connection_of_its_binary_and_heap_and_no_other(m2, tmp_path, monkeypatch):
    from lightning_cas.macaulay2 import runner
    from lightning_cas.macaulay2.connection import share_session, shared_session

    with M2Session(m2) as session:
        previous = share_session(session)
        try:
            assert shared_session() is session
            assert Macaulay2(binary=m2).session_to_use() is session
            assert Macaulay2().session_to_use() is session  # M2 on PATH is the same binary
            assert Macaulay2(binary=m2, heap="1G").session_to_use() is None  # another heap cap: its own process
            assert Macaulay2(binary=fake_binary(tmp_path, "exit 0")).session_to_use() is None
            own = M2Session(m2)
            try:
                assert Macaulay2(binary=m2, session=own).session_to_use() is own  # a session given wins
            finally:
                own.close()

            pid = os.fork()  # a forked child (a pool worker) never talks to its parent's Macaulay2
            if pid == 0:
                os._exit(0 if Macaulay2(binary=m2).session_to_use() is None and shared_session() is None else 1)
            assert os.waitpid(pid, 0)[1] == 0

            def no_script(*a, **k):
                raise AssertionError("a script process was started although a session is shared")

            monkeypatch.setattr(runner, "run_script", no_script)
            _, record = Macaulay2(binary=m2).run("dimension_jacobian", JACOBIAN)
            assert record["rank"] == dimension(A22, method="modp").dimension and session.starts == 1
        finally:
            share_session(previous)
    assert shared_session() is previous
