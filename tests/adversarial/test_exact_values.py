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
    assert load_weights(net, tmp_path / "exact.npz").values[1] == 1 + Fraction(1, 2 ** 60)
    ranks = {}
    for name in ("exact", "rounded"):
        res = CliRunner().invoke(main, ["dim", "--arch", str(tmp_path / "net.json"), "--at",
                                        str(tmp_path / f"{name}.npz"), "--json", "--quiet"])
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
    assert flags.blocks[0].causal is True and flags.blocks[0].residual is False
    with pytest.raises(InputError, match="above the supported maximum"):
        Network(2, 2, (MLP(np.int16(30000)),))


def test_the_failure_bound_is_the_same_for_numpy_and_python_sizes():
    """The Schwartz-Zippel bound uses the weight degree: the same exact int either way."""
    a = dimension(Network(np.int8(2), 2, (Attention(np.int8(1)), MLP(np.int8(2), degree=np.int8(3)))))
    b = dimension(Network(2, 2, (Attention(1), MLP(2, degree=3))))
    assert a.dimension == b.dimension and a.failure_bound == b.failure_bound and 0 < a.failure_bound < 1e-3
