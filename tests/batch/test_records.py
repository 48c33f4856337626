"""Job records: typed fields, the numbers a record may carry, recomputed verdicts, and the reader of
the versions written before (a results directory of record version 3 kept in tests/batch/data)."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from lightning_cas.batch.executors import admit, run_job
from lightning_cas.batch.records import (
    RECORD_VERSION,
    JobResult,
    Origin,
    Status,
    check_numbers,
    legacy_implicit,
    record_from_dict,
)
from lightning_cas.batch.spec import Job
from lightning_cas.batch.store import ResultStore, verify_record
from lightning_cas.batch.tables import cell
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.verdict import Verdict
from lightning_cas.errors import InputError

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
IMP = "w2-2_a1_t2_none_implicit_s0"


def cli(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "lightning_cas", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_a_version_3_directory_loads_as_this_users_results(legacy):
    checks = ResultStore(legacy, create=False).checks()
    assert len(checks) == 11 and all(c.trusted for c in checks), [c.reason for c in checks if not c.trusted]
    recs = {c.record.label: c.record for c in checks}
    imp = recs[IMP]
    assert isinstance(imp.job, Job) and imp.job.architecture == Architecture((2, 2), (1,), 2)
    assert imp.status is Status.OK and imp.agreement is Verdict.AGREE and imp.version == 3
    # the notes of version 3 became the typed summary, once, in the reader of that version
    assert imp.result.implicit.degree == 20 and imp.result.implicit.linear_span == 12
    assert imp.result.implicit.generator_degrees == (2,) * 15 + (4,) * 5
    assert recs["w3-3_a3_h2_t2_none_modp_s0"].agreement is Verdict.DEFECT


def test_the_report_of_a_version_3_directory_is_what_it_was_with_typed_numbers(legacy):
    """The old report's rows, field by field: the same verdicts and numbers, now typed (widths as a
    list, seconds as a number), with the record's source, host and re-check added."""
    proc = cli("report", legacy, "--json", env={"LIGHTNING_CAS_PRIVATE_DIR": os.environ["LIGHTNING_CAS_PRIVATE_DIR"]})
    assert proc.returncode == 0, proc.stderr
    new = {r["label"]: r for r in map(json.loads, proc.stdout.splitlines())}
    old = {r["label"]: r for r in map(json.loads, (DATA / "legacy_v3_report.jsonl").read_text().splitlines())}
    assert sorted(new) == sorted(old)
    for label, before in old.items():
        after = new[label]
        assert isinstance(after["widths"], list) and isinstance(after["elapsed_s"], float)
        assert after["source"] == "here" and after["recheck"] is None
        for key, value in before.items():
            assert cell(after[key]) == cell(value), (label, key, after[key], value)
    assert not list(legacy.glob("*.png"))  # --json draws no plot


def test_without_its_key_a_version_3_directory_is_claims_not_nothing(legacy, tmp_path):
    proc = cli("report", legacy, "--json", env={"LIGHTNING_CAS_PRIVATE_DIR": str(tmp_path / "elsewhere")})
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(rows) == 11 and {r["source"] for r in rows} == {"claim"}
    assert sum(r["agreement"] == "agree" for r in rows) == 7  # verdicts recomputed, not dropped


def test_legacy_notes_are_read_only_when_complete():
    notes = ("degree 20 (standard grading)", "12 linearly independent coefficients", "minimal generator degrees [2, 4]")
    s = legacy_implicit(notes)
    assert (s.degree, s.linear_span, s.generator_degrees) == (20, 12, (2, 4))
    assert legacy_implicit(notes[:2]) is None and legacy_implicit(("degree x",)) is None


def _ok():
    rec = run_job(Job(Architecture((2, 2), (2,), 2), "modp"))
    assert rec.status is Status.OK and rec.result.dimension == 7
    return rec


def _forged(result, **change):
    """The result with fields changed and no constructor run: what an unpickled lie from a worker is."""
    bad = copy.copy(result)
    for key, value in change.items():
        object.__setattr__(bad, key, value)
    return bad


