"""Networks of blocks in Macaulay2: the header values a network becomes, the package's builder
against the modp engine on networks of every kind, and the plain stack identical to the old flags."""

from __future__ import annotations

import pytest

from lightning_cas.backends.m2 import dimension_jacobian, jacobian_size
from lightning_cas.backends.modp import dimension_modp
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.network import MLP, Attention, Linear, Network, Position, Power
from lightning_cas.errors import M2Error, UnsupportedError
from lightning_cas.macaulay2.connection import Macaulay2
from lightning_cas.macaulay2.network import block_list, package_params
from lightning_cas.macaulay2.render import render


def test_a_network_becomes_integer_lists_in_the_header():
    net = Network(
        4, 3, (Attention(2, heads=2, value=1, causal=True, residual=True), MLP(8, degree=3), Linear(1), Power(2))
    )
    params = package_params(net)
    assert params == {"inputWidth": 4, "tokens": 3, "blocks": [[0, 2, 2, 1, 4, 1, 1], [1, 8, 3, 4, 0], [2, 1], [3, 2]]}
    text = render("dimension_jacobian", **params, charP=101, seed=0, columns=1)
    assert "blocks = {{0, 2, 2, 1, 4, 1, 1}, {1, 8, 3, 4, 0}, {2, 1}, {3, 2}};" in text.splitlines()
    # the old flags are the stack of plain attention blocks
    assert package_params(Architecture((3, 2, 2), (2, 1), 2, heads=(1, 2))) == {
        "inputWidth": 3,
        "tokens": 2,
        "blocks": [[0, 1, 2, 0, 2, 0, 0], [0, 2, 1, 0, 2, 0, 0]],
    }


def test_softmax_has_no_polynomial_form():
    net = Network(2, 2, (Attention(1, normalization="softmax"),))
    with pytest.raises(UnsupportedError, match="softmax attention is not polynomial"):
        block_list(net.blocks[0])
    with pytest.raises(UnsupportedError, match="polynomial"):
        dimension_jacobian(net, Macaulay2())


def test_the_jacobian_size_counts_every_degree_of_a_residual_network():
    plain = Architecture((2, 2), (1,), 2)
    assert jacobian_size(plain) == 2 * 20 * 8  # d_L * C(4+2, 3) * P
    residual = Network(2, 2, (Attention(1, residual=True),))
    assert jacobian_size(residual) == 2 * (4 + 20) * 8  # degree 1 (the identity) and degree 3


# networks of every kind (causal, residual, factored, mlp, linear, power, mixed)
NETWORKS = [
    Network(3, 1, (Linear(2),)),
    Network(3, 1, (Linear(1), Linear(3))),
    Network(3, 1, (Linear(2), Power(2), Linear(1))),
    Network(2, 1, (Linear(2), Power(3), Linear(1))),
    Network(3, 1, (MLP(2, out=1),)),
    Network(2, 1, (MLP(2, degree=3, out=1),)),
    Network(2, 1, (MLP(3),)),
    Network(2, 1, (MLP(2, residual=True),)),
    Network(2, 2, (Attention(1, causal=True),)),
    Network(2, 3, (Attention(2, causal=True),)),
    Network(2, 2, (Attention(1, residual=True),)),
    Network(2, 2, (Attention(2, value=1),)),
    Network(2, 2, (Attention(1, heads=2, value=1),)),
    Network(2, 3, (Attention(1, causal=True, residual=True),)),
    Network(2, 2, (Attention(2), MLP(2, out=1))),
    Network(2, 2, (Attention(1, causal=True, residual=True), MLP(2, residual=True))),
    Network(3, 2, (Linear(2), Attention(1))),
    Network(2, 2, (Attention(1, out=1), Power(2))),
    Network(2, 1, (Power(2), Linear(1))),
    Network(2, 2, (Attention(2, heads=2, causal=True),)),
    Network(2, 2, (Attention(1, causal=True), Attention(1, causal=True))),
    Network.transformer(2, 1, 1, 1, d_mlp=2, tokens=2),
    # a learned positional embedding, and residual groups of two blocks
    Network(2, 2, (Position(), Attention(1, causal=True, residual=True), Linear(2, residual=2), Linear(1))),
    Network(2, 2, (Linear(2), Power(2), Linear(2, residual=3), Linear(1))),
    Network(1, 2, (Position(), Attention(1, causal=True))),  # a causal network whose zero tokens move
]


