"""Weight points and input data of any network: every format read exactly, every lie refused in one line."""

from __future__ import annotations

import json
import struct
from fractions import Fraction

import numpy as np
import pytest

from lightning_cas.core.architecture import Architecture
from lightning_cas.core.network import MLP, Attention, Linear, Network
from lightning_cas.errors import InputError
from lightning_cas.system.points import (
    WeightPoint,
    as_point,
    load_inputs,
    load_weights,
    point_from_data,
    safetensors_arrays,
    save_weights,
    state_names,
)

NET = Network(3, 2, (Attention(2, heads=2, value=1, causal=True), MLP(2, residual=True), Linear(1)))


def _values(net, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(net.parameters)


def test_json_npz_and_flat_forms_give_the_same_exact_point(tmp_path):
    w = _values(NET)
    flat = as_point(NET, w)
    assert flat.values == tuple(Fraction(float(v)) for v in w)  # floats are the binary rationals they are
    path = tmp_path / "w.json"
    save_weights(flat, path)
    again = load_weights(NET, path)
    assert again.values == flat.values and again.source == "w.json" and len(again.sha256) == 64
    arrays = {}
    for name, shape in state_names(NET).items():
        _, i, letter = name.split(".")
        mats = [m for m in NET.weight_matrices if m.block == int(i) and m.letter == letter]
        arrays[name] = np.concatenate([w[m.offset : m.stop] for m in mats]).reshape(shape)
    np.savez(tmp_path / "w.npz", **arrays)
    assert load_weights(NET, tmp_path / "w.npz").values == flat.values
    (tmp_path / "flat.json").write_text(json.dumps({"weights": [float(v) for v in w]}))
    assert load_weights(NET, tmp_path / "flat.json").values == flat.values


def test_the_old_layers_form_reads_for_the_papers_network():
    arch = Architecture((2, 1), (1,), 2)
    p = point_from_data(arch, {"layers": [{"Q": [[1, 0.5]], "K": [["3/4", 1]], "V": [[2, -1]]}]})
    assert p.values == (1, Fraction(1, 2), Fraction(3, 4), 1, 2, -1)
    with pytest.raises(InputError, match="paper's network"):
        point_from_data(NET, {"layers": []})


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda a: a.update({"blocks.1.u": np.full((2, 3), np.nan)}), "NaN"),
        (lambda a: a.update({"blocks.1.u": np.full((2, 3), 1e-310)}), "subnormal"),
        (lambda a: a.update({"blocks.1.u": np.zeros((3, 2))}), "shape"),
        (lambda a: a.update({"blocks.1.u": np.zeros((2, 3), dtype=bool)}), "not numbers"),
        (lambda a: a.update({"blocks.1.u": np.array([["a"] * 3] * 2)}), "not numbers"),
        (lambda a: a.pop("blocks.2.p"), "'blocks.2.p' is missing"),
        (lambda a: a.update({"blocks.2.q": np.zeros(1)}), "'blocks.2.q' is not a weight"),
    ],
)
def test_bad_arrays_are_refused_naming_the_array(tmp_path, mutate, match):
    arrays = {name: np.ones(shape) for name, shape in state_names(NET).items()}
    mutate(arrays)
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(InputError, match=match) as info:
        load_weights(NET, tmp_path / "bad.npz")
    assert "\n" not in str(info.value)


def _safetensors(tensors: dict, header_override=None) -> bytes:
    header, data, offset = {}, b"", 0
    for name, arr in tensors.items():
        raw = np.ascontiguousarray(arr, dtype="<f8").tobytes()
        header[name] = {"dtype": "F64", "shape": list(arr.shape), "data_offsets": [offset, offset + len(raw)]}
        data += raw
        offset += len(raw)
    if header_override:
        header_override(header)
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def test_safetensors_written_by_the_library_and_by_hand_read_the_same(tmp_path):
    from safetensors.numpy import save_file

    arrays = {
        name: np.arange(np.prod(shape), dtype=np.float64).reshape(shape) / 7 for name, shape in state_names(NET).items()
    }
    save_file(arrays, str(tmp_path / "lib.safetensors"))
    (tmp_path / "hand.safetensors").write_bytes(_safetensors(arrays))
    by_library = load_weights(NET, tmp_path / "lib.safetensors")
    assert by_library.values == load_weights(NET, tmp_path / "hand.safetensors").values


@pytest.mark.parametrize(
    "lie, match",
    [
        (lambda h: h["blocks.0.q"].update(data_offsets=[0, 10**9]), "claims bytes"),
        (lambda h: h["blocks.0.q"].update(shape=[2, 2, 300]), "claims bytes"),
        (lambda h: h["blocks.0.q"].update(dtype="BOOL"), "not a number type"),
        (lambda h: h["blocks.0.k"].update(data_offsets=list(h["blocks.0.q"]["data_offsets"])), "overlap"),
        (lambda h: h["blocks.0.q"].update(shape="12"), "invalid shape"),
    ],
)
def test_a_safetensors_header_that_lies_is_refused(lie, match):
    arrays = {name: np.ones(shape) for name, shape in state_names(NET).items()}
    with pytest.raises(InputError, match=match):
        safetensors_arrays(_safetensors(arrays, lie), "bad.safetensors")
    with pytest.raises(InputError, match="header claims"):
        safetensors_arrays(struct.pack("<Q", 2**40) + b"{}", "bad.safetensors")


def test_input_data_files(tmp_path):
    X = np.random.default_rng(1).standard_normal((5, 3, 2))
    np.save(tmp_path / "x.npy", X)
    data = load_inputs(NET, tmp_path / "x.npy")
    assert data.count == 5 and data.values[0, 0, 0] == Fraction(float(X[0, 0, 0]))
    (tmp_path / "x.json").write_text(json.dumps(X.tolist()))
    assert (load_inputs(NET, tmp_path / "x.json").values == data.values).all()
    np.save(tmp_path / "wrong.npy", X[:, :2])
    with pytest.raises(InputError, match=r"shape \(N, 3, 2\)"):
        load_inputs(NET, tmp_path / "wrong.npy")
    np.save(tmp_path / "obj.npy", np.array([[["x"]]]))  # strings are read as rationals, as in JSON
    with pytest.raises(InputError, match=r'rational strings like "3/4", got .x.'):
        load_inputs(NET, tmp_path / "obj.npy")


def test_a_point_knows_its_network():
    with pytest.raises(InputError, match="weights"):
        WeightPoint(NET, (Fraction(1),))
    with pytest.raises(InputError, match="has 3 weights"):
        as_point(NET, [1, 2, 3])
