"""report: a compact typed table with a heads column, claims shown (not dropped), and output targets
that are refused in one line before anything is printed (FIFOs never block, devices are never replaced)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lightning_cas.batch import report
from lightning_cas.batch.spec import parse_spec
from lightning_cas.batch.sweep import run_sweep

REPO = Path(__file__).resolve().parents[2]
SPEC = (
    '[grid]\nwidths = [[2, 2], [3, 3]]\nattention = [[1], [2]]\nmethod = ["modp"]\n'
    '[[architecture]]\nwidths = [3, 3]\nattention = [3]\nheads = [2]\nmethod = "modp"\n'
)
PNG = b"\x89PNG\r\n\x1a\n"


def cli(*args, env=None, timeout=120, code=None):
    argv = [sys.executable, "-m", "lightning_cas", *map(str, args)]
    if code is not None:  # run the CLI after some set-up code in the same interpreter
        argv = [
            sys.executable,
            "-c",
            code + "\nimport sys; from lightning_cas.cli import main; "
            f"sys.argv = {['lightning-cas', *map(str, args)]!r}; main()",
        ]
    return subprocess.run(
        argv,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
    )


def one_line(proc, *phrases):
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lightning-cas: error:"), proc.stderr
    for p in phrases:
        assert p in lines[0], lines[0]


@pytest.fixture
def results(tmp_path):
    out = tmp_path / "res"
    assert run_sweep(parse_spec(SPEC), out).ok == 5
    return out


def test_the_table_is_compact_and_has_heads(results):
    proc = cli("report", results, "--no-plot")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(map(len, lines)) <= 120, max(map(len, lines))  # it was about 170 columns
    header = next(ln for ln in lines if ln.split()[:2] == ["widths", "a"]).split()
    assert header[2] == "H" and "verdict" in header and "source" in header
    row = next(ln.split() for ln in lines if ln.split()[:3] == ["3-3", "3", "2"])
    assert "defect" in row and "32" in row and "34" in row
    assert not (results / "dimensions.png").exists()


def test_json_rows_are_typed_and_draw_no_plot(results):
    proc = cli("report", results, "--json")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(rows) == 5 and not (results / "dimensions.png").exists()
    row = next(r for r in rows if r["heads"] == [2])
    assert row["widths"] == [3, 3] and row["attention"] == [3] and row["dimension"] == 32 and row["predicted"] == 34
    assert isinstance(row["elapsed_s"], float) and row["message"] is None and row["source"] == "here"
    # an explicit --plot still draws under --json
    assert cli("report", results, "--json", "--plot", results / "p.png").returncode == 0
    assert (results / "p.png").read_bytes()[:8] == PNG


def test_the_plot_shows_computed_and_predicted_where_they_coincide(results):
    """The prediction was drawn under the computed line (same colour, same place): now it is a dotted
    line of open circles, larger than the computed points drawn on top."""
    checks = report.load_results(results)
    _, right = report.figure(checks).axes
    predicted = [ln for ln in right.lines if ln.get_linestyle() == ":" and ln.get_xdata().size]
    computed = [ln for ln in right.lines if ln.get_linestyle() == "-"]
    assert len(predicted) == len(computed) == 3  # a family per (L, a, H)
    assert all(
        p.get_markerfacecolor() == "none" and p.get_markersize() > c.get_markersize()
        for p, c in zip(predicted, computed)
    )
    assert all(p.get_zorder() < c.get_zorder() for p, c in zip(predicted, computed))


@pytest.mark.slow  # three plot formats, each a CLI process: 4 s, so not in the fast loop
def test_the_default_plot_and_its_formats(results, tmp_path):
    proc = cli("report", results)
    assert proc.returncode == 0 and (results / "dimensions.png").read_bytes()[:8] == PNG, proc.stderr
    for suffix, magic in ((".svg", b"<?xml"), (".pdf", b"%PDF")):
        assert cli("report", results, "--plot", tmp_path / f"d{suffix}").returncode == 0
        assert (tmp_path / f"d{suffix}").read_bytes()[:4] == magic[:4]


@pytest.mark.slow  # six CLI processes: 6 s, so not in the fast loop
def test_output_targets_that_are_not_files_are_one_line_before_anything_is_printed(results, tmp_path):
    os.mkfifo(tmp_path / "fifo")
    os.mkfifo(tmp_path / "fifo.png")
    (tmp_path / "dir").mkdir()
    one_line(cli("report", results, "--csv", tmp_path / "fifo", timeout=30), "FIFO")  # used to hang
    one_line(cli("report", results, "--csv", tmp_path / "dir"), "directory")
    one_line(cli("report", results, "--csv", "/dev/null", "--no-plot"), "device")
    one_line(cli("report", results, "--plot", tmp_path / "x.exe"), ".png")
    one_line(cli("report", results, "--plot", tmp_path / "fifo.png", timeout=30), "FIFO")
    one_line(cli("report", results, "--plot", tmp_path / "dir.png", "--csv", tmp_path / "dir"), "directory")
    assert Path("/dev/null").is_char_device() and (tmp_path / "dir").is_dir()


def test_without_matplotlib_the_table_is_printed_and_an_asked_plot_is_refused_first(results, tmp_path):
    block = "import sys; sys.modules['matplotlib'] = None"
    proc = cli("report", results, code=block)
    assert proc.returncode == 0 and "3-3" in proc.stdout and "no plot: matplotlib" in proc.stderr, proc.stderr
    proc = cli("report", results, "--plot", tmp_path / "p.png", code=block)
    one_line(proc, "matplotlib")


def test_claims_are_shown_and_plotted_not_dropped(results, tmp_path, monkeypatch):
    monkeypatch.setenv("LIGHTNING_CAS_PRIVATE_DIR", str(tmp_path / "colleague"))
    checks = report.load_results(results)
    assert len(checks) == 5 and {c.status for c in checks} == {"claim"}
    fig = report.figure(checks)
    left, right = fig.axes
    assert sum(len(c.get_offsets()) for c in left.collections) == 5  # the plot used to be empty
    proc = cli("report", results, "--no-plot")  # the monkeypatched key directory reaches the command
    assert proc.returncode == 0 and proc.stdout.count(" claim ") >= 5
    assert "5 claims from host" in proc.stdout and "--recheck" in proc.stdout
