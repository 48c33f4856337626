"""Notebooks: export of a real sweep, execution in the real Macaulay2 Jupyter kernel (also from another
directory, loading the package by name), claims re-checked, and the trust boundary of a results directory
(nothing read from it is run or embedded)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lightning_cas import api
from lightning_cas.batch import notebook as nbk
from lightning_cas.batch.store import ResultStore, load_record
from lightning_cas.batch.sweep import JobResult, parse_spec, run_sweep
from lightning_cas.core.architecture import Architecture
from lightning_cas.results.display import printable

nbformat = pytest.importorskip("nbformat")
REPO = Path(__file__).resolve().parents[2]
JAC = "w2-2_a2_t2_none_jacobian_s0"
IMP = "w2-2_a1_t2_none_implicit_s0"
MODP = "w2-2_a1_t2_none_modp_s0"
SPEC = textwrap.dedent("""\
    name = "nb"
    timeout = 60
    [grid]
    widths = [[2, 2]]
    attention = [[1]]
    method = ["modp"]
    [[architecture]]
    widths = [2, 2]
    attention = [2]
    method = "jacobian"
    [[architecture]]
    widths = [2, 2]
    attention = [1]
    method = "implicit"
    """)


def cli(*args, env=None, cwd=REPO):
    return subprocess.run(
        [sys.executable, "-m", "lightning_cas", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
    )


@pytest.fixture
def kernel(m2):
    """The real m2 Jupyter kernel (Debian's macaulay2-jupyter-kernel); skipped without it, fatal under CI."""
    pytest.importorskip("nbclient")
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(nbk.KERNEL)
    except NoSuchKernel:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("the m2 Jupyter kernel is not installed, and CI=true: `make setup` must install it.")
        pytest.skip("the m2 Jupyter kernel is not installed (run `make setup`)")
    return nbk.KERNEL


@pytest.fixture
def results(tmp_path, m2):
    """A real sweep: a tiny jacobian job, a tiny implicit job (both Macaulay2) and a modp job."""
    out = tmp_path / "res"
    summary = run_sweep(parse_spec(SPEC, "nb.toml"), out)
    assert summary.ok == 3 and summary.error == 0
    return out


def job_cells(nb):
    return {
        c.metadata[nbk.META]["label"]: c
        for c in nb.cells
        if c.get("metadata", {}).get(nbk.META, {}).get("role") == "job"
    }


def markdown_of(nb, label):
    return next(c.source for c in nb.cells if c.cell_type == "markdown" and c.source.startswith(f"## `{label}`"))


def resave(out: Path, label: str, **changes) -> None:
    """Rewrite a record through the store (so it stays a valid signed record), with some fields changed."""
    rec = load_record(out / f"{label}.json")
    ResultStore(out).save(JobResult.from_dict({**rec.to_dict(), **changes}))


# ---- export -----------------------------------------------------------------------------------


def test_export_has_title_table_setup_and_a_cell_for_every_job(results):
    nb, cells = nbk.build_notebook(results)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "m2"
    title = nb.cells[0].source
    assert "lightning_cas" in title and "1.21" in title and "3 computed by the exporting user, 0 claims" in title
    # the spec in the title expands to exactly the stored jobs
    toml = title.split("```toml\n")[1].split("```")[0]
    assert sorted(j.label for j in parse_spec(toml).jobs) == sorted(p.stem for p in results.glob("w*.json"))
    table = nb.cells[1].source
    assert "Computed vs predicted" in table and table.count("| agree |") == 3
    setup = [c for c in nb.cells if c.get("metadata", {}).get(nbk.META, {}).get("role") == "setup"]
    assert len(setup) == 1 and 'needsPackage "LightningCAS";' in setup[0].source
    code = job_cells(nb)
    assert sorted(code) == [IMP, MODP, JAC] and all(c.runnable for c in cells)  # the modp job has a cell too
    for label, cell in code.items():
        assert cell.source.startswith("--%timeout=60\n") and f'lcasCheck("{label}", r);' in cell.source
    assert 'Strategy => "Implicit", CoefficientRing => QQ' in code[IMP].source
    assert 'Strategy => "Jacobian", CoefficientRing => ZZ/2147483629' in code[MODP].source
    md = markdown_of(nb, JAC)
    assert "dimension **7**" in md and "jacobian" in md and "probabilistic" in md
    assert f"scripts/{JAC}.m2" in md and "matches the sha256 of its record" in md


def test_the_notebook_names_no_path(results):
    """Nothing in the notebook depends on where it was made: no package path, no results path."""
    nb, _ = nbk.build_notebook(results)
    text = json.dumps(nb)
    for path in (str(REPO), str(results), str(results.parent), "/tmp", "FileName", "lcasPackage", "LightningCAS.m2"):
        assert path not in text, path


def test_cli_export_counts_cells_and_refuses_outputs_that_are_not_files(results, tmp_path):
    proc = cli("notebook", results, "-o", tmp_path / "x.ipynb")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"notebook": str(tmp_path / "x.ipynb"), "scripts": 3}
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    for target, kind in ((tmp_path / "dir", "directory"), (tmp_path / "fifo", "FIFO"), ("/dev/null", "device")):
        proc = cli("notebook", results, "-o", target)
        assert proc.returncode == 2 and proc.stdout == "", proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and kind in proc.stderr, proc.stderr
    assert (tmp_path / "dir").is_dir() and not list((tmp_path / "dir").iterdir())
    assert Path("/dev/null").is_char_device()


