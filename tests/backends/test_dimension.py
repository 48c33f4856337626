"""Dimension end to end: docs/mathematics.md §4 worked examples through every method, agreement of the
methods, the CLI's JSON contract, determinism and refusals."""

import json
import math
import subprocess
import sys

import pytest
from click.testing import CliRunner

from lightning_cas import Architecture, DimensionResult, dimension, verify
from lightning_cas.backends.m2 import jacobian_size
from lightning_cas.cli import main
from lightning_cas.errors import InputError, TooLargeError, UnsupportedError

# docs/mathematics.md §4, all t >= 2 rows: (widths, attention, dimension, parameters)
WORKED = [
    ((2, 2), (1,), 6, 8),
    ((2, 2), (2,), 7, 12),
    ((3, 3), (2,), 16, 21),
    ((2, 2, 2), (1, 1), 8, 16),
    ((3, 3, 3), (2, 2), 23, 42),
    ((2, 2, 2, 2), (2, 2, 2), 13, 36),
]
IDS = [f"{w}-{a}" for w, a, _, _ in WORKED]


@pytest.mark.parametrize("widths, attention, dim, params", WORKED, ids=IDS)
def test_worked_examples_modp(widths, attention, dim, params):
    result = dimension(Architecture(widths, attention, 2), method="modp", seed=1)
    assert result.parameters == params
    assert result.dimension == dim
    assert result.consistent and len(result.runs) == 2
    assert len(set(result.primes)) == 2 and all(r["rank"] == dim for r in result.runs)


@pytest.mark.parametrize(
    "widths, attention, dim, params",
    [w for w in WORKED if w[0] != (2, 2, 2, 2)],
    ids=[i for i, w in zip(IDS, WORKED) if w[0] != (2, 2, 2, 2)],
)
def test_worked_examples_macaulay2_jacobian(m2, widths, attention, dim, params):
    result = dimension(Architecture(widths, attention, 2), method="jacobian", seed=2, m2=m2)
    assert result.dimension == dim
    assert result.method == "jacobian" and result.certainty == "probabilistic"
    assert result.m2_version and result.m2_version.startswith("1.")
    assert result.script and result.script.endswith(".m2")


def test_depth_three_worked_example_macaulay2(m2):
    """(2,2,2,2): degree 27 in the tokens; the coefficient Jacobian is still small enough for M2."""
    arch = Architecture((2, 2, 2, 2), (2, 2, 2), 2)
    assert jacobian_size(arch) < 10_000_000
    assert dimension(arch, method="jacobian", m2=m2).dimension == 13


@pytest.mark.parametrize(
    "widths, attention", [((2, 2), (1,)), ((2, 2), (2,)), ((2, 1), (1,)), ((2, 1), (2,)), ((3, 1), (1,))]
)
def test_implicit_exact_agrees_with_jacobian_and_modp(m2, widths, attention):
    arch = Architecture(widths, attention, 2)
    exact = dimension(arch, method="implicit", m2=m2)
    assert exact.certainty == "exact"
    assert exact.dimension == dimension(arch, method="jacobian", m2=m2).dimension
    assert exact.dimension == dimension(arch, method="modp").dimension


# Shrinking, growing, bottleneck, token collapse, one token: modp against M2 where the theory is silent.
SMALL = [
    ((2, 3, 2), (2, 1), 2),
    ((3, 2, 3), (2, 2), 2),
    ((2, 1, 2), (1, 1), 2),
    ((2, 2, 2), (1, 2), 2),
    ((3, 3), (2,), 1),
    ((2, 2), (2,), 3),
    ((1, 2, 1), (1, 1), 2),
    ((3, 2), (1,), 2),
]


@pytest.mark.parametrize("widths, attention, tokens", SMALL, ids=[str(s) for s in SMALL])
def test_modp_agrees_with_macaulay2(m2, widths, attention, tokens):
    arch = Architecture(widths, attention, tokens)
    assert (
        dimension(arch, method="modp", seed=3).dimension == dimension(arch, method="jacobian", seed=4, m2=m2).dimension
    )


