"""Every command, tried with hostile values: each answer is a result or one line naming the problem,
never "internal error" (exit 70) and never a traceback.

The values are those a careless or hostile user tried: Unicode and underscored digits, numbers of
thousands of digits, NaN and infinities, empty and malformed lists, terminal escapes, devices,
FIFOs and directories where files belong, the largest architectures. Macaulay2 is pointed at a
path that does not exist, so a value that is accepted ends in a clean "not found", never in a run.
"""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest
from click.testing import CliRunner

from lightning_cas.api import load_result
from lightning_cas.cli import main

NO_M2 = ["--m2", "/nonexistent/M2"]
BIG = "9" * 5000
WIDE = ",".join(["256"] * 9)
DEEP = ",".join(["256"] * 8)
ONE_LAYER = ["--widths", "2,1", "--attention", "1"]
NUMBERS = ["٣", "３", "1_0", "-1", "0", BIG, "-" + BIG, "nan", "inf", "1e999", "", " ", "0x1f", "\x1b[2J", "3;id"]
LISTS = [
    "",
    ",",
    "2,,2",
    "٣,٣",
    "1_0,2",
    "-2,2",
    "0,2",
    BIG + ",2",
    "2;id",
    "\x1b]0;pwn\x07",
    "2," * 400 + "2",
    "2.5,2",
]


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=True)


def clean(res, *, allowed=(0, 1, 2, 3)):
    """A result, or one line on stderr that starts like ours; never 70, never a traceback."""
    text = res.stdout + res.stderr
    assert res.exit_code in allowed, (res.exit_code, text[-1500:], res.exception)
    assert "Traceback" not in text and "internal error" not in text, text[-1500:]
    if res.exit_code not in (0, 3):
        lines = [ln for ln in res.stderr.splitlines() if ln.strip() and not ln.startswith("lightning-cas: running")]
        assert len(lines) == 1 and lines[0].startswith("lightning-cas: error:"), res.stderr[-1500:]
        assert "\x1b" not in lines[0]  # escapes are shown escaped


@pytest.fixture(scope="module")
def specials(tmp_path_factory):
    base = tmp_path_factory.mktemp("specials")
    fifo = base / "fifo"
    os.mkfifo(fifo)
    nan = base / "nan.json"
    nan.write_text('{"layers": [{"Q": [[NaN, 1]], "K": [[1, 1]], "V": [[1, 1]]}]}')
    node = base / "device"
    if os.geteuid() == 0:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    else:
        node = "/dev/null"
    return {"fifo": fifo, "dir": base, "device": node, "nan": nan, "zero": "/dev/zero", "missing": base / "missing"}


