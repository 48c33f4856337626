"""One type rule for every number and list a user hands over, from the command line and from Python.

The command line: every numeric option of every command reads ASCII digits only (one click type,
built on core.numbers). Python: integers are Python or numpy integers and never bools, numbers of
seconds are integers or floats (numpy's too), lists are sequences (not sets, dicts or strings),
None where a value is needed is the project's InputError: never a TypeError, AttributeError or
OverflowError from deeper down.
"""

from __future__ import annotations

import importlib
import json
from fractions import Fraction

import click
import numpy as np
import pytest
from click.testing import CliRunner

import lightning_cas
from lightning_cas import Architecture, api
from lightning_cas.cli import COMMANDS, main
from lightning_cas.cli.options import Number
from lightning_cas.core.checks import check_timeout, int_sequence, string_sequence
from lightning_cas.core.numbers import LONG_INTEGER_DIGITS, allow_long_integers, decimal_text, integer_text
from lightning_cas.errors import InputError, LightningError

A22 = Architecture((2, 2), (1,), 2)
POINT = {"layers": [{"Q": [[1, 2]], "K": [[3, 4]], "V": [[1, -1], [2, 7]]}]}


def command(name):
    module, attr = COMMANDS[name]
    return getattr(importlib.import_module(module), attr)


def numeric_options():
    """(command, option) for every option of every command whose value is a number."""
    out = []
    for name in COMMANDS:
        for param in command(name).params:
            if isinstance(param, click.Option) and isinstance(param.type, Number):
                out.append((name, param.opts[0]))
    return out


# a minimal valid invocation of each command, so that only the option under test can be wrong
BASE = {
    "dim": ["--widths", "2,2", "--attention", "1"],
    "predict": ["--widths", "2,2", "--attention", "1"],
    "verify": ["--widths", "2,2", "--attention", "1"],
    "fiber": ["--widths", "2,1", "--attention", "1"],
    "implicit": ["--widths", "2,1", "--attention", "1"],
    "singular": ["--widths", "2,1", "--attention", "1"],
    "boundary": ["--widths", "2,1", "--attention", "1"],
    "claims": ["--widths", "2,1", "--attention", "1"],
    "sweep": ["examples/sweep.toml", "--list"],
    "report": ["."],
    "notebook": ["."],
    "degree": ["--widths", "2,1", "--attention", "1"],
    "ed": ["--widths", "2,1", "--attention", "1"],
    "degrees": ["--out", "never-written"],
    "llc": ["--widths", "2,1", "--attention", "1"],
}


def test_no_command_uses_clicks_own_number_types():
    """click.INT and click.FLOAT take what int() and float() take ("٣", "1_0", "nan")."""
    loose = (click.types.IntParamType, click.types.FloatParamType)
    found = [(name, p.opts[0]) for name in COMMANDS for p in command(name).params if isinstance(p.type, loose)]
    assert found == []
    assert len(numeric_options()) >= 12  # seed, timeout, prime, numerical degree, jobs, max jobs on their commands