def test_one_result_json_is_a_notebook_of_one_claim(tmp_path, m2):
    out = tmp_path / "one.json"
    proc = cli("dim", "--widths", "2,2", "--attention", "2", "--method", "jacobian", "--json")
    assert proc.returncode == 0, proc.stderr
    out.write_text(proc.stdout)
    nb, cells = nbk.build_notebook(out)
    (cell,) = cells
    assert cell.source == "claim" and cell.runnable and cell.record.result.dimension == 7
    assert "dim --json" in cell.origin
    proc = cli("notebook", out, "-o", tmp_path / "one.ipynb")
    assert proc.returncode == 0 and json.loads(proc.stdout)["scripts"] == 1, proc.stderr


def test_jobs_macaulay2_cannot_check_say_why(tmp_path):
    spec = textwrap.dedent("""\
        [[architecture]]
        widths = [2, 2]
        attention = [1]
        normalization = "softmax"
        method = "numeric"
        [[architecture]]
        widths = [16, 16, 16]
        attention = [4, 4]
        method = "modp"
        """)
    out = tmp_path / "res"
    assert run_sweep(parse_spec(spec, "x.toml"), out).ok == 2
    nb, cells = nbk.build_notebook(out)
    reasons = {c.label: c.refused for c in cells}
    assert not job_cells(nb)
    assert "softmax" in reasons["w2-2_a1_t2_softmax_numeric_s0"]
    big = reasons["w16-16-16_a4-4_t2_none_modp_s0"]
    assert "cap" in big and "--recheck" in big
    assert "No Macaulay2 cell" in markdown_of(nb, "w16-16-16_a4-4_t2_none_modp_s0")


# ---- execution in the real kernel ----------------------------------------------------------------


