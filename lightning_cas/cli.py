"""The command line: parse, call the API, print. Any LightningError is one line and an exit code."""

from __future__ import annotations

import functools
import json
import os
import sys

import click

from . import __version__, api
from .architecture import NORMALIZATIONS, Architecture
from .errors import LightningError

EXIT_DISCREPANCY = 3


def _fail(message: str, code: int) -> None:
    click.echo(f"lightning-cas: error: {message}", err=True)
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


def apply_options(fn, options):
    for option in reversed(options):
        fn = option(fn)
    return fn


def architecture_options(fn):
    options = [
        click.option("--widths", required=True, help="Widths d_0,...,d_L, e.g. 3,3,3."),
        click.option("--attention", required=True, help="Attention dims a_1,...,a_L, e.g. 2,2."),
        click.option("--tokens", default="2", show_default=True, help="Number of tokens t."),
        click.option("--normalization", default="none", show_default=True, type=click.Choice(NORMALIZATIONS)),
        JSON_OPTION,
    ]
    return apply_options(fn, options)


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


def _arch(widths, attention, tokens, normalization) -> Architecture:
    return Architecture.from_cli(widths, attention, tokens, normalization)


def _describe(result) -> str:
    how = [result.method, result.certainty]
    if result.primes:
        how.append("primes " + ", ".join(map(str, result.primes)))
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


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="lightning-cas")
def main():
    """lightning-cas: dimension, fibers and more for lightning self-attention networks."""


@main.command("dim")
@architecture_options
@method_options
@clean_errors
def dim_command(widths, attention, tokens, normalization, as_json, method, seed, timeout, prime, m2):
    """Dimension of the neurovariety of one architecture."""
    arch = _arch(widths, attention, tokens, normalization)
    result = api.dimension(arch, method=method, seed=seed, timeout=timeout, m2=m2, prime=prime)
    if as_json:
        click.echo(result.to_json())
    else:
        click.echo(f"{arch}")
        click.echo(f"dimension {result.dimension}   ({_describe(result)})")
        click.echo(f"parameters {result.parameters}, generic fiber dimension {result.fiber_dimension}, "
                   f"ambient dimension {result.ambient_dimension}")
        for note in result.notes:
            click.echo(f"note: {note}")
    if not result.consistent:
        click.echo("lightning-cas: warning: " + "; ".join(result.notes), err=True)


@main.command("predict")
@architecture_options
@clean_errors
def predict_command(widths, attention, tokens, normalization, as_json):
    """Closed-form predictions from the theory, each with its regime."""
    report = api.predict(_arch(widths, attention, tokens, normalization))
    if as_json:
        click.echo(json.dumps(report.to_dict()))
        return
    click.echo(f"{report.architecture}")
    for pred in (report.dimension, report.parameters, report.symmetry_group_dimension, report.fiber_dimension):
        if pred.value is None:
            click.echo(f"{pred.quantity}: no prediction ({pred.reason})")
        else:
            click.echo(f"{pred.quantity}: {pred.value}   [{pred.formula}; {pred.regime}; {pred.status}]")
    click.echo(f"ambient_dimension: {report.ambient_dimension}")


@main.command("verify")
@architecture_options
@method_options
@click.option("--compare", is_flag=True, help="Also compute the other normalization and explain the difference.")
@clean_errors
def verify_command(widths, attention, tokens, normalization, as_json, method, seed, timeout, prime, m2, compare):
    """Compute the dimension, predict it, and report agreement (exit 3 on a discrepancy)."""
    result = api.verify(_arch(widths, attention, tokens, normalization), method=method, seed=seed,
                        timeout=timeout, m2=m2, prime=prime, compare=compare)
    click.echo(result.to_json() if as_json else f"{result.verdict}: {result.message}")
    if result.verdict == "disagree":
        sys.exit(EXIT_DISCREPANCY)


# Commands that live in their own modules register themselves on `main` (imported last: they
# reuse the option decorators above).
from . import cli_batch, cli_fiber, cli_geometry  # noqa: E402,F401

if __name__ == "__main__":
    # `python -m lightning_cas.cli` runs this file as __main__; the command modules registered
    # themselves on the package's copy of `main`, so run that one.
    from lightning_cas.cli import main as _package_main

    _package_main()