def test_modp_is_deterministic_for_a_seed_and_reports_it():
    arch = Architecture((4, 4, 4), (2, 3), 3)
    a, b = dimension(arch, seed=11), dimension(arch, seed=11)
    assert a.runs == b.runs and a.seed == 11 and a.method == "modp"
    assert [r["seed"] for r in a.runs] == [11, 12]
    assert 0 < a.failure_bound < 1e-3
    assert a.samples * arch.widths[-1] * arch.tokens >= 2 * arch.parameters


def test_auto_is_modp_for_lightning():
    assert dimension(Architecture((2, 2), (1,), 2), method="auto").method == "modp"


def test_large_architecture_fast_and_on_theory():
    """The paper's largest delta: 280 parameters."""
    result = dimension(Architecture((10, 10, 10), (2, 2), 3))
    assert result.dimension == 100 + 2 * 2 * (20 - 2) - 2 == 170


@pytest.mark.parametrize("prime", [91, 2**31 + 11, 1, 4, 2**40])
def test_non_prime_or_out_of_range_modulus_refused(prime):
    with pytest.raises(InputError):
        dimension(Architecture((2, 2), (1,), 2), prime=prime)


def test_a_chosen_prime_is_used_and_reported():
    result = dimension(Architecture((2, 2), (2,), 2), prime=1000003)  # 32003 is refused: its bound is above 1e-3
    assert result.primes[0] == 1000003 and result.primes[1] < 1000003 and result.dimension == 7


def test_symbolic_methods_refuse_large_networks_up_front():
    arch = Architecture((6, 6, 6, 6), (2, 2, 2), 3)
    with pytest.raises(TooLargeError, match="modp"):
        dimension(arch, method="jacobian")
    with pytest.raises(TooLargeError, match="modp|jacobian"):
        dimension(Architecture((3, 3), (2,), 2), method="implicit")


def test_softmax_refused_by_polynomial_methods():
    arch = Architecture((2, 2), (1,), 2, "softmax")
    for method in ("modp", "jacobian", "implicit"):
        with pytest.raises(UnsupportedError):
            dimension(arch, method=method)


def test_result_json_round_trip():
    result = dimension(Architecture((3, 3, 3), (2, 2), 2), seed=5)
    again = DimensionResult.from_json(result.to_json())
    assert again == result


REQUIRED = {"architecture", "dimension", "parameters", "ambient_dimension", "method", "certainty", "seed", "elapsed_s"}


def test_cli_json_contract(m2):
    run = CliRunner().invoke(
        main,
        [
            "dim",
            "--widths",
            "2,2",
            "--attention",
            "2",
            "--tokens",
            "2",
            "--method",
            "jacobian",
            "--seed",
            "9",
            "--json",
            "--m2",
            m2,
        ],
    )
    assert run.exit_code == 0, run.output
    data = json.loads(run.output)
    assert REQUIRED <= set(data)
    assert data["architecture"] == {
        "widths": [2, 2],
        "attention": [2],
        "tokens": 2,
        "normalization": "none",
        "heads": [1],
    }
    assert data["dimension"] == 7 and data["parameters"] == 12 and data["seed"] == 9
    assert data["certainty"] == "probabilistic" and data["m2_version"].startswith("1.")


def test_m2_binary_from_environment(m2, monkeypatch, tmp_path):
    monkeypatch.setenv("LIGHTNING_CAS_M2", str(tmp_path / "no-such-M2"))
    run = CliRunner().invoke(main, ["dim", "--widths", "2,2", "--attention", "1", "--method", "jacobian"])
    assert run.exit_code != 0 and "not found" in run.output and "apt-get install" in run.output
    monkeypatch.setenv("LIGHTNING_CAS_M2", m2)
    run = CliRunner().invoke(main, ["dim", "--widths", "2,2", "--attention", "1", "--method", "jacobian"])
    assert run.exit_code == 0 and "dimension 6" in run.output