def test_execute_reproduces_every_cell_and_writes_clean_outputs(results, tmp_path, kernel, m2):
    out = tmp_path / "executed.ipynb"
    proc = cli("notebook", results, "-o", out, "--execute", "--json", env={"TERM": "xterm-256color"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["cells"] == 3 and report["reproduced"] == 3 and report["differs"] == [] and report["errors"] == []
    assert report["kernel"]["name"] == "m2" and report["kernel"]["implementation"] == "macaulay2_jupyter_kernel"
    version = subprocess.run([m2, "--version"], capture_output=True, text=True).stdout.strip()
    assert report["kernel"]["m2_version"] == version
    nb = nbformat.read(str(out), as_version=4)
    cells = job_cells(nb)
    assert all(c.metadata[nbk.META]["verdict"] == "reproduced" for c in cells.values())
    text = {label: nbk.cell_text(c) for label, c in cells.items()}
    every = "".join(text.values())
    # what a reader sees: Macaulay2 values, no escape codes, no records meant for the checker
    assert "\x1b" not in every and "@@LCAS" not in every and "magic succeeded" not in every
    assert "dimension => 7" in text[JAC] and "rank => 7" in text[JAC] and "HashTable" in text[JAC]
    assert "degree => 20" in text[IMP] and "dimension => 6" in text[MODP]
    # the setup cell a reader runs is the exported one (the checking switch was taken out again)
    setup = next(c for c in nb.cells if c.get("metadata", {}).get(nbk.META, {}).get("role") == "setup")
    assert setup.source == nbk.setup_source()
    # the kernel's numbers, cross-checked against the mod-p backend and the theory
    for label, arch in ((JAC, Architecture((2, 2), (2,), 2)), (IMP, Architecture((2, 2), (1,), 2))):
        got = int(text[label].split("dimension => ")[1].split()[0])
        assert got == api.dimension(arch, method="modp").dimension == api.predict(arch).dimension.value


def test_an_exported_notebook_runs_in_another_directory_with_the_package_installed(results, tmp_path, kernel):
    """The exported file, copied elsewhere, runs in the real kernel as it is: the package is loaded by
    name from ~/.Macaulay2/code (where `notebook --install-package` puts it), no path is edited."""
    from nbclient import NotebookClient

    exported = tmp_path / "made-here" / "run.ipynb"
    exported.parent.mkdir()
    assert cli("notebook", results, "-o", exported).returncode == 0
    elsewhere = tmp_path / "a colleague's" / "copy"
    elsewhere.mkdir(parents=True)
    shutil.copy(exported, elsewhere / "run.ipynb")
    shutil.rmtree(results)  # nothing of the run is left
    home = tmp_path / "home"
    home.mkdir()
    proc = cli("notebook", "--install-package", env={"HOME": str(home)})
    assert proc.returncode == 0, proc.stderr
    assert (home / ".Macaulay2" / "code" / "LightningCAS.m2").is_file()
    nb = nbformat.read(str(elsewhere / "run.ipynb"), as_version=4)
    env = {**os.environ, "HOME": str(home), "TERM": "dumb"}
    NotebookClient(nb, kernel_name="m2", timeout=120, resources={"metadata": {"path": str(elsewhere)}}).execute(env=env)
    cells = job_cells(nb)
    assert sorted(cells) == [IMP, MODP, JAC]
    text = {label: nbk.cell_text(c) for label, c in cells.items()}
    assert "error" not in "".join(text.values()).lower()
    assert "dimension => 7" in text[JAC] and "dimension => 6" in text[IMP] and "degree => 20" in text[IMP]
    assert "@@LCAS" not in "".join(text.values())  # a reader's kernel is not a checking one


def test_edited_cells_are_reported_not_passed(results, kernel):
    nb, cells = nbk.build_notebook(results)
    code = job_cells(nb)
    # a Macaulay2 error in the jacobian cell (the kernel still says "ok"); the implicit cell computes
    # another architecture (attention 2 instead of 1), so its records differ from the stored ones
    code[JAC].source += '\nerror "planted";'
    code[IMP].source = code[IMP].source.replace(
        "neuralNetwork(2, 2, {{0, 1, 1, 0, 2, 0, 0}})", "neuralNetwork(2, 2, {{0, 1, 2, 0, 2, 0, 0}})"
    )
    run = nbk.run_notebook(nb, cells)
    verdicts = {o.label: o for o in run.outcomes}
    assert verdicts[JAC].verdict == "error" and "planted" in verdicts[JAC].message
    assert verdicts[IMP].verdict == "differs" and verdicts[IMP].stored["dimension"] == 6
    assert verdicts[IMP].notebook["dimension"] != 6 and "dimension" in verdicts[IMP].message
    assert verdicts[MODP].verdict == "reproduced"
    assert not run.ok and run.to_dict()["reproduced"] == 1
    # unedited, the same API reproduces all
    assert nbk.execute_notebook(results).ok


def test_claims_from_another_key_are_re_checked(results, tmp_path, kernel, monkeypatch):
    """A colleague's records (another key) are claims: the notebook still has their cells, and
    executing it says which reproduced (a forged number does not)."""
    data = json.loads((results / f"{MODP}.json").read_text())
    data["result"]["dimension"] = 5  # a plausible wrong number (5 < 8 parameters)
    (results / f"{MODP}.json").write_text(json.dumps(data))
    monkeypatch.setenv("LIGHTNING_CAS_PRIVATE_DIR", str(tmp_path / "colleague"))
    nb, cells = nbk.build_notebook(results)
    assert {c.source for c in cells} == {"claim"} and len(job_cells(nb)) == 3
    assert "a **claim** from host" in markdown_of(nb, JAC)
    run = nbk.run_notebook(nb, cells, tmp_path / "checked.ipynb")
    verdicts = {o.label: o.verdict for o in run.outcomes}
    assert verdicts == {JAC: "reproduced", IMP: "reproduced", MODP: "differs"}
    summary = nbformat.read(str(tmp_path / "checked.ipynb"), as_version=4).cells[-1].source
    assert "Of 3 claims from elsewhere, 2 reproduced." in summary


def test_an_old_results_directory_still_exports_and_reproduces(legacy, kernel):
    """A results directory written before records were typed (version 3: the implicit ideal's numbers
    in notes) is read by the reader of that version; its cells reproduce, degrees and spans included."""
    nb, cells = nbk.build_notebook(legacy)
    assert {c.source for c in cells} == {"here"}
    imp = next(c for c in cells if c.label == IMP)
    assert imp.record.result.implicit.degree == 20 and imp.record.result.implicit.linear_span == 12
    run = nbk.run_notebook(nb, cells)
    verdicts = {o.label: o.verdict for o in run.outcomes}
    assert verdicts[IMP] == verdicts[JAC] == verdicts[MODP] == "reproduced", run.to_dict()
    assert verdicts["w3-3-3_a2-2_t3_none_jacobian_s0"] == "skipped"  # it timed out in the sweep
    assert verdicts["w2-2_a1_t2_softmax_numeric_s0"] == "unchecked"
    reproduced = next(o for o in run.outcomes if o.label == IMP)
    assert reproduced.stored["generator_degrees"] == [2] * 15 + [4] * 5


@pytest.mark.slow
def test_time_limits_stop_cells_and_the_next_cell_still_runs(results, kernel):
    nb, cells = nbk.build_notebook(results, limit_s=2)
    code = job_cells(nb)
    # silent for longer than the kernel's limit: the kernel cuts it off
    code[IMP].source = code[IMP].source.replace("--%timeout=2\n", "--%timeout=2\nsleep 6;\n")
    run = nbk.run_notebook(nb, cells, limit_s=2, grace_s=3)
    out = {o.label: o for o in run.outcomes}
    assert out[IMP].verdict == "error" and "2 s" in out[IMP].message
    assert out[JAC].verdict == "reproduced", out[JAC]  # a fresh kernel took over
    # printing all the time defeats the kernel's silence limit; nbclient's hard limit stops it
    nb, cells = nbk.build_notebook(results, limit_s=2)
    code = job_cells(nb)
    code[IMP].source += '\nscan(40, i -> (sleep 1; << "tick" << endl));'
    run = nbk.run_notebook(nb, cells, limit_s=2, grace_s=2)
    out = {o.label: o for o in run.outcomes}
    assert out[IMP].verdict == "error" and "exceeded" in out[IMP].message and out[IMP].elapsed_s < 15
    assert out[JAC].verdict == "reproduced", out[JAC]


@pytest.mark.slow
def test_the_timeout_bounds_every_cell_the_setup_cell_too(results, kernel):
    """Under --timeout a cell gets that limit and no grace: a job cell silent for longer (its own magic
    says 100 s) is stopped at it; a setup cell that hangs ends the run at it, its retries included
    (a hung kernel once cost three times 60 + 20 s)."""
    from lightning_cas.errors import NotebookKernelError

    # the limit leaves the package's own set-up cell room on a loaded machine (it loads in about 1 s idle)
    limit = 8
    nb, cells = nbk.build_notebook(results, limit_s=limit)
    code = job_cells(nb)
    code[IMP].source = code[IMP].source.replace(f"--%timeout={limit}\n", "--%timeout=100\nsleep 100;\n")
    run = nbk.run_notebook(nb, cells, limit_s=limit)
    out = {o.label: o for o in run.outcomes}
    assert out[IMP].verdict == "error" and f"{limit} s" in out[IMP].message, out[IMP]
    assert out[IMP].elapsed_s < limit + 4, out[IMP]
    assert out[JAC].verdict == "reproduced", out[JAC]
    nb, cells = nbk.build_notebook(results, limit_s=limit)
    setup = next(c for c in nb.cells if c.get("metadata", {}).get(nbk.META, {}).get("role") == "setup")
    setup.source = setup.source.replace(f"--%timeout={limit}\n", "--%timeout=100\nsleep 100;\n")
    began = time.monotonic()
    with pytest.raises(NotebookKernelError, match=f"setup cell.*{limit} s"):
        nbk.run_notebook(nb, cells, limit_s=limit)
    assert time.monotonic() - began < limit + 18  # a kernel start, the limit, a shutdown: no second attempt


@pytest.mark.slow
def test_a_cell_that_prints_more_than_the_cap_fails_in_one_line(results, kernel, tmp_path, monkeypatch):
    """A cell's output has the cap of a script's (1 MiB here, 64 MiB by default): 1.5 MiB is counted and
    dropped; 4 MiB is refused by the socket unread; either way that cell fails and the next one runs."""
    monkeypatch.setattr(nbk.kernel, "MAX_CELL_OUTPUT_BYTES", 2**20)
    nb, cells = nbk.build_notebook(results)
    code = job_cells(nb)
    code[JAC].source += '\nscan(1536, i -> << concatenate(1023:"x") << endl);'
    code[IMP].source += '\nscan(4096, i -> << concatenate(1023:"y") << endl);'
    run = nbk.run_notebook(nb, cells, tmp_path / "capped.ipynb")
    out = {o.label: o for o in run.outcomes}
    for label in (JAC, IMP):
        assert out[label].verdict == "error" and "more than 1 MiB" in out[label].message, out[label]
        assert "\n" not in out[label].message
    assert out[MODP].verdict == "reproduced", out[MODP]
    assert (tmp_path / "capped.ipynb").stat().st_size < 2**20  # nothing of the output was kept


def test_a_kernel_that_dies_at_start_is_one_line(results, tmp_path, m2):
    pytest.importorskip("nbclient")
    spec = tmp_path / "jp" / "kernels" / "dead"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [
                    sys.executable,
                    "-c",
                    "import sys; sys.stderr.write('kernel boom'); sys.exit(3)",
                    "{connection_file}",
                ],
                "display_name": "dead",
                "language": "x",
            }
        )
    )
    proc = cli("notebook", results, "--execute", "--kernel", "dead", env={"JUPYTER_PATH": str(tmp_path / "jp")})
    assert proc.returncode == 3 and "kernel boom" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    proc = cli("notebook", results, "--execute", "--kernel", "nosuchkernel")
    assert proc.returncode == 3 and "not installed" in proc.stderr


