"""Fixtures of the batch tests."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture
def legacy(tmp_path, monkeypatch):
    """The results directory written before records were typed (version 3), with the record key that
    signed it installed as this user's key."""
    res = tmp_path / "legacy"
    shutil.copytree(DATA / "legacy_v3", res)
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    shutil.copy(DATA / "legacy_v3.key", private / "record.key")
    os.chmod(private / "record.key", 0o600)
    monkeypatch.setenv("LIGHTNING_CAS_PRIVATE_DIR", str(private))
    return res