def test_python_dash_m_is_the_cli():
    out = subprocess.run(
        [sys.executable, "-m", "lightning_cas", "dim", "--widths", "2,2", "--attention", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["dimension"] == 6
    bad = subprocess.run(
        [sys.executable, "-m", "lightning_cas", "dim", "--widths", "2,0", "--attention", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().count("\n") == 0


def test_verify_agrees_and_reports_discrepancy_exit_code(monkeypatch):
    run = CliRunner().invoke(main, ["verify", "--widths", "3,3,3", "--attention", "2,2", "--json"])
    assert run.exit_code == 0
    data = json.loads(run.output)
    assert data["verdict"] == "agree" and data["predicted"] == data["computed"]["dimension"] == 23
    # A wrong theory must surface as exit status 3: make the prediction off by one.
    from lightning_cas.results import theory

    real = theory.theory_report

    def off_by_one(arch):
        rep = real(arch)
        return theory.TheoryReport(
            rep.architecture,
            theory.Prediction("dimension", rep.dimension.value + 1, "test", "test", "claim"),
            rep.parameters,
            rep.symmetry_group_dimension,
            rep.fiber_dimension,
            rep.ambient_dimension,
        )

    monkeypatch.setattr(theory, "theory_report", off_by_one)  # api.verify loads the theory when it runs
    run = CliRunner().invoke(main, ["verify", "--widths", "3,3,3", "--attention", "2,2"])
    assert run.exit_code == 3 and "DISCREPANCY" in run.output


def test_verify_outside_regime_says_no_prediction():
    result = verify(Architecture((3, 2, 3), (2, 2), 2))
    assert result.verdict == "no prediction" and "bottleneck" in result.message
    assert result.computed.dimension == 18


def test_verify_compare_explains_token_collapse():
    """Token collapse (a_1 = 1) costs lightning dimensions beyond the scaling terms; softmax keeps them."""
    run = CliRunner().invoke(main, ["verify", "--widths", "3,3,3", "--attention", "1,2", "--compare", "--json"])
    assert run.exit_code == 0, run.output
    cmp = json.loads(run.output)["details"]["normalizations"]
    assert cmp["lightning"]["dimension"] == 18 and cmp["softmax"]["dimension"] == 22
    assert cmp["difference"] == 4 > cmp["depth"]
    assert "beyond the scaling" in cmp["explanation"]


# ---- the failure bound a run states keeps the promise a given prime is held to (options.MAX_FAILURE_BOUND)


def _transformer():
    from lightning_cas.system.networks import load_network

    return load_network("examples/transformer.toml")


BOUND_SHAPES = {  # from the default primes' range to larger primes below 2^26 (bound at the largest rank)
    "(2, 2)": lambda: Architecture((2, 2), (1,), 2),
    "(3, 3, 3)": lambda: Architecture((3, 3, 3), (2, 2), 2),
    "(3, 3, 3, 3, 3)": lambda: Architecture((3, 3, 3, 3, 3), (3, 3, 3, 3), 2),
    "(8, 8, 8, 8, 8)": lambda: Architecture((8, 8, 8, 8, 8), (4, 4, 4, 4), 2),
    "transformer.toml": _transformer,
}


@pytest.mark.parametrize("shape", sorted(BOUND_SHAPES))
@pytest.mark.parametrize("seed", [0, 7])
def test_the_failure_bound_a_result_reports_keeps_the_promise(shape, seed):
    from lightning_cas.backends.modp import MODULUS_LIMIT, failure_bound, failure_numerator
    from lightning_cas.core.primes import DEFAULT_PRIME, second_primes
    from lightning_cas.options import MAX_FAILURE_BOUND, check_failure_bound

    arch = BOUND_SHAPES[shape]()
    numerator = failure_numerator(arch)  # at the largest rank: the most a run could state
    in_range = numerator / MODULUS_LIMIT < MAX_FAILURE_BOUND  # some prime the engine takes can pass
    for result in (dimension(arch, seed=seed), verify(arch, seed=seed).computed):
        assert result.failure_bound is not None, result.primes
        assert result.failure_bound == failure_bound(arch, result.dimension, min(result.primes))  # the stated rule
        joint = math.prod(failure_bound(arch, result.dimension, q) for q in result.primes)
        if in_range or result.failure_bound <= MAX_FAILURE_BOUND:
            assert result.failure_bound <= MAX_FAILURE_BOUND, result.primes
        else:  # no prime below 2^26 can: the runs together keep it, and a note says so
            assert joint <= MAX_FAILURE_BOUND and any(f"at most {joint:.2g}" in n for n in result.notes)
        # the fast default is kept where it passes the rule a given prime is held to, or where no prime in
        # range does; else larger primes
        passes = numerator / min(second_primes(DEFAULT_PRIME, 2)) < MAX_FAILURE_BOUND
        assert (result.primes[0] == DEFAULT_PRIME) == (passes or not in_range)
        if numerator / MODULUS_LIMIT < MAX_FAILURE_BOUND:  # a prime below 2^26 can pass: the chosen ones do
            check_failure_bound(result.primes[0], numerator, "modp", repetitions=2)


def test_beyond_every_modp_prime_the_runs_together_keep_the_promise_and_say_so():
    """Depth 6 (token degree 3^6): no prime below 2^26 keeps one run's bound below the promise at the largest
    rank; the fast default primes stay (a prime near 2^26 costs about three times as much and passes nothing
    either), runs are added until all of them under-counting together is below the promise, and the note
    states that bound."""
    from lightning_cas.backends.modp import MODULUS_LIMIT, default_primes, failure_bound, failure_numerator
    from lightning_cas.core.primes import DEFAULT_PRIME, second_primes
    from lightning_cas.options import MAX_FAILURE_BOUND

    arch = Architecture((4,) * 7, (2,) * 6, 2)
    assert failure_numerator(arch) / MODULUS_LIMIT > MAX_FAILURE_BOUND
    primes = default_primes(arch)
    assert primes == second_primes(DEFAULT_PRIME, len(primes)) and len(primes) >= 2
    product = 1.0
    for q in primes:
        product *= failure_numerator(arch) / q
    assert product <= MAX_FAILURE_BOUND
    result = dimension(arch)
    together = 1.0
    for q in result.primes:
        together *= failure_bound(arch, result.dimension, q)
    assert together <= MAX_FAILURE_BOUND
    if result.failure_bound > MAX_FAILURE_BOUND:
        assert any(f"at most {together:.2g}" in note for note in result.notes), result.notes


def test_verify_of_the_transformer_example_prints_a_bound_within_the_promise():
    import re

    from lightning_cas.options import MAX_FAILURE_BOUND

    res = CliRunner().invoke(main, ["verify", "--arch", "examples/transformer.toml", "--json"])
    assert res.exit_code in (0, 3), res.stderr
    assert json.loads(res.stdout)["computed"]["failure_bound"] <= MAX_FAILURE_BOUND
    res = CliRunner().invoke(main, ["dim", "--arch", "examples/transformer.toml"])
    assert res.exit_code == 0, res.stderr
    printed = [float(b) for b in re.findall(r"failure bound ([0-9.e+-]+) per run", res.stdout)]
    assert printed and all(b <= MAX_FAILURE_BOUND for b in printed), res.stdout


def test_the_memory_estimate_follows_the_rank_not_the_weights():
    from lightning_cas.backends.modp import working_bytes
    from lightning_cas.core.network import Network

    # 20,406 weights whose image has dimension at most 33: the echelon form holds at most 33 rows
    thin = Network.polynomial_network((2, 2, 100, 100, 100, 2, 1))
    assert working_bytes(thin) < 2**30
    # a full-rank network: on its way to rank P the echelon form passes r = P / 2, P^2 / 4 entries
    full = Architecture((256, 256), (256,), 2)
    P = full.parameters
    assert working_bytes(full) >= 8 * 3 * (P // 2) * (P - P // 2)