# ---- the trust boundary: nothing read from the results directory is run or embedded ---------------


def test_a_changed_or_hard_linked_script_is_reported_and_never_embedded(results, tmp_path):
    secret = "SECRET-" + "x" * 20
    script = results / "scripts" / f"{JAC}.m2"
    script.write_text(script.read_text().replace("setRandomSeed seed;", "setRandomSeed(seed + 1);"))
    outside = tmp_path / "passwd"
    outside.write_text(secret)
    imp_script = results / "scripts" / f"{IMP}.m2"
    imp_script.unlink()
    os.link(outside, imp_script)  # as `ln /etc/passwd scripts/job.m2` would
    nb, cells = nbk.build_notebook(results)
    every = json.dumps(nb)
    assert secret not in every and "seed + 1" not in every
    assert "does not match the sha256" in markdown_of(nb, JAC) and "hard links" in markdown_of(nb, IMP)
    assert all(c.runnable for c in cells)  # the cells are built from the jobs, not from those files


@pytest.mark.parametrize(
    "planted",
    [
        "/etc/passwd",
        "../outside.m2",
        "scripts/../../outside.m2",
        "scripts/link.m2",
        "linkdir/x.m2",
        "scripts/fifo.m2",
        "scripts/\x1b[2Jevil.m2",
        "scripts",
    ],
)
def test_planted_script_paths_are_never_read_into_the_notebook(results, tmp_path, planted):
    secret = "SECRET-" + "x" * 20
    (tmp_path / "outside.m2").write_text(secret)
    (results / "scripts" / "link.m2").symlink_to(tmp_path / "outside.m2")
    (results / "linkdir").symlink_to(tmp_path)
    (tmp_path / "x.m2").write_text(secret)
    os.mkfifo(results / "scripts" / "fifo.m2")
    resave(results, JAC, script=planted)
    nb, cells = nbk.build_notebook(results)  # returns: a FIFO does not block
    every = json.dumps(nb)
    assert secret not in every and "root:" not in every and "\x1b" not in every
    assert "not its own" in markdown_of(nb, JAC)
    proc = cli("notebook", results, "-o", tmp_path / "n.ipynb")
    assert proc.returncode == 0 and json.loads(proc.stdout)["scripts"] == 3 and "\x1b" not in proc.stderr


