"""The layout of input arrays (ours (N, d_0, t) or PyTorch's (N, t, d_0)), pickles refused unread, and the
network's own TOML and JSON forms read back to the same network."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from lightning_cas import dimension
from lightning_cas.cli import main
from lightning_cas.core.network import MLP, Attention, Linear, Network, Power
from lightning_cas.errors import InputError
from lightning_cas.system.networks import load_network
from lightning_cas.system.points import inputs_from_array, load_inputs, load_weights, save_inputs

NET = Network(3, 2, (Attention(1, causal=True, bias=True), Linear(1)))  # d_0 = 3, t = 2: shapes differ
SQUARE = Network(2, 2, (Attention(1),))  # t = d_0: a bare array is ambiguous


def test_pytorch_batches_are_read_as_such_and_give_the_same_rank():
    rng = np.random.default_rng(0)
    X = rng.integers(-5, 6, (4, 3, 2))
    ours = inputs_from_array(NET, X)
    torch_layout = inputs_from_array(NET, np.swapaxes(X, 1, 2))  # (N, t, d_0), recognised by its shape
    assert (ours.values == torch_layout.values).all()
    stated = inputs_from_array(NET, np.swapaxes(X, 1, 2), layout="tokens-features")
    assert (stated.values == ours.values).all()
    a = dimension(NET, inputs=X).dimension
    assert a == dimension(NET, inputs=np.swapaxes(X, 1, 2), layout="tokens-features").dimension


def test_an_ambiguous_array_is_refused_unless_its_layout_is_stated():
    X = np.arange(8).reshape(2, 2, 2)
    with pytest.raises(InputError, match="fits both layouts"):
        inputs_from_array(SQUARE, X)
    a = inputs_from_array(SQUARE, X, layout="features-tokens").values
    b = inputs_from_array(SQUARE, X, layout="tokens-features").values
    assert (a == np.swapaxes(b, 1, 2)).all() and not (a == b).all()
    with pytest.raises(InputError, match="layout must be one of"):
        inputs_from_array(SQUARE, X, layout="columns")
    with pytest.raises(InputError, match="shape"):
        inputs_from_array(NET, X, layout="tokens-features")


def test_a_written_array_carries_its_layout(tmp_path):
    X = np.arange(8).reshape(2, 2, 2)
    save_inputs(X, tmp_path / "x.npz", layout="tokens-features")
    read = load_inputs(SQUARE, tmp_path / "x.npz")  # no layout stated: the file's own
    assert (read.values == np.swapaxes(X, 1, 2)).all()
    with pytest.raises(InputError, match="records the layout tokens-features"):
        load_inputs(SQUARE, tmp_path / "x.npz", layout="features-tokens")
    np.save(tmp_path / "x.npy", X)
    with pytest.raises(InputError, match="fits both layouts"):
        load_inputs(SQUARE, tmp_path / "x.npy")


def test_the_cli_takes_a_layout_and_refuses_one_without_inputs(tmp_path):
    arch = tmp_path / "net.toml"
    arch.write_text(NET.to_toml())
    X = np.random.default_rng(1).integers(-5, 6, (4, 2, 3))  # PyTorch's (N, t, d_0)
    np.save(tmp_path / "x.npy", X)
    ok = CliRunner().invoke(
        main, ["dim", "--arch", str(arch), "--inputs", str(tmp_path / "x.npy"), "--layout", "tokens-features", "--json"]
    )
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["dimension"] == dimension(NET, inputs=np.swapaxes(X, 1, 2)).dimension
    bad = CliRunner().invoke(main, ["dim", "--arch", str(arch), "--layout", "tokens-features"])
    assert bad.exit_code == 2 and "give --inputs" in bad.output and "Traceback" not in bad.output


@pytest.mark.parametrize(
    "name, data",
    [
        ("w.pt", b"PK\x03\x04" + b"\0" * 30 + b"archive/data.pkl"),
        ("w.json", b"\x80\x04\x95" + b"\0" * 20),
        ("w.pth", b"{}"),
    ],
)
def test_a_pickle_is_refused_unread_with_the_safetensors_recipe(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError, match="never unpickled.*safetensors.torch import save_file"):
        load_weights(NET, path)
    with pytest.raises(InputError, match="never unpickled"):
        load_inputs(NET, path)


@pytest.mark.parametrize(
    "net",
    [
        NET,
        Network(
            4,
            3,
            (
                Attention(2, heads=2, value=2, causal=True, residual=True, normalization="softmax", bias=True),
                MLP(8, degree=3, residual=True),
                Linear(1, bias=True),
                Power(2),
            ),
        ),
    ],
)
def test_to_toml_and_to_json_round_trip(tmp_path, net):
    (tmp_path / "n.toml").write_text(net.to_toml())
    (tmp_path / "n.json").write_text(net.to_json())
    assert load_network(tmp_path / "n.toml") == net == load_network(tmp_path / "n.json")
    assert Network.from_dict(json.loads(net.to_json())) == net
