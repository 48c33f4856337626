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
from lightning_cas.results.critical import DecisionBoundaryResult, TrainingResult  # noqa: E402

ARCH = ["--widths", "2,1", "--attention", "2", "--tokens", "2"]


def run(args):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def test_boundary_ed_json_agrees_with_both_methods(m2):
    out = run(["ed", *ARCH, "--boundary", "--method", "lagrange", "--seed", "0", "--json"])
    assert out.exit_code == 0, out.output
    res = DecisionBoundaryResult.from_json(out.output)
    assert res.ed_degree_exact == 12 and res.ed_degree_numeric == (12,) and res.ed_degree == 12


def test_boundary_radius_with_readout_point_and_weights(tmp_path, m2):
    np.save(tmp_path / "w.npy", np.array([[1.0, 2.0]]))
    (tmp_path / "x.json").write_text(json.dumps([[1, 2], [-1, "3/2"]]))
    out = run(
        [
            "ed",
            *ARCH,
            "--boundary",
            "--method",
            "lagrange",
            "--readout",
            str(tmp_path / "w.npy"),
            "--point",
            str(tmp_path / "x.json"),
            "--seed",
            "0",
            "--json",
        ]
    )
    assert out.exit_code == 0, out.output
    res = DecisionBoundaryResult.from_json(out.output)
    assert res.radius == min(p.distance for p in res.critical_points) and res.point == ("1", "2", "-1", "3/2")


@pytest.mark.parametrize(
    "content, words",
    [
        ([[1.0, 2.0, 3.0]], "readout must have shape (1, 2)"),
    ],
)
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
    (tmp_path / "net.toml").write_text(
        'input = 3\ntokens = 1\n[[block]]\nkind = "linear"\nout = 1\n[[block]]\nkind = "linear"\nout = 2\n'
    )
    T = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, -1.0]])
    np.save(tmp_path / "X.npy", np.eye(3).reshape(3, 3, 1))
    np.save(tmp_path / "Y.npy", T.T.reshape(3, 2, 1))
    out = run(
        [
            "ed",
            "--arch",
            str(tmp_path / "net.toml"),
            "--inputs",
            str(tmp_path / "X.npy"),
            "--targets",
            str(tmp_path / "Y.npy"),
            "--json",
        ]
    )
    assert out.exit_code == 0, out.output
    res = TrainingResult.from_json(out.output)
    s = np.linalg.svd(T, compute_uv=False)
    assert [p.loss for p in res.critical_points] == pytest.approx([s[1] ** 2, s[0] ** 2], rel=1e-9)
    assert math.isclose(res.minimum_loss, s[1] ** 2, rel_tol=1e-9)


def test_training_wrong_target_shape_is_one_line(tmp_path):
    np.save(tmp_path / "X.npy", np.zeros((2, 2, 2)))
    np.save(tmp_path / "Y.npy", np.zeros((2, 3, 2)))
    out = CliRunner().invoke(
        main, ["ed", *ARCH, "--inputs", str(tmp_path / "X.npy"), "--targets", str(tmp_path / "Y.npy"), "--json"]
    )
    assert out.exit_code == 2 and "targets must have shape" in out.output and "Traceback" not in out.output


# ---------------------------------------------------------------- every `ed` form's text: clean, each line once

LINEAR = 'input = 2\ntokens = 1\n[[block]]\nkind = "linear"\nout = 1\n'
LINEAR_RANK_ONE = LINEAR + '[[block]]\nkind = "linear"\nout = 2\n'  # 2 x 2 matrices of rank <= 1


def _files(tmp_path) -> dict:
    files = {"line": LINEAR, "rank_one": LINEAR_RANK_ONE}
    for name, text in files.items():
        (tmp_path / f"{name}.toml").write_text(text)
    data = {
        "X": [[[1, 2], [-1, 3]], [[0, 1], [2, -2]], [[3, 1], [1, 1]], [[1, -1], [2, 1]]],
        "E": [[[1], [0]], [[0], [1]]],
        "T": [[[3], [1]], [[1], [2]]],
        "at": {"weights": [3, 4]},
        "w": [[1]],
        "x0": [[1], [2]],
    }
    for name, value in data.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(value))
    return {k: str(tmp_path / f"{k}.{'toml' if k in files else 'json'}") for k in (*files, *data)}