def test_a_damaged_or_empty_directory_is_one_line(tmp_path):
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "x.json").write_text("{")
    (tmp_path / "empty").mkdir()
    for where, words in (("bad", "damaged"), ("empty", "holds no job results")):
        proc = cli("notebook", tmp_path / where, "-o", tmp_path / f"{where}.ipynb")
        assert proc.returncode == 2 and words in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
        assert not (tmp_path / f"{where}.ipynb").exists()


def test_planted_record_files_are_ignored(results):
    os.mkfifo(results / "fifo.json")  # would block a naive reader forever
    (results / "linked.json").symlink_to(results / f"{JAC}.json")
    os.link(results / f"{IMP}.json", results / "hardlinked.json")
    nb, cells = nbk.build_notebook(results)
    assert sorted(c.label for c in cells) == [MODP, JAC]  # the hard-linked record itself is refused too


def test_printable_escapes_terminal_controls():
    assert printable("a\x1b[31mb\x07\u202ec\x9b") == "a\\x1b[31mb\\x07\\u202ec\\x9b"
    assert printable("plain text: é, 7") == "plain text: é, 7"


def test_output_of_another_cell_or_cut_short_is_never_judged(results):
    _, cells = nbk.build_notebook(results)
    jac = next(c for c in cells if c.label == JAC)
    body = (
        '@@LCAS-JSON@@ {"m2_version": "1.21", "prime": 2147483629, "parameters": 12, "rows": 20, '
        '"rank": 7, "dimension": 7, "strategy": "Jacobian"}\n'
    )
    own = f"@@LCAS@@ cell_begin {JAC}\n{body}@@LCAS@@ cell_end {JAC}\n"
    assert nbk.judge(jac, own).verdict == "reproduced"
    for text in (own.replace(JAC, IMP), f"@@LCAS@@ cell_begin {JAC}\n{body}", body):
        out = nbk.judge(jac, text)
        assert out.verdict == "error" and out.message.startswith(nbk.INCOMPLETE)
    assert nbk.judge(jac, own.replace('"dimension": 7', '"dimension": 6')).verdict == "differs"
    assert nbk.clean_text("[magic succeeded] timeout = 60\n\n\n" + own + "\x1b[?2004ho5 = 7\n") == "o5 = 7\n"