@pytest.mark.parametrize("name, option", numeric_options())
@pytest.mark.parametrize("text", ["٣", "３", "1_0", "٣٣", "𝟑", "nan", "inf", "-inf", "1e999", "0x10", " ", "3 4"])
def test_every_numeric_option_reads_ascii_digits_only(name, option, text):
    res = CliRunner().invoke(
        main,
        [name, *BASE[name], option, text, "--m2", "/nonexistent/M2"]
        if name not in ("predict", "sweep", "report", "notebook", "degrees")
        else [name, *BASE[name], option, text],
    )
    assert res.exit_code == 2, (res.exit_code, res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lightning-cas: error:") and option in lines[0], res.stderr
    assert "Traceback" not in res.stdout + res.stderr and res.stdout == ""


@pytest.mark.parametrize(
    "args, field, value",
    [
        (["--seed", "7"], "seed", 7),
        (["--seed", "+7"], "seed", 7),
        (["--timeout", "30"], None, None),
        (["--timeout", "2.5"], None, None),
        (["--timeout", "1e3"], None, None),
        (["--prime", "65521"], "primes", [65521, 65519]),
    ],
)
def test_ascii_numbers_still_work(args, field, value):
    res = CliRunner().invoke(main, ["dim", "--widths", "2,2", "--attention", "1", "--json", *args])
    assert res.exit_code == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["dimension"] == 6
    if field:
        assert out[field] == value


def test_a_timeout_of_four_hundred_digits_is_out_of_range_not_an_overflow():
    res = CliRunner().invoke(main, ["dim", "--widths", "2,2", "--attention", "1", "--timeout", "9" * 400])
    assert res.exit_code == 2 and "at most 604800" in res.stderr and "Overflow" not in res.stderr
    assert len(res.stderr.strip()) < 300  # the number is shortened in the message


def test_the_text_readers_never_raise():
    too_long = "9" * (LONG_INTEGER_DIGITS + 1)  # beyond what Python converts, even with the raised limit
    allow_long_integers()
    for text in ["٣", "1_0", "nan", "inf", "1e999", too_long, "", "-", "+3", " 4 "]:
        integer_text(text), decimal_text(text)
    assert integer_text(too_long) is None and decimal_text("1e999") is None and decimal_text("nan") is None
    assert integer_text("9" * 5000) == 10**5000 - 1  # the largest architectures' numbers have 5966 digits
    assert integer_text(" +3 ") == 3 and decimal_text("2.5") == 2.5 and decimal_text(".5e1") == 5.0


# ---- the Python API ------------------------------------------------------------------------------


def sweep(**kwargs):
    from lightning_cas.batch.sweep import sweep as run

    return run("examples/sweep.toml", **{"out": "/nonexistent/never-created", **kwargs})


REFUSED = {
    "dimension(timeout=10**400)": lambda: lightning_cas.dimension(A22, timeout=10**400),
    "dimension(timeout=-10**400)": lambda: lightning_cas.dimension(A22, timeout=-(10**400)),
    "dimension(timeout=True)": lambda: lightning_cas.dimension(A22, timeout=True),
    "dimension(timeout=Fraction)": lambda: lightning_cas.dimension(A22, timeout=Fraction(1, 2)),
    "dimension(timeout=1j)": lambda: lightning_cas.dimension(A22, timeout=1j),
    "dimension(timeout=np.bool_)": lambda: lightning_cas.dimension(A22, timeout=np.bool_(True)),
    "dimension(seed=np.float64)": lambda: lightning_cas.dimension(A22, seed=np.float64(3)),
    "load_result(None)": lambda: api.load_result(None),
    "load_result(3)": lambda: api.load_result(3),
    "load_result(b'x')": lambda: api.load_result(b"x.json"),
    "DimensionResult.from_json(None)": lambda: lightning_cas.DimensionResult.from_json(None),
    "DimensionResult.from_json(3)": lambda: lightning_cas.DimensionResult.from_json(3),
    "VerifyResult.from_json([])": lambda: lightning_cas.VerifyResult.from_json([]),
    "execute_notebook(None)": lambda: lightning_cas.execute_notebook(None),
    "write_notebook(None, x)": lambda: lightning_cas.write_notebook(None, "x.ipynb"),
    "multihead_bound('x')": lambda: lightning_cas.multihead_bound("x"),
    "multihead_bound(None)": lambda: lightning_cas.multihead_bound(None),
    "span_dimension('x', 1, 2)": lambda: lightning_cas.span_dimension("x", 1, 2),
    "span_dimension(10**7, 1, 2)": lambda: lightning_cas.span_dimension(10**7, 1, 2),
    "head_mixing_bound(None, ...)": lambda: lightning_cas.head_mixing_bound(None, 2, 2, 2, 2),
    "Architecture(widths={4, 3})": lambda: Architecture(widths={4, 3}, attention=(1,)),
    "Architecture(widths={4: 1, 3: 2})": lambda: Architecture(widths={4: 1, 3: 2}, attention=(1,)),
    "Architecture(attention=frozenset)": lambda: Architecture((2, 2), frozenset({1})),
    "Architecture(widths=generator)": lambda: Architecture((d for d in (2, 2)), (1,)),
    "Architecture(widths=2-d array)": lambda: Architecture(np.array([[2, 2]]), (1,)),
    "Architecture(widths=None)": lambda: Architecture(None, (1,)),
    "Architecture(heads={1})": lambda: Architecture((2, 2), (1,), heads={1}),
    "Architecture(widths=(2.0, 2))": lambda: Architecture((2.0, 2), (1,)),
    "M2Session(timeout=-1)": lambda: lightning_cas.M2Session(timeout=-1),
    "M2Session(timeout=nan)": lambda: lightning_cas.M2Session(timeout=float("nan")),
    "M2Session(timeout='5')": lambda: lightning_cas.M2Session(timeout="5"),
    "fiber(point with an unknown key)": lambda: lightning_cas.fiber(A22, {**POINT, "junk": 1}, method="modp"),
    "load_point(None)": lambda: importlib.import_module("lightning_cas.system.points").load_point(A22, None),
    "sweep(only='abc')": lambda: sweep(only="abc"),
    "sweep(only={'abc'})": lambda: sweep(only={"w2-2_a1_t2_none"}),
    "sweep(only=[3])": lambda: sweep(only=[3]),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_the_python_api_refuses_with_the_projects_error(name):
    with pytest.raises(LightningError) as info:
        REFUSED[name]()
    assert isinstance(info.value, InputError), type(info.value)
    message = str(info.value)
    assert message and "\n" not in message and len(message) < 400


ACCEPTED = {
    "dimension(timeout=np.int64)": lambda: lightning_cas.dimension(A22, timeout=np.int64(30)).dimension,
    "dimension(timeout=np.float32)": lambda: lightning_cas.dimension(A22, timeout=np.float32(30)).dimension,
    "dimension(timeout=30)": lambda: lightning_cas.dimension(A22, timeout=30).dimension,
    "dimension(seed=np.uint32, prime=np.int64)": lambda: (
        lightning_cas.dimension(A22, seed=np.uint32(5), prime=np.int64(16777213)).dimension
    ),
    "Architecture(np.int64 widths)": lambda: (
        lightning_cas.dimension(Architecture((np.int64(2), np.int32(2)), [np.int8(1)], np.int16(2))).dimension
    ),
    "Architecture(numpy arrays)": lambda: (
        lightning_cas.dimension(Architecture(np.array([2, 2]), np.array([1]))).dimension
    ),
    "Architecture(range)": lambda: 6 if Architecture(range(2, 4), [1]).widths == (2, 3) else None,
    "Architecture('2,2')": lambda: lightning_cas.dimension(Architecture("2,2", "1")).dimension,
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_integers_of_any_kind_and_sequences_are_accepted(name):
    assert ACCEPTED[name]() == 6


def test_the_rule_itself():
    assert check_timeout(np.int64(5)) == 5.0 and check_timeout(np.float64(0.5)) == 0.5 and check_timeout(None) is None
    for bad in (10**400, 0, -1, float("inf"), True, "5", Fraction(1)):
        with pytest.raises(InputError):
            check_timeout(bad)
    assert int_sequence(np.array([3, 2], dtype=np.int64), "widths") == (3, 2)
    assert int_sequence("3, 2", "widths") == (3, 2)
    assert string_sequence(("a", "b"), "only") == ("a", "b")
    for bad in ({3, 2}, {3: 2}, b"\x03\x02", iter([3]), None, 3):
        with pytest.raises(InputError):
            int_sequence(bad, "widths")
    with pytest.raises(InputError, match="got a string"):
        string_sequence("abc", "only")


# ---- points, inputs and counts: the same rule for every verb that takes them ------------------------

NO_M2 = "/nonexistent/M2"  # a verb that validated everything then fails to start Macaulay2: M2NotFoundError
A21 = Architecture((2, 1), (1,), 2)


def per_layer(q11):
    """A22's point in the verbs' per-layer form with Q[1][1] = q11."""
    return ((((q11, 2),), ((3, 4),), ((1, -1), (2, 7))),)


POINT_VERBS = {  # every public verb that takes a weight point, called so that only the point can be wrong
    "dimension": lambda p: lightning_cas.dimension(A22, at=p),
    "fiber": lambda p: lightning_cas.fiber(A22, p, method="modp"),
    "boundary": lambda p: lightning_cas.boundary(A22, p, closure=False, m2=NO_M2),
    "is_singular": lambda p: lightning_cas.is_singular(A22, p, m2=NO_M2),
    "learning_coefficient": lambda p: lightning_cas.learning_coefficient(A22, p, m2=NO_M2),
}
INPUT_VERBS = {  # every public verb that takes inputs
    "dimension": lambda x: lightning_cas.dimension(A22, inputs=x, layout="features-tokens"),
    "ed_degree": lambda x: lightning_cas.ed_degree(A21, metric="data", inputs=x, layout="features-tokens", m2=NO_M2),
    "learning_coefficient": lambda x: lightning_cas.learning_coefficient(
        A22, inputs=x, layout="features-tokens", m2=NO_M2
    ),
}
BAD_ENTRIES = {
    "float32 subnormal": (np.float32(1e-40), "subnormal float32"),
    "float16 subnormal": (np.float16(1e-6), "subnormal float16"),
    "float64 subnormal": (1e-310, "subnormal float64"),
    "Fraction of 501 digits": (Fraction(10**500, 3), "numerator has 501 digits"),
    "Fraction over 501 digits": (Fraction(3, 10**500), "denominator has 501 digits"),
    "numpy bool": (np.bool_(True), "entries must be numbers"),
}


def one_line_input_error(call, match: str):
    with pytest.raises(InputError) as info:
        call()
    message = str(info.value)
    assert match in message and "\n" not in message and len(message) < 400, message


@pytest.mark.parametrize("verb", sorted(POINT_VERBS))
@pytest.mark.parametrize("bad", sorted(BAD_ENTRIES))
def test_every_point_verb_refuses_a_bad_entry_in_one_line_naming_why(verb, bad):
    value, match = BAD_ENTRIES[bad]
    one_line_input_error(lambda: POINT_VERBS[verb](per_layer(value)), match)


@pytest.mark.parametrize("verb", sorted(POINT_VERBS))
def test_every_point_verb_refuses_a_ragged_point(verb):
    ragged = ((((1, 2),), ((3,),), ((1, -1), (2, 7))),)  # K has one entry, not two
    one_line_input_error(lambda: POINT_VERBS[verb](ragged), "entries")


@pytest.mark.parametrize("verb", sorted(POINT_VERBS))
@pytest.mark.parametrize("entry", ["1/2", Fraction(1, 2), np.float32(0.5), np.float16(0.5), 0.5])
def test_every_point_verb_reads_half_exactly_in_every_spelling(verb, entry):
    """ "1/2", Fraction(1, 2) and a float 0.5 of any width are the same weight: the verb gets past its
    validation (to Macaulay2, absent here, for the two that need it) with the same answer."""
    try:
        result = POINT_VERBS[verb](per_layer(entry))
    except lightning_cas.LightningError as exc:
        assert type(exc).__name__ == "M2NotFoundError", exc
        return
    reference = POINT_VERBS[verb](per_layer("1/2"))
    assert result.to_dict().get("dimension") == reference.to_dict().get("dimension")


@pytest.mark.parametrize("entry", ["1/2", Fraction(1, 2), "-3/4", np.int64(3)])
def test_a_flat_python_list_point_reads_rational_strings_like_json(entry):
    flat = [entry, 2, 3, 4, 1, -1, 2, 7]
    via_list = lightning_cas.dimension(A22, at=flat)
    via_json = lightning_cas.dimension(
        A22,
        at={
            "weights": [
                str(entry) if isinstance(entry, Fraction) else int(entry) if isinstance(entry, np.integer) else entry,
                2,
                3,
                4,
                1,
                -1,
                2,
                7,
            ]
        },
    )
    assert via_list.dimension == via_json.dimension and via_list.at == via_json.at


@pytest.mark.parametrize("bad", sorted(BAD_ENTRIES))
def test_a_flat_point_refuses_what_the_per_layer_form_refuses(bad):
    value, match = BAD_ENTRIES[bad]
    one_line_input_error(lambda: lightning_cas.dimension(A22, at=[value, 2, 3, 4, 1, -1, 2, 7]), match)


@pytest.mark.parametrize("dtype, tiny", [(np.float16, 1e-6), (np.float32, 1e-40), (np.float64, 1e-310)])
def test_a_flat_array_point_refuses_the_subnormals_of_its_own_dtype(dtype, tiny):
    one_line_input_error(
        lambda: lightning_cas.dimension(A22, at=np.array([tiny, 2, 3, 4, 1, -1, 2, 7], dtype=dtype)),
        f"subnormal {np.dtype(dtype).name}",
    )
    normal = np.finfo(dtype).smallest_normal  # the smallest normal number of the type is a weight like any other
    assert lightning_cas.dimension(A22, at=np.array([normal, 2, 3, 4, 1, -1, 2, 7], dtype=dtype)).dimension == 6


RAGGED_INPUTS = {
    "a short token row": [[[1, 2], [3]], [[1, 2], [3, 4]]],
    "a short matrix": [[[1, 2], [3, 4]], [[1, 2]]],
    "a number beside matrices": [[[1, 2], [3, 4]], 5],
}


@pytest.mark.parametrize("verb", sorted(INPUT_VERBS))
@pytest.mark.parametrize("ragged", sorted(RAGGED_INPUTS))
def test_every_input_verb_refuses_ragged_inputs_in_one_line(verb, ragged):
    one_line_input_error(lambda: INPUT_VERBS[verb](RAGGED_INPUTS[ragged]), "the inputs")


@pytest.mark.parametrize("verb", sorted(INPUT_VERBS))
def test_every_input_verb_refuses_subnormal_inputs_of_their_dtype(verb):
    inputs = np.ones((1, 2, 2), dtype=np.float32)  # d_0 = t = 2 for both architectures
    inputs[0, 0, 0] = np.float32(1e-40)
    one_line_input_error(lambda: INPUT_VERBS[verb](inputs), "subnormal float32")


def test_inputs_given_as_python_lists_read_rational_strings_exactly():
    exact = lightning_cas.dimension(A22, inputs=[[["1/2", 2], [3, 4]], [[1, 5], [-2, "7/3"]]], layout="features-tokens")
    floats = lightning_cas.dimension(
        A22, inputs=np.array([[[0.5, 2], [3, 4]], [[1, 5], [-2, 7 / 3]]]), layout="features-tokens"
    )
    assert exact.inputs.count == 2 and exact.dimension == floats.dimension


COUNTS = {  # every integer option of a verb beyond seed and prime, with a valid value
    "ed_degree(repeats)": (lambda v: lightning_cas.ed_degree(A21, method="monodromy", repeats=v, m2=NO_M2), 3),
    "implicit(numerical_degree_runs)": (lambda v: lightning_cas.implicit(A21, numerical_degree_runs=v, m2=NO_M2), 2),
    "singular_locus(minor_budget)": (
        lambda v: lightning_cas.singular_locus(A21, method="whole-ideal", minor_budget=v, m2=NO_M2),
        5,
    ),
    "dimension(seed)": (lambda v: lightning_cas.dimension(A22, seed=v, method="jacobian", m2=NO_M2), 3),
}


@pytest.mark.parametrize("name", sorted(COUNTS))
@pytest.mark.parametrize("kind", [np.int8, np.int32, np.int64, np.uint16, np.uint64])
def test_every_count_takes_numpy_integers(name, kind):
    call, value = COUNTS[name]
    with pytest.raises(lightning_cas.LightningError) as info:
        call(kind(value))
    assert type(info.value).__name__ == "M2NotFoundError", info.value  # past the validation, to Macaulay2


@pytest.mark.parametrize("name", sorted(COUNTS))
@pytest.mark.parametrize("bad", [np.bool_(True), True, np.float64(3.0), 3.0, "3", None, Fraction(3)])
def test_every_count_refuses_bools_floats_and_text(name, bad):
    with pytest.raises(InputError) as info:
        COUNTS[name][0](bad)
    assert "integer" in str(info.value) and "\n" not in str(info.value)


def test_boundary_ed_runs_take_numpy_integers_too():
    from lightning_cas.geometry.decision.m2 import boundary_ed

    with pytest.raises(lightning_cas.LightningError) as info:
        boundary_ed(A21, numerical_runs=np.int64(2), m2=NO_M2, method="m2")
    assert type(info.value).__name__ == "M2NotFoundError", info.value
    with pytest.raises(InputError, match="numerical_runs must be an integer"):
        boundary_ed(A21, numerical_runs=np.bool_(True), m2=NO_M2)


@pytest.mark.parametrize(
    "blocks",
    [
        pytest.param(lambda: (b for b in [lightning_cas.Attention(1)]), id="generator"),
        pytest.param(lambda: {lightning_cas.Attention(1)}, id="set"),
        pytest.param(lambda: iter([lightning_cas.Attention(1)]), id="iterator"),
        pytest.param(lambda: "attention", id="string"),
    ],
)
def test_a_network_refuses_blocks_that_are_not_a_sequence(blocks):
    one_line_input_error(lambda: lightning_cas.Network(2, 2, blocks()), "blocks must be a list")
    assert lightning_cas.Network(2, 2, [lightning_cas.Attention(1)]).parameters == 8  # a list is fine


def test_every_public_verb_taking_points_inputs_or_counts_is_covered_above():
    """A verb added to the package with a point, inputs or a count must join the tables above."""
    import inspect

    covered = {"at": POINT_VERBS, "point": POINT_VERBS, "inputs": INPUT_VERBS}
    counts = {name.split("(")[1].rstrip(")"): name.split("(")[0] for name in COUNTS}
    missing = []
    for name in lightning_cas.__all__:
        value = getattr(lightning_cas, name)
        if not inspect.isfunction(value):
            continue
        for param in inspect.signature(value).parameters:
            if param in covered and name not in covered[param]:
                missing.append(f"{name}({param})")
            if (
                param in ("repeats", "numerical_runs", "numerical_degree_runs", "minor_budget")
                and counts.get(param) != name
            ):
                missing.append(f"{name}({param})")
    assert missing == []
