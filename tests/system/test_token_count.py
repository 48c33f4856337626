"""The inputs set the token count of a network that acts on each token alone (an MLP converted from PyTorch has
3 tokens by default); a network whose attention mixes tokens keeps its own and refuses other inputs."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from lightning_cas import MLP, Attention, InputError, Network, dimension


def test_a_token_wise_network_takes_the_token_count_of_its_inputs(tmp_path):
    net = Network(4, 3, (MLP(8, activation="relu", bias=True, out=1),))
    rng = np.random.default_rng(0)
    w = rng.standard_normal(net.parameters).tolist()
    X = rng.standard_normal((30, 1, 4))  # PyTorch's (N, t, d_0) with one token
    r = dimension(net, at=w, inputs=X, layout="tokens-features")
    assert r.architecture.tokens == 1 and r.architecture.blocks == net.blocks and 0 < r.dimension <= 30
    # the command line: the weights read for the 3-token network are the same weights
    np.save(tmp_path / "X.npy", X)
    (tmp_path / "w.json").write_text(json.dumps({"weights": w}))
    (tmp_path / "net.json").write_text(net.to_json())
    run = [sys.executable, "-m", "lightning_cas", "dim", "--arch", str(tmp_path / "net.json"), "--at"]
    out = subprocess.run(
        run + [str(tmp_path / "w.json"), "--inputs", str(tmp_path / "X.npy"), "--layout", "tokens-features", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["dimension"] == r.dimension


def test_a_network_that_mixes_tokens_keeps_its_own_count():
    net = Network(2, 3, (Attention(1),))
    with pytest.raises(InputError, match=r"shape \(N, 2, 3\)"):
        dimension(net, inputs=np.ones((4, 2, 1)), layout="features-tokens")
