"""The surprises: what was silently resolved, ignored or refused only for some commands, and the
foreign exceptions; each is now one line (exit 2) or the right answer."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from lightning_cas.batch import locks, spec, store
from lightning_cas.cli import main
from lightning_cas.core import blocks, weights
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.weights import flat, random_point, unflat
from lightning_cas.errors import InputError
from lightning_cas.macaulay2 import runner
from lightning_cas.macaulay2.connection import Macaulay2
from lightning_cas.macaulay2.runner import M2Session, check_heap
from lightning_cas.results import documents
from lightning_cas.results.documents import parse_json
from lightning_cas.system import arrays, points
from lightning_cas.system.arrays import safetensors_arrays
from lightning_cas.system.networks import load_network
from lightning_cas.system.points import load_point

REPO = Path(__file__).resolve().parents[2]
NET = {"input": 2, "tokens": 2, "blocks": [{"kind": "attention", "attention": 1}]}


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=True)


def refused(res, match: str):
    assert res.exit_code == 2, (res.exit_code, res.stdout[-300:], res.stderr[-300:], res.exception)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and match in lines[0], res.stderr


def test_duplicate_json_keys_are_refused_as_toml_refuses_them(tmp_path):
    with pytest.raises(InputError, match="gives the key 'input' twice"):
        parse_json('{"input": 2, "input": 3, "blocks": []}')
    assert parse_json('[{"a": 1}, {"a": 2}]') == [{"a": 1}, {"a": 2}]  # the same key in two objects is fine
    path = tmp_path / "dup.json"
    path.write_text('{"input": 2, "tokens": 2, "blocks": [{"kind": "attention", "attention": 1, "attention": 2}]}')
    refused(invoke("dim", "--arch", path), "twice")


@pytest.mark.parametrize("flag", ["--causal", "--no-causal", "--residual", "--no-residual"])
def test_flags_the_network_file_decides_are_refused_with_arch(tmp_path, flag):
    path = tmp_path / "net.json"
    path.write_text(json.dumps(NET))
    refused(invoke("dim", "--arch", path, flag), flag)


def test_kind_as_a_list_and_a_list_dtype_are_one_line(tmp_path):
    path = tmp_path / "net.json"
    path.write_text(json.dumps({"input": 2, "blocks": [{"kind": ["attention"], "attention": 1}]}))
    refused(invoke("dim", "--arch", path), "kind ['attention'] is unknown")
    header = json.dumps({"w": {"dtype": ["F64"], "shape": [1], "data_offsets": [0, 8]}}).encode()
    with pytest.raises(InputError, match="dtype \\['F64'\\], not a number type"):
        safetensors_arrays(struct.pack("<Q", len(header)) + header + bytes(8), "x.safetensors")


def test_no_foreign_exceptions_from_paths_and_binaries():
    with pytest.raises(InputError, match="network file must be a path"):
        load_network(None)
    with pytest.raises(InputError, match="m2 must be the path"):
        M2Session(m2=5)
    with pytest.raises(InputError, match="m2 must be the path"):
        runner.find_m2(["M2"])


@pytest.mark.parametrize("heap", ["8 GB", "0", "-1", "", "8T", "1.5G", "10", 8, None, "8G; rm"])
def test_an_invalid_heap_cap_is_refused_not_dropped(heap):
    """Boehm's collector ignores a GC_MAXIMUM_HEAP_SIZE it cannot read: Macaulay2 would run uncapped."""
    with pytest.raises(InputError, match="heap cap"):
        check_heap(heap)
    with pytest.raises(InputError, match="heap cap"):
        Macaulay2(heap=heap)
    with pytest.raises(InputError, match="heap cap"):
        runner.m2_environment(heap)


def test_valid_heap_caps_pass():
    assert [check_heap(h) for h in ("8G", "512M", "65536K", "2g", str(2**30))] == [
        "8G",
        "512M",
        "65536K",
        "2g",
        str(2**30),
    ]


# ---- the same point formats for every command --------------------------------------------------


