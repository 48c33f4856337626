"""Certified critical points of power-sum decision boundaries (Macaulay2's MonodromySolver, Krawczyk in arb):
the count against msolve's exact count, the real points and the radius against msolve's isolation over QQ,
the radius against an independent local search, and the certificates refusing what they must refuse."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from lightning_cas.core.network import Linear, Network, Power
from lightning_cas.errors import InputError
from lightning_cas.geometry.decision.m2 import boundary_ed
from lightning_cas.geometry.decision.radius_certified import PowerSum, _System, certify, distinct, power_sum
from lightning_cas.geometry.decision.system import boundary_system
from tests.geometry.test_boundary_msolve import _local_search


def _net(n: int, k: int, d: int) -> Network:
    return Network(n, 1, (Linear(k, bias=True), Power(d), Linear(2, bias=True)))


def _weights(net, seed: int) -> list[Fraction]:
    values = np.random.default_rng(seed).integers(-9, 10, net.parameters)
    return [Fraction(int(v) or 1) for v in values]


READOUT = [[1], [-1]]


def test_a_translated_power_sum_is_read_exactly_and_anything_else_refused():
    import flint

    ctx = flint.fmpz_mpoly_ctx.get(("z1", "z2"), "degrevlex")
    z1, z2 = ctx.gens()
    h = 2 * (z1 + 3) ** 3 - 5 * (z2 - 1) ** 3 + 7
    ps = power_sum(h, 2)
    assert ps == PowerSum(3, (Fraction(2), Fraction(-5)), (Fraction(3), Fraction(-1)), Fraction(7))
    assert ps.bound() == 9  # 3 (1 + 2)
    assert power_sum(h + z1 * z2, 2) is None  # a mixed monomial
    assert power_sum(h + z1, 2) is None  # the linear coefficient no longer that of 2 (z1 + 3)^3
    assert power_sum(2 * (z1 + 3) ** 3 + z2**2, 2) is None  # two degrees


def test_the_krawczyk_test_refuses_a_point_that_is_not_a_solution_and_overlapping_boxes_are_seen():
    import flint

    ps = PowerSum(3, (Fraction(1), Fraction(-2)), (Fraction(0), Fraction(0)), Fraction(5))
    S = [[2, 1], [1, 3]]
    system = _System(ps, S, [Fraction(1), Fraction(2)])
    assert certify(system, [flint.acb(0.3, 0.1), flint.acb(-0.2), flint.acb(0.01)]) is None  # Newton diverges
    # the two solutions of v = S D v^2 on the axis-free system v - S D v^2 at v = 0: certified, real
    zero = certify(_System(ps, S), [flint.acb(1e-3), flint.acb(-1e-3)])
    assert zero is not None and zero.real is True
    assert all(v.real.contains(0) for v in zero.box)
    assert len(distinct([zero, zero])) == 1


@pytest.mark.parametrize("n, k, d, seed", [(5, 3, 3, 0), (6, 4, 2, 1)])
def test_every_critical_point_is_certified_and_the_radius_is_msolves(m2, msolve_binary, n, k, d, seed):
    net = _net(n, k, d)
    at = _weights(net, seed)
    x0 = [[Fraction(int(v))] for v in np.random.default_rng(seed + 7).integers(-3, 4, n)]
    ours = boundary_ed(net, at=at, readout=READOUT, point=x0, method="monodromy")
    exact = boundary_ed(net, at=at, readout=READOUT, point=x0, method="msolve")
    bs = boundary_system(net, at, READOUT)
    assert power_sum(bs.h, bs.r).bound() == exact.ed_degree == ours.ed_degree  # the bound is attained here
    assert ours.certainty == "exact" and ours.radius.method == "krawczyk" and ours.radius.certified
    assert ours.real_critical_points == exact.real_critical_points
    assert ours.radius.upper - ours.radius.lower <= 1e-10 * ours.radius.upper
    # both are proofs: the intervals must meet
    assert ours.radius.lower <= exact.radius.upper and exact.radius.lower <= ours.radius.upper
    assert "every critical point certified" in ours.text()


def test_no_local_search_beats_the_certified_radius(m2):
    import sympy

    from lightning_cas.core.model import token_symbols
    from lightning_cas.geometry.decision.system import boundary_polynomial

    net = _net(4, 3, 3)
    at = _weights(net, 3)
    x0 = [[Fraction(1)], [Fraction(-2)], [Fraction(0)], [Fraction(1)]]
    r = boundary_ed(net, at=at, readout=READOUT, point=x0, method="monodromy")
    _, expr = boundary_polynomial(net, at, READOUT)
    xs = list(token_symbols(net))
    g = sympy.lambdify([xs], expr, "numpy")
    grad = sympy.lambdify([xs], [sympy.diff(expr, x) for x in xs], "numpy")
    hess = sympy.lambdify([xs], sympy.hessian(expr, xs).tolist(), "numpy")
    found = _local_search(
        lambda x: float(g(x)),
        lambda x: np.array(grad(x), dtype=float),
        lambda x: np.array(hess(x), dtype=float),
        np.array([1.0, -2.0, 0.0, 1.0]),
        100,
        np.random.default_rng(0),
    )
    assert found and r.radius.method == "krawczyk"
    assert min(found) >= r.radius.lower * (1 - 1e-9)
    assert min(found) <= r.radius.upper * (1 + 1e-6)


def test_a_boundary_that_is_not_a_power_sum_is_refused_in_one_line():
    net = Network(3, 1, (Linear(3), Power(2), Linear(3), Power(2), Linear(2, bias=True)))
    with pytest.raises(InputError, match="translated power sum"):
        boundary_ed(net, at=_weights(net, 0), readout=READOUT, method="monodromy")


def test_the_command_line_prints_the_certified_radius(m2, tmp_path):
    import json

    from click.testing import CliRunner

    from lightning_cas.cli import main

    net = _net(4, 3, 3)
    (tmp_path / "net.toml").write_text(
        'input = 4\ntokens = 1\n\n[[block]]\nkind = "linear"\nout = 3\nbias = true\n\n[[block]]\nkind = "power"\n'
        'degree = 3\n\n[[block]]\nkind = "linear"\nout = 2\nbias = true\n'
    )
    (tmp_path / "w.json").write_text(json.dumps({"weights": [str(v) for v in _weights(net, 3)]}))
    (tmp_path / "x0.json").write_text("[[1], [-2], [0], [1]]")
    (tmp_path / "r.json").write_text("[[1], [-1]]")
    args = ["ed", "--arch", str(tmp_path / "net.toml"), "--boundary", "--method", "monodromy"]
    args += [
        "--at",
        str(tmp_path / "w.json"),
        "--point",
        str(tmp_path / "x0.json"),
        "--readout",
        str(tmp_path / "r.json"),
    ]
    out = CliRunner().invoke(main, [*args, "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["method"] == "monodromy" and data["ed_degree"] == 21 and data["radius"]["method"] == "krawczyk"
    text = CliRunner().invoke(main, args)
    assert "every critical point certified" in text.output and "robustness radius in [" in text.output
