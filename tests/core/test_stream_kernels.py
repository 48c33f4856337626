"""Kernel vectors along residual streams next to LayerNorm (a post-LN transformer layer: attention, LN, mlp, LN,
both blocks residual): the stream bias shifts and the LayerNorm shift and plane beside residual blocks are exactly
in the kernel, are offered only where their identity holds, and close a certificate that equals the oracle's rank."""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from lightning_cas import dimension
from lightning_cas.core.activation_kernels import kernel_vectors
from lightning_cas.core.arithmetic import Float64
from lightning_cas.core.forward import jacobian
from lightning_cas.core.network import MLP, Attention, LayerNorm, Linear, Network
from lightning_cas.system.points import WeightPoint
from tests.oracle.jacobian import oracle_rank


def post_ln(activation: str = "gelu", mlp_bias: bool = True, tail=()) -> Network:
    """x -> LN(x + SA(x)) -> LN(y + FF(y)) on 3 features and 2 tokens (49 weights with biases)."""
    return Network(
        3,
        2,
        (
            Attention(1, out=3, residual=True, normalization="softmax", bias=True),
            LayerNorm(),
            MLP(2, out=3, residual=True, bias=mlp_bias, activation=activation),
            LayerNorm(),
            *tail,
        ),
    )


def point(net: Network, seed: int = 0) -> list[Fraction]:
    """Dyadic weights, the norms' gains in [3/4, 3/2] (away from 0, as after training)."""
    rng = random.Random(seed)
    w = [Fraction(rng.randint(-6, 6), 4) for _ in range(net.parameters)]
    for m in net.weight_matrices:
        if m.letter == "g":
            w[m.offset : m.stop] = [Fraction(rng.randint(3, 6), 4) for _ in range(m.size)]
    return w


def inputs(count: int, seed: int = 1) -> list:
    rng = random.Random(seed)
    return [[[rng.randint(-2, 2) for _ in range(2)] for _ in range(3)] for _ in range(count)]


def float_jacobian(net, w, X):
    f = Float64()
    return jacobian(net, f, f.array([float(v) for v in w]), f.array(np.array(X, dtype=float)))


def test_the_stream_mechanisms_are_offered_and_exactly_in_the_kernel():
    net, w = post_ln(), point(post_ln())
    found = kernel_vectors(net, w)
    names = Counter(name for name, _ in found)
    # LN1 absorbs 1 v^T on V (3 columns) and b_v; LN2 on D (2 columns) and b_d: 7 shifts; U's 2 rows along
    # LN1's plane; LN1's b_g moved by c (3 directions) taken by b_u and cancelled by b_d
    assert names == {"LayerNorm shift": 7, "stream bias shift": 3, "LayerNorm plane": 2}
    J = float_jacobian(net, w, inputs(8))
    V = np.array([[float(x) for x in v] for _, v in found]).T
    assert np.abs(J @ V).max() < 1e-12 * np.abs(J).max()
    shift = [v for name, v in found if name == "stream bias shift"][0]
    moved = {(m.block, m.letter) for m in net.weight_matrices if any(shift[m.offset : m.stop])}
    assert moved == {(1, "bg"), (2, "bu"), (2, "bd")}


def test_a_stream_shift_needs_biased_readers_and_an_end_that_absorbs_it():
    # without the mlp's biases nothing takes LN1's b_g moved by c: no stream shift is offered
    names = Counter(name for name, _ in kernel_vectors(post_ln(mlp_bias=False), point(post_ln(mlp_bias=False))))
    assert "stream bias shift" not in names and names["LayerNorm plane"] == 0  # the plane needs b_u for w . b_g
    # a biased readout after LN2 takes LN2's b_g moved by c in its own bias (the non-residual bias shift)
    net = post_ln(tail=(Linear(2, bias=True),))
    names = Counter(name for name, _ in kernel_vectors(net, point(net)))
    assert names["stream bias shift"] == 3 and names["bias shift"] == 3


@pytest.mark.parametrize("activation, seeds, rank", [("gelu", (0, 1), 35), ("relu", (1, 3), 33)])
def test_the_post_ln_certificate_closes_at_the_oracles_rank(activation, seeds, rank):
    """49 weights, 8 integer inputs (enough rows for the rank on generic inputs): the certificate closes, and
    the oracle (an mpmath forward, a 200-digit Jacobian) gives the same rank. (ReLU units active on only a few
    of so few inputs can leave it open: their blind spots need the stream over QQ, which LayerNorm's square
    root does not give.)"""
    net = post_ln(activation)
    w, X = point(net, seeds[0]), inputs(8, seeds[1])
    result = dimension(net, at=WeightPoint(net, w), inputs=np.array(X), layout="features-tokens")
    cert = result.certificate
    assert cert.lower == cert.upper == rank, cert
    assert "stream bias shift" in cert.upper_by
    oracle = oracle_rank(net, w, X)
    assert oracle.ok and oracle.rank == rank


def test_dead_units_count_on_given_inputs_only():
    """A unit dead on the inputs bounds the rank on those inputs; on drawn inputs (the rank at W over all
    inputs) it is not offered: a unit dead on the draws may live elsewhere."""
    net = post_ln("relu")
    w = point(net, 1)
    bu = next(m for m in net.weight_matrices if m.letter == "bu")
    w[bu.offset] = Fraction(-100)  # below anything U reads after a LayerNorm of gains <= 3/2
    at = WeightPoint(net, w)
    given = dimension(net, at=at, inputs=np.array(inputs(8, 3)), layout="features-tokens").certificate
    assert "dead unit" in given.upper_by and given.lower == given.upper
    drawn = dimension(net, at=at).certificate
    assert "dead unit" not in drawn.upper_by
