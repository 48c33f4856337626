"""Notebooks: export of a real sweep, execution in the real Macaulay2 Jupyter kernel, and the trust
boundary of a results directory (nothing outside it is embedded, nothing altered is run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lightning_cas import api
from lightning_cas.batch import notebook as nbk
from lightning_cas.batch.sweep import JobResult, ResultStore, load_record, parse_spec, run_sweep
from lightning_cas.core.architecture import Architecture
from lightning_cas.errors import InputError

nbformat = pytest.importorskip("nbformat")
REPO = Path(__file__).resolve().parents[2]
JAC = "w2-2_a2_t2_none_jacobian_s0"
IMP = "w2-2_a1_t2_none_implicit_s0"
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


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "lightning_cas", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env={**os.environ, **(env or {})})


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
    return {c.metadata[nbk.META]["label"]: c for c in nb.cells
            if c.get("metadata", {}).get(nbk.META, {}).get("role") == "job"}


def resave(out: Path, label: str, **changes) -> None:
    """Rewrite a record through the store (so it stays a valid record), with some fields changed."""
    rec = load_record(out / f"{label}.json")
    data = {**rec.to_dict(), **changes}
    ResultStore(out).save(JobResult.from_dict(data))


# ---- export -----------------------------------------------------------------------------------

def test_export_has_title_table_setup_and_one_cell_per_job(results):
    nb, cells = nbk.build_notebook(results)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "m2"
    title = nb.cells[0].source
    assert "lightning_cas" in title and "1.21" in title
    # the spec in the title expands to exactly the stored jobs
    toml = title.split("```toml\n")[1].split("```")[0]
    assert sorted(j.label for j in parse_spec(toml).jobs) == sorted(p.stem for p in results.glob("w*.json"))
    table = nb.cells[1].source
    assert "Computed vs predicted" in table and table.count("| agree |") == 3
    setup = [c for c in nb.cells if c.get("metadata", {}).get(nbk.META, {}).get("role") == "setup"]
    assert len(setup) == 1 and "m2_version" in setup[0].source
    code = job_cells(nb)
    assert sorted(code) == [IMP, JAC] and all(c.runnable for c in cells)
    for label, cell in code.items():
        assert cell.source.startswith("--%timeout=60\n")
        lines = cell.source.split("\n")
        assert lines[1] == f'<< "@@LCAS@@ cell_begin {label}" << endl;' and label in lines[-1]
        assert "\n".join(lines[2:-1]) == (results / "scripts" / f"{label}.m2").read_text().rstrip("\n")
    md = [c.source for c in nb.cells if c.cell_type == "markdown" and c.source.startswith(f"## `{JAC}`")][0]
    assert "dimension **7**" in md and "jacobian" in md and "probabilistic" in md


def test_cli_export_counts_scripts(results, tmp_path):
    proc = cli("notebook", results, "-o", tmp_path / "x.ipynb")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"notebook": str(tmp_path / "x.ipynb"), "scripts": 2}


# ---- execution in the real kernel ----------------------------------------------------------------

def test_execute_reproduces_every_cell(results, tmp_path, kernel, m2):
    out = tmp_path / "executed.ipynb"
    proc = cli("notebook", results, "-o", out, "--execute", "--json", env={"TERM": "xterm-256color"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["cells"] == 2 and report["reproduced"] == 2 and report["differs"] == [] and report["errors"] == []
    assert report["kernel"]["name"] == "m2" and report["kernel"]["implementation"] == "macaulay2_jupyter_kernel"
    version = subprocess.run([m2, "--version"], capture_output=True, text=True).stdout.strip()
    assert report["kernel"]["m2_version"] == version
    nb = nbformat.read(str(out), as_version=4)
    cells = job_cells(nb)
    text = {label: nbk.cell_text(c) for label, c in cells.items()}
    assert "\x1b" not in "".join(text.values())  # TERM=dumb reached the kernel
    assert nbk.observed("jacobian", text[JAC])["dimension"] == 7 and nbk.observed("implicit", text[IMP])["degree"] == 20
    assert all(c.metadata[nbk.META]["verdict"] == "reproduced" for c in cells.values())
    # the kernel's numbers, cross-checked against the mod-p backend and the theory
    for label, arch in ((JAC, Architecture((2, 2), (2,), 2)), (IMP, Architecture((2, 2), (1,), 2))):
        got = nbk.observed(label.split("_")[-2], text[label])["dimension"]
        assert got == api.dimension(arch, method="modp").dimension == api.predict(arch).dimension.value


def test_python_api_and_edited_cells_are_reported_not_passed(results, kernel):
    nb, cells = nbk.build_notebook(results)
    code = job_cells(nb)
    # a Macaulay2 error in the jacobian cell (the kernel still says "ok"); the implicit cell computes
    # another architecture (attention 2 instead of 1), so its records differ from the stored ones
    code[JAC].source += '\nerror "planted";'
    edited = code[IMP].source.replace("blocks = {{0, 1, 1, 0, 2, 0, 0}};", "blocks = {{0, 1, 2, 0, 2, 0, 0}};")
    assert edited != code[IMP].source
    code[IMP].source = edited
    run = nbk.run_notebook(nb, cells)
    verdicts = {o.label: o for o in run.outcomes}
    assert verdicts[JAC].verdict == "error" and "planted" in verdicts[JAC].message
    assert verdicts[IMP].verdict == "differs" and verdicts[IMP].stored["dimension"] == 6
    assert verdicts[IMP].notebook["dimension"] != 6 and "dimension" in verdicts[IMP].message
    assert not run.ok and run.to_dict()["reproduced"] == 0
    # unedited, the same API reproduces both
    assert nbk.execute_notebook(results).ok


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


def test_a_changed_script_in_the_results_is_not_run(results, tmp_path, kernel):
    script = results / "scripts" / f"{JAC}.m2"
    script.write_text(script.read_text().replace("setRandomSeed seed;", "setRandomSeed(seed + 1);"))
    assert "seed + 1" in script.read_text()
    proc = cli("notebook", results, "-o", tmp_path / "e.ipynb", "--execute", "--json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["reproduced"] == 1 and [e["label"] for e in report["errors"]] == [JAC]
    assert "differs from what lightning-cas renders" in report["errors"][0]["message"]
    nb = nbformat.read(str(tmp_path / "e.ipynb"), as_version=4)
    assert JAC not in job_cells(nb) or job_cells(nb)[JAC].cell_type == "raw"
    assert not any(c.cell_type == "code" and "seed + 1" in c.source for c in nb.cells)


def test_a_kernel_that_dies_at_start_is_one_line(results, tmp_path, m2):
    pytest.importorskip("nbclient")
    spec = tmp_path / "jp" / "kernels" / "dead"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-c", "import sys; sys.stderr.write('kernel boom'); sys.exit(3)", "{connection_file}"],
        "display_name": "dead", "language": "x"}))
    proc = cli("notebook", results, "--execute", "--kernel", "dead", env={"JUPYTER_PATH": str(tmp_path / "jp")})
    assert proc.returncode == 3 and "kernel boom" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    proc = cli("notebook", results, "--execute", "--kernel", "nosuchkernel")
    assert proc.returncode == 3 and "not installed" in proc.stderr


# ---- the trust boundary --------------------------------------------------------------------------

@pytest.mark.parametrize("planted", ["/etc/passwd", "/proc/self/environ", "../outside.m2", "scripts/../../outside.m2",
                                     "scripts/link.m2", "linkdir/x.m2", "scripts/fifo.m2", "scripts/big.m2",
                                     "scripts/binary.m2", "scripts/\x1b[2Jevil.m2", "scripts"])
def test_scripts_are_read_only_from_inside_the_results(results, tmp_path, planted):
    secret = "SECRET-" + "x" * 20
    (tmp_path / "outside.m2").write_text(secret)
    (results / "scripts" / "link.m2").symlink_to(tmp_path / "outside.m2")
    (results / "linkdir").symlink_to(tmp_path)
    (tmp_path / "x.m2").write_text(secret)
    os.mkfifo(results / "scripts" / "fifo.m2")
    with open(results / "scripts" / "big.m2", "wb") as fh:
        fh.truncate(nbk.SCRIPT_MAX_BYTES + 1)
    (results / "scripts" / "binary.m2").write_bytes(b"\xff\xfe" + secret.encode())
    resave(results, JAC, script=planted)
    nb, cells = nbk.build_notebook(results)  # returns: a FIFO does not block
    refused = {c.label: c.refused for c in cells if c.refused}
    assert list(refused) == [JAC]
    every = json.dumps(nb)
    assert secret not in every and "root:" not in every and "PATH=" not in every and "\x1b" not in every
    assert JAC not in job_cells(nb)
    proc = cli("notebook", results, "-o", tmp_path / "n.ipynb")
    assert proc.returncode == 0 and json.loads(proc.stdout)["scripts"] == 1
    assert JAC in proc.stderr and "\x1b" not in proc.stderr


def test_read_inside_refuses_what_it_should_and_reads_the_rest(tmp_path):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "ok.m2").write_text("print 1")
    assert nbk.read_inside(tmp_path, "scripts/ok.m2") == "print 1"
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.m2").write_text("x")
    (tmp_path / "via").symlink_to(tmp_path / "real")
    for bad in ("via/a.m2", "/etc/passwd", "..", "scripts/../scripts/ok.m2", "", "scripts", "scripts/nope.m2",
                "scripts\\ok.m2"):
        with pytest.raises(InputError):
            nbk.read_inside(tmp_path, bad)
    with pytest.raises(InputError):
        nbk.read_inside(tmp_path, "scripts/ok.m2", max_bytes=3)


def test_planted_record_files_are_ignored(results, tmp_path):
    os.mkfifo(results / "fifo.json")  # would block a naive reader forever
    (results / "linked.json").symlink_to(results / f"{JAC}.json")
    nb, cells = nbk.build_notebook(results)
    assert sorted(c.label for c in cells) == [IMP, JAC]


def test_printable_escapes_terminal_controls():
    assert nbk.printable("a\x1b[31mb\x07\u202ec\x9b") == "a\\x1b[31mb\\x07\\u202ec\\x9b"
    assert nbk.printable("plain text: é, 7") == "plain text: é, 7"


def test_output_of_another_cell_or_cut_short_is_never_judged(results):
    _, cells = nbk.build_notebook(results)
    jac = next(c for c in cells if c.label == JAC)
    body = ('@@LCAS-JSON@@ {"m2_version": "1.21", "prime": 2147483629, "parameters": 12, "rows": 20, '
            '"rank": 7, "dimension": 7}\n')
    own = f"@@LCAS@@ cell_begin {JAC}\n{body}@@LCAS@@ cell_end {JAC}\n"
    assert nbk.judge(jac, own).verdict == "reproduced"
    for text in (own.replace(JAC, IMP), f"@@LCAS@@ cell_begin {JAC}\n{body}", body):
        out = nbk.judge(jac, text)
        assert out.verdict == "error" and out.message.startswith(nbk.INCOMPLETE)
    assert nbk.judge(jac, own.replace('"rank": 7', '"rank": 6')).verdict == "differs"


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
    assert sorted(c.label for c in cells) == [JAC, slow]  # the refused implicit job never had a script
    assert "skip-execution" in job_cells(nb)[slow].metadata["tags"]
    run = nbk.execute_notebook(out)
    d = run.to_dict()
    assert run.ok and d["cells"] == 1 and d["reproduced"] == 1 and d["skipped"] == [slow]