@pytest.mark.parametrize(
    "change, words",
    [
        (dict(dimension=99), "dimension 99 is not between 0 and 12"),
        (dict(dimension=-5), "dimension -5 is not between 0 and 12"),
        (dict(parameters=13), "parameters 13 is not between 12 and 12"),
        (dict(ambient_dimension=5), "ambient_dimension 5 is not between"),
        (dict(failure_bound=1.0), "failure bound 1.0"),
        (dict(failure_bound=-1e-5), "failure bound"),
        (dict(architecture=Architecture((2, 2), (1,), 2)), "not for its job's|parameters 12 is not between 8 and 8"),
    ],
)
def test_impossible_numbers_are_refused_wherever_they_enter(change, words, tmp_path):
    rec = _ok()
    bad = replace(rec, result=_forged(rec.result, **change))
    with pytest.raises(InputError, match=words):
        check_numbers(bad)
    # from a worker: an error record saying why, never the number
    got = admit(rec.job, bad, "here")
    assert got.status is Status.ERROR and got.result is None and "refused" in got.message
    assert re.search(words, got.message)
    # from a file: not a record at all
    path = tmp_path / f"{rec.label}.json"
    path.write_text(json.dumps({**bad.to_dict()}))
    check = verify_record(path)
    assert check.status == "invalid" and re.search(words, check.reason)


def test_verdicts_are_recomputed_never_believed():
    rec = _ok()
    lying = replace(rec, result=replace(rec.result, dimension=6), predicted=6, agreement="agree")
    assert record_from_dict(lying.to_dict()).agreement is Verdict.DISAGREE
    got = admit(rec.job, lying, "here")
    assert got.agreement is Verdict.DISAGREE and got.predicted == 7


def test_a_worker_answer_must_be_a_record_of_this_job():
    rec = _ok()
    other = Job(Architecture((3, 3), (2,), 2), "modp")
    assert "not this one" in admit(other, rec, "h").message
    assert "a dict, not a job record" in admit(rec.job, rec.to_dict(), "h").message
    # a script the coordinator would not render for the job is not kept
    planted = replace(rec, script="x.m2", script_text='run "touch /tmp/x";')
    assert admit(rec.job, planted, "h").script_text is None


def test_typed_fields_refuse_what_is_not_theirs():
    rec = _ok()
    data = rec.to_dict()
    assert data["version"] == RECORD_VERSION == 4 and data["job"]["method"] == "modp"
    for key, value in (("status", "fine"), ("agreement", "sort of"), ("label", "other")):
        with pytest.raises(InputError):
            JobResult.from_dict({**data, key: value})
    with pytest.raises(InputError):
        JobResult.from_dict({**data, "job": {**data["job"], "method": "magic"}})
    assert Origin("claim") is Origin.CLAIM and str(Status.TIMEOUT) == "timeout"


def test_records_are_not_dicts():
    """Dict-style access kept the former dict shapes alive; fields are attributes only."""
    rec = _ok()
    for value in (rec, rec.job, rec.result):
        with pytest.raises(TypeError):
            value["label"]  # noqa: B018
    assert rec.result.dimension == 7 and rec.job.seed == 0


def test_agreement_is_every_verdict_and_not_computed():
    assert [v.value for v in Verdict] == ["agree", "disagree", "defect", "no prediction", "not computed"]
    assert all(Verdict(v.value) is v and Verdict[v.name] is v for v in Verdict)


def test_a_network_too_wide_for_its_bounds_keeps_its_record_without_a_prediction():
    # (2, 2, 300, 300, 300, 2, 1): 181,206 weights, whose orbit rank predict would refuse as too large;
    # the record (here a failed one) is judged "no prediction" instead of stopping the sweep
    from lightning_cas.batch.records import Status, failed
    from lightning_cas.batch.spec import Job
    from lightning_cas.core.network import Network
    from lightning_cas.core.verdict import Verdict

    rec = failed(Job(Network.polynomial_network((2, 2, 300, 300, 300, 2, 1))), Status.ERROR, "stopped", "here")
    assert rec.agreement is Verdict.NO_PREDICTION and rec.predicted is None
    assert rec.prediction_status.startswith("not predicted: the bounds of predict")
