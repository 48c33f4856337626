"""One rule for a given prime, in every command that takes one: the failure bound it carries is below
10^-3, or it is refused with the prime from which on it would pass, and the advice is right.

Each case once went wrong: "use a prime above 100000", then 100019 refused by the bound the run
stated; "the failure bound ... 0.001 is not below 0.001"; `fiber --prime 3` accepted.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from lightning_cas import Architecture, dimension, verify
from lightning_cas.backends import modp
from lightning_cas.cli import main
from lightning_cas.core.primes import is_prime, previous_prime
from lightning_cas.errors import InputError
from lightning_cas.options import MAX_FAILURE_BOUND, check_failure_bound, smallest_prime_above

# the plain case, multi-head, one token, token collapse (a_1 = 1), a bottleneck, depth three: the
# last three drew more samples than a first draw and one block, where the old up-front check and
# the old stated bound disagreed
ARCHS = [
    Architecture((2, 2), (1,), 2),
    Architecture((3, 3), (3,), 2, heads=(2,)),
    Architecture((2, 2), (2,), 1),
    Architecture((4, 4, 4), (1, 1), 3),
    Architecture((5, 1, 5), (1, 1), 2),
    Architecture((2, 3, 4), (1, 2), 5),
    Architecture((2, 2, 2, 2), (2, 2, 2), 2),
]


def advice(message: str) -> int:
    found = re.search(r"use a prime above (\d+)\.$", message)
    assert found, message
    return int(found.group(1))


@pytest.mark.parametrize("arch", ARCHS, ids=lambda a: a.label())
def test_the_advised_prime_passes_and_the_one_below_it_does_not(arch):
    with pytest.raises(InputError) as refused:
        dimension(arch, prime=101)
    need = advice(str(refused.value))
    first = smallest_prime_above(need)
    result = dimension(arch, prime=first)  # never refused afterwards by the bound the run states
    assert result.failure_bound < MAX_FAILURE_BOUND and result.primes[0] == first
    assert result.dimension == dimension(arch).dimension
    below = need if is_prime(need) else previous_prime(need)
    with pytest.raises(InputError, match="too small"):
        dimension(arch, prime=below)


@pytest.mark.parametrize("arch", ARCHS, ids=lambda a: a.label())
def test_no_run_states_more_than_was_checked_up_front(arch):
    for seed in range(3):
        result = modp.dimension_modp(arch, seed=seed)
        stated = result.failure_bound * min(result.primes)
        assert stated <= modp.failure_numerator(arch) + 1e-6


def test_the_bound_is_printed_with_the_digits_that_tell_it_from_the_limit():
    # 12/11987 = 0.0010011 rounds to 0.001 at three digits
    with pytest.raises(InputError) as refused:
        check_failure_bound(11987, 12, "fiber")
    shown = re.search(r"= ([0-9.e-]+) is not below", str(refused.value)).group(1)
    assert float(shown) != MAX_FAILURE_BOUND and float(shown) > MAX_FAILURE_BOUND
    assert check_failure_bound(12007, 12, "fiber") < MAX_FAILURE_BOUND  # 12007 > 12000: passes


def test_every_command_with_a_prime_uses_the_same_rule():
    runner = CliRunner()
    base = ["--widths", "2,1", "--attention", "1"]
    messages = {}
    for command in ("dim", "verify"):
        res = runner.invoke(main, [command, *base, "--prime", "3"])
        assert res.exit_code == 2 and res.stdout == "", res.stderr
        messages[command] = res.stderr.strip()
    assert messages["dim"] == messages["verify"] and "use a prime above" in messages["dim"]
    fib = runner.invoke(main, ["fiber", *base, "--prime", "3"])
    assert fib.exit_code == 2 and fib.stdout == "" and "too small for the fiber method" in fib.stderr
    need = advice(fib.stderr.strip())
    assert need == 12000  # min(parameters 6, ambient 40) * (D_w - 1 = 2) = 12, and 12 / p < 10^-3
    too_small = runner.invoke(main, ["fiber", *base, "--prime", str(previous_prime(need))])
    assert too_small.exit_code == 2


def test_a_fiber_prime_that_passes_runs(m2):
    res = CliRunner().invoke(
        main, ["fiber", "--widths", "2,1", "--attention", "1", "--prime", "12007", "--json", "--m2", m2]
    )
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["field"] == "ZZ/12007"


def test_the_verbs_and_the_command_line_agree_on_verify():
    arch = Architecture((2, 1), (1,), 2)
    with pytest.raises(InputError) as from_python:
        verify(arch, prime=3)
    res = CliRunner().invoke(main, ["verify", "--widths", "2,1", "--attention", "1", "--prime", "3"])
    assert res.stderr.strip() == f"lightning-cas: error: {from_python.value}"


def test_the_rank_at_given_weights_follows_the_same_rule(tmp_path):
    """Only the token matrices are random there, so its bound is the token part: (r + 1)(d + 1) / p."""
    point = tmp_path / "w.json"
    point.write_text(json.dumps({"layers": [{"Q": [[1, 2]], "K": [[3, 4]], "V": [[1, -1], [2, 7]]}]}))
    runner = CliRunner()
    base = ["dim", "--widths", "2,2", "--attention", "1", "--at", str(point)]
    refused = runner.invoke(main, [*base, "--prime", "3"])
    assert refused.exit_code == 2 and refused.stdout == ""
    need = advice(refused.stderr.strip())
    assert need == smallest_prime_above((8 + 1) * (3 + 1) * 1000)  # rank <= 8, token degree 3
    ok = runner.invoke(main, [*base, "--prime", str(smallest_prime_above(need)), "--json"])
    assert ok.exit_code == 0, ok.stderr
    assert json.loads(ok.stdout)["failure_bound"] < MAX_FAILURE_BOUND
    given = tmp_path / "x.json"  # on given inputs nothing is random: any prime gives a certified lower bound
    given.write_text(json.dumps([[[1, 2], [3, 4]], [[5, 6], [7, 8]], [[1, -1], [2, 5]], [[3, 1], [4, 1]]]))
    res = runner.invoke(main, [*base, "--inputs", str(given), "--prime", "65521", "--json"])
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["failure_bound"] is None
