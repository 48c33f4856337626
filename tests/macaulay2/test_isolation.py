"""Macaulay2 loads only what the project means, never more output than a cap, and nothing outlives
the command: packages planted where the user stands or in a results directory never run; a program
given as --m2 that prints forever is stopped at the cap; killed commands leave no process behind;
numbers from Macaulay2 are checked where they enter."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lightning_cas.api import dimension
from lightning_cas.core.architecture import Architecture
from lightning_cas.errors import M2NotFoundError, M2OutputError, M2ParseError
from lightning_cas.geometry.fibers.fiber import fiber
from lightning_cas.geometry.one_layer.implicit import implicit
from lightning_cas.macaulay2.render import package_file
from lightning_cas.macaulay2.runner import MAX_OUTPUT_BYTES, M2Session, find_m2, run_script, work_dir
from tests.support import wait_until

REPO = Path(__file__).resolve().parents[2]
# what the package and its commands load by name, and what those load in turn (the test adds whatever
# else a real run shows)
NAMED = [
    "LightningCAS",
    "JSON",
    "Parsing",
    "MinimalPrimes",
    "Elimination",
    "NumericalImplicitization",
    "NumericalAlgebraicGeometry",
    "NumericalLinearAlgebra",
    "SLPexpressions",
    "NAGtypes",
    "PHCpack",
    "Bertini",
    "init",
]


def cli(args, cwd, timeout=600, **kw):
    return subprocess.run(
        [sys.executable, "-m", "lightning_cas", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        **kw,
    )


def loaded_packages(m2, tmp_path) -> set[str]:
    """Package names a real run adds to Macaulay2's dictionary: LightningCAS with everything it imports,
    and NumericalImplicitization (the numerical degree) with everything that imports."""
    probe = tmp_path / "probe.m2"
    probe.write_text(
        textwrap.dedent(f"""\
        before = set keys PackageDictionary;
        needsPackage("LightningCAS", FileName => "{package_file().as_posix()}");
        needsPackage "NumericalImplicitization";
        << "@@LCAS@@ names " << demark(" ", toList(set keys PackageDictionary - before)) << endl;
        """)
    )
    out = run_script(probe, m2=m2, timeout=300).stdout
    line = next(x for x in out.splitlines() if x.startswith("@@LCAS@@ names "))
    return {n.removeprefix("Package$") for n in line.split()[2:]}


def plant(directory: Path, names, marker: Path) -> None:
    """A file for every name that, if Macaulay2 ever loads it, writes ``marker`` and fails."""
    directory.mkdir(parents=True, exist_ok=True)
    aux = sorted(p.name for p in (package_file().parent / "LightningCAS").glob("*.m2"))
    for rel in [f"{n}.m2" for n in names] + [f"LightningCAS/{a}" for a in aux]:
        target = directory / rel
        target.parent.mkdir(exist_ok=True)
        target.write_text(f'"{marker.as_posix()}" << "{rel}" << endl << close;\nerror "a planted file was loaded";\n')


@pytest.mark.slow
def test_packages_planted_where_the_user_stands_or_in_results_never_load(m2, tmp_path, monkeypatch):
    names = set(NAMED) | loaded_packages(m2, tmp_path)
    assert {"JSON", "NumericalImplicitization"} <= names
    marker = tmp_path / "PWNED"
    here, results = tmp_path / "here", tmp_path / "results"
    plant(here, names, marker)
    plant(results, names, marker)
    (here / "w.json").write_text(json.dumps({"layers": [{"Q": [[1, 2]], "K": [[1, 0]], "V": [[1, 1]]}]}))
    (here / "spec.toml").write_text(
        'name = "planted"\n[[architecture]]\nwidths = [2, 2]\nattention = [2]\ntokens = 2\nmethod = "jacobian"\n'
    )
    runs = [
        ["dim", "--widths", "2,2", "--attention", "2", "--method", "jacobian"],
        ["dim", "--widths", "2,1", "--attention", "1", "--method", "implicit"],
        ["implicit", "--widths", "2,1", "--attention", "1", "--numerical-degree", "1"],
        ["boundary", "--widths", "2,1", "--attention", "1", "--at", "w.json", "--verdict-only"],
        ["sweep", "spec.toml", "--out", str(results), "--quiet"],
    ]
    for args in runs:
        res = cli(args + ["--m2", m2], here)
        assert res.returncode == 0, (args, res.stderr)
        assert not marker.exists(), (args, marker.read_text())
    monkeypatch.chdir(here)
    arch = Architecture((2, 1), (1,), 2)
    with M2Session(m2=m2, timeout=120) as session:
        assert dimension(arch, method="jacobian", session=session).dimension == 4
        assert implicit(arch, session=session).dimension == 4
    assert not marker.exists()


def test_macaulay2_stands_in_a_private_directory_and_sees_only_absolute_paths(m2, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    probe = tmp_path / "where.m2"
    probe.write_text('<< "@@LCAS@@ cwd " << currentDirectory() << endl;\n')
    cwd = next(x for x in run_script(probe, m2=m2).stdout.splitlines() if "cwd" in x).split(" ", 2)[2]
    assert Path(cwd).resolve() == work_dir().resolve() != tmp_path.resolve()
    assert work_dir().stat().st_mode & 0o777 == 0o700 and work_dir().stat().st_uid == os.geteuid()
    with M2Session(m2=m2, timeout=60) as session:
        got = session.run(probe).stdout
    assert str(work_dir().resolve()) in got


# ---- output cap -------------------------------------------------------------------------------


def forever(tmp_path) -> str:
    """`yes` whatever its arguments (GNU yes refuses --script): a program that prints without end."""
    path = tmp_path / "yes-M2"
    path.write_text("#!/bin/sh\nexec yes\n")
    path.chmod(0o755)
    return str(path)


def test_a_program_that_prints_forever_is_stopped_at_the_cap_with_one_line(tmp_path):
    start = time.monotonic()
    res = cli(
        [
            "dim",
            "--widths",
            "2,2",
            "--attention",
            "2",
            "--method",
            "jacobian",
            "--m2",
            forever(tmp_path),
            "--timeout",
            "60",
        ],
        tmp_path,
        timeout=120,
    )
    took = time.monotonic() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    assert res.returncode != 0 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and f"more than {MAX_OUTPUT_BYTES // 2**20} MiB" in lines[0], res.stderr[-500:]
    assert took < 30 and peak < 1.5 * 2**30, (took, peak)


@pytest.mark.slow  # a pty carries about 5 MB/s here: the cap is reached in about 20 s
def test_a_session_that_prints_forever_is_stopped_at_the_cap(tmp_path):
    start = time.monotonic()
    with pytest.raises(M2OutputError, match="more than"):
        M2Session(m2=forever(tmp_path), timeout=60)
    assert time.monotonic() - start < 30


# ---- the binary ---------------------------------------------------------------------------------


def test_a_directory_given_as_the_binary_is_named_a_directory(tmp_path):
    with pytest.raises(M2NotFoundError, match="is a directory, not an executable"):
        find_m2(str(tmp_path))
    plain = tmp_path / "M2"
    plain.write_text("print 1\n")
    with pytest.raises(M2NotFoundError, match="is not an executable file"):
        find_m2(str(plain))
    res = cli(["dim", "--widths", "2,2", "--attention", "1", "--method", "jacobian", "--m2", "/tmp"], tmp_path)
    lines = res.stderr.strip().splitlines()
    assert res.returncode != 0 and len(lines) == 1 and "'/tmp' is a directory, not an executable" in lines[0]


# ---- numbers checked where they enter -------------------------------------------------------------


def fake_m2(tmp_path, record: dict) -> str:
    """Stands in for Macaulay2 that prints a record we choose (a failure that cannot be provoked)."""
    path = tmp_path / "fake-M2"
    path.write_text("#!/bin/sh\necho '@@LCAS-JSON@@ " + json.dumps(record) + "'\n")
    path.chmod(0o755)
    return str(path)


JACOBIAN_RECORD = {
    "m2_version": "1.21",
    "package_version": "0.1.0",
    "strategy": "Jacobian",
    "rows": 20,
    "prime": 2147483629,
    "parameters": 12,
}


@pytest.mark.parametrize("rank", [99, 13, -5])
def test_an_impossible_rank_from_macaulay2_is_refused_in_one_line(tmp_path, rank):
    fake = fake_m2(tmp_path, {**JACOBIAN_RECORD, "rank": rank, "dimension": rank})
    res = cli(["dim", "--widths", "2,2", "--attention", "2", "--method", "jacobian", "--m2", fake], tmp_path)
    lines = res.stderr.strip().splitlines()
    assert res.returncode != 0 and res.stdout == "" and len(lines) == 1, res.stderr
    assert f"rank {rank} for a network of 12 weights" in lines[0] and "between 0 and 12" in lines[0]


def test_a_rank_above_the_rows_or_a_wrong_parameter_count_is_refused(tmp_path):
    arch = Architecture((2, 2), (2,), 2)
    with pytest.raises(M2ParseError, match="rank 7 for a Jacobian of 5 rows"):
        dimension(
            arch, method="jacobian", m2=fake_m2(tmp_path, {**JACOBIAN_RECORD, "rows": 5, "rank": 7, "dimension": 7})
        )
    with pytest.raises(M2ParseError, match="13 weights, expected 12"):
        dimension(
            arch,
            method="jacobian",
            m2=fake_m2(tmp_path, {**JACOBIAN_RECORD, "parameters": 13, "rank": 7, "dimension": 7}),
        )


def test_an_impossible_implicit_dimension_is_refused(tmp_path):
    arch = Architecture((2, 1), (1,), 2)
    rec = {
        "m2_version": "1.21",
        "package_version": "0.1.0",
        "strategy": "Implicit",
        "dimension": 40,
        "degree": 3,
        "parameters": 6,
        "coefficients": 6,
        "linear_span": 4,
        "generator_degrees": [3],
        "prime": 0,
    }
    with pytest.raises(M2ParseError, match="dimension 40 for a network of 6 weights"):
        dimension(arch, method="implicit", m2=fake_m2(tmp_path, rec))


def test_an_impossible_fiber_dimension_is_refused(tmp_path):
    arch = Architecture((2, 1), (1,), 2)
    comp = {"dimension": 2, "degree": 1, "contains_point": True, "generators": ["q_(1,1,1)"], "witness": None}
    rec = {
        "m2_version": "1.21",
        "package_version": "0.1.0",
        "parameters": 6,
        "fiber_generators": 1,
        "fiber_dimension": 99,
        "components": [comp],
    }
    with pytest.raises(M2ParseError, match="fiber dimension 99 for a network of 6 weights"):
        fiber(arch, method="m2", m2=fake_m2(tmp_path, rec))
    rec.update(fiber_dimension=-1)
    with pytest.raises(M2ParseError, match="fiber dimension -1"):
        fiber(arch, method="m2", m2=fake_m2(tmp_path, rec))


# ---- children die with the command ---------------------------------------------------------------


def _parents() -> dict[int, int]:
    """pid -> parent pid of every live (non-zombie) process: a /proc scan."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                found[int(entry)] = int(fields[1])
    return found


