"""Batch runs: spec parsing, sweeps end to end (local pool and Dask), cache, timeouts, locks, reports."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lightning_cas import api
from lightning_cas.batch.executors import run_job
from lightning_cas.batch.spec import Job, parse_spec
from lightning_cas.batch.store import ResultStore, load_record
from lightning_cas.batch.sweep import run_sweep
from lightning_cas.core.architecture import Architecture
from lightning_cas.errors import InputError

REPO = Path(__file__).resolve().parents[2]

SMALL = textwrap.dedent("""\
    name = "t"
    [grid]
    widths = [[2, 2], [3, 3], [2, 2, 2]]
    attention = [[2], [1, 1], [2, 2]]
    method = ["modp"]

    [[architecture]]
    widths = [2, 2]
    attention = [2]
    method = "jacobian"
    """)


def cli(*args, check=True, env=None):
    """Run the real command line in a subprocess (stdout must stay one JSON line)."""
    proc = subprocess.run(
        [sys.executable, "-m", "lightning_cas", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


# ---- spec ---------------------------------------------------------------------------------


def test_grid_expansion_counts_mismatched_pairs():
    sweep = parse_spec(SMALL)
    labels = [j.label for j in sweep.jobs]
    # 3 widths x 3 attention = 9 pairs: (2,2)&(2); (3,3)&(2); (2,2,2)&(1,1); (2,2,2)&(2,2) match, 5 do not
    assert sweep.mismatched == 5
    assert labels == [
        "w2-2_a2_t2_none_modp_s0",
        "w3-3_a2_t2_none_modp_s0",
        "w2-2-2_a1-1_t2_none_modp_s0",
        "w2-2-2_a2-2_t2_none_modp_s0",
        "w2-2_a2_t2_none_jacobian_s0",
    ]
    # tokens/normalization/seed lists multiply the product
    sweep = parse_spec("[grid]\nwidths=[[3,3]]\nattention=[[2]]\ntokens=[2,3]\nseed=[0,1,2]\n")
    assert len(sweep.jobs) == 6 and {j.seed for j in sweep.jobs} == {0, 1, 2}


@pytest.mark.parametrize(
    "text, line, words",
    [
        ('[grid]\nwidths = [[3, 3]]\nattention = [[2]]\ntokens = ["two"]\n', 4, "tokens"),
        ('[grid]\nwidths = [[3, 3]]\nattention = [[2]]\nmethod = ["magic"]\n', 4, "method"),
        ("[grid]\nwidths = [[3, 3]]\nattention = [[2]]\nwidht = [[3]]\n", 4, "unknown key"),
        ("[grid]\nwidths = [[3, 3]\nattention = [[2]]\n", 3, "not valid TOML"),
        (
            "[[architecture]]\nwidths = [2, 2]\nattention = [2]\n\n"
            "[[architecture]]\nwidths = [2, 0]\nattention = [1]\n",
            6,
            "#2",
        ),
        ("[[architecture]]\nwidths = [2, 2, 2]\nattention = [2]\n", 1, "attention needs one entry per layer"),
        ("[grid]\nwidths = [[3, 3]]\nattention = [[2]]\nseed = 4\n", 4, "seed must be a non-empty list"),
        ('colour = "red"\n[grid]\nwidths = [[3, 3]]\nattention = [[2]]\n', 1, "unknown top-level key"),
    ],
)
def test_malformed_spec_refused_with_its_line(text, line, words):
    with pytest.raises(InputError) as info:
        parse_spec(text, "bad.toml")
    message = str(info.value)
    assert f"bad.toml line {line}" in message, message
    assert words in message
    assert "\n" not in message and message.endswith(".")


def test_malformed_spec_on_the_cli_is_one_line(tmp_path):
    spec = write(tmp_path / "bad.toml", "[grid]\nwidths = [[3, 3]]\nattention = [[2]]\ntokens = [0]\n")
    proc = cli("sweep", spec, "--out", tmp_path / "r", check=False)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert "line 4" in proc.stderr and "tokens" in proc.stderr and "Traceback" not in proc.stderr


# ---- the job function ---------------------------------------------------------------------


def test_run_job_records_errors_instead_of_raising():
    rec = run_job(Job(Architecture((2, 2), (2,), 2, "softmax"), "modp"))
    assert rec.status == "error" and rec.result is None and rec.agreement == "not computed"
    assert "softmax" in rec.message or "polynomial" in rec.message
    ok = run_job(Job(Architecture((3, 3), (2,), 2), "modp"))
    assert ok.status == "ok" and ok.result.dimension == api.predict(ok.architecture).dimension.value


def test_forced_timeout_is_recorded_and_the_sweep_goes_on(tmp_path, m2):
    # the Macaulay2 job needs minutes (three tokens), and its 2 s limit leaves the worker time to import and
    # render the script under load (a 0.5 s limit could run out before the script existed)
    spec = write(
        tmp_path / "slow.toml",
        """\
        [[architecture]]
        widths = [3, 3, 3]
        attention = [2, 2]
        tokens = 3
        method = "jacobian"
        timeout = 2

        [[architecture]]
        widths = [2, 2]
        attention = [1]
        method = "modp"

        [[architecture]]   # a Python method (~3 s here): stopped by SIGALRM in the pool worker
        widths = [16, 16, 16]
        attention = [4, 4]
        tokens = 4
        normalization = "softmax"
        method = "numeric"
        timeout = 0.5
        """,
    )
    out = tmp_path / "r"
    summary = json.loads(cli("sweep", spec, "--out", out, "--quiet").stdout)
    assert summary["timeout"] == 2 and summary["ok"] == 1 and summary["ran"] == 3
    soft = load_record(out / "w16-16-16_a4-4_t4_softmax_numeric_s0.json")
    assert soft.status == "timeout" and soft.elapsed_s < 5
    rec = load_record(out / "w3-3-3_a2-2_t3_none_jacobian_s0.json")
    assert rec.status == "timeout" and "2 s" in rec.message and rec.result is None
    assert rec.elapsed_s < 30
    # the timed-out script was kept for inspection
    assert rec.script and (out / rec.script).read_text().startswith("-- rendered by lightning_cas")
    assert load_record(out / "w2-2_a1_t2_none_modp_s0.json").result.dimension == 6


# ---- sweeps end to end --------------------------------------------------------------------


def test_small_sweep_end_to_end_then_cached_then_corruption_redone(tmp_path, m2):
    spec = write(tmp_path / "small.toml", SMALL)
    out = tmp_path / "res"
    proc = cli("sweep", spec, "--out", out, "--jobs", 2)
    summary = json.loads(proc.stdout)  # stdout is exactly one JSON line
    assert proc.stdout.count("\n") == 1
    assert summary["jobs"] == 5 and summary["ran"] == 5 and summary["ok"] == 5 and summary["mismatched_skipped"] == 5
    files = sorted(p.name for p in out.glob("*.json"))
    assert len(files) == 5
    rows = {r["label"]: r for r in csv.DictReader(open(out / "results.csv"))}
    assert len(rows) == 5 and len((out / "results.jsonl").read_text().splitlines()) == 5
    # cross-check two ways: Macaulay2 (jacobian) and the mod-p backend give the same dimension,
    # and both equal the closed form of docs/mathematics.md for (2,2),(2): 7
    assert rows["w2-2_a2_t2_none_jacobian_s0"]["dimension"] == rows["w2-2_a2_t2_none_modp_s0"]["dimension"] == "7"
    assert rows["w2-2_a2_t2_none_jacobian_s0"]["predicted"] == "7"
    # docs/mathematics.md's worked example: (2,2,2),(1,1) has dimension 8, outside the closed form's regime
    assert rows["w2-2-2_a1-1_t2_none_modp_s0"]["dimension"] == "8"
    assert rows["w2-2-2_a1-1_t2_none_modp_s0"]["agreement"] == "no prediction"
    jac = load_record(out / "w2-2_a2_t2_none_jacobian_s0.json")
    assert jac.result.m2_version and (out / jac.script).exists()
    assert not list(out.glob("*.lock")) and not list(out.glob(".*.tmp"))

    mtimes = {p.name: p.stat().st_mtime_ns for p in out.glob("*.json")}
    again = json.loads(cli("sweep", spec, "--out", out, "--quiet").stdout)
    assert again["ran"] == 0 and again["cached"] == 5 and again["ok"] == 5
    assert mtimes == {p.name: p.stat().st_mtime_ns for p in out.glob("*.json")}

    # a half-written file (as a crash of a non-atomic writer would leave) is detected and recomputed
    victim = out / "w2-2-2_a2-2_t2_none_modp_s0.json"
    victim.write_text(victim.read_text()[:40])
    fixed = json.loads(cli("sweep", spec, "--out", out, "--quiet").stdout)
    assert fixed["ran"] == 1 and fixed["cached"] == 4
    assert load_record(victim).result.dimension == 10

    forced = json.loads(
        cli("sweep", spec, "--out", out, "--quiet", "--force", "--only", "w2-2_a2_t2_none_modp_s0").stdout
    )
    assert forced["ran"] == 1 and forced["jobs"] == 1

    # report: table on stdout, a PNG plot and a CSV table
    rep = cli("report", out, "--csv", tmp_path / "table.csv", "--plot", tmp_path / "plot.png")
    line = next(ln for ln in rep.stdout.splitlines() if ln.split()[:2] == ["2-2-2", "2-2"])
    assert "agree" in line and line.split()[-1] == "here"
    png = (tmp_path / "plot.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    table = list(csv.DictReader(open(tmp_path / "table.csv")))
    assert len(table) == 5 and all(r["agreement"] in ("agree", "no prediction") for r in table)

    # notebook export: valid nbformat, a Macaulay2 cell for every job (modp ones too), for the Macaulay2 kernel
    nbformat = pytest.importorskip("nbformat")
    res = json.loads(cli("notebook", out, "-o", tmp_path / "run.ipynb").stdout)
    assert res["scripts"] == 5
    nb = nbformat.read(str(tmp_path / "run.ipynb"), as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "m2"
    code = {
        c.metadata["lightning_cas"]["label"]: c.source
        for c in nb.cells
        if c.cell_type == "code" and c.metadata["lightning_cas"]["role"] == "job"
    }
    assert len(code) == 5
    jac = code["w2-2_a2_t2_none_jacobian_s0"]
    assert "N = neuralNetwork(2, 2, {{0, 1, 2, 0, 2, 0, 0}});" in jac
    assert 'dimensionRecord(N, Strategy => "Jacobian"' in jac


def test_concurrent_sweeps_into_one_directory(tmp_path):
    spec = write(
        tmp_path / "c.toml",
        """\
        [grid]
        widths = [[2, 2], [3, 3], [4, 4], [2, 2, 2], [3, 3, 3], [4, 4, 4]]
        attention = [[1], [2], [2, 2], [1, 2]]
        tokens = [2, 3]
        method = ["modp"]
        """,
    )
    out = tmp_path / "shared"
    cmd = [sys.executable, "-m", "lightning_cas", "sweep", str(spec), "--out", str(out), "--quiet"]
    procs = [
        subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    sums = [json.loads(o[0]) for o in outs]
    n = len(parse_spec(spec.read_text()).jobs)
    assert n == 24
    # every job computed exactly once across the two sweeps; each sweep accounts for all of them
    assert sums[0]["ran"] + sums[1]["ran"] == n
    for s in sums:
        assert s["ran"] + s["cached"] + s["waited_for_other_sweep"] == n and s["ok"] == n
    recs = ResultStore(out).records()
    assert len(recs) == n and all(r.status == "ok" for r in recs)
    assert not list(out.glob("*.lock")) and not list(out.glob(".*tmp"))
    assert len(list(csv.DictReader(open(out / "results.csv")))) == n


def test_stale_lock_of_a_dead_sweep_is_taken_over(tmp_path):
    sweep = parse_spec('[grid]\nwidths=[[3,3]]\nattention=[[2]]\nmethod=["modp"]\n')
    store = ResultStore(tmp_path)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    label = sweep.jobs[0].label
    import socket

    (tmp_path / f"{label}.lock").write_text(json.dumps({"host": socket.gethostname(), "pid": int(dead.stdout)}))
    summary = run_sweep(sweep, tmp_path, poll_s=0.05)
    assert summary.ran == 1 and store.load(label).result.dimension == 16
    assert not (tmp_path / f"{label}.lock").exists()


@pytest.mark.slow
def test_make_rules_one_target_per_result_file(tmp_path):
    spec = write(tmp_path / "m.toml", '[grid]\nwidths=[[2,2],[3,3]]\nattention=[[2]]\nmethod=["modp"]\n')
    out = tmp_path / "out"
    rules = cli("sweep", spec, "--out", out, "--make-rules", "--command", f"{sys.executable} -m lightning_cas").stdout
    (tmp_path / "jobs.mk").write_text(rules)
    labels = cli("sweep", spec, "--list").stdout.split()
    assert labels == ["w2-2_a2_t2_none_modp_s0", "w3-3_a2_t2_none_modp_s0"]
    for label in labels:
        assert f"$(LCAS_OUT)/{label}.json:" in rules and f"--only {label}" in rules
    make = subprocess.run(
        ["make", "-j", "2", "-f", str(tmp_path / "jobs.mk")], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert make.returncode == 0, make.stderr
    assert {p.stem for p in out.glob("w*.json")} == set(labels)
    assert len(list(csv.DictReader(open(out / "results.csv")))) == 2
    again = subprocess.run(["make", "-f", str(tmp_path / "jobs.mk")], cwd=REPO, capture_output=True, text=True)
    assert "Nothing to be done" in again.stdout  # make resumes: nothing is recomputed


# ---- Dask ----------------------------------------------------------------------------------


def test_dask_executor_on_a_local_cluster(tmp_path, m2):
    pytest.importorskip("distributed")
    sweep = parse_spec(SMALL)
    summary = run_sweep(sweep, tmp_path / "dask", executor="dask", jobs=2)
    assert summary.executor == "dask" and summary.ran == 5 and summary.ok == 5
    local = {r.label: r.result.dimension for r in ResultStore(tmp_path / "dask").records()}
    # the same job function gives the same numbers as computing directly
    for job in sweep.jobs:
        assert local[job.label] == api.dimension(job.architecture, method="modp", seed=job.seed).dimension
    jac = load_record(tmp_path / "dask" / "w2-2_a2_t2_none_jacobian_s0.json")
    assert jac.result.method == "jacobian" and jac.result.m2_version


def test_dask_executor_connects_to_the_scheduler_it_is_given(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", cluster.scheduler_address)
        sweep = parse_spec('[grid]\nwidths=[[2,2],[3,3]]\nattention=[[2]]\nmethod=["modp"]\n')
        summary = run_sweep(sweep, tmp_path, executor="dask", jobs=2)
        assert summary.scheduler == cluster.scheduler_address and summary.ok == 2
        assert "lcas" in cluster.scheduler.task_prefixes  # our jobs ran on that scheduler
    assert [r.result.dimension for r in ResultStore(tmp_path).records()] == [7, 16]


PRELOAD = '''
"""A hostile Dask worker: its run_job reports dimension 999 for (2,2), one less than the truth otherwise,
and calls every answer "agree"."""
import copy
from dataclasses import replace

import lightning_cas.batch.executors as executors

honest = executors.run_job


def forged(job, m2=None, judge=True):
    rec = honest(job, m2, judge)
    if rec.result is None:
        return rec
    dim = 999 if job.architecture.widths == (2, 2) else rec.result.dimension - 1
    lie = copy.copy(rec.result)  # no constructor runs, so the result's own check never sees the lie
    object.__setattr__(lie, "dimension", dim)
    return replace(rec, result=lie, predicted=dim, agreement="agree")


def dask_setup(worker):
    executors.run_job = forged
'''


def test_a_dask_worker_that_lies_gets_neither_agree_nor_a_signed_result(tmp_path):
    """A worker whose preload replaces run_job: the coordinator refuses the impossible 999 (an error
    record says why) and judges the plausible lie itself (disagree), on a real LocalCluster."""
    distributed = pytest.importorskip("distributed")
    preload = tmp_path / "hostile_preload.py"
    preload.write_text(PRELOAD)
    sweep = parse_spec('[grid]\nwidths=[[2,2],[3,3]]\nattention=[[2]]\nmethod=["modp"]\n')
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None, preload=[str(preload)]
    ) as cluster:
        summary = run_sweep(sweep, tmp_path / "r", executor="dask", scheduler=cluster.scheduler_address)
    assert summary.agree == 0 and summary.refused == 1 and summary.error == 1 and summary.disagree == 1
    store = ResultStore(tmp_path / "r")
    small = store.load("w2-2_a2_t2_none_modp_s0")
    assert small.status == "error" and small.result is None and "dimension 999 is not between" in small.message
    big = store.load("w3-3_a2_t2_none_modp_s0")
    assert big.result.dimension == 15 and big.predicted == 16 and big.agreement == "disagree"
    assert "999" not in (tmp_path / "r" / "results.csv").read_text().replace("dimension 999 is not between", "")


@pytest.mark.parametrize("address", ["garbage!!", "inproc://x", "tcp://host", "tcp://host:99999", "http://h:1"])
def test_a_bad_scheduler_address_is_one_line(tmp_path, address):
    spec = write(tmp_path / "s.toml", '[grid]\nwidths=[[2,2]]\nattention=[[2]]\nmethod=["modp"]\n')
    proc = cli("sweep", spec, "--out", tmp_path / "r", "--executor", "dask", "--scheduler", address, check=False)
    assert proc.returncode == 2 and "scheduler address" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "r").exists()


def test_the_job_limit_has_a_ceiling_and_the_advice_respects_it(tmp_path):
    from lightning_cas.batch.spec import MAX_JOBS_CEILING

    ws = ", ".join(f"[{w}, 2]" for w in range(1, 1001))
    huge = write(tmp_path / "huge.toml", f"[grid]\nwidths = [{ws}]\nattention = [[1]]\nseed = {list(range(1000))}\n")
    proc = cli("sweep", huge, "--list", check=False)
    assert proc.returncode == 2 and "1000000 jobs" in proc.stderr and "split the spec" in proc.stderr
    assert "--max-jobs 1000000" not in proc.stderr
    proc = cli("sweep", huge, "--list", "--max-jobs", MAX_JOBS_CEILING + 1, check=False)
    assert proc.returncode == 2 and str(MAX_JOBS_CEILING) in proc.stderr
    with pytest.raises(InputError, match="job limit"):
        parse_spec(SMALL, max_jobs=10**12)


def test_only_must_be_a_list_of_labels(tmp_path):
    with pytest.raises(InputError, match="not one string"):
        run_sweep(parse_spec(SMALL), tmp_path, only="abc")


def test_a_spec_accepts_networks_of_blocks_and_writes_them_back(tmp_path):
    """Sweep specs take the blocks of a network file as [[network]] tables with [[network.block]]s; a bad block
    is refused naming the spec, the entry and the key; the record of a run writes them back."""
    from lightning_cas.batch.spec import parse_spec, spec_toml
    from lightning_cas.core.network import Linear, Network
    from lightning_cas.errors import InputError

    text = (
        'name = "nets"\n[[network]]\ninput = 3\ntokens = 3\nmethod = "modp"\n'
        '[[network.block]]\nkind = "attention"\nattention = 2\ncausal = true\nresidual = true\n'
        '[[network.block]]\nkind = "linear"\nout = 1\n'
    )
    sweep = parse_spec(text)
    (job,) = sweep.jobs
    assert isinstance(job.architecture, Network) and job.architecture.blocks[1] == Linear(1)
    assert parse_spec(spec_toml("nets", sweep.jobs)).jobs == sweep.jobs
    with pytest.raises(InputError, match=r"\[\[network\]\] #1.*block 1 \(linear\): unknown key 'hiden'"):
        parse_spec(text.replace("out = 1", "hiden = 1"))


# Rows of Dao-Rodriguez's published tables (github.com/daokevin06/MFA_PNNs, data/raw/2_1_architectures.csv and
# data/processed/counterexamples.csv), as they write them; their dimension_computed is the rank mod two primes.
PNN_CSV = textwrap.dedent("""\
    h,exponent,architecture,num_parameters,dimension_computed,ambient_dimension,is_full_dimension,is_minimal
    2,2,"[2, 2, 1]",6,3,3,True,True
    2,2,"[2, 1, 1]",3,2,3,False,False
    3,2,"[2, 5, 3, 1]",28,5,5,True,False
    7,2,"[2, 3, 4, 5, 4, 6, 4, 1]",110,65,65,True,True
    """)


def test_a_csv_of_polynomial_networks_sweeps_with_the_fields_columns(tmp_path):
    spec = write(tmp_path / "pnn.csv", PNN_CSV)
    out = tmp_path / "out"
    summary = json.loads(cli("sweep", spec, "--out", out, "-j", "2", "-q").stdout)
    assert summary["ok"] == 4 and summary["error"] == 0
    published = {r["architecture"]: r for r in csv.DictReader(open(spec))}
    rows = list(csv.DictReader(open(out / "results.csv")))
    assert {r["architecture"] for r in rows} == set(published)
    for row in rows:
        theirs = published[row["architecture"]]
        assert row["dimension"] == theirs["dimension_computed"]
        assert row["num_parameters"] == theirs["num_parameters"] and row["exponent"] == "2"
        assert row["ambient_dimension"] == theirs["ambient_dimension"]
        assert row["is_full_dimension"] == theirs["is_full_dimension"]
        if row["is_full_dimension"] == "True":  # filling: the mod-p rank meets the ambient dimension, a proof
            assert row["certainty"] == "exact" and "ambient dimension" in row["proof"]
        assert row["split"].startswith("named ")
    # (2, 1, 1): 3 weights, expected min(2 + 1 - 1, 3) = 2, no defect
    thin = next(r for r in rows if r["architecture"] == "[2, 1, 1]")
    assert (thin["expected_dimension"], thin["defect"]) == ("2", "0")
    # resumable as any sweep: a second run computes nothing
    again = json.loads(cli("sweep", spec, "--out", out, "-q").stdout)
    assert again["cached"] == 4 and again["ran"] == 0


@pytest.mark.parametrize(
    "text, words",
    [
        ("widths\n2-2-1\n", "line 1: a CSV spec needs a header with a column 'architecture'"),
        ('architecture,exponent\n"[2, 0, 1]",2\n', "line 2: architecture must contain positive integers only"),
        ('architecture,exponent\n"[2, 2, 1]",99\n', "line 2: exponent must be one integer from 1 to 16"),
        ('architecture,exponent\n"[2, 2, 1]",2,7\n', "line 2: 3 fields, the header has 2"),
    ],
)
def test_a_malformed_csv_spec_is_refused_with_its_line(tmp_path, text, words):
    from lightning_cas.batch.spec import load_spec

    with pytest.raises(InputError, match=re.escape(words)):
        load_spec(write(tmp_path / "bad.csv", text))
