"""Red team, round four: the surfaces this round touched, probed as an outside user and a hostile file would.

Error lines never echo a long value; numpy string arrays read as JSON does; an external tool that leaves a
detached child is not waited on; token ids go in where one-hot vectors do; a converted attention module
says that a call-time mask is not in it; each clone's kernel has its own name. (The signal probes start
real sweeps: tests/batch/test_sweep_signals.py; the dtype probes: tests/torch_bridge/test_from_torch_dtype.py.)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from lightning_cas import api
from lightning_cas.core.network import Network
from lightning_cas.errors import InputError, LightningError, bounded
from lightning_cas.system.inputs import inputs_from_array, load_inputs
from lightning_cas.system.points import as_point
from tests.support import wait_until

REPO = Path(__file__).resolve().parents[2]
LONG = "9" * 5000


def cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "lightning_cas", *map(str, args)],
        cwd=cwd or REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def one_bounded_line(proc) -> str:
    lines = proc.stderr.splitlines()
    assert proc.returncode not in (0, 70) and len(lines) == 1, proc.stderr[:500]
    assert lines[0].startswith("lightning-cas: error: ") and len(lines[0]) < 600, len(lines[0])
    assert not re.search(r"\S{101,}", lines[0]), lines[0]
    return lines[0]


# ---------------------------------------------------------------- error lines


def test_a_safetensors_offset_of_5000_digits_is_not_echoed(tmp_path):
    """Had been one 5,124-character line."""
    header = json.dumps({"w": {"dtype": "F64", "shape": [1], "data_offsets": [0, 0]}}).replace("0]", LONG + "]")
    data = header.encode()
    path = tmp_path / "w.safetensors"
    path.write_bytes(struct.pack("<Q", len(data)) + data + bytes(8))
    line = one_bounded_line(cli("dim", "--widths", "2,1", "--attention", "1", "--at", path))
    assert "(5003 characters)" in line and "claims bytes" in line


@pytest.mark.parametrize(
    "args",
    [
        ("--widths", "2," + LONG),
        ("--method", "q" * 5000),
        ("--at", "/tmp/" + "a" * 300 + ".json"),
        ("--inputs", "/tmp/" + "b" * 3000 + ".npy"),
    ],
    ids=["widths", "method", "at", "inputs"],
)
def test_long_values_on_the_command_line_come_back_as_their_ends_and_length(args):
    extra = () if args[0] == "--widths" else ("--widths", "2,1")
    line = one_bounded_line(cli("dim", "--attention", "1", *extra, *args))
    assert "characters)" in line or "got 1111" in line


def test_every_error_of_the_family_is_bounded_where_it_is_made():
    for cls in (InputError, LightningError):
        text = str(cls(f"a value {LONG} and " + "word " * 2000))
        assert len(text) < 2100 and "(5000 characters)" in text and "characters)..." in text
    assert bounded("a short message stays as it is.") == "a short message stays as it is."


# ---------------------------------------------------------------- arrays of rational strings


def test_a_numpy_array_of_rational_strings_reads_as_the_same_strings_in_json():
    """Had been refused as "<U3 values" while JSON's strings were accepted."""
    net = Network.from_paper([2, 1], [1], 2)
    strings = ["1/2", "-3/4", "2", "5/10", "7/3", "-1"]
    from_numpy = api.dimension(net, at=np.array(strings), seed=0)
    from_list = api.dimension(net, at=strings, seed=0)
    assert from_numpy.dimension == from_list.dimension and from_numpy.certainty == from_list.certainty
    assert as_point(net, np.array(strings)).values == tuple(Fraction(s) for s in strings)
    with pytest.raises(InputError, match=r'rational strings like "3/4", got .x/2.'):
        api.dimension(net, at=np.array(["x/2"] * 6))


# ---------------------------------------------------------------- detached children of external tools