@pytest.mark.parametrize("form", ["generic", "standard", "data", "boundary", "targets"])
def test_every_ed_form_prints_clean_lines_each_once(tmp_path, m2, form):
    f = _files(tmp_path)
    args = {
        "generic": [*ARCH[:3], "1", *ARCH[4:]],
        "standard": [*ARCH[:3], "1", *ARCH[4:], "--metric", "standard"],
        "data": [*ARCH[:3], "1", *ARCH[4:], "--inputs", f["X"], "--layout", "features-tokens"],
        "boundary": ["--arch", f["line"], "--boundary", "--at", f["at"], "--readout", f["w"], "--point", f["x0"]],
        "targets": ["--arch", f["rank_one"], "--inputs", f["E"], "--targets", f["T"]],
    }[form]
    out = run(["ed", *args])
    assert out.exit_code == 0, out.output
    lines = [line for line in out.stdout.splitlines() if line.strip()]
    assert len(lines) >= 2 and not any("\\x" in line or "\\u" in line for line in lines), out.stdout
    assert len(set(lines)) == len(lines), out.stdout  # the architecture and every note once


@pytest.mark.parametrize("scale", [1e-200, 1e300])
def test_training_data_float64_cannot_hold_is_refused_before_any_work(tmp_path, scale):
    np.save(tmp_path / "X.npy", np.full((2, 2, 2), scale))
    np.save(tmp_path / "Y.npy", np.ones((2, 1, 2)))
    out = CliRunner().invoke(
        main, ["ed", *ARCH, "--inputs", str(tmp_path / "X.npy"), "--targets", str(tmp_path / "Y.npy")]
    )
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert out.exit_code == 2 and len(lines) == 1 and f"largest entry is {scale:.0e}".replace("e+", "e") in lines[0]
    assert "running Macaulay2" not in out.output and "Traceback" not in out.output


def test_training_reads_inputs_in_either_layout(tmp_path):
    # tokens-features is PyTorch's (N, t, d_0): the same data transposed must be read as the same inputs
    from lightning_cas.core.architecture import Architecture
    from lightning_cas.geometry.training.critical import read_training

    arch = Architecture((2, 1), (1,), 3)
    X = np.arange(1, 13, dtype=float).reshape(2, 2, 3)
    np.save(tmp_path / "ft.npy", X)
    np.save(tmp_path / "tf.npy", X.transpose(0, 2, 1))
    Y = np.ones((2, 1, 3))
    ft = read_training(arch, str(tmp_path / "ft.npy"), Y)[0]
    tf = read_training(arch, str(tmp_path / "tf.npy"), Y, "tokens-features")[0]
    assert ft.tolist() == tf.tolist()
    out = CliRunner().invoke(main, ["ed", *ARCH, "--boundary", "--layout", "tokens-features"])
    assert out.exit_code == 2 and "--layout" in out.output and len(out.output.strip().splitlines()) == 1


def test_weights_given_to_training_are_refused_not_ignored(tmp_path):
    out = CliRunner().invoke(main, ["ed", *ARCH, "--inputs", "X.npy", "--targets", "Y.npy", "--at", "w.json"])
    assert out.exit_code == 2 and "--at goes with --boundary" in out.output and "--seed" in out.output


def test_all_zero_inputs_of_the_data_metric_are_refused_before_any_work(tmp_path):
    np.save(tmp_path / "X.npy", np.zeros((3, 2, 2)))
    out = CliRunner().invoke(main, ["ed", *ARCH, "--inputs", str(tmp_path / "X.npy"), "--layout", "features-tokens"])
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert out.exit_code == 2 and len(lines) == 1 and "every input is zero" in lines[0]
