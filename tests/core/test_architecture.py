"""Architecture validation from Python and from the CLI: one clear sentence, non-zero exit, no traceback."""

import pytest
from click.testing import CliRunner

from lightning_cas import Architecture
from lightning_cas.cli import main
from lightning_cas.errors import InputError


def test_derived_quantities():
    arch = Architecture((3, 3, 3), (2, 2), tokens=2)
    assert arch.depth == 2 and arch.degree == 9
    assert arch.parameters == 2 * (2 * 2 * 3 + 9)
    # d_L * t * C(d_0 t + 3^L - 1, 3^L)
    assert arch.ambient_dimension == 3 * 2 * 2002
    assert Architecture.from_dict(arch.to_dict()) == arch


def test_from_cli_strings():
    arch = Architecture.from_cli(" 3, 3,3", "2,2", "2")
    assert arch.widths == (3, 3, 3) and arch.attention == (2, 2) and arch.tokens == 2


@pytest.mark.parametrize(
    "widths, attention, tokens, fragment",
    [
        ((0, 2), (1,), 2, "positive"),
        ((2, -1), (1,), 2, "positive"),
        ((2, 2), (0,), 2, "positive"),
        ((2, 2), (1, 1), 2, "one entry per layer"),
        ((2,), (), 2, "at least two"),
        ((2, 2), (1,), 0, "tokens"),
        ((2, 2), (1,), -3, "tokens"),
        ((2.5, 2), (1,), 2, "integer"),
        ((True, 2), (1,), 2, "integer"),
        ((2, 2), (1,), 2.0, "integer"),
        ((10**7, 2), (1,), 2, "maximum"),
        ((2, 2), (1,), 10**6, "maximum"),
        (tuple([2] * 20), tuple([1] * 19), 2, "maximum"),
    ],
)
def test_bad_architectures_refused(widths, attention, tokens, fragment):
    with pytest.raises(InputError, match=fragment):
        Architecture(widths, attention, tokens)


def test_bad_normalization():
    with pytest.raises(InputError, match="normalization"):
        Architecture((2, 2), (1,), 2, "relu")


@pytest.mark.parametrize(
    "args",
    [
        ["--widths", "3,x", "--attention", "2"],
        ["--widths", "3,3", "--attention", "2,2"],
        ["--widths", "3,,3", "--attention", "2"],
        ["--widths", "", "--attention", "2"],
        ["--widths", "3,3", "--attention", "0"],
        ["--widths", "3,3", "--attention", "2", "--tokens", "0"],
        ["--widths", "3,3", "--attention", "2", "--tokens", "two"],
        ["--widths", "3.5,3", "--attention", "2"],
        ["--widths", "3,3", "--attention", "2", "--seed", "-1"],
        ["--widths", "3,3", "--attention", "2", "--timeout", "-5"],
        ["--widths", "3,3", "--attention", "2", "--timeout", "nan"],
        ["--widths", "3,3", "--attention", "2", "--prime", "91"],
        ["--widths", "9999,3", "--attention", "2"],
        ["--widths", "３,3", "--attention", "2"],
    ],
)
def test_cli_refuses_bad_input_in_one_line(args):
    result = CliRunner().invoke(main, ["dim", *args])
    assert result.exit_code == 2, result.output
    text = result.output.strip()
    assert "Traceback" not in text
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert len(text.splitlines()) <= 4  # click usage errors add a usage line; ours are one line
    assert "dimension " not in text  # never a number