def _fake(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


def _marked(marker: str) -> list[int]:
    """The live processes whose command line holds the marker (a number no other test uses)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" "):
                if Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(entry))
        except OSError:
            continue
    return found


def _sleeping(marker: str) -> bool:
    return bool(_marked(marker))


def _kill_marked(*markers: str) -> None:
    """Only what this test started: the processes holding its own markers, by their ids."""
    for marker in markers:
        for pid in _marked(marker):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass


def test_a_macaulay2_that_leaves_a_detached_child_is_not_waited_on(tmp_path):
    """Had waited until --timeout for the child holding M2's output open."""
    from lightning_cas.macaulay2.runner import run_script

    marker = f"{time.time_ns() % 10**6 + 100}"
    fake = _fake(tmp_path, "M2", f"sleep {marker} &\necho answered")
    script = tmp_path / "s.m2"
    script.write_text("1\n")
    start = time.monotonic()
    run = run_script(script, timeout=60, m2=fake)
    assert run.stdout.strip() == "answered" and time.monotonic() - start < 10
    assert not _sleeping(f"sleep {marker}"), "the detached child outlived its Macaulay2"


def test_an_msolve_that_leaves_a_detached_child_is_not_waited_on(tmp_path):
    from lightning_cas.msolve.runner import run

    marker = f"{time.time_ns() % 10**6 + 100}"
    fake = _fake(tmp_path, "msolve", f"sleep {marker} &\necho solved")
    start = time.monotonic()
    out = run("x\n65521\nx-1\n", msolve=fake, timeout=60)
    assert out.stdout.strip() == "solved" and time.monotonic() - start < 10
    assert not _sleeping(f"sleep {marker}")


def test_a_child_that_leaves_the_group_holding_the_output_costs_a_second_not_the_limit(tmp_path):
    """setsid puts it beyond the group kill; it is then no longer the program's output, and not waited for."""
    from lightning_cas.macaulay2.runner import run_script

    if shutil.which("setsid") is None:
        pytest.skip("no setsid")
    marker = f"{time.time_ns() % 10**6 + 100}"
    fake = _fake(tmp_path, "M2", f"setsid sleep {marker} &\necho answered")
    script = tmp_path / "s.m2"
    script.write_text("1\n")
    start = time.monotonic()
    try:
        assert run_script(script, timeout=60, m2=fake).stdout.strip() == "answered"
        assert time.monotonic() - start < 10
    finally:
        _kill_marked(f"sleep {marker}")


# ---------------------------------------------------------------- token ids


def _embedding_network():
    torch = pytest.importorskip("torch")
    from torch import nn

    from lightning_cas.torch_bridge import from_torch

    torch.manual_seed(0)
    return from_torch(nn.Sequential(nn.Embedding(6, 2), nn.Linear(2, 2)).double().eval(), tokens=3)


def test_token_ids_go_in_where_their_one_hot_matrices_do(tmp_path):
    """Had been told "must be an array of shape (N, 6, 3)" for ids of shape (N, 3)."""
    net, point = _embedding_network()
    ids = np.array([[0, 1, 2], [3, 4, 5], [5, 5, 0]])
    data = inputs_from_array(net, ids)
    assert "token ids" in data.source and data.values.shape == (3, 6, 3)
    one_hot = np.swapaxes(np.eye(6, dtype=int)[ids], 1, 2)
    assert (data.values == one_hot).all()
    by_ids = api.dimension(net, at=point, inputs=ids)
    assert by_ids.dimension == api.dimension(net, at=point, inputs=one_hot).dimension == 12
    assert "token ids" in by_ids.inputs.source
    (tmp_path / "ids.json").write_text(json.dumps(ids.tolist()))
    assert (load_inputs(net, tmp_path / "ids.json").values == one_hot).all()
    np.save(tmp_path / "ids.npy", ids)
    from_file = load_inputs(net, tmp_path / "ids.npy")
    assert from_file.source == "ids.npy (token ids, as one-hot vectors)" and (from_file.values == one_hot).all()
    np.save(tmp_path / "matrices.npy", one_hot)
    assert load_inputs(net, tmp_path / "matrices.npy").source == "matrices.npy"


@pytest.mark.parametrize(
    "ids, match",
    [
        ([[0, 1, 6]], r"token ids are 0..5 .*got 6 \(input 1, token 3\)"),
        ([[0, -1, 2]], r"got -1 \(input 1, token 2\)"),
        ([[0, 1]], r"or integer token ids 0..5 of shape \(N, 3\)"),
        (np.array([[0.0, 1.0, 2.0]]), r"or integer token ids"),
        ([[0, 1, 10**50]], r"got 1000000.* \(input 1, token 3\)"),
        ([[0, 1, 10**5000]], r"digit"),
    ],
)
def test_token_ids_out_of_range_or_of_the_wrong_shape_are_refused_naming_them(ids, match):
    net, _ = _embedding_network()
    with pytest.raises(InputError, match=match) as info:
        inputs_from_array(net, ids)
    assert len(str(info.value)) < 400


def test_one_token_inputs_of_width_d_stay_features_not_ids():
    net = Network.from_paper([2, 1], [1], 1)
    data = inputs_from_array(net, np.array([[1, 2], [3, 4]]))
    assert "token ids" not in data.source and data.values.shape == (2, 2, 1)


# ---------------------------------------------------------------- masks at call time


def test_attention_converted_unmasked_says_a_call_time_mask_is_not_in_it():
    torch = pytest.importorskip("torch")
    from torch import nn

    from lightning_cas.torch_bridge import from_torch

    with pytest.warns(UserWarning, match=r"converted without a mask.*key_padding_mask.*causal=True") as seen:
        from_torch(nn.MultiheadAttention(4, 2, batch_first=True).eval(), tokens=2)
    assert len(seen) == 1 and "\n" not in str(seen[0].message)
    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True).eval()
    with pytest.warns(UserWarning, match=r"the TransformerEncoderLayer module converted without a mask"):
        from_torch(layer, tokens=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from_torch(nn.MultiheadAttention(4, 2, batch_first=True).eval(), tokens=2, causal=True)
        from_torch(nn.Sequential(nn.Linear(2, 2), nn.ReLU()), tokens=2)
    assert torch.is_grad_enabled()


# ---------------------------------------------------------------- make setup's kernel


def test_each_clone_registers_its_kernel_under_a_name_of_its_own(tmp_path):
    """Had been `lightning-cas` for every clone: the newest clone's `make setup` re-pointed the others'."""
    if shutil.which("make") is None:
        pytest.skip("no make")
    names = []
    for clone in ("one", "two words", "one2"):
        folder = tmp_path / clone / "lightning_cas"
        folder.mkdir(parents=True)
        shutil.copy(REPO / "Makefile", folder)
        (folder / "pyproject.toml").touch()
        out = subprocess.run(["make", "-s", "kernel-name"], cwd=folder, capture_output=True, text=True, timeout=30)
        names.append(out.stdout.strip())
    assert len(set(names)) == 3 and all(re.fullmatch(r"lightning-cas-lightning_cas-[0-9]+", n) for n in names)
    dry = subprocess.run(
        ["make", "-n", ".venv/.installed", "PYTHON=false"], cwd=folder, capture_output=True, text=True, timeout=30
    )
    assert f"--name {names[2]}" in dry.stdout and f"kernels/{names[2]}" in dry.stdout


def test_millions_of_token_ids_are_refused_before_any_is_read():
    net, _ = _embedding_network()
    start = time.monotonic()
    with pytest.raises(InputError, match=r"one-hot entries, above the supported maximum"):
        inputs_from_array(net, np.zeros((2_000_000, 3), dtype=np.int64))
    assert time.monotonic() - start < 5


def test_an_escaped_control_character_does_not_make_a_word_longer_than_the_bound():
    proc = cli("dim", "--widths", "2,1", "--attention", "1", "--at", "\x1b" * 200 + ".json")
    assert "\x1b" not in proc.stderr
    one_bounded_line(proc)


@pytest.mark.parametrize("tool", ["macaulay2", "msolve"])
def test_what_an_external_tool_started_dies_with_a_sigkilled_lightning_cas(tmp_path, tool):
    """PR_SET_PDEATHSIG reaches the tool's own process; its detached child had outlived a SIGKILL (no cleanup
    runs then). A watchdog on the tool's process group sees the end of the pipe the dead process held."""
    marker = f"{time.time_ns() % 10**6 + 100}"
    fake = _fake(tmp_path, "tool", f"sleep {marker} &\nsleep {int(marker) + 1}")
    call = (
        f"from lightning_cas.macaulay2.runner import run_script; run_script({str(tmp_path / 's.m2')!r}, m2={fake!r})"
        if tool == "macaulay2"
        else f"from lightning_cas.msolve.runner import run; run('x\\n65521\\nx-1\\n', msolve={fake!r})"
    )
    (tmp_path / "s.m2").write_text("1\n")
    proc = subprocess.Popen([sys.executable, "-c", call], cwd=REPO, start_new_session=True)
    try:
        assert wait_until(lambda: _sleeping(f"sleep {marker}"), 60), "the tool never started"
        proc.kill()
        proc.wait(10)
        assert wait_until(lambda: not _sleeping(f"sleep {marker}") and not _sleeping(f"sleep {int(marker) + 1}"), 10)
    finally:
        proc.kill()
        _kill_marked(f"sleep {marker}", f"sleep {int(marker) + 1}")
