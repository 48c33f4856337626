"""The position block (a learned positional embedding Y + E, E width x tokens): its file and key, its forward
and Jacobian against sympy's derivative of the symbolic network, and the rank it adds."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy

from lightning_cas import dimension
from lightning_cas.core.arithmetic import Rationals
from lightning_cas.core.forward import evaluate, jacobian
from lightning_cas.core.model import flat_weight_symbols, network_output, token_symbols
from lightning_cas.core.network import Attention, Linear, Network, Position
from lightning_cas.errors import InputError

NET = Network(2, 3, (Position(), Attention(1, causal=True, residual=True), Position(residual=2), Linear(1)))


def test_the_key_file_and_label():
    assert NET.blocks[0].tokens == 3 and NET.label() == "net_d2_t3_E3-A1x1o2cr-E3r2-L1"
    assert [m.letter for m in NET.weight_matrices][:1] == ["e"] and NET.weight_matrices[0].cols == 3
    assert NET.weight_names()[:2] == ["e_(1,1,1)", "e_(1,1,2)"]
    assert Network.from_dict(json.loads(NET.to_json())) == NET
    assert 'kind = "position"' in NET.to_toml()
    assert NET.biased and NET.polynomial and 0 in NET.token_degrees
    with pytest.raises(InputError, match=r"block 0 \(position\): tokens is 2, but the network has 3 tokens"):
        Network(2, 3, (Position(tokens=2), Linear(1)))


def test_it_adds_its_embedding_per_token():
    ar = Rationals()
    net = Network(2, 3, (Position(),))
    w = list(range(1, 7))
    X = np.zeros((1, 2, 3), dtype=np.int64)
    assert [int(v.p) for v in evaluate(net, ar, ar.array(w), ar.array(X)).reshape(-1)] == w


def test_the_jacobian_is_the_exact_derivative_of_the_symbolic_network():
    net = NET
    rng = np.random.default_rng(5)
    w = [int(v) for v in rng.integers(-3, 4, net.parameters)]
    X = rng.integers(-3, 4, (net.input, net.tokens))
    ws, xs = flat_weight_symbols(net), list(token_symbols(net))
    subs = dict(zip(ws, w)) | dict(zip(xs, (int(v) for v in X.reshape(-1))))
    exact = [[sympy.diff(f, s).subs(subs) for s in ws] for f in network_output(net)]
    ar = Rationals()
    J = jacobian(net, ar, ar.array(w), ar.array(X[None]))
    assert [[int(v.p) for v in row] for row in J] == [[int(v) for v in row] for row in exact]
    own = [m for m in net.weight_matrices if m.block == 2]
    assert np.array_equal(jacobian(net, ar, ar.array(w), ar.array(X[None]), only=2), J[:, own[0].offset : own[-1].stop])


def test_an_embedding_lets_a_linear_readout_see_the_position():
    """P (Y + E): the map is P Y + P E, an affine map with a per-token constant: rank d + t for one output."""
    net = Network(2, 3, (Position(), Linear(1)))
    assert dimension(net, method="modp").dimension == 2 + 3
