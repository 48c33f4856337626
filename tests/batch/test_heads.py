"""`lightning-cas heads`: the multi-head table as a command of the CLI (it was a second argparse
program), its tables through the one CSV writer, a legible plot, and the exit status."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

from lightning_cas.batch import heads
from lightning_cas.batch.report import load_results
from lightning_cas.batch.spec import parse_spec
from lightning_cas.batch.sweep import run_sweep

REPO = Path(__file__).resolve().parents[2]
SPEC = (
    '[grid]\nwidths = [[3, 3], [2, 2]]\nattention = [[1], [3]]\nheads = [[1], [2]]\ntokens = [2]\nmethod = ["modp"]\n'
)


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "lightning_cas", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def test_heads_is_a_command_writing_tables_and_a_plot(tmp_path):
    res = tmp_path / "res"
    assert run_sweep(parse_spec(SPEC), res).ok == 8
    out = tmp_path / "heads"
    proc = cli("heads", res, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "8 architectures (8 one-layer)" in proc.stdout and "defective: widths 3-3 a 3 heads 2 t 2" in proc.stdout
    rows = {(r["widths"], r["attention"], r["heads"]): r for r in csv.DictReader(open(out / "table.csv"))}
    assert rows[("3-3", "3", "2")]["computed"] == "32" and rows[("3-3", "3", "2")]["defect"] == "2"
    assert rows[("3-3", "3", "2")]["status"] == "defective" and rows[("2-2", "1", "1")]["status"] == "fills"
    assert [r["widths"] for r in csv.DictReader(open(out / "defects.csv"))] == ["3-3"]
    assert (out / "heads.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and (out / "problems.txt").read_text() == ""
    proc = cli("heads", res, "--out", tmp_path / "np", "--no-plot")
    assert proc.returncode == 0 and not (tmp_path / "np" / "heads.png").exists()
    assert "no such option" not in cli("heads", "--help").stderr


def test_the_plot_has_a_panel_per_token_count_and_a_discrete_legend(tmp_path):
    res = tmp_path / "res"
    assert run_sweep(parse_spec(SPEC.replace("tokens = [2]", "tokens = [1, 2]")), res).ok == 16
    rows, problems = heads.build_rows([c.record for c in load_results(res, judge=False)])
    assert not problems and len(rows) == 16
    fig = heads.figure(rows)
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["t = 1 token", "t = 2 tokens"]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[:3] == ["fills the expected dimension", "defect 1", "defect 2"]  # classes, not a colour bar
    assert all(len(ax.texts) >= 6 for ax in fig.axes)  # every case is labelled with its computed dimension
    assert heads.plot_bytes(rows)[:8] == b"\x89PNG\r\n\x1a\n"


def test_make_heads_calls_the_command():
    dry = subprocess.run(
        ["make", "-n", "-C", str(REPO), "heads", "VENV=/nonexistent", "HEADS_DIR=h d"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = next(ln for ln in dry.stdout.splitlines() if " heads " in ln)
    assert "heads 'h d/results' --out 'h d'" in line and "lightning_cas.batch.heads" not in dry.stdout
