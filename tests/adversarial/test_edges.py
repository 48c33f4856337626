"""The trust boundary, tried as an attacker would: planted scripts, unbounded
and non-regular inputs, names escaping --out, make injection, forged records, terminal escapes.

Every test uses real files, FIFOs, symlinks and the real command line; each one failed on the
main branch before this change.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lightning_cas import api
from lightning_cas.batch import report
from lightning_cas.batch.makerules import make_rules
from lightning_cas.batch.spec import parse_spec
from lightning_cas.batch.store import ResultStore, record_checksum, verify_record
from lightning_cas.core.architecture import Architecture
from lightning_cas.errors import InputError
from lightning_cas.macaulay2.render import script_dir
from lightning_cas.system.files import read_json, read_text
from lightning_cas.system.points import load_point

REPO = Path(__file__).resolve().parents[2]
FAST = 'name = "fast"\n[grid]\nwidths = [[2, 2]]\nattention = [[1], [2]]\nmethod = ["modp"]\n'
VALID_POINT = {"layers": [{"Q": [[1, 2]], "K": [[3, 4]], "V": [[1, -1], [2, 7]]}]}


def _limit_memory():
    """On the old code /dev/zero was read whole: fail fast with MemoryError, never OOM the machine."""
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def cli(*args, timeout=60, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "lightning_cas", *map(str, args)],
        cwd=cwd or REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=_limit_memory,
    )


def one_line_refusal(proc, *phrases):
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lightning-cas: error:"), proc.stderr[-2000:]
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    return lines[0]


# ---- scripts are private and never trusted from disk ----------------------------------


def test_a_planted_script_at_the_content_address_is_replaced_not_run(m2, tmp_path):
    arch = Architecture((2, 2), (1,), 2)
    first = api.dimension(arch, method="jacobian", m2=m2)
    script = Path(first.script)
    rendered = script.read_text()
    marker = tmp_path / "PLANTED-RAN"
    script.write_text(f'"{marker}" << "pwned" << close;\nprint "@@LCAS@@ rank 1";\n')
    again = api.dimension(arch, method="jacobian", m2=m2)
    assert not marker.exists(), "a planted script was run"
    assert Path(again.script) == script and script.read_text() == rendered
    # the answer is the real one: the same as mod-p, and the closed form (2,2),(1): 6
    assert again.dimension == first.dimension == api.dimension(arch, method="modp").dimension == 6


def test_script_dir_refuses_symlinks_foreign_and_open_directories(tmp_path, monkeypatch):
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(target)
    monkeypatch.setenv("LIGHTNING_CAS_SCRIPT_DIR", str(link))
    with pytest.raises(InputError, match="symbolic link"):
        script_dir()
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv("LIGHTNING_CAS_SCRIPT_DIR", str(shared))
    with pytest.raises(InputError, match="accessible to other users"):
        script_dir()
    if os.geteuid() == 0:  # root can hand a directory to another user: that must be refused too
        foreign = tmp_path / "foreign"
        foreign.mkdir(mode=0o700)
        os.chown(foreign, 65534, 65534)
        monkeypatch.setenv("LIGHTNING_CAS_SCRIPT_DIR", str(foreign))
        with pytest.raises(InputError, match="another user"):
            script_dir()


def test_default_script_dir_and_m2_home_are_private_not_shared_tmp(tmp_path, monkeypatch):
    from lightning_cas.macaulay2.runner import m2_environment

    monkeypatch.delenv("LIGHTNING_CAS_SCRIPT_DIR")
    monkeypatch.setenv("LIGHTNING_CAS_PRIVATE_DIR", str(tmp_path / "private"))
    scripts, home = script_dir(), Path(m2_environment()["HOME"])
    for path in (scripts, home, tmp_path / "private"):
        info = os.lstat(path)
        assert path.is_relative_to(tmp_path) and stat.S_ISDIR(info.st_mode)
        assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.geteuid()
    # without any override: under the user's cache directory, never a fixed name in /tmp
    monkeypatch.delenv("LIGHTNING_CAS_PRIVATE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    (tmp_path / "home").mkdir()
    assert script_dir() == tmp_path / "home" / ".cache" / "lightning_cas" / "scripts"


# ---- bounded inputs through one reader ---------------------------------------------------


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["sweep", "/dev/zero", "--list"],
        ["fiber", "--widths", "2,2", "--attention", "1", "--at", "/dev/zero"],
    ],
)
def test_devices_are_refused_at_once(args):
    start = time.monotonic()
    line = one_line_refusal(cli(*args, timeout=60), "/dev/zero", "a device")
    assert time.monotonic() - start < 30 and "not a regular file" in line


def test_a_fifo_is_refused_without_blocking(fifo, tmp_path):
    toml = tmp_path / "spec.toml"
    os.mkfifo(toml)
    one_line_refusal(
        cli("fiber", "--widths", "2,2", "--attention", "1", "--at", fifo, "--timeout", "3", timeout=30), "FIFO"
    )
    one_line_refusal(cli("sweep", toml, "--list", timeout=30), "FIFO")
    one_line_refusal(cli("boundary", "--widths", "2,1", "--attention", "2", "--at", fifo, timeout=30), "FIFO")


def test_reader_refuses_directories_big_files_and_deep_nesting(tmp_path):
    with pytest.raises(InputError, match="a directory"):
        read_text(tmp_path, "spec")
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (5 * 1024 * 1024) + json.dumps(VALID_POINT).encode())
    with pytest.raises(InputError, match="above the limit"):
        load_point(Architecture((2, 2), (1,), 2), big)
    deep = tmp_path / "deep.json"
    for depth in (40, 200_000):
        deep.write_text("[" * depth + "]" * depth)
        with pytest.raises(InputError, match="nested more than"):
            read_json(deep)
    with pytest.raises(InputError, match="nested more than"):
        parse_spec('name = "x"\nwidths = ' + "[" * 50_000 + "]" * 50_000 + "\n")


@pytest.mark.parametrize("digits", ["\u0663", "\uff13", "\u09e9"])  # Arabic-Indic, fullwidth, Bengali 3
def test_unicode_digits_refused_in_specs_and_weight_files_like_on_the_command_line(digits, tmp_path):
    one_line_refusal(cli("predict", "--widths", f"{digits},3", "--attention", "2"), "integer")
    with pytest.raises(InputError, match="positive integers"):
        parse_spec(f'[grid]\nwidths = ["{digits},3"]\nattention = [[2]]\n')
    with pytest.raises(InputError):
        parse_spec(f'[[architecture]]\nwidths = "3,{digits}"\nattention = [2]\n')
    weights = tmp_path / "w.json"
    point = json.loads(json.dumps(VALID_POINT))
    point["layers"][0]["Q"][0][0] = digits
    weights.write_text(json.dumps(point))
    with pytest.raises(InputError, match="entries must be numbers"):
        load_point(Architecture((2, 2), (1,), 2), weights)
    point["layers"][0]["Q"][0][0] = f"1/{digits}"
    weights.write_text(json.dumps(point))
    with pytest.raises(InputError, match="entries must be numbers"):
        load_point(Architecture((2, 2), (1,), 2), weights)


def test_grids_above_the_cap_are_refused_with_their_count_unless_raised(tmp_path):
    widths = ", ".join(f"[{w}, 2]" for w in range(1, 101))
    spec = tmp_path / "big.toml"
    spec.write_text(f"[grid]\nwidths = [{widths}]\nattention = [[1], [2], [1, 1]]\nseed = {list(range(51))}\n")
    start = time.monotonic()
    one_line_refusal(cli("sweep", spec, "--list"), "10200 jobs", "--max-jobs")  # 100 x 2 x 51
    proc = cli("sweep", spec, "--list", "--max-jobs", 10200)
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 10200
    # 10^12 jobs: refused from the count alone, in well under the time it would take to expand
    huge = tmp_path / "huge.toml"
    ws = ", ".join(f"[{w}, 2]" for w in range(1, 1001))
    huge.write_text(
        f"[grid]\nwidths = [{ws}]\nattention = [[1]]\nseed = {list(range(1000))}\n"
        f'tokens = {list(range(2, 66))}\nmethod = ["modp", "numeric"]\n'
        'normalization = ["none", "softmax"]\n'
    )
    one_line_refusal(cli("sweep", huge, "--list"), "256000000 jobs")
    assert time.monotonic() - start < 60


def test_locks_are_taken_per_job_as_it_starts(m2, tmp_path):
    """A sweep killed mid-way leaves at most one lock per parallel job (it used to lock them all)."""
    widths = ", ".join(f"[{w}, 2]" for w in range(1, 41))
    spec = tmp_path / "slow.toml"
    spec.write_text(f'name = "slow"\n[grid]\nwidths = [{widths}]\nattention = [[1]]\nmethod = ["jacobian"]\n')
    out = tmp_path / "r"
    proc = subprocess.Popen(
        [sys.executable, "-m", "lightning_cas", "sweep", str(spec), "--out", str(out), "--quiet", "--jobs", "1"],
        cwd=REPO,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list(out.glob("*.json")):
            time.sleep(0.05)
        assert list(out.glob("*.json")), "the sweep never stored a result"
        locks = [len(list(out.glob("*.lock")))]
        for _ in range(10):
            time.sleep(0.05)
            locks.append(len(list(out.glob("*.lock"))))
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert max(locks) <= 1, locks
    assert len(list(out.glob("*.lock"))) <= 1


def _lock_cases(host):
    return {
        "garbage": b"\x00\xffnot json",
        "bad pid": json.dumps({"host": host, "pid": "abc", "since": 0}).encode(),
        "huge pid": json.dumps({"host": host, "pid": 10**30, "since": 0}).encode(),
        "list": b"[1, 2, 3]",
        "other host, never refreshed": json.dumps({"host": "elsewhere.example", "pid": 1, "since": 0}).encode(),
        "our host, pid 1 (alive, not ours), never refreshed": json.dumps({"host": host, "pid": 1}).encode(),
    }


@pytest.mark.parametrize("case", list(_lock_cases("h")))
def test_stale_and_malformed_locks_are_reported_and_broken(case, tmp_path):
    spec = tmp_path / "fast.toml"
    spec.write_text(FAST)
    out = tmp_path / "r"
    out.mkdir()
    label = parse_spec(FAST).jobs[0].label
    lock = out / f"{label}.lock"
    lock.write_bytes(_lock_cases(socket.gethostname())[case])
    os.utime(lock, (time.time() - 3600, time.time() - 3600))
    proc = cli("sweep", spec, "--out", out, "--quiet", timeout=60)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["ok"] == 2 and summary["stale_locks_broken"] == 1
    assert f"broke a stale lock of {label}" in proc.stderr
    assert not lock.exists()


def test_a_fifo_or_directory_as_lock_or_record_never_blocks(tmp_path):
    spec = tmp_path / "fast.toml"
    spec.write_text(FAST)
    out = tmp_path / "r"
    out.mkdir()
    first, second = (j.label for j in parse_spec(FAST).jobs)
    os.mkfifo(out / f"{first}.lock")
    os.utime(out / f"{first}.lock", (time.time() - 3600, time.time() - 3600))
    os.mkfifo(out / f"{second}.json")
    (out / "planted.json").mkdir()
    (out / "zero.json").symlink_to("/dev/zero")
    proc = cli("sweep", spec, "--out", out, "--quiet", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ok"] == 2
    assert len(report.load_results(out)) == 2


def test_deeply_nested_json_in_a_results_dir_does_not_crash(tmp_path):
    spec = tmp_path / "fast.toml"
    spec.write_text(FAST)
    out = tmp_path / "r"
    assert cli("sweep", spec, "--out", out, "--quiet").returncode == 0
    (out / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    body = {"kind": "JobResult", "label": "x", "job": {"architecture": "[" * 5000}}
    (out / "deep2.json").write_text(json.dumps(body).replace('"' + "[" * 5000 + '"', "[" * 5000 + "]" * 5000))
    proc = cli("sweep", spec, "--out", out, "--quiet")
    assert proc.returncode == 0 and json.loads(proc.stdout)["cached"] == 2, proc.stderr
    proc = cli("report", out, "--json")
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 2, proc.stderr


# ---- names stay inside --out, make fragments are escaped ---------------------------------


@pytest.mark.parametrize("name", ["../../x", "/tmp/abs", "a/b", "..", "x\ny", "x\u0000y", "a\\b", "", "~x$(y)"])
def test_spec_names_that_would_leave_the_results_directory_are_refused(name, tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(f"name = {json.dumps(name)}\n" + FAST.split("\n", 1)[1])
    one_line_refusal(cli("sweep", spec, "--list"), "name must be a plain file name")
    assert not (tmp_path / "x").exists()


def test_a_spec_file_name_that_is_not_plain_needs_an_explicit_name(tmp_path):
    spec = tmp_path / "$(shell id).toml"
    spec.write_text(FAST.split("\n", 1)[1])
    one_line_refusal(cli("sweep", spec, "--list"), "set name =")


def test_make_rules_never_run_shell_functions_under_make_n(tmp_path):
    pwned = tmp_path / "PWNED"  # make runs in tmp_path: `touch PWNED` would create it
    spec = tmp_path / "$(shell touch PWNED).toml"
    spec.write_text(FAST)
    one_line_refusal(cli("sweep", spec, "--out", "r$(shell touch PWNED)", "--make-rules"), "--out")
    one_line_refusal(cli("sweep", spec, "--out", "r\nall:\n\ttouch x", "--make-rules"), "control character")
    proc = cli(
        "sweep", spec, "--out", tmp_path / "r", "--make-rules", "--command", "lightning-cas $(shell touch PWNED)"
    )
    assert proc.returncode == 0, proc.stderr
    mk = tmp_path / "jobs.mk"
    mk.write_text(proc.stdout)
    dry = subprocess.run(["make", "-n", "-f", str(mk), "all"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert not pwned.exists(), "make ran a $(shell ...) from the generated rules"
    # the recipe names the spec file literally (make turned $$ back into $, the shell sees one word)
    assert f"'{spec}'" in dry.stdout and dry.stdout.count("--only") == 2
    with pytest.raises(InputError):
        make_rules(parse_spec(FAST), str(spec), "out dir", "lightning-cas")


def test_batch_mk_quotes_the_values_it_passes_to_the_shell(tmp_path):
    pwned = tmp_path / "PWNED"
    dry = subprocess.run(
        ["make", "-n", "-C", str(REPO), "sweep", f"SPEC=a b&&touch {pwned}", "OUT=o", "VENV=/nonexistent"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = next(ln for ln in dry.stdout.splitlines() if " sweep " in ln)
    assert f"sweep 'a b&&touch {pwned}' --out 'o'" in line, dry.stdout + dry.stderr


# ---- report: forged records are refused or claims, escapes are escaped ----------------------------


def _forge(path: Path, **changes):
    """What an attacker with write access to a results dir can do: edit, then re-sign the old way."""
    data = json.loads(path.read_text())
    for key, value in changes.items():
        target = data
        *parents, last = key.split(".")
        for p in parents:
            target = target[p]
        target[last] = value
    signed = "mac" in data
    data.pop("mac", None)
    data.pop("checksum", None)
    if signed:  # without the key, a plain hash is the best an attacker can put there
        data["mac"] = record_checksum(data)
    else:  # the old format: a plain sha256 anyone can recompute
        data["checksum"] = record_checksum(data)
    path.write_text(json.dumps(data))


def _swept_fast(tmp_path):
    """(spec, results directory, label and record path of its first job) after a real sweep of FAST."""
    spec = tmp_path / "fast.toml"
    spec.write_text(FAST)
    out = tmp_path / "r"
    assert cli("sweep", spec, "--out", out, "--quiet").returncode == 0
    label = parse_spec(FAST).jobs[0].label
    return spec, out, label, out / f"{label}.json"


def test_a_forged_impossible_record_is_refused_and_recomputed(tmp_path):
    spec, out, label, rec = _swept_fast(tmp_path)
    genuine = json.loads(rec.read_text())
    assert genuine["agreement"] == "agree"
    # 99 for 8 parameters: no record can say that, signed or not
    _forge(rec, **{"result.dimension": 99, "predicted": 99, "agreement": "agree"})
    check = verify_record(rec)
    assert check.status == "invalid" and "dimension 99" in check.reason and "between 0 and 8" in check.reason
    proc = cli("report", out, "--json")
    rows = {json.loads(line)["label"]: json.loads(line) for line in proc.stdout.splitlines()}
    assert label not in rows and "not a valid record" in proc.stderr and "99" in proc.stderr
    # a sweep treats it as missing: recomputed, and it comes back genuine (6 = modp = closed form)
    summary = json.loads(cli("sweep", spec, "--out", out, "--quiet").stdout)
    assert summary["ran"] == 1 and summary["cached"] == 1
    assert json.loads(rec.read_text())["result"]["dimension"] == genuine["result"]["dimension"] == 6


def test_a_forged_plausible_record_is_a_claim_with_its_own_verdict_until_rechecked(tmp_path):
    spec, out, label, rec = _swept_fast(tmp_path)
    # 5 is a possible dimension, and the forger says it agrees: the verdict is recomputed (6 predicted)
    _forge(rec, **{"result.dimension": 5, "predicted": 5, "agreement": "agree"})
    check = verify_record(rec)
    assert check.status == "claim" and check.record.result.dimension == 5
    assert check.record.agreement == "disagree" and check.record.predicted == 6
    rows = {json.loads(line)["label"]: json.loads(line) for line in cli("report", out, "--json").stdout.splitlines()}
    assert rows[label]["source"] == "claim" and rows[label]["agreement"] == "disagree"
    table = cli("report", out, "--no-plot").stdout
    assert "claim" in table and "not signed with this user's record key" in table
    # a sweep never takes it as a result, and leaves it as a claim
    summary = json.loads(cli("sweep", spec, "--out", out, "--quiet").stdout)
    assert summary["ran"] == 0 and summary["cached"] == 1 and summary["claims"] == 1 and summary["ok"] == 1
    # --recheck recomputes it and says it was not reproduced
    proc = cli("sweep", spec, "--out", out, "--quiet", "--recheck")
    summary = json.loads(proc.stdout)
    assert summary["ran"] == 1 and summary["differs"] == 1 and summary["reproduced"] == 0
    assert "was not reproduced" in proc.stderr
    fixed = verify_record(rec)
    assert fixed.trusted and fixed.record.result.dimension == 6
    assert fixed.record.recheck.dimension == 5 and fixed.record.recheck.reproduced is False


def test_records_signed_by_another_users_key_are_claims(tmp_path, monkeypatch):
    spec = tmp_path / "fast.toml"
    spec.write_text(FAST)
    out = tmp_path / "r"
    assert cli("sweep", spec, "--out", out, "--quiet").returncode == 0
    label = parse_spec(FAST).jobs[0].label
    assert verify_record(out / f"{label}.json").trusted
    monkeypatch.setenv("LIGHTNING_CAS_PRIVATE_DIR", str(tmp_path / "someone-else"))
    assert verify_record(out / f"{label}.json").status == "claim"
    key = tmp_path / "someone-else" / "record.key"
    assert stat.S_IMODE(os.lstat(key).st_mode) == 0o600


@pytest.mark.slow  # every command once: 4 s, so not in the fast loop
def test_terminal_control_characters_are_escaped_in_everything_printed(tmp_path):
    spec = tmp_path / "fast.toml"
    spec.write_text(FAST)
    out = tmp_path / "r"
    assert cli("sweep", spec, "--out", out, "--quiet").returncode == 0
    label = parse_spec(FAST).jobs[0].label
    evil = "\x1b]0;owned\x07\x1b[2J\u202eevil[red]markup[/red]"
    _forge(out / f"{label}.json", status="error", result=None, message=evil, agreement="not computed")
    for args in (["report", out], ["report", out, "--json"]):
        proc = cli(*args)
        assert proc.returncode == 0, proc.stderr
        for bad in ("\x1b", "\x07", "\u202e"):
            assert bad not in proc.stdout and bad not in proc.stderr
    assert "\\x1b]0;owned\\x07" in cli("report", out).stdout
    proc = cli("sweep", tmp_path / "\x1b]0;title\x07.toml", "--list")
    assert proc.returncode == 2 and "\x1b" not in proc.stderr and "\\x1b]0;title\\x07" in proc.stderr


def test_stored_scripts_are_read_only_from_inside_the_results_dir(m2, tmp_path):
    spec = tmp_path / "m2.toml"
    spec.write_text('name = "m2"\n[[architecture]]\nwidths = [2, 2]\nattention = [1]\nmethod = "jacobian"\n')
    out = tmp_path / "r"
    assert cli("sweep", spec, "--out", out, "--quiet", timeout=120).returncode == 0
    store = ResultStore(out, create=False)
    (rec,) = store.records()
    assert rec.script == f"scripts/{rec.label}.m2"
    assert store.script_text(rec).startswith("-- rendered by lightning_cas")
    script = out / rec.script
    script.write_text(script.read_text() + '\nrun "touch /tmp/x";\n')
    assert store.script_text(rec) is None  # edited after it was signed
    script.unlink()
    script.symlink_to("/etc/passwd")
    assert store.script_text(rec) is None
    import dataclasses

    for path in ("/etc/passwd", "../../../etc/passwd", f"scripts/../{rec.label}.json"):
        assert store.script_text(dataclasses.replace(rec, script=path)) is None
