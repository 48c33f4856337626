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
from lightning_cas.cli.common import Number
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
BASE = {"dim": ["--widths", "2,2", "--attention", "1"], "predict": ["--widths", "2,2", "--attention", "1"],
        "verify": ["--widths", "2,2", "--attention", "1"], "fiber": ["--widths", "2,1", "--attention", "1"],
        "implicit": ["--widths", "2,1", "--attention", "1"], "singular": ["--widths", "2,1", "--attention", "1"],
        "boundary": ["--widths", "2,1", "--attention", "1"], "claims": ["--widths", "2,1", "--attention", "1"],
        "sweep": ["examples/sweep.toml", "--list"], "report": ["."], "notebook": ["."],
        "degree": ["--widths", "2,1", "--attention", "1"], "ed": ["--widths", "2,1", "--attention", "1"],
        "degrees": ["--out", "never-written"]}


def test_no_command_uses_clicks_own_number_types():
    """click.INT and click.FLOAT take what int() and float() take ("٣", "1_0", "nan")."""
    loose = (click.types.IntParamType, click.types.FloatParamType)
    found = [(name, p.opts[0]) for name in COMMANDS for p in command(name).params if isinstance(p.type, loose)]
    assert found == []
    assert len(numeric_options()) >= 12  # seed, timeout, prime, numerical degree, jobs, max jobs on their commands


@pytest.mark.parametrize("name, option", numeric_options())
@pytest.mark.parametrize("text", ["٣", "３", "1_0", "٣٣", "𝟑", "nan", "inf", "-inf", "1e999", "0x10", " ", "3 4"])
def test_every_numeric_option_reads_ascii_digits_only(name, option, text):
    res = CliRunner().invoke(main, [name, *BASE[name], option, text, "--m2", "/nonexistent/M2"]
                             if name not in ("predict", "sweep", "report", "notebook", "degrees")
                             else [name, *BASE[name], option, text])
    assert res.exit_code == 2, (res.exit_code, res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lightning-cas: error:") and option in lines[0], res.stderr
    assert "Traceback" not in res.stdout + res.stderr and res.stdout == ""


@pytest.mark.parametrize("args, field, value", [
    (["--seed", "7"], "seed", 7), (["--seed", "+7"], "seed", 7), (["--timeout", "30"], None, None),
    (["--timeout", "2.5"], None, None), (["--timeout", "1e3"], None, None),
    (["--prime", "65521"], "primes", [65521, 65519]),
])
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
    assert integer_text("9" * 5000) == 10 ** 5000 - 1  # the largest architectures' numbers have 5966 digits
    assert integer_text(" +3 ") == 3 and decimal_text("2.5") == 2.5 and decimal_text(".5e1") == 5.0


# ---- the Python API ------------------------------------------------------------------------------


def sweep(**kwargs):
    from lightning_cas.batch.sweep import sweep as run

    return run("examples/sweep.toml", **{"out": "/nonexistent/never-created", **kwargs})


REFUSED = {
    "dimension(timeout=10**400)": lambda: lightning_cas.dimension(A22, timeout=10 ** 400),
    "dimension(timeout=-10**400)": lambda: lightning_cas.dimension(A22, timeout=-10 ** 400),
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
    "span_dimension(10**6, 1, 2)": lambda: lightning_cas.span_dimension(10 ** 6, 1, 2),
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
    "dimension(seed=np.uint32, prime=np.int64)": lambda: lightning_cas.dimension(
        A22, seed=np.uint32(5), prime=np.int64(16777213)).dimension,
    "Architecture(np.int64 widths)": lambda: lightning_cas.dimension(
        Architecture((np.int64(2), np.int32(2)), [np.int8(1)], np.int16(2))).dimension,
    "Architecture(numpy arrays)": lambda: lightning_cas.dimension(
        Architecture(np.array([2, 2]), np.array([1]))).dimension,
    "Architecture(range)": lambda: 6 if Architecture(range(2, 4), [1]).widths == (2, 3) else None,
    "Architecture('2,2')": lambda: lightning_cas.dimension(Architecture("2,2", "1")).dimension,
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_integers_of_any_kind_and_sequences_are_accepted(name):
    assert ACCEPTED[name]() == 6


def test_the_rule_itself():
    assert check_timeout(np.int64(5)) == 5.0 and check_timeout(np.float64(0.5)) == 0.5 and check_timeout(None) is None
    for bad in (10 ** 400, 0, -1, float("inf"), True, "5", Fraction(1)):
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