def descendants(pid: int) -> set[int]:
    parents, found, todo = _parents(), set(), [pid]
    while todo:
        here = todo.pop()
        kids = {p for p, pp in parents.items() if pp == here} - found
        found |= kids
        todo.extend(kids)
    return found


def alive(pids) -> set[int]:
    return set(pids) & set(_parents())


def kill_and_look_for_orphans(args, cwd, sig, what):
    proc = subprocess.Popen(
        [sys.executable, "-m", "lightning_cas", *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert wait_until(lambda: what(descendants(proc.pid)), 120), "the command never started its child"
        children = descendants(proc.pid)
        os.kill(proc.pid, sig)
        proc.wait(30)
        gone = wait_until(lambda: not alive(children), 15)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # only this test's own command and what it left
        except ProcessLookupError:
            pass
    assert gone, f"orphans after {signal.Signals(sig).name}: {alive(children)}"
    return proc.returncode


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_dim_leaves_no_compute_child(tmp_path, sig):
    code = kill_and_look_for_orphans(
        ["dim", "--widths", "48,48,48,48", "--attention", "12,12,12", "--tokens", "3", "--timeout", "100"],
        tmp_path,
        sig,
        bool,
    )
    assert code == (143 if sig == signal.SIGTERM else -signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_geometry_command_leaves_no_macaulay2(m2, tmp_path, sig):
    def m2_running(pids):
        return any(os.path.basename(_cmdline(p).split(" ", 1)[0]).startswith("M2") for p in pids)

    code = kill_and_look_for_orphans(
        ["boundary", "--widths", "2,2", "--attention", "2", "--m2", m2], tmp_path, sig, m2_running
    )
    assert code == (143 if sig == signal.SIGTERM else -signal.SIGKILL)
