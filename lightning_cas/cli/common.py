"""What every command shares: option decorators spelled once, one-line errors, the architecture parser."""

from __future__ import annotations

import contextvars
import functools
import os
import sys

import click

from lightning_cas import api
from lightning_cas.core.architecture import NORMALIZATIONS, Architecture
from lightning_cas.core.display import printable
from lightning_cas.errors import LightningError

EXIT_DISCREPANCY = 3


def _fail(message: str, code: int) -> None:
    click.echo(f"lightning-cas: error: {printable(message)}", err=True)
    sys.exit(code)


def clean_errors(fn):
    """Turn our errors into one line; unexpected ones too (traceback only with LIGHTNING_CAS_DEBUG)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except LightningError as exc:
            _fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            _fail("interrupted.", 130)
        except Exception as exc:  # a bug: still one line, never a silent number
            if os.environ.get("LIGHTNING_CAS_DEBUG"):
                raise
            _fail(f"internal error ({type(exc).__name__}: {exc}); rerun with LIGHTNING_CAS_DEBUG=1 for details.",
                  70)
    return wrapper


# Options every command spells the same way (commands add their own --method / --prime).
SEED_OPTION = click.option("--seed", default=0, show_default=True, type=int, help="Random seed (reported).")
TIMEOUT_OPTION = click.option("--timeout", default=None, type=float, help="Seconds before Macaulay2 is stopped.")
M2_OPTION = click.option("--m2", default=None, help="Macaulay2 binary (default: $LIGHTNING_CAS_M2 or M2 on PATH).")
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
    return click.option("--format", "output_format", type=click.Choice(FORMATS), default="text", show_default=True,
                        help="text for people; json (= --json); m2: Macaulay2 input defining R and I; "
                             "latex: the ideals typeset.")(wrapper)


def apply_options(fn, options):
    for option in reversed(options):
        fn = option(fn)
    return fn


# --heads reaches parse_architecture through a context variable, so commands keep their signatures.
_HEADS: contextvars.ContextVar[str | None] = contextvars.ContextVar("lightning_cas_heads", default=None)
HEADS_HELP = "Heads per layer H_1,...,H_L, e.g. 2,1 (default one head per layer)."


def heads_option(fn):
    """Add --heads to a command; its value is read by parse_architecture (one head per layer when absent)."""
    @functools.wraps(fn)
    def wrapper(*args, heads=None, **kwargs):
        token = _HEADS.set(heads)
        try:
            return fn(*args, **kwargs)
        finally:
            _HEADS.reset(token)
    return click.option("--heads", default=None, help=HEADS_HELP)(wrapper)


def architecture_options(fn):
    options = [
        click.option("--widths", required=True, help="Widths d_0,...,d_L, e.g. 3,3,3."),
        click.option("--attention", required=True, help="Attention dims a_1,...,a_L, e.g. 2,2."),
        click.option("--tokens", default="2", show_default=True, help="Number of tokens t."),
        click.option("--normalization", default="none", show_default=True, type=click.Choice(NORMALIZATIONS)),
        JSON_OPTION,
    ]
    return heads_option(apply_options(fn, options))


def method_options(fn):
    options = [
        click.option("--method", default="auto", show_default=True, type=click.Choice(api.METHODS),
                     help="auto = modp; jacobian/implicit run Macaulay2; numeric = float baseline."),
        SEED_OPTION,
        TIMEOUT_OPTION,
        click.option("--prime", default=None, type=int, help="Prime modulus for modp / jacobian."),
        M2_OPTION,
    ]
    return apply_options(fn, options)


def parse_architecture(widths, attention, tokens, normalization) -> Architecture:
    return Architecture.from_cli(widths, attention, tokens, normalization, _HEADS.get())


def describe_provenance(result) -> str:
    how = [result.method, result.certainty]
    if result.primes:
        how.append("primes " + ", ".join(map(str, result.primes)))
    if getattr(result, "failure_bound", None) is not None:  # what "probabilistic" risks, in numbers
        how.append(f"failure bound {result.failure_bound:.2g} per run")
    how.append(f"seed {result.seed}")
    if result.m2_version:
        how.append(f"Macaulay2 {result.m2_version}")
    how.append(f"{result.elapsed_s:.3g} s")
    return "; ".join(how)


class OneLineErrors(click.Group):
    """Click's own refusals (a non-integer --seed, a missing --widths) as one line, like ours."""

    def main(self, *args, **kwargs):
        kwargs["standalone_mode"] = False
        try:
            result = super().main(*args, **kwargs)
        except click.exceptions.Abort:
            _fail("interrupted.", 130)
        except click.ClickException as exc:
            _fail(f"{exc.format_message()} (see --help)", exc.exit_code)
        sys.exit(result if isinstance(result, int) else 0)
