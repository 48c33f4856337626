"""Exact values or refusal: every float dtype is read as the exact binary rational it holds (never
rounded through float64), numpy integers and bools become Python ints and bools at the one validation,
and the failure bound is computed from exact ints."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from click.testing import CliRunner

from lightning_cas.api import dimension
from lightning_cas.backends.modp import failure_bound
from lightning_cas.cli import main
from lightning_cas.core.network import MLP, Attention, Linear, Network
from lightning_cas.errors import InputError
from lightning_cas.system.points import exact_values, load_weights

LONG = np.finfo(np.longdouble)
EXTENDED = LONG.nmant >= 63  # x86-64: the 80-bit extended format (numpy's float128)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.longdouble])
def test_every_float_dtype_is_read_as_the_value_it_holds(dtype):
    eps = Fraction(1, 2 ** np.finfo(dtype).nmant)  # the spacing just above 1 in that format
    arr = np.array([1, -3, 0.5], dtype=dtype) + np.array([eps, 0, 0], dtype=dtype)
    assert exact_values(arr, "x") == [1 + eps, Fraction(-3), Fraction(1, 2)]


def test_nan_and_subnormals_are_refused_in_long_double_too():
    with pytest.raises(InputError, match="NaN"):
        exact_values(np.array([np.nan], dtype=np.longdouble), "x")
    with pytest.raises(InputError, match="subnormal"):
        exact_values(np.array([1e-310], dtype=np.longdouble), "x")


@pytest.mark.skipif(not EXTENDED, reason="long double is float64 on this platform")
def test_a_long_double_point_of_rank_four_is_not_rounded_to_rank_three(tmp_path):
    """P2 P1 on width 2 (two linear blocks) at P1 = P2 = P: the differential is (A, B) -> A P + P B, onto
    all 2 x 2 matrices (rank 4) when P is invertible; when P = u v^T has rank 1 its image is
    {a v^T} + {u b^T}, 2 + 2 - 1 = 3. P = [[1, 1 + 2^-60], [1, 1]] is invertible exactly and of rank 1
    once rounded to float64."""
    net = Network(2, 1, (Linear(2), Linear(2)))
    (tmp_path / "net.json").write_text(json.dumps(net.to_dict()))
    one = np.longdouble(1)
    p1 = np.array([[one, one + np.longdouble(2) ** -60], [one, one]], dtype=np.longdouble)
    assert float(p1[0, 1]) == 1.0  # what float64 made of it
    for name, P1 in (("exact", p1), ("rounded", p1.astype(np.float64))):
        np.savez(tmp_path / f"{name}.npz", **{"blocks.0.p": P1, "blocks.1.p": P1})
    assert load_weights(net, tmp_path / "exact.npz").values[1] == 1 + Fraction(1, 2**60)
    ranks = {}
    for name in ("exact", "rounded"):
        res = CliRunner().invoke(
            main,
            ["dim", "--arch", str(tmp_path / "net.json"), "--at", str(tmp_path / f"{name}.npz"), "--json", "--quiet"],
        )
        assert res.exit_code == 0, res.stderr
        ranks[name] = json.loads(res.stdout)["dimension"]
    assert ranks == {"exact": 4, "rounded": 3}


def test_numpy_sizes_are_python_ints_and_never_wrap():
    """int8 arithmetic wrapped the weight degree (4641 became 33, 4641 mod 256): sizes are ints now."""
    small = Network(np.int8(2), np.int8(1), (MLP(np.int8(2), degree=np.int8(16)), MLP(np.int8(2), degree=np.int8(16))))
    plain = Network(2, 1, (MLP(2, degree=16), MLP(2, degree=16)))
    assert small == plain and small.weight_degree == plain.weight_degree == 16 * (16 + 1 + 1) + 1
    assert all(type(getattr(b, f)) is int for b in small.blocks for f in ("hidden", "degree", "out"))
    assert type(small.input) is int and type(small.tokens) is int
    flags = Network(2, 2, (Attention(np.int16(1), causal=np.bool_(True), residual=np.bool_(False)),))
    assert flags.blocks[0].causal is True and type(flags.blocks[0].residual) is int and flags.blocks[0].residual == 0
    with pytest.raises(InputError, match="above the supported maximum"):
        Network(2, 2, (MLP(np.int32(1 << 21)),))


def test_the_failure_bound_is_the_same_for_numpy_and_python_sizes():
    """The Schwartz-Zippel bound uses the weight degree: the same exact int either way."""
    a = dimension(Network(np.int8(2), 2, (Attention(np.int8(1)), MLP(np.int8(2), degree=np.int8(3)))))
    b = dimension(Network(2, 2, (Attention(1), MLP(2, degree=3))))
    assert a.dimension == b.dimension and a.certainty == b.certainty and a.failure_bound == b.failure_bound
    # the dimension here meets a proved bound (exact, no failure bound): the bound a run states, compared directly
    bounds = [failure_bound(r.architecture, r.dimension, r.primes[0]) for r in (a, b)]
    assert bounds[0] == bounds[1] and 0 < bounds[0] < 1e-3


def _safetensors(path, name: str, dtype: str, shape: tuple, raw: bytes) -> None:
    """A .safetensors file written by its format (8-byte header length, JSON header, data)."""
    import struct

    header = json.dumps({name: {"dtype": dtype, "shape": list(shape), "data_offsets": [0, len(raw)]}}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + raw)


SUBNORMAL_FILES = {  # the smallest positive subnormal of each type, in every file format that holds that type
    "npz float16": ("npz", np.float16, "float16"),
    "npz float32": ("npz", np.float32, "float32"),
    "npz float64": ("npz", np.float64, "float64"),
    "safetensors F16": ("F16", np.float16, "float16"),
    "safetensors BF16": ("BF16", None, "float32"),  # bfloat16 is read as the float32 it widens to exactly
    "safetensors F32": ("F32", np.float32, "float32"),
}


@pytest.mark.parametrize("case", sorted(SUBNORMAL_FILES))
def test_a_weight_file_is_held_to_the_subnormal_range_of_its_own_dtype(case, tmp_path):
    fmt, dtype, shown = SUBNORMAL_FILES[case]
    net = Network(2, 1, (Linear(1),))  # one 1 x 2 matrix P: blocks.0.p
    if fmt == "npz":
        p = np.array([[np.finfo(dtype).smallest_subnormal, 1]], dtype=dtype)
        np.savez(tmp_path / "w.npz", **{"blocks.0.p": p})
        path = tmp_path / "w.npz"
    else:
        raw = (
            np.array([1, 0x3F80], dtype="<u2").tobytes()
            if fmt == "BF16"  # 2^-133 (subnormal) and 1.0
            else np.array([np.finfo(dtype).smallest_subnormal, 1], dtype=dtype).tobytes()
        )
        path = tmp_path / "w.safetensors"
        _safetensors(path, "blocks.0.p", fmt, (1, 2), raw)
    with pytest.raises(InputError, match=f"subnormal {shown}"):
        load_weights(net, path)


def test_inputs_from_an_npy_file_are_held_to_their_dtype_too(tmp_path):
    from lightning_cas.system.points import load_inputs

    net = Network(2, 3, (Linear(1),))
    inputs = np.ones((1, 2, 3), dtype=np.float32)
    inputs[0, 1, 2] = np.float32(1e-40)  # normal as a float64, subnormal as the float32 it is
    np.save(tmp_path / "x.npy", inputs)
    with pytest.raises(InputError, match="subnormal float32"):
        load_inputs(net, tmp_path / "x.npy")
    inputs[0, 1, 2] = np.finfo(np.float32).smallest_normal
    np.save(tmp_path / "x.npy", inputs)
    assert load_inputs(net, tmp_path / "x.npy").values[0, 1, 2] == Fraction(1, 2**126)