@pytest.fixture
def plain_point(tmp_path):
    arch = Architecture((2, 1, 2), (1, 2), heads=(2, 1))
    point = random_point(arch, 5)
    values = flat(point)
    net = arch
    files = {
        "layers.json": json.dumps(weights.point_to_dict(point)),
        "flat.json": json.dumps({"weights": [int(v) for v in values]}),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    points.save_weights(points.WeightPoint(net, tuple(values)), tmp_path / "blocks.json")
    named = {name: np.zeros(shape) for name, shape in points.state_names(net).items()}
    for m in net.weight_matrices:
        named[f"blocks.{m.block}.{m.letter}"][m.head] = np.array(values[m.offset : m.stop], float).reshape(
            m.rows, m.cols
        )
    np.savez(tmp_path / "named.npz", **named)
    np.savez(tmp_path / "flat.npz", weights=np.array(values, float))
    from safetensors.numpy import save_file

    save_file(named, str(tmp_path / "named.safetensors"))
    return arch, point, tmp_path


def test_every_point_format_gives_the_same_point_to_the_widths_commands(plain_point):
    """fiber/boundary/singular --at read their point with load_point: every format load_weights reads."""
    arch, point, base = plain_point
    for name in ("layers.json", "flat.json", "blocks.json", "named.npz", "flat.npz", "named.safetensors"):
        assert load_point(arch, base / name) == point, name
    assert unflat(arch, flat(point)) == point


@pytest.mark.m2
def test_fiber_at_an_npz_point_of_a_widths_network(tmp_path):
    """The same fiber from the point as .npz and as the old layers JSON."""
    small = Architecture((2, 1), (1,))
    np.savez(tmp_path / "small.npz", weights=np.array([1.0, 2.0, 3.0, -1.0, 2.0, 1.0]))
    (tmp_path / "small.json").write_text(json.dumps(weights.point_to_dict(load_point(small, tmp_path / "small.npz"))))
    runs = [
        invoke("fiber", "--widths", "2,1", "--attention", 1, "--at", tmp_path / name, "--json", "--quiet")
        for name in ("small.npz", "small.json")
    ]
    assert all(r.exit_code in (0, 3) for r in runs), [r.stderr for r in runs]
    a, b = (json.loads(r.stdout) for r in runs)
    assert a["fiber_dimension"] == b["fiber_dimension"] and a["point"] == b["point"]


# ---- the caps in the docs are the code's --------------------------------------------------------


def _mib(n: int) -> str:
    return f"{n // 2**20} MiB" if n >= 2**20 else f"{n // 2**10} KiB"


def test_the_caps_in_security_md_are_the_code():
    doc = (REPO / "docs" / "security.md").read_text()
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| ([^|]+) \| ([^\n]+) \|$", doc, re.M)}

    def row(start: str) -> str:
        return next(v for k, v in rows.items() if k.startswith(start))

    assert f"at most {_mib(spec.MAX_SPEC_BYTES)}" in row("sweep spec")
    assert f"at most {documents.MAX_NESTING} levels" in row("sweep spec")
    assert f"{spec.MAX_SPEC_JOBS:,} jobs" in row("sweep spec") and f"{spec.MAX_JOBS_CEILING:,}" in row("sweep spec")
    at = row("weight file")
    assert f"JSON at most {_mib(weights.MAX_WEIGHT_BYTES)}" in at and f"at most {weights.MAX_DIGITS} digits" in at
    assert f"`.safetensors` at most {_mib(points.MAX_POINT_BYTES)}" in at
    assert f"at most {_mib(arrays.MAX_ARRAY_BYTES)} uncompressed" in at
    inputs = row("input file")
    assert f"JSON at most {_mib(weights.MAX_WEIGHT_BYTES)}" in inputs
    assert f"at most {_mib(points.MAX_INPUT_BYTES)}" in inputs
    assert f"at most {points.MAX_INPUT_ENTRIES:,} entries" in inputs
    network = row("network file")
    assert f"at most {_mib(blocks.MAX_NETWORK_BYTES)}" in network
    assert f"more than {documents.MAX_KEY_PARTS} parts" in network and f"at most {blocks.MAX_BLOCKS} blocks" in network
    assert f"degree at most {blocks.MAX_NETWORK_DEGREE}" in network
    assert f"at least {runner.MIN_HEAP_BYTES // 2**20}M" in row("Macaulay2 heap cap")
    assert f"at most {_mib(store.MAX_RECORD_BYTES)}" in row("result records")
    assert f"at most {_mib(locks.MAX_LOCK_BYTES)}" in row("lock files")
    assert f"a cap of {_mib(runner.MAX_OUTPUT_BYTES)}" in doc
