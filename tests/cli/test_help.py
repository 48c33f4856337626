"""Help at once: ``lightning-cas --help`` and every command's ``--help`` load neither sympy nor the
Macaulay2 layer nor the geometry modules; each command loads its implementation when it runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lightning_cas.cli import COMMANDS

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("sympy", "lightning_cas.macaulay2", "lightning_cas.geometry", "lightning_cas.backends", "lightning_cas.api")

# One fresh interpreter asks for every help in turn and says, after each, which heavy modules it holds.
PROBE = r"""
import contextlib, io, json, sys
from lightning_cas.cli import COMMANDS, main
heavy = tuple(sys.argv[1:])
seen = {}
for argv in [["--help"]] + [[name, "--help"] for name in COMMANDS]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main(argv, prog_name="lightning-cas")
        except SystemExit as exc:
            assert exc.code in (0, None), (argv, exc.code)
    assert "Usage:" in out.getvalue(), (argv, out.getvalue()[:200])
    seen[" ".join(argv)] = sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy))
print(json.dumps(seen))
"""


def test_no_help_loads_sympy_macaulay2_or_geometry():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *HEAVY], capture_output=True, text=True, env=env, cwd=str(REPO), timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = json.loads(proc.stdout)
    assert set(seen) == {"--help"} | {f"{name} --help" for name in COMMANDS}
    assert {argv: mods for argv, mods in seen.items() if mods} == {}


def test_the_module_entry_point_lists_every_command_without_sympy():
    """``python -m lightning_cas --help`` itself, checked with -X importtime (what the interpreter loaded)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "lightning_cas", "--help"],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(REPO),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    for name in COMMANDS:
        assert f"  {name} " in proc.stdout
    loaded = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "lightning_cas.cli" in loaded  # the probe reads what it should
    assert not {
        m
        for m in loaded
        if m == "sympy" or m.startswith(("sympy.", "lightning_cas.macaulay2", "lightning_cas.geometry"))
    }


def test_a_dim_call_loads_only_the_rank_and_its_printout():
    """A `dim` call: the modp backend and the result, not the theory, the verdict, the defect split, sympy or
    the Macaulay2 runner (each import is paid again by every call of a sweep of `dim` calls)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "lightning_cas", "dim", "--widths", "2,2", "--attention", "1"],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(REPO),
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("widths=2,2"), proc.stderr[-2000:]
    loaded = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert {"lightning_cas.backends.modp", "lightning_cas.results.dimension"} <= loaded
    # the Macaulay2 options resolve (macaulay2.connection, a few names); no runner, process or temp file
    assert not {m for m in loaded if m == "sympy" or m.startswith(("sympy.", "lightning_cas.geometry", "pexpect"))}
    assert not loaded & {"lightning_cas.macaulay2.runner", "lightning_cas.macaulay2.render", "subprocess", "tempfile"}
    assert not loaded & {
        "lightning_cas.results.theory",
        "lightning_cas.results.verify",
        "lightning_cas.core.theory",
        "lightning_cas.core.verdict",
        "lightning_cas.core.defects",
        "lightning_cas.core.symmetry",
    }


@pytest.mark.parametrize("command", ["degree", "ed", "llc"])
def test_every_long_command_takes_quiet(command):
    """--quiet turns off the progress display of every command that shows one."""
    from click.testing import CliRunner

    from lightning_cas.cli import main

    out = CliRunner().invoke(main, [command, "--help"])
    assert out.exit_code == 0 and "--quiet" in out.output


def test_a_weight_points_repr_is_one_short_line():
    from lightning_cas import Architecture
    from lightning_cas.system.points import as_point

    net = Architecture((8, 8, 8), (4, 4))
    text = repr(as_point(net, [f"{k}/7" for k in range(net.parameters)]))
    assert len(text) < 120 and "\n" not in text and f"{net.parameters} weights" in text and "1/7" in text