@pytest.mark.parametrize("net", NETWORKS, ids=[n.label() for n in NETWORKS])
def test_the_package_builder_agrees_with_modp_on_block_networks(m2, net):
    """Two independent computations: M2 builds the network from its blocks and differentiates it
    symbolically; the modp engine runs the Python forward definition on random inputs."""
    got = dimension_jacobian(net, Macaulay2(m2))
    assert got.dimension == dimension_modp(net).dimension
    assert got.parameters == net.parameters and 0 < got.dimension <= net.parameters


def test_the_plain_stack_as_blocks_is_the_old_flags(m2):
    arch = Architecture((2, 2, 1), (1, 1), 2, heads=(2, 1))
    blocks = Network(2, 2, (Attention(1, heads=2, out=2), Attention(1, out=1)))  # the same, block by block
    old, new = (dimension_jacobian(a, Macaulay2(m2), seed=3) for a in (arch, blocks))
    assert (old.dimension, old.runs) == (new.dimension, new.runs)
    assert old.script == new.script  # the same script: the old flags are rendered as their blocks


def test_the_fiber_template_takes_a_network(m2):
    """u^2 d x^2 (an mlp of degree 2 on width one): the fiber through (u, d) = (2, 3) is the curve
    u^2 d = 12, one dimension, containing the point."""
    net = Network(1, 1, (MLP(1),))
    script, rec = Macaulay2(m2).run(
        "fiber", {**package_params(net), "charP": 0, "seed": 0, "columns": 1, "weightPoint": [2, 3], "witnessTries": 6}
    )
    assert rec["parameters"] == 2 and rec["fiber_dimension"] == 1
    assert net.parameters - dimension_modp(net).dimension == 1
    assert any(c["contains_point"] for c in rec["components"])


def test_the_package_builds_residual_groups_as_our_forward(m2, tmp_path):
    """A group of 2 (attention, linear) inside a group of 3 (and the mlp), then a power block around itself:
    the package's polynomials (from the integer lists, linear and power lists with their residual) at a random
    rational point equal our forward there, exactly."""
    from fractions import Fraction

    import numpy as np

    from lightning_cas.core.arithmetic import Rationals
    from lightning_cas.core.forward import evaluate
    from tests.macaulay2.test_package import _m2_entries

    net = Network(
        1,
        2,
        (
            Linear(1),
            Attention(1, causal=True),
            Linear(1, bias=True, residual=2),
            MLP(1, residual=3),
            Power(2, residual=True),
        ),
    )
    blocks = package_params(net)["blocks"]
    assert blocks[2:] == [[2, 1, 1, 2], [1, 1, 2, 1, 3], [3, 2, 1]]
    call = "{" + ", ".join("{" + ", ".join(map(str, b)) + "}" for b in blocks) + "}"
    entries = _m2_entries(tmp_path, m2, f"lightningNetwork neuralNetwork({net.input}, {net.tokens}, {call})")
    rng = np.random.default_rng(4)
    w = [
        Fraction(int(a), int(b))
        for a, b in zip(rng.integers(-5, 6, net.parameters), rng.integers(1, 4, net.parameters))
    ]
    x = [Fraction(int(a), 2) for a in rng.integers(-3, 4, net.tokens)]
    values = dict(zip(net.weight_names(), w)) | {f"x_(1,{j + 1})": v for j, v in enumerate(x)}
    ar = Rationals()
    ours = evaluate(net, ar, ar.array(w), ar.array(np.array(x, dtype=object).reshape(1, 1, net.tokens)))
    theirs = [e.subs({s: values[str(s)] for s in e.free_symbols}) for e in entries]
    assert [Fraction(str(v)) for v in theirs] == [Fraction(int(v.p), int(v.q)) for v in ours.reshape(-1)]


def test_the_package_refuses_overlapping_and_too_long_groups(m2, tmp_path):
    from tests.macaulay2.test_package import run_m2

    for blocks, message in (
        ("{{2, 1}, {2, 1, 0, 2}, {2, 1, 0, 2}}", "overlap"),
        ("{{2, 1}, {2, 1, 0, 3}}", "reaching before block 0"),
        ("{{2, 2}, {2, 2, 0, 2}}", "keep the width"),
    ):
        with pytest.raises(M2Error) as info:
            run_m2(tmp_path, f"neuralNetwork(1, 1, {blocks});\n", m2)
        assert message in str(info.value) + info.value.output
