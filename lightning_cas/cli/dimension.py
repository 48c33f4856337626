"""CLI commands `dim`, `predict`, `verify`: the dimension of one architecture, its theory, and the two compared."""

from __future__ import annotations

import json
import sys

import click

from lightning_cas.cli.common import EXIT_DISCREPANCY, check_m2_format, clean_errors, echo, parse_architecture
from lightning_cas.cli.options import LAYOUT_OPTION, TIMEOUT_OPTION, architecture_options, format_option, method_options
from lightning_cas.cli.progress import progress_display, run_label
from lightning_cas.errors import InputError

FULL_SPLIT_OPTION = click.option(
    "--full-split",
    is_flag=True,
    help="The defect split at any price (by default it gets the rank's own time, else it is skipped and said).",
)


@click.command("dim")
@architecture_options
@format_option
@method_options
@click.option(
    "--at",
    "at",
    default=None,
    metavar="FILE",
    help="The rank at these weights (JSON, .npz or .safetensors; floats are read exactly).",
)
@click.option(
    "--inputs",
    default=None,
    metavar="FILE",
    help="The rank on these token matrices (N, d_0, t), or integer token ids (N, t) read as one-hot vectors "
    "(a network that starts with an embedding): .npy, .npz (key inputs) or JSON.",
)
@LAYOUT_OPTION
@click.option("--exact", is_flag=True, help="With --at/--inputs: over QQ instead of mod two primes (small sizes).")
@click.option("--spectrum", is_flag=True, help="Print the singular values, in bands.")
@FULL_SPLIT_OPTION
@clean_errors
def dim_command(
    network,
    widths,
    attention,
    tokens,
    normalization,
    output,
    method,
    seed,
    timeout,
    prime,
    m2,
    quiet,
    at,
    inputs,
    layout,
    exact,
    spectrum,
    full_split,
):
    """Dimension of the neurovariety of one architecture, or the rank at given weights (functional dimension)."""
    from lightning_cas import api

    arch = parse_architecture(widths, attention, tokens, normalization, network)
    check_m2_format(output, arch, "dim")
    as_json = output == "json"
    if layout is not None and inputs is None:
        raise InputError("--layout says how --inputs is laid out; give --inputs FILE with it.")
    point = data = None
    if at is not None or inputs is not None:  # the file readers load only for the files
        from lightning_cas.system.points import load_inputs, load_weights

        point = None if at is None else load_weights(arch, at)
        data = None if inputs is None else load_inputs(arch, inputs, layout)
    with progress_display(run_label("dim", method), quiet=quiet or as_json):
        result = api.dimension(
            arch,
            method=method,
            seed=seed,
            timeout=timeout,
            m2=m2,
            prime=prime,
            at=point,
            inputs=data,
            exact=exact,
            spectrum=spectrum,
            full_split=full_split,
        )
    if as_json:
        echo(result.to_json())
    elif output == "m2":
        echo(m2_text(result), nl=False)
    else:
        from lightning_cas.results.dimension import dimension_text

        echo(dimension_text(result, spectrum=spectrum))
    if not result.consistent:
        echo("lightning-cas: warning: " + "; ".join(result.notes), err=True)


def m2_text(result) -> str:
    """``--format m2``: imported here only, so `dim` without it never loads the geometry code."""
    from lightning_cas.geometry.formats import m2_script

    return m2_script(result)


@click.command("predict")
@architecture_options
@format_option
@TIMEOUT_OPTION
@clean_errors
def predict_command(network, widths, attention, tokens, normalization, output, timeout):
    """Closed-form predictions from the theory, each with its regime."""
    from lightning_cas import api

    arch = parse_architecture(widths, attention, tokens, normalization, network)
    check_m2_format(output, arch, "predict")
    report = api.predict(arch, timeout=timeout)
    if output == "json":
        echo(json.dumps(report.to_dict()))
        return
    if output == "m2":
        echo(m2_text(report), nl=False)
        return
    echo(str(report))


@click.command("verify")
@architecture_options
@format_option
@method_options
@click.option("--compare", is_flag=True, help="Also compute the other normalization and explain the difference.")
@FULL_SPLIT_OPTION
@clean_errors
def verify_command(
    network,
    widths,
    attention,
    tokens,
    normalization,
    output,
    method,
    seed,
    timeout,
    prime,
    m2,
    quiet,
    compare,
    full_split,
):
    """Compute the dimension, predict it, and report agreement (exit 3 on a discrepancy)."""
    from lightning_cas import api

    arch = parse_architecture(widths, attention, tokens, normalization, network)
    check_m2_format(output, arch, "verify")
    as_json = output == "json"
    with progress_display(run_label("verify", method), quiet=quiet or as_json):
        result = api.verify(
            arch, method=method, seed=seed, timeout=timeout, m2=m2, prime=prime, compare=compare, full_split=full_split
        )
    if output == "m2":
        echo(m2_text(result), nl=False)
    else:
        echo(result.to_json() if as_json else str(result))
    if result.verdict == "disagree":
        sys.exit(EXIT_DISCREPANCY)
