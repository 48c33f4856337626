"""The ED degree by msolve: the same counts as the Macaulay2 Lagrange ideal where both run, two primes that
agree, the result saying so; refusals before any work."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from lightning_cas import Architecture, ed_degree
from lightning_cas.cli import main
from lightning_cas.errors import InputError, MsolveNotFoundError, TooLargeError, UnsupportedError
from lightning_cas.geometry.degree.m2 import plan_ed
from lightning_cas.geometry.degree.msolve import MSOLVE_PRIMES, critical_systems, msolve_ed
from lightning_cas.msolve.runner import work_dir
from lightning_cas.results.degrees import EDDegreeResult

SEGRE = Architecture((2, 1), (1,), tokens=2)  # the cone over P^1 x P^2: generic ED degree 10
FULL_A = Architecture((2, 1), (2,), tokens=2)  # a quartic hypersurface in 6 coordinates: 14


@pytest.mark.parametrize(
    "arch, expected",
    [(SEGRE, 10), (FULL_A, 14), (Architecture((2, 1), (1,), tokens=3), 10), (Architecture((2, 1), (1,), tokens=1), 1)],
)
def test_msolve_agrees_with_the_lagrange_ideal_of_macaulay2(msolve_binary, m2, arch, expected):
    mine = ed_degree(arch, method="msolve")
    theirs = ed_degree(arch, method="lagrange")
    assert mine.ed_degree == theirs.ed_degree == expected
    assert (mine.dimension, mine.coordinates) == (theirs.dimension, theirs.coordinates)
    assert mine.method == "msolve" and mine.primes == MSOLVE_PRIMES and mine.prime == MSOLVE_PRIMES[0]
    assert mine.certainty == "probabilistic" and not mine.lower_bound
    assert mine.solutions % mine.ed_degree == 0  # f points of the slice over each critical point
    assert (mine.solutions == 1) == (mine.dimension == mine.coordinates)  # a variety that fills its space


def test_another_seed_another_slice_the_same_count(msolve_binary):
    runs = [msolve_ed(SEGRE, seed=seed) for seed in (1, 2)]
    assert [r.ed_degree for r in runs] == [10, 10]


def test_the_result_says_msolve_and_both_primes_and_round_trips(msolve_binary):
    res = msolve_ed(FULL_A)
    assert f"mod {MSOLVE_PRIMES[0]} and {MSOLVE_PRIMES[1]}" in res.text()
    assert "msolve" in res.method_detail and any("critical points on the gauge slice" in n for n in res.notes)
    back = EDDegreeResult.from_json(res.to_json())
    assert back.primes == res.primes and back.ed_degree == 14
    assert open(res.script).read().splitlines()[1] == str(MSOLVE_PRIMES[0])  # the input is kept to rerun


def test_the_critical_system_is_integer_data_with_the_determinant_last():
    names, system, fiber, (n, m) = critical_systems(SEGRE, 0, MSOLVE_PRIMES[0])
    assert (n, m, len(names)) == (6, 4, 4)
    assert len(system) == m + 1 and len(fiber) >= m + 1 and system[-1] == fiber[-1]
    assert all(isinstance(int(c), int) for poly in system for c in poly.values())


def test_the_command_line_runs_msolve_and_prints_json(msolve_binary):
    out = CliRunner().invoke(
        main, ["ed", "--widths", "2,1", "--attention", "1", "--method", "msolve", "--json", "--msolve", msolve_binary]
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert (data["ed_degree"], data["method"], data["primes"]) == (10, "msolve", list(MSOLVE_PRIMES))


@pytest.mark.parametrize(
    "args, message",
    [
        (["--method", "msolve", "--metric", "data"], "needs --inputs"),
        (["--method", "msolve", "--format", "m2"], "not a Macaulay2 computation"),
        (["--method", "lagrange", "--msolve", "msolve"], "--method lagrange does not run it"),
        (["--method", "msolve", "--msolve", "/nonexistent/msolve"], "not found"),
    ],
)
def test_the_command_line_refuses_in_one_line(args, message):
    out = CliRunner().invoke(main, ["ed", "--widths", "2,1", "--attention", "1", *args])
    assert out.exit_code != 0 and message in out.output and out.output.count("\n") == 1


def test_refusals_before_any_work(tmp_path):
    assert (
        plan_ed(SEGRE, "msolve", "data").first.method == plan_ed(SEGRE, "msolve", "standard").first.method == "msolve"
    )
    with pytest.raises(MsolveNotFoundError):
        plan_ed(SEGRE, "msolve", "generic", str(tmp_path / "none"))
    with pytest.raises(UnsupportedError, match="not 'euclid'"):
        msolve_ed(SEGRE, metric="euclid")
    with pytest.raises(InputError, match="method must be one of"):
        plan_ed(SEGRE, "gröbner")
    assert [r.method for r in plan_ed(SEGRE, "auto").routes] == ["msolve", "lagrange", "monodromy"]  # surest, quickest


def test_the_commands_timeout_stops_msolve_in_one_line(msolve_binary):
    """(3,1) a=1 takes minutes in msolve: --timeout 5 ends it (in Python or in msolve) with one error line."""
    out = CliRunner().invoke(
        main, ["ed", "--widths", "3,1", "--attention", "1", "--method", "msolve", "--timeout", "5"]
    )
    errors = [line for line in out.output.splitlines() if "error" in line]
    assert out.exit_code != 0 and len(errors) == 1 and "5 s time limit" in errors[0], out.output
    assert not list(work_dir().glob("out-*"))  # msolve's output file went with it


def _symmetric(k: int, r: int):
    """Symmetric k x k matrices of rank <= r as sum_j a_j a_j^T: the upper triangle in the entries of the a_j."""
    import flint

    ctx = flint.fmpz_mpoly_ctx.get(tuple(f"a{j}_{i}" for j in range(r) for i in range(k)), "degrevlex")
    a = ctx.gens()
    return ctx, [
        sum((a[j * k + i1] * a[j * k + i2] for j in range(r)), ctx.from_dict({}))
        for i1 in range(k)
        for i2 in range(i1, k)
    ]


def _generic_ed(ctx, coords, seed=0):
    from lightning_cas.geometry.degree.msolve import saturated_degree, slice_systems

    names, crit, fiber, _ = slice_systems(ctx, coords, seed, MSOLVE_PRIMES[0])
    counts = [
        (saturated_degree(names, crit, p, None, 1, "test")[0], saturated_degree(names, fiber, p, None, 1, "test")[0])
        for p in MSOLVE_PRIMES
    ]
    assert counts[0] == counts[1] and counts[0][0] % counts[0][1] == 0
    return counts[0][0] // counts[0][1]


def test_duality_the_veronese_surface_and_the_cubic_symmetroid_have_the_same_ed_degree(msolve_binary):
    """The generic ED degree is that of the dual variety: rank <= 1 and rank <= 2 symmetric 3 x 3 matrices are
    dual; the Veronese variety of P^(k-1) (k x k, rank 1) has (3^k - 1) / 2, a smooth conic 4."""
    assert _generic_ed(*_symmetric(3, 1)) == _generic_ed(*_symmetric(3, 2)) == 13
    assert [_generic_ed(*_symmetric(k, 1)) for k in (2, 4)] == [(3**k - 1) // 2 for k in (2, 4)] == [4, 40]


def test_beyond_the_lagrange_guard_two_seeds_count_the_same(msolve_binary):
    """d = 2, d' = 2, a = 1: 12 coordinates, which the lagrange method refuses; other slices, forms and data
    points give the same 196."""
    arch = Architecture((2, 2), (1,), tokens=2)
    with pytest.raises(TooLargeError, match="limit 10"):
        plan_ed(arch, "lagrange")
    assert [msolve_ed(arch, seed=seed).ed_degree for seed in (0, 1)] == [196, 196]


@pytest.mark.slow
def test_symmetric_four_by_four_matrices_of_rank_two_have_122(msolve_binary):
    """Beyond the Veronese: rank <= 2 symmetric 4 x 4 matrices, 122 in the table of generic ED degrees of
    symmetric matrices (Draisma, Horobet, Ottaviani, Sturmfels, Thomas); 7 free variables, seconds."""
    assert _generic_ed(*_symmetric(4, 2)) == 122