def test_unfinished_jobs_are_shown_and_skipped(tmp_path, kernel):
    spec = textwrap.dedent("""\
        [[architecture]]
        widths = [2, 2]
        attention = [2]
        method = "jacobian"
        [[architecture]]
        widths = [3, 3, 3]
        attention = [2, 2]
        method = "jacobian"
        timeout = 1
        [[architecture]]
        widths = [3, 3, 3]
        attention = [2, 2]
        method = "implicit"
        """)
    out = tmp_path / "res"
    summary = run_sweep(parse_spec(spec, "u.toml"), out)
    assert (summary.ok, summary.timeout, summary.error) == (1, 1, 1)
    nb, cells = nbk.build_notebook(out)
    slow = "w3-3-3_a2-2_t2_none_jacobian_s0"
    assert sorted(job_cells(nb)) == [JAC, slow]  # the refused implicit job has no cell (too large), and says so
    assert "skip-execution" in job_cells(nb)[slow].metadata["tags"]
    run = nbk.execute_notebook(out)
    d = run.to_dict()
    assert run.ok and d["cells"] == 1 and d["reproduced"] == 1 and d["unchecked"] == []
    assert sorted(d["skipped"]) == sorted([slow, "w3-3-3_a2-2_t2_none_implicit_s0"])


