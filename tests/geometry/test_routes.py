"""Conformance of the solver protocol: every route of a question (geometry.solvers) returns the same result type
and the same value on the same tiny network; ``auto`` is one of them, chosen by geometry.planner alone, and
its result says which answered and why. Refusals of a named route and of ``auto`` come before any work."""

from __future__ import annotations

from fractions import Fraction

import pytest

from lightning_cas import Architecture, degree, ed_degree
from lightning_cas.errors import InputError, MsolveNotFoundError, TooLargeError
from lightning_cas.geometry.decision.m2 import boundary_ed
from lightning_cas.geometry.planner import plan
from lightning_cas.geometry.solvers import CERTAINTIES, SOLVERS, solvers

SEGRE = Architecture((2, 1), (1,), tokens=2)  # degree 3, generic ED degree 10
VERBS = {
    "degree": (lambda m: degree(SEGRE, method=m, seed=3), "degree", 3),
    "ed": (lambda m: ed_degree(SEGRE, method=m, seed=3), "ed_degree", 10),
}


@pytest.mark.parametrize("question", sorted(VERBS))
def test_every_route_gives_the_same_type_and_value(m2, msolve_binary, question):
    run, field, expected = VERBS[question]
    results = {s.method: run(s.method) for s in SOLVERS[question]}
    assert {type(r) for r in results.values()} == {type(results[SOLVERS[question][0].method])}
    assert {m: getattr(r, field) for m, r in results.items()} == dict.fromkeys(results, expected)
    assert {m: r.method for m, r in results.items()} == {m: m for m in results}  # each says which route answered
    chosen = run("auto")
    assert type(chosen) is type(results[chosen.method]) and getattr(chosen, field) == expected
    assert chosen.method == plan(question, SEGRE).first.method
    assert sum(n.startswith(f"auto chose {chosen.method} (") for n in chosen.notes) == 1


@pytest.mark.slow  # Macaulay2's homotopy route takes ~15 s on the smallest boundary
def test_both_boundary_routes_count_the_same_and_auto_takes_msolve(m2, msolve_binary):
    weights = dict(readout=[[Fraction(1), Fraction(-2)]], seed=2)
    by = {s.method: boundary_ed(SEGRE, method=s.method, **weights) for s in SOLVERS["boundary"]}
    assert by["m2"].ed_degree == by["msolve"].ed_degree == 3
    assert by["m2"].reduced_degree == by["msolve"].reduced_degree and by["m2"].variables == by["msolve"].variables
    chosen = boundary_ed(SEGRE, **weights)
    assert (type(chosen), chosen.ed_degree) == (type(by["msolve"]), 3)
    assert any(n.startswith("auto chose msolve (msolve") for n in chosen.notes)


def test_auto_ranks_the_surest_first_then_the_cheapest():
    for question in SOLVERS:
        ranked = solvers(question)
        keys = [(CERTAINTIES.index(s.certainty), s.cost_s) for s in ranked]
        assert keys == sorted(keys) and {s.question for s in ranked} == {question}
    assert [s.method for s in solvers("degree")] == ["implicit", "msolve", "numerical"]
    assert [s.method for s in solvers("ed")][:2] == ["msolve", "lagrange"]


def test_without_msolve_auto_falls_back_and_says_why(m2, tmp_path, monkeypatch):
    """No msolve binary (provoked: the environment names one that does not exist): auto plans Macaulay2's route
    with the reason in the plan; naming msolve is the one-line refusal."""
    monkeypatch.setenv("LIGHTNING_CAS_MSOLVE", str(tmp_path / "no-msolve"))
    p = plan("ed", SEGRE)
    assert p.first.method == "lagrange" and p.passed and p.passed[0].startswith("msolve (msolve): ")
    res = ed_degree(SEGRE, seed=3)
    assert res.method == "lagrange" and res.ed_degree == 10
    assert any(n.startswith("auto chose lagrange") and "passed over: msolve" in n for n in res.notes)
    with pytest.raises(MsolveNotFoundError):
        plan("ed", SEGRE, "msolve")


def test_a_route_beyond_its_limits_is_passed_over_by_auto_and_refused_by_name():
    big = Architecture((5, 5), (2,), tokens=2)  # 45 weights: beyond every ED route
    with pytest.raises(TooLargeError):
        plan("ed", big, "lagrange")
    with pytest.raises(TooLargeError):
        plan("ed", big)  # no route within its limits: the last refusal, in one line
    with pytest.raises(InputError, match="method must be one of auto, msolve, lagrange, monodromy"):
        plan("ed", SEGRE, "groebner")


def test_the_commands_timeout_in_the_count_still_prints_the_enclosed_radius(msolve_binary, tmp_path, monkeypatch):
    """`ed --boundary --point X0 --timeout` by default: msolve's count runs past the command's own limit
    (provoked: it sleeps), and the radius enclosed before it is printed, certified, with exit 0."""
    import json
    import time

    from click.testing import CliRunner

    from lightning_cas.cli import main
    from lightning_cas.core.network import MLP, Network
    from lightning_cas.geometry.decision import msolve as decision_msolve

    monkeypatch.setattr(decision_msolve, "count_ed", lambda *_a, **_k: time.sleep(60))
    (tmp_path / "net.toml").write_text(Network(8, 1, (MLP(4, degree=3, out=2),)).to_toml())
    (tmp_path / "x0.json").write_text(json.dumps([[(5 * i) % 7 - 3] for i in range(8)]))
    (tmp_path / "w.json").write_text(json.dumps([[1], [-1]]))
    files = ["--arch", str(tmp_path / "net.toml"), "--point", str(tmp_path / "x0.json")]
    start = time.monotonic()
    out = CliRunner().invoke(
        main, ["ed", "--boundary", *files, "--readout", str(tmp_path / "w.json"), "--timeout", "10", "--json"]
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["ed_degree"] is None and data["radius"]["certified"] and data["radius"]["method"] == "bounds"
    assert 0 < data["radius"]["lower"] <= data["radius"]["upper"] and time.monotonic() - start < 12
    assert any(n.startswith("the ED degree was not counted within the time limit") for n in data["notes"])
