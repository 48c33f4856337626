"""The network description: blocks, defaults, files (TOML and JSON) and their refusals, the old flags as a
plain stack, and the PyTorch-shaped shorthand."""

from __future__ import annotations

import pytest

from lightning_cas.core.architecture import Architecture
from lightning_cas.core.model import flat_weight_symbols
from lightning_cas.core.network import MLP, Attention, Linear, Network, Power
from lightning_cas.errors import InputError
from lightning_cas.results.dimension import DimensionResult
from lightning_cas.system.networks import load_network

EXAMPLE = """
input = 4
tokens = 3
[[block]]
kind = "attention"
heads = 1
attention = 2
value = 2
out = 4
causal = false
residual = false
normalization = "none"
[[block]]
kind = "mlp"
hidden = 8
degree = 2
[[block]]
kind = "linear"
out = 1
[[block]]
kind = "power"
degree = 2
"""


def test_the_documented_example_file_loads_with_its_defaults(tmp_path):
    path = tmp_path / "net.toml"
    path.write_text(EXAMPLE)
    net = load_network(path)
    assert net.widths == (4, 4, 4, 1, 1)
    assert net.blocks[1] == MLP(hidden=8, degree=2, out=4, residual=False)
    # Q, K, W: 2 x 4 each, O: 4 x 2; U: 8 x 4, D: 4 x 8; P: 1 x 4
    assert net.parameters == 3 * 8 + 8 + 32 + 32 + 4
    # weights: attention 4 (Q, K, W, O), mlp 2 (4 + 1) + 1, linear + 1, power x 2
    assert net.degree == 2 * 2 * 3 and net.weight_degree == 2 * ((2 * (4 + 1) + 1) + 1)
    assert Network.from_dict(net.to_dict()) == net
    again = tmp_path / "net.json"
    import json

    again.write_text(json.dumps(net.to_dict()))
    assert load_network(again) == net


@pytest.mark.parametrize(
    "body, match",
    [
        (
            '[[block]]\nkind = "attention"\nattention = 2\nresidual = true\nout = 3',
            r"block 0 \(attention\): residual .*out = its input width 4",
        ),
        (
            '[[block]]\nkind = "mlp"\nhidden = 4\ndegree = 0',
            r"block 0 \(mlp\): degree must be a positive integer, got 0",
        ),
        ('[[block]]\nkind = "convolution"\nout = 2', r"block 0: kind 'convolution' is unknown"),
        (
            '[[block]]\nkind = "linear"\nout = 2\n[[block]]\nkind = "power"\nnormalization = "softmax"',
            r"block 1 \(power\): unknown key 'normalization'",
        ),
        ('[[block]]\nkind = "linear"', r"block 0 \(linear\): the key `out` is missing"),
        ('[[block]]\nkind = "mlp"\nhiden = 4', r"block 0 \(mlp\): unknown key 'hiden'"),
        ('[[block]]\nkind = "attention"\nattention = 2\ncausal = "yes"', r"causal must be true or false"),
        ('[[block]]\nkind = "attention"\nattention = 10000000', r"attention 10000000 is above the supported maximum"),
        ('[[block]]\nkind = "attention"\nattention = 2\nnormalization = "relu"', r"normalization must be one of"),
        ("", r"at least one \[\[block\]\]"),
    ],
)
def test_a_bad_block_file_is_refused_naming_file_block_and_key(tmp_path, body, match):
    path = tmp_path / "bad.toml"
    path.write_text("input = 4\ntokens = 3\n" + body + "\n")
    with pytest.raises(InputError, match=match) as info:
        load_network(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_files_that_are_not_files_are_refused(tmp_path):
    import os

    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="FIFO"):
        load_network(fifo)
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * (2 * 1024 * 1024))
    with pytest.raises(InputError, match="larger|above|bytes|MiB"):
        load_network(big)
    with pytest.raises(InputError, match="missing"):
        Network.from_dict({"tokens": 3, "blocks": []})
    with pytest.raises(InputError, match="degree .* above"):
        Network(2, 2, (Linear(2),) + tuple(Power(16) for _ in range(4)))
    with pytest.raises(InputError, match="no weights"):
        Network(2, 2, (Power(2),))


def test_the_old_flags_are_the_plain_stack_with_the_same_weights_and_names():
    for arch in (
        Architecture((3, 3, 3), (2, 2), 2),
        Architecture((3, 2, 4), (1, 3), 3, heads=(2, 1)),
        Architecture((2, 2), (2,), 2, normalization="softmax"),
    ):
        paper = arch.paper
        # the same network written block by block: one noun, equal, with the paper's view recovered
        net = Network(
            paper.widths[0],
            paper.tokens,
            tuple(
                Attention(a, heads=h, out=e, normalization=paper.normalization)
                for (a, _, e), h in zip(paper.layer_shapes, paper.heads)
            ),
        )
        assert net == arch and net.paper == paper and net is not arch
        assert net.parameters == paper.parameters and net.widths == paper.widths
        if paper.normalization == "none":
            assert net.degree == paper.degree and net.weight_degree == paper.weight_degree
        assert net.ambient_dimension == paper.ambient_dimension
        assert net.weight_names() == [str(s) for s in flat_weight_symbols(arch)]
        # written, named and shown in the paper's words, read back from either spelling
        assert net.to_dict() == paper.to_dict() and net.label() == paper.label() and str(net) == str(paper)
        assert Network.from_dict(net.to_dict()) == net == Network.from_dict(net.blocks_dict())
    assert Network(3, 2, (Attention(2, causal=True),)).paper is None


def test_the_pytorch_shorthand_counts_like_pytorch_without_biases():
    net = Network.transformer(d_model=16, n_heads=4, d_head=4, n_layers=1)
    # nn.MultiheadAttention(16, 4, bias=False): in_proj 3 * 16 * 16, out_proj 16 * 16
    assert net.parameters == 4 * 16 * 16 == 1024
    mlp = Network.transformer(d_model=8, n_heads=2, d_head=4, n_layers=2, d_mlp=32)
    assert mlp.parameters == 2 * (4 * 8 * 8 + 2 * 8 * 32)
    assert all(b.residual for b in mlp.blocks) and mlp.blocks[0].causal


def test_results_carry_either_kind_of_architecture_through_json():
    net = Network(3, 2, (Attention(2, causal=True, residual=True), Linear(1)))
    for arch in (net, Architecture((2, 2), (1,), 2)):
        r = DimensionResult(
            architecture=arch,
            dimension=1,
            parameters=arch.parameters,
            ambient_dimension=arch.ambient_dimension,
            method="modp",
            certainty="probabilistic",
        )
        assert DimensionResult.from_json(r.to_json()) == r
