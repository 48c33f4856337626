"""Shared fixtures. Tests that need Macaulay2 use the ``m2`` fixture: they skip on a contributor's
machine without M2, but under CI (CI=true) a missing M2 fails the run instead of hiding it."""

from __future__ import annotations

import os
import shutil

import pytest
from hypothesis import HealthCheck, settings

# Property tests: derandomized under CI (the same examples every run, so CI cannot go red at random);
# random locally, so each run explores new examples. Select explicitly with HYPOTHESIS_PROFILE.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.register_profile("dev", derandomize=False, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if _CI else "dev"))


def _m2_binary():
    return shutil.which(os.environ.get("LIGHTNING_CAS_M2") or "M2")


@pytest.fixture(scope="session")
def m2():
    """Path of the real Macaulay2 binary."""
    binary = _m2_binary()
    if binary is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("Macaulay2 is not installed, and CI=true: `make setup` must install it.")
        pytest.skip("Macaulay2 is not installed (run `make setup`)")
    return binary


@pytest.fixture(autouse=True)
def _private_script_dir(tmp_path_factory, monkeypatch):
    """Rendered scripts (and the private dir: M2's HOME, the record key) go to a per-session temp
    dir, not the user's own."""
    monkeypatch.setenv("LIGHTNING_CAS_SCRIPT_DIR", str(tmp_path_factory.getbasetemp() / "scripts"))
    monkeypatch.setenv("LIGHTNING_CAS_PRIVATE_DIR", str(tmp_path_factory.getbasetemp() / "private"))


def pytest_collection_modifyitems(config, items):
    """Every test that asks for the ``m2`` fixture is marked ``m2``, so the fast loop
    ``pytest -m "not m2 and not slow"`` needs no Macaulay2 and no marker can be forgotten."""
    for item in items:
        if "m2" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.m2)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI=true nothing may skip: `make setup` installs every optional part the tests use
    (Macaulay2, its Jupyter kernel, nbclient, Dask), so a skip there hides a missing install step."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("CI", "").lower() in ("1", "true", "yes") \
            and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true (a missing install step?): {report.longrepr}"