COMMANDS = {  # command -> the arguments that make it valid (before the hostile one is added)
    "dim": ["--widths", "2,2", "--attention", "1"],
    "predict": ["--widths", "2,2", "--attention", "1"],
    "verify": ["--widths", "2,2", "--attention", "1"],
    "fiber": ONE_LAYER,
    "implicit": ONE_LAYER,
    "singular": ONE_LAYER,
    "boundary": ONE_LAYER,
    "claims": ONE_LAYER,
}
NUMERIC = {
    "dim": ["--seed", "--timeout", "--prime"],
    "predict": [],
    "verify": ["--seed", "--timeout", "--prime"],
    "fiber": ["--seed", "--timeout", "--prime"],
    "implicit": ["--seed", "--timeout", "--numerical-degree"],
    "singular": ["--seed", "--timeout"],
    "boundary": ["--seed", "--timeout"],
    "claims": ["--seed", "--timeout"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("value", NUMBERS, ids=range(len(NUMBERS)))
def test_hostile_numbers_in_every_numeric_option(command, value):
    for option in NUMERIC[command]:
        clean(invoke(command, *COMMANDS[command], option, value, *NO_M2))
    clean(invoke(command, *COMMANDS[command], "--tokens", value, *NO_M2))


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("value", LISTS, ids=range(len(LISTS)))
def test_hostile_lists_in_every_architecture_option(command, value):
    for option in ("--widths", "--attention", "--heads"):
        args = [a for a in COMMANDS[command]]
        if option in args:
            args[args.index(option) + 1] = value
        else:
            args += [option, value]
        clean(invoke(command, *args, *NO_M2))


@pytest.mark.parametrize("command", ["fiber", "singular", "boundary"])
@pytest.mark.parametrize("which", ["fifo", "dir", "device", "nan", "zero", "missing"])
def test_hostile_point_files(command, which, specials):
    clean(invoke(command, *ONE_LAYER, "--at", specials[which], *NO_M2))


@pytest.mark.parametrize("which", ["fifo", "dir", "device"])
def test_hostile_output_targets(which, specials):
    res = invoke("fiber", *ONE_LAYER, "--method", "modp", "--save-point", specials[which])
    clean(res)
    assert res.exit_code == 2 and "refusing to replace it" in res.stderr


@pytest.mark.parametrize("value", ["/tmp", "/dev/null", "", " ", "\x00", "M2; id"])
def test_hostile_macaulay2_paths(value):
    clean(invoke("dim", "--widths", "2,2", "--attention", "1", "--method", "jacobian", "--m2", value))


@pytest.mark.parametrize("method", ["JACOBIAN", "", "modp;", "\x1b[2J", "numeric "])
def test_hostile_methods(method):
    clean(invoke("dim", "--widths", "2,2", "--attention", "1", "--method", method))


@pytest.mark.parametrize(
    "args",
    [
        ["predict", "--widths", WIDE, "--attention", DEEP, "--tokens", "64"],
        ["predict", "--widths", WIDE, "--attention", DEEP, "--tokens", "64", "--json"],
        # the named group's orbit rank at 64 heads of 256 wide: refused by the memory guard before any work
        ["predict", "--widths", "256,256", "--attention", "256", "--heads", "64", "--tokens", "64", "--json"],
        ["dim", "--widths", WIDE, "--attention", DEEP, "--tokens", "64"],
        ["verify", "--widths", WIDE, "--attention", DEEP, "--tokens", "64", "--json"],
        ["fiber", "--widths", WIDE, "--attention", DEEP, "--tokens", "64", "--method", "m2"],
    ],
)
def test_the_largest_architectures_are_a_result_or_one_line(args):
    clean(invoke(*args))


def test_predict_at_the_largest_size_round_trips_through_json(tmp_path):
    """Its ambient dimension has 5966 digits, beyond Python's default limit of 4300 for int <-> str."""
    res = invoke("predict", "--widths", WIDE, "--attention", DEEP, "--tokens", "64", "--json")
    assert res.exit_code == 0, res.stderr
    path = tmp_path / "predict.json"
    path.write_text(res.stdout)
    report = load_result(path)
    assert len(str(report.ambient_dimension)) == 5966 and json.loads(res.stdout)["kind"] == "TheoryReport"


def test_long_integers_in_a_fresh_interpreter(tmp_path):
    """The limit is raised by the library itself (to_json, the JSON reader), not only by the CLI."""
    import subprocess

    code = (
        "from lightning_cas import Architecture, predict\n"
        "r = predict(Architecture((256,) * 9, (256,) * 8, 64))\n"
        "print(len(r.to_json()) > 6000)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "True", proc.stderr[-1500:]


def test_raising_the_limit_does_not_open_the_macaulay2_parser():
    """The CLI raises Python's digit limit for long results; Macaulay2's records keep their own cap."""
    from lightning_cas.core.numbers import allow_long_integers
    from lightning_cas.errors import M2ParseError
    from lightning_cas.macaulay2.parse import JSON_MARK, json_rationals, json_record, parse_int, parse_int_list

    allow_long_integers()
    for bad in (
        lambda: parse_int("9" * 5000),
        lambda: parse_int_list("{1, " + "9" * 5000 + "}"),
        lambda: json_record(JSON_MARK + '{"rank": 1' + "0" * 5000 + "}\n"),
        lambda: json_rationals({"w": ["1/" + "3" * 5000]}, "w"),
    ):
        with pytest.raises(M2ParseError):
            bad()
    assert parse_int("9" * 4000) == 10**4000 - 1
