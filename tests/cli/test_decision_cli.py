"""`lightning-cas ed --boundary` and `lightning-cas ed --inputs X --targets Y`, with the real Macaulay2.

The command lives in lightning_cas.cli.critical; these tests skip cleanly while it does not exist.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("lightning_cas.cli.critical")

from lightning_cas.cli import main  # noqa: E402
from lightning_cas.geometry.critical_records import DecisionBoundaryResult, TrainingResult  # noqa: E402

ARCH = ["--widths", "2,1", "--attention", "2", "--tokens", "2"]


def run(args):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def test_boundary_ed_json_agrees_with_both_methods(m2):
    out = run(["ed", *ARCH, "--boundary", "--seed", "0", "--json"])
    assert out.exit_code == 0, out.output
    res = DecisionBoundaryResult.from_json(out.output)
    assert res.ed_degree_exact == 12 and res.ed_degree_numeric == (12,) and res.ed_degree == 12


def test_boundary_radius_with_readout_point_and_weights(tmp_path, m2):
    np.save(tmp_path / "w.npy", np.array([[1.0, 2.0]]))
    (tmp_path / "x.json").write_text(json.dumps([[1, 2], [-1, "3/2"]]))
    out = run(["ed", *ARCH, "--boundary", "--readout", str(tmp_path / "w.npy"), "--point", str(tmp_path / "x.json"),
               "--seed", "0", "--json"])
    assert out.exit_code == 0, out.output
    res = DecisionBoundaryResult.from_json(out.output)
    assert res.radius == min(p.distance for p in res.critical_points) and res.point == ("1", "2", "-1", "3/2")


@pytest.mark.parametrize("content, words", [
    ([[1.0, 2.0, 3.0]], "readout must have shape (1, 2)"),
])
def test_boundary_wrong_readout_is_one_line(tmp_path, content, words):
    np.save(tmp_path / "w.npy", np.array(content))
    out = CliRunner().invoke(main, ["ed", *ARCH, "--boundary", "--readout", str(tmp_path / "w.npy"), "--json"])
    assert out.exit_code == 2 and words in out.output and "Traceback" not in out.output


def test_boundary_nan_point_is_one_line(tmp_path):
    np.save(tmp_path / "x.npy", np.array([[1.0, np.nan], [0.0, 1.0]]))
    out = CliRunner().invoke(main, ["ed", *ARCH, "--boundary", "--point", str(tmp_path / "x.npy"), "--json"])
    assert out.exit_code == 2 and "NaN" in out.output and "Traceback" not in out.output


def test_training_eckart_young_json(tmp_path, m2):
    # a linear network 3 -> 1 -> 2 with whitened inputs: the losses are the squared singular values
    (tmp_path / "net.toml").write_text('input = 3\ntokens = 1\n[[block]]\nkind = "linear"\nout = 1\n'
                                       '[[block]]\nkind = "linear"\nout = 2\n')
    T = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, -1.0]])
    np.save(tmp_path / "X.npy", np.eye(3).reshape(3, 3, 1))
    np.save(tmp_path / "Y.npy", T.T.reshape(3, 2, 1))
    out = run(["ed", "--arch", str(tmp_path / "net.toml"), "--inputs", str(tmp_path / "X.npy"),
               "--targets", str(tmp_path / "Y.npy"), "--json"])
    assert out.exit_code == 0, out.output
    res = TrainingResult.from_json(out.output)
    s = np.linalg.svd(T, compute_uv=False)
    assert [p.loss for p in res.critical_points] == pytest.approx([s[1] ** 2, s[0] ** 2], rel=1e-9)
    assert math.isclose(res.minimum_loss, s[1] ** 2, rel_tol=1e-9)


def test_training_wrong_target_shape_is_one_line(tmp_path):
    np.save(tmp_path / "X.npy", np.zeros((2, 2, 2)))
    np.save(tmp_path / "Y.npy", np.zeros((2, 3, 2)))
    out = CliRunner().invoke(main, ["ed", *ARCH, "--inputs", str(tmp_path / "X.npy"), "--targets",
                                    str(tmp_path / "Y.npy"), "--json"])
    assert out.exit_code == 2 and "targets must have shape" in out.output and "Traceback" not in out.output