# ---- networks of blocks -------------------------------------------------------------------------

NETWORK_SPEC = textwrap.dedent("""\
    name = "blocks"
    timeout = 60
    [[network]]
    input = 2
    tokens = 2
    method = "jacobian"
    [[network.block]]
    kind = "attention"
    attention = 1
    value = 1
    causal = true
    residual = true
    [[network]]
    input = 2
    tokens = 2
    method = "modp"
    [[network.block]]
    kind = "linear"
    out = 2
    [[network.block]]
    kind = "power"
    degree = 2
    [[network.block]]
    kind = "mlp"
    hidden = 2
    out = 1
    [[network]]
    input = 2
    tokens = 2
    method = "implicit"
    [[network.block]]
    kind = "attention"
    attention = 1
    out = 1
    [[network]]
    input = 4
    tokens = 3
    method = "modp"
    [[network.block]]
    kind = "attention"
    heads = 2
    attention = 2
    value = 2
    causal = true
    residual = true
    [[network.block]]
    kind = "mlp"
    hidden = 8
    residual = true
    """)
BIG = "net_d4_t3_A2x2v2o4cr-M8p2o4r_modp_s0"


def test_a_sweep_of_networks_of_blocks_reproduces_in_the_kernel(tmp_path, kernel, m2):
    """Every Macaulay2 job of a network of blocks (jacobian, implicit) and every modp one whose Jacobian
    fits gets a cell that builds the network with the package's neuralNetwork; executed in the kernel,
    each reproduces its stored numbers (the modp job's by a second, independent computation)."""
    out = tmp_path / "blocks"
    summary = run_sweep(parse_spec(NETWORK_SPEC, "blocks.toml"), out)
    assert summary.ok == 4 and summary.error == 0
    nb, cells = nbk.build_notebook(out)
    code = job_cells(nb)
    assert len(code) == 3 and BIG not in code
    for cell in code.values():
        assert "\nN = neuralNetwork(2, 2, {{" in cell.source and "dimensionRecord(N, Strategy => " in cell.source
    assert "N = neuralNetwork(2, 2, {{0, 1, 1, 1, 2, 1, 1}});" in code["net_d2_t2_A1x1v1o2cr_jacobian_s0"].source
    big = next(c.refused for c in cells if c.label == BIG)
    assert "entries, above the notebook's cap" in big and "No Macaulay2 cell" in markdown_of(nb, BIG)
    target = tmp_path / "blocks.ipynb"
    proc = cli("notebook", out, "-o", target, "--execute", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["cells"] == 3 and report["reproduced"] == 3 and report["nothing_to_check"] is None
    assert [u["label"] for u in report["unchecked"]] == [BIG] and report["errors"] == []
    # the numbers the kernel printed, against the stored ones (Python mod p for the modp job)
    text = {label: nbk.cell_text(c) for label, c in job_cells(nbformat.read(str(target), as_version=4)).items()}
    for label in code:
        stored = load_record(out / f"{label}.json").result.dimension
        assert f"dimension => {stored}" in text[label]


def test_a_notebook_with_nothing_to_check_says_so_and_fails(tmp_path, kernel):
    spec = '[[architecture]]\nwidths = [2, 2]\nattention = [1]\nnormalization = "softmax"\nmethod = "numeric"\n'
    out = tmp_path / "soft"
    assert run_sweep(parse_spec(spec, "soft.toml"), out).ok == 1
    export = cli("notebook", out, "-o", tmp_path / "soft.ipynb")
    assert export.returncode == 0 and "has no Macaulay2 cell, so --execute has nothing to check" in export.stderr
    proc = cli("notebook", out, "-o", tmp_path / "soft.ipynb", "--execute")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "nothing to check: none of its 1 job(s)" in proc.stdout and "0 of 0" not in proc.stdout
    assert "None" not in proc.stdout.splitlines()[-1]
    summary = nbformat.read(str(tmp_path / "soft.ipynb"), as_version=4).cells[-1].source
    assert "**Nothing to check**" in summary and "reproduced their stored result" not in summary
