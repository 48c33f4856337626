"""The result contract checks its numbers: a dimension result whose numbers contradict each other or
its architecture is refused wherever it comes from (a backend, a record, a worker, a file)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from lightning_cas import Architecture, dimension
from lightning_cas.api import load_result
from lightning_cas.cli import main
from lightning_cas.errors import InputError, M2ParseError, ResultError
from lightning_cas.results.dimension import DimensionResult
from lightning_cas.results.verify import VerifyResult

A22 = Architecture((2, 2), (1,), 2)  # 8 parameters, ambient dimension 80, dimension 6


@pytest.fixture(scope="module")
def good():
    return dimension(A22).to_dict()


BROKEN = {
    "dimension above the parameters": {"dimension": 99},
    "negative dimension": {"dimension": -5},
    "parameters of another architecture": {"parameters": 12},
    "negative parameters": {"parameters": -1},
    "ambient dimension of another architecture": {"ambient_dimension": 81},
    "failure bound of 1": {"failure_bound": 1.0},
    "negative failure bound": {"failure_bound": -1e-05},
    "a run's rank above the parameters": {"runs": [{"prime": 16777213, "seed": 0, "rank": 99, "rows": 10}]},
    "a negative rank in a run": {"runs": [{"prime": 16777213, "seed": 0, "rank": -5, "rows": 10}]},
    "a composite prime": {"primes": [16777213, 16777215]},
    "negative samples": {"samples": -3},
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_from_dict_and_load_result_refuse_numbers_that_contradict(name, good, tmp_path):
    data = {**good, **BROKEN[name]}
    with pytest.raises(InputError, match="not a valid DimensionResult") as info:
        DimensionResult.from_dict(data)
    assert "\n" not in str(info.value) and ".." not in str(info.value)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError):
        load_result(path)
    with pytest.raises(InputError):  # nested, the same check
        VerifyResult.from_dict(
            {
                "kind": "VerifyResult",
                "architecture": good["architecture"],
                "computed": data,
                "predicted": 6,
                "prediction_status": "proved",
                "regime": "",
                "reason": None,
                "verdict": "agree",
                "method": "modp",
                "certainty": "probabilistic",
            }
        )


def test_a_consistent_record_still_round_trips(good, tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(good))
    assert load_result(path) == DimensionResult.from_dict(good)
    assert load_result(path).fiber_dimension == 2


def test_a_macaulay2_record_with_impossible_numbers_is_one_line_not_a_number(tmp_path):
    """A (fake) Macaulay2 that reports rank 99 for 8 weights: once printed as "dimension 99, generic
    fiber dimension -91"; the result's own check refuses it, whatever built it."""
    fake = tmp_path / "M2"
    fake.write_text(
        '#!/bin/sh\necho \'@@LCAS-JSON@@ {"parameters": 8, "rank": 99, "rows": 200, '
        '"prime": 32003, "dimension": 99, "m2_version": "1.21"}\'\n'
    )
    fake.chmod(0o755)
    # refused where it enters (the Macaulay2 layer), and by the result's contract if it got further
    with pytest.raises((M2ParseError, ResultError), match="99 .*between 0 and 8"):
        dimension(A22, method="jacobian", prime=32003, m2=str(fake))
    res = CliRunner().invoke(
        main,
        ["dim", "--widths", "2,2", "--attention", "1", "--method", "jacobian", "--prime", "32003", "--m2", str(fake)],
    )
    assert res.exit_code == 1 and res.stdout == "" and "dimension -91" not in res.stderr  # not a path hash
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lightning-cas: error:") and "internal error" not in lines[0]
