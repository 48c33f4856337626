"""Every certificate against the oracle: lower <= the oracle's rank <= upper, and a certified rank (the
bounds meet) is the oracle's rank. Drawn networks of every non-polynomial family, with biases, residual
and causal blocks, one or two heads, full and factored value maps, at dyadic points on small integer
inputs; a refusal (InputError: a ReLU input exactly on a kink) is not a failure, and neither is a draw
the oracle cannot decide (it still checks its proved lower bound against the certificate's upper)."""

from __future__ import annotations

import random
from fractions import Fraction as F

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from lightning_cas.core.network import Activation, Attention, Linear, Network
from tests.oracle.check import check
from tests.oracle.networks import FAMILIES, Case, draw_case
from tests.support import examples

FAILURES = ("wrong", "error")


def _checked(case: Case):
    outcome = check(case)
    assert outcome.kind not in FAILURES, outcome.report()
    return outcome


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
# no shrinking: the failure message already names the whole (small) case, and shrinking a wrong
# certificate re-runs the certifier hundreds of times
@settings(
    max_examples=examples(60),
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_no_certificate_contradicts_the_oracle(family, data):
    case = draw_case(lambda options: data.draw(st.sampled_from(options)), family)
    _checked(case)


# one quick draw per family (seeds whose draws the oracle decides), for the fast loop
QUICK = {
    "softmax": 5,
    "smooth": 5,
    "layernorm": 3,
    "relu": 8,
    "mixed": 1,
    "biased": 5,
    "post-LN": 6,
    "pre-LN": 0,
    "position": 0,
}


@pytest.mark.parametrize("family", FAMILIES)
def test_one_draw_per_family_agrees_with_the_oracle(family):
    case = draw_case(random.Random(QUICK[family]).choice, family)
    outcome = _checked(case)
    assert outcome.kind in ("certified", "open"), outcome.report()  # the seed is one the oracle decides


# ---------------------------------------------------------------- the red team's cases
# Certificates whose upper bound counted kernel vectors that were not in the kernel (networks with biases),
# before every vector was checked against the Jacobian (core.kernel_proof).


def _red_team_case(net, weights, inputs) -> Case:
    return Case("red team", net, tuple(F(w) for w in weights), inputs)


RED_TEAM = {
    # lightning attention with biases, a biased readout and tanh: certified 20, the rank is 21
    "attention-linear-tanh": _red_team_case(
        Network(3, 2, (Attention(1, bias=True), Linear(3, bias=True), Activation("tanh"))),
        [
            "-1/4",
            "-1/2",
            "1/4",
            "3/4",
            "-3/4",
            "-3/4",
            "1/2",
            "-3/4",
            "-1/4",
            "1/2",
            "-3/4",
            "1/2",
            "-1/2",
            "-3/4",
            "-3/4",
            "1/4",
            "1/4",
            "-3/4",
            "-1/2",
            "-3/4",
            "1/2",
            "1/4",
            "-3/4",
            "1/2",
            "-3/4",
            "-1/2",
            "3/4",
            "3/4",
            "1/2",
            "-3/4",
            "1/2",
            "1/2",
        ],
        (
            ((1, -1), (-1, -1), (2, -1)),
            ((1, 1), (-1, 2), (-1, 2)),
            ((1, 2), (2, -1), (-1, 2)),
            ((2, 2), (-1, 1), (-1, 2)),
            ((2, -1), (2, -1), (2, -1)),
        ),
    ),
    # a biased embedding to width 1 before softmax attention: certified 4, the rank is 5
    "linear1-softmax": _red_team_case(
        Network(2, 2, (Linear(1, bias=True), Attention(1, out=2, normalization="softmax"))),
        ["-1/4", "3/4", "3/4", "-1/4", "-1/4", "3/4", "-1/2"],
        (((2, -1), (1, 2)), ((1, 1), (2, 1))),
    ),
    # one token: certified 0 by "10 independent exact kernel vectors" of 10 weights, the rank is 2
    "linear2-softmax-one-token": _red_team_case(
        Network(1, 1, (Linear(2, bias=True), Attention(1, out=1, normalization="softmax"))),
        ["1/4", "-1/4", "1/2", "3/4", "3/4", "-1/4", "-1/4", "-1/4", "3/4", "-1/4"],
        (((2,),), ((1,),)),
    ),
    # the same with a full value map to width 2: certified 1, the rank is 4
    "linear2-softmax-one-token-out2": _red_team_case(
        Network(1, 1, (Linear(2, bias=True), Attention(1, normalization="softmax"))),
        ["-1/4", "-1/2", "1/2", "-3/4", "1/4", "-3/4", "-1/2", "-1/4", "-1/2", "3/4", "-1/2", "1/4"],
        (((-1,),), ((1,),), ((2,),)),
    ),
}


@pytest.mark.parametrize("name", RED_TEAM)
def test_the_red_teams_certificates_hold(name):
    case = RED_TEAM[name]
    outcome = check(case)
    assert outcome.oracle is not None and outcome.oracle.ok, outcome.report()  # the oracle decides these
    assert outcome.lower <= outcome.oracle.rank <= outcome.upper, outcome.report()
    assert outcome.kind != "wrong", outcome.report()
