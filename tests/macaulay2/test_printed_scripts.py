"""What `--format m2` prints runs as printed: under `M2 --script`, in a fresh home directory where the package
was never installed (one Macaulay2 process for the scripts of several commands, concatenated)."""

from __future__ import annotations

import subprocess
import sys


def test_printed_scripts_run_in_a_fresh_home(m2, tmp_path):
    commands = [
        ["dim", "--widths", "2,1", "--attention", "1"],
        ["verify", "--widths", "3,1", "--attention", "1"],
        ["degree", "--widths", "2,1", "--attention", "1"],
        ["ed", "--widths", "2,1", "--attention", "1"],
        ["fiber", "--widths", "2,1", "--attention", "1"],
        ["dim", "--arch", "examples/transformer.toml"],
    ]
    scripts = []
    for args in commands:
        out = subprocess.run(
            [sys.executable, "-m", "lightning_cas", *args, "--format", "m2", "-q"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert out.returncode == 0, (args, out.stderr)
        assert any(line.startswith('needsPackage("LightningCAS", FileName => "') for line in out.stdout.splitlines())
        scripts.append(out.stdout)
    home = tmp_path / "home"
    home.mkdir()
    script = tmp_path / "all.m2"
    # each script in its own scope of names: the next one redefines N, R, ... as a new session would
    script.write_text("\n".join(scripts) + '\nprint "all scripts ran";\n')
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "TERM": "dumb"}
    run = subprocess.run(
        [m2, "--script", str(script)], capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path
    )
    assert run.returncode == 0 and "all scripts ran" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]
    assert not (home / ".Macaulay2" / "local" / "share" / "Macaulay2" / "LightningCAS.m2").exists()
