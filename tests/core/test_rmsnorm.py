"""The RMSNorm block: its files, its forward against an independent mpmath forward, its derivative against
finite differences, a certified rank at random weights against a float64 SVD with a clear gap, bad keys."""

from __future__ import annotations

import json

import mpmath
import numpy as np
import pytest
from click.testing import CliRunner

from lightning_cas import api
from lightning_cas.cli import main
from lightning_cas.core.arithmetic import Float64
from lightning_cas.core.forward import evaluate, jacobian
from lightning_cas.core.network import MLP, Attention, LayerNorm, Linear, Network, RMSNorm
from lightning_cas.errors import InputError, UnsupportedError
from lightning_cas.system.points import as_point, save_weights

NETS = {
    "gain": Network(3, 2, (Linear(4), RMSNorm(), Linear(2))),
    "plain": Network(
        3, 2, (Attention(2, bias=True), RMSNorm(affine=False, eps=0.01), MLP(3, activation="gelu", out=2))
    ),
}


def test_it_round_trips_through_toml_and_json(tmp_path):
    from lightning_cas.system.networks import load_network

    for net in (*NETS.values(), Network(2, 1, (RMSNorm(eps=0.125, affine=False), Linear(1)))):
        path = tmp_path / "net.toml"
        path.write_text(net.to_toml())
        assert load_network(str(path)) == net
        assert Network.from_dict(json.loads(net.to_json())) == net
    assert 'kind = "rmsnorm"' in NETS["plain"].to_toml() and "eps = 0.01" in NETS["plain"].to_toml()
    assert NETS["gain"].parameters == 12 + 4 + 8 and NETS["gain"].functions == ("rmsnorm",)


def _mp_forward(net: Network, w, X):
    """Linear -> RMSNorm -> Linear by hand in mpmath at 50 digits (no code of ours)."""
    with mpmath.workdps(50):
        A = mpmath.matrix(np.asarray(w[:12]).reshape(4, 3).tolist())
        g, P = w[12:16], mpmath.matrix(np.asarray(w[16:]).reshape(2, 4).tolist())
        out = np.zeros((X.shape[0], 2, X.shape[2]))
        for n in range(X.shape[0]):
            for t in range(X.shape[2]):
                y = A * mpmath.matrix(X[n, :, t].tolist())
                s = 1 / mpmath.sqrt(sum(y[r] ** 2 for r in range(4)) / 4 + mpmath.mpf(net.blocks[1].eps))
                z = mpmath.matrix([g[r] * y[r] * s for r in range(4)])
                out[n, :, t] = [float(v) for v in P * z]
    return out


def test_the_forward_is_the_mpmath_forward_and_the_jacobian_its_derivative():
    net, f = NETS["gain"], Float64()
    rng = np.random.default_rng(1)
    w, X = rng.standard_normal(net.parameters), rng.standard_normal((5, 3, 2))
    assert np.abs(evaluate(net, f, w, X) - _mp_forward(net, w, X)).max() < 1e-13
    for net in NETS.values():
        w, X = rng.standard_normal(net.parameters), rng.standard_normal((3, net.input, net.tokens))
        J, numeric = jacobian(net, f, w, X), np.zeros((3 * net.output * net.tokens, net.parameters))
        for k in range(net.parameters):
            e = np.zeros_like(w)
            e[k] = 1e-6
            numeric[:, k] = ((evaluate(net, f, w + e, X) - evaluate(net, f, w - e, X)) / 2e-6).reshape(-1)
        assert np.abs(J - numeric).max() < 1e-6 * max(1.0, np.abs(J).max())


@pytest.mark.parametrize("name, expected", [("gain", 12), ("plain", 35)])
def test_the_certified_rank_at_random_weights_is_the_float64_rank(tmp_path, name, expected):
    """Linear(4) -> RMSNorm -> Linear(2) on 3 features: 24 weights, 12 seen (rotations 6, gain junction 4, the
    span the linear writes 2); the command line's certificate closes where float64's SVD has a clear gap."""
    net = NETS[name]
    rng = np.random.default_rng(0)
    w = rng.standard_normal(net.parameters)
    (tmp_path / "net.toml").write_text(net.to_toml())
    save_weights(as_point(net, list(w)), tmp_path / "w.json")
    run = CliRunner().invoke(
        main, ["dim", "--arch", str(tmp_path / "net.toml"), "--at", str(tmp_path / "w.json"), "--json", "--quiet"]
    )
    assert run.exit_code == 0, run.output
    row = json.loads(run.stdout)
    f = Float64()
    s = np.linalg.svd(jacobian(net, f, w, rng.standard_normal((400, net.input, net.tokens))), compute_uv=False)
    truth = int((s > 1e-9 * s[0]).sum())
    assert s[truth - 1] > 1e-5 * s[0] and (truth == len(s) or s[truth] < 1e-13 * s[0])  # the gap
    assert row["certificate"]["lower"] == row["certificate"]["upper"] == row["dimension"] == truth == expected


def test_the_dimension_without_weights_is_the_generic_rank_of_the_analytic_map(tmp_path):
    """RMSNorm and LayerNorm (eps > 0) are analytic, so the network has a generic rank: the one the certified rank
    at random weights found above (12), said to be that; a relu network has none and is refused in one line."""
    res = api.dimension(NETS["gain"])
    assert (res.dimension, res.method) == (12, "numeric")
    assert any("generic rank of an analytic map (rmsnorm)" in n for n in res.notes)
    ln = Network(3, 2, (Linear(4), LayerNorm(), Linear(2)))
    (tmp_path / "ln.toml").write_text(ln.to_toml())
    save_weights(as_point(ln, list(np.random.default_rng(1).standard_normal(ln.parameters))), tmp_path / "w.json")
    rows = []
    for extra in ([], ["--at", str(tmp_path / "w.json")]):  # generic, then certified at one random point
        run = CliRunner().invoke(main, ["dim", "--arch", str(tmp_path / "ln.toml"), "--json", "--quiet", *extra])
        assert run.exit_code == 0, run.output
        rows.append(json.loads(run.stdout))
    # a certified rank at a point bounds the generic rank (the maximum) from below; the upper end is the point's
    cert = rows[1]["certificate"]
    assert cert["lower"] <= rows[0]["dimension"] <= cert["upper"] and rows[0]["dimension"] == rows[1]["dimension"]
    assert any("analytic map (layernorm)" in n for n in rows[0]["notes"])
    relu = Network(3, 2, (Linear(4), RMSNorm(), MLP(3, activation="relu", out=2)))
    with pytest.raises(UnsupportedError, match="--at FILE") as info:
        api.dimension(relu)
    assert "\n" not in str(info.value) and "relu" in str(info.value)


@pytest.mark.parametrize(
    "blocks, match",
    [
        ([{"kind": "rmsnorm", "eps": -1.0}], "eps must be a positive finite number"),
        ([{"kind": "rmsnorm", "eps": float("nan")}], "eps must be a positive finite number"),
        ([{"kind": "rmsnorm", "affine": 1}], "affine must be true or false"),
        ([{"kind": "rmsnorm", "bias": True}], "unknown key 'bias' \\(a rmsnorm block takes affine, eps, residual\\)"),
        ([{"kind": "rmsnorm", "gain": True}], "unknown key 'gain'"),
    ],
)
def test_bad_keys_are_refused_in_one_line(blocks, match):
    with pytest.raises(InputError, match=match) as info:
        Network.from_dict({"input": 3, "tokens": 2, "blocks": blocks})
    assert "\n" not in str(info.value)
