"""Every proved upper bound against the exact rank on random networks of every block kind: a computed rank
above a bound is a wrong theorem, so each test tries to break them (derandomized, small sizes, quick)."""

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from lightning_cas.backends.modp import dimension_modp
from lightning_cas.core.block_theory import expected
from lightning_cas.core.defects import explain
from lightning_cas.core.network import MLP, Attention, Linear, Network, Power
from lightning_cas.errors import InputError

MAX_PARAMETERS = 60


@st.composite
def networks(draw):
    width = draw(st.integers(1, 3))
    start = width
    tokens = draw(st.integers(1, 3))
    blocks = []
    attention = 0
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(
            st.sampled_from(["attention", "mlp", "linear", "power"] if attention < 2 else ["mlp", "linear", "power"])
        )
        residual = draw(st.booleans())
        out = width if residual else draw(st.integers(1, 3))
        if kind == "attention":
            attention += 1
            value = draw(st.one_of(st.none(), st.integers(1, 2)))
            blocks.append(
                Attention(
                    draw(st.integers(1, 2)),
                    heads=draw(st.integers(1, 2)),
                    value=value,
                    out=out,
                    causal=draw(st.booleans()),
                    residual=residual,
                )
            )
        elif kind == "mlp":
            blocks.append(MLP(draw(st.integers(1, 3)), degree=draw(st.integers(1, 3)), out=out, residual=residual))
        elif kind == "linear":
            blocks.append(Linear(out))
            width = out
            continue
        else:
            blocks.append(Power(draw(st.integers(2, 3))))
            continue
        width = out
    try:
        net = Network(start, tokens, tuple(blocks))
    except InputError:  # only power blocks
        net = Network(start, tokens, tuple(blocks) + (Linear(1),))
    return net


RESIDUAL_AFTER_POWER = Network(1, 1, (Linear(1), Power(2), MLP(1, residual=True)))
POWER_CHAIN_TO_RESIDUAL = Network(2, 1, (Linear(2), Power(2), Power(2), MLP(2, residual=True), Linear(1)))
RESIDUAL_PRODUCER = Network(2, 2, (Attention(1, residual=True), Linear(3), Power(2), Linear(1)))


SETTINGS = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _check(net: Network) -> None:
    computed = dimension_modp(net, seed=3, repetitions=1).dimension
    bounds = expected(net, seed=5).bounds
    for name, value, why in bounds:
        assert computed <= value, f"{net}: computed {computed} above the bound {name} = {value} ({why})"
    split = explain(net, computed, seed=7)  # raises when the split does not add up
    assert split.total == net.parameters - computed


@SETTINGS
@given(networks())
@example(RESIDUAL_AFTER_POWER)
@example(POWER_CHAIN_TO_RESIDUAL)
@example(RESIDUAL_PRODUCER)
def test_no_bound_is_exceeded_and_every_split_adds_up(net):
    assume(net.parameters <= MAX_PARAMETERS)
    _check(net)


def test_residual_after_power_bound_is_not_below_the_dimension():
    bounds = dict((name, value) for name, value, _ in expected(RESIDUAL_AFTER_POWER).bounds)
    assert min(bounds.values()) == 2 == dimension_modp(RESIDUAL_AFTER_POWER).dimension


def test_the_filling_bound_is_attained_where_counting_forces_it():
    # an mlp of hidden 8, degree 2 on width 2 gives at most 2 C(3, 2) = 6 dimensions of maps from 32 weights
    net = Network(2, 1, (MLP(8), Linear(2)))
    bounds = dict((name, value) for name, value, _ in expected(net).bounds)
    assert bounds["filling of block 0"] == net.parameters - 32 + 6 - 4  # minus the GL(2) after it, on Linear
    assert dimension_modp(net).dimension <= bounds["filling of block 0"]
