"""CLI commands `dim`, `predict`, `verify`: the dimension of one architecture, its theory, and the two compared."""

from __future__ import annotations

import json
import sys

import click

from lightning_cas import api
from lightning_cas.backends.local import spectrum_bands
from lightning_cas.errors import InputError
from lightning_cas.system.points import load_inputs, load_weights
from lightning_cas.cli.common import (EXIT_DISCREPANCY, TIMEOUT_OPTION, architecture_options, clean_errors,
                                      describe_provenance, method_options, parse_architecture)
from lightning_cas.cli.progress import progress_display, run_label


@click.command("dim")
@architecture_options
@method_options
@click.option("--at", "at", default=None, metavar="FILE",
              help="The rank at these weights (JSON, .npz or .safetensors; floats are read exactly).")
@click.option("--inputs", default=None, metavar="FILE",
              help="The rank on these token matrices (N, d_0, t): .npy, .npz (key inputs) or JSON.")
@click.option("--layout", default=None, type=click.Choice(["features-tokens", "tokens-features"]),
              help="How --inputs is laid out: (N, d_0, t) features-tokens, or (N, t, d_0) tokens-features "
                   "(PyTorch's); default: from the shape (refused when t = d_0) or what the file records.")
@click.option("--exact", is_flag=True, help="With --at/--inputs: over QQ instead of mod two primes (small sizes).")
@click.option("--spectrum", is_flag=True, help="Print the singular values, in bands.")
@clean_errors
def dim_command(widths, attention, tokens, normalization, as_json, method, seed, timeout, prime, m2, quiet, at,
                inputs, layout, exact, spectrum):
    """Dimension of the neurovariety of one architecture, or the rank at given weights (functional dimension)."""
    arch = parse_architecture(widths, attention, tokens, normalization)
    point = None if at is None else load_weights(arch, at)
    if layout is not None and inputs is None:
        raise InputError("--layout says how --inputs is laid out; give --inputs FILE with it.")
    data = None if inputs is None else load_inputs(arch, inputs, layout)
    with progress_display(run_label("dim", method), quiet=quiet or as_json):
        result = api.dimension(arch, method=method, seed=seed, timeout=timeout, m2=m2, prime=prime, at=point,
                               inputs=data, exact=exact, spectrum=spectrum)
    if as_json:
        click.echo(result.to_json())
    else:
        click.echo(f"{arch}")
        where = _where(result)
        click.echo(f"dimension {result.dimension}{where}   ({describe_provenance(result)})")
        if result.generic_dimension is not None:
            click.echo(f"generic dimension {result.generic_dimension}, drop {result.drop}")
        if result.certificate is not None:
            c = result.certificate
            click.echo(f"certified: rank >= {c.lower} ({c.lower_by}); rank <= {c.upper} ({c.upper_by})"
                       if c.certified else f"rank >= {c.lower} ({c.lower_by}); rank <= {c.upper} ({c.upper_by}): "
                       "not certified equal")
        fiber = ("tangent space of the fiber at the point" if result.generic_dimension is not None
                 else "generic fiber dimension")
        click.echo(f"parameters {result.parameters}, {fiber} {result.fiber_dimension}, "
                   f"ambient dimension {result.ambient_dimension}")
        if result.failure_bound is not None:
            click.echo(f"failure bound {result.failure_bound:.3g} (probability that a run under-counts)")
        if result.spectrum:
            click.echo("spectrum bands (count: largest .. smallest): " + "; ".join(
                f"{n}: {a:.3g} .. {b:.3g}" for n, a, b in spectrum_bands(result.spectrum)))
        for note in result.notes:
            click.echo(f"note: {note}")
    if not result.consistent:
        click.echo("lightning-cas: warning: " + "; ".join(result.notes), err=True)


def _where(result) -> str:
    parts = []
    if result.at is not None:
        parts.append(f"at {result.at.source or 'the given point'}"
                     + (f" (sha256 {result.at.sha256[:12]})" if result.at.sha256 else ""))
    if result.inputs is not None:
        parts.append(f"on {result.inputs.count} inputs from {result.inputs.source or 'Python'}"
                     + (f" (sha256 {result.inputs.sha256[:12]})" if result.inputs.sha256 else ""))
    return (" " + ", ".join(parts)) if parts else ""


@click.command("predict")
@architecture_options
@TIMEOUT_OPTION
@clean_errors
def predict_command(widths, attention, tokens, normalization, as_json, timeout):
    """Closed-form predictions from the theory, each with its regime."""
    report = api.predict(parse_architecture(widths, attention, tokens, normalization), timeout=timeout)
    if as_json:
        click.echo(json.dumps(report.to_dict()))
        return
    click.echo(f"{report.architecture}")
    for pred in (report.dimension, report.parameters, report.symmetry_group_dimension, report.fiber_dimension):
        if pred.value is None:
            click.echo(f"{pred.quantity}: no prediction ({pred.reason})")
        elif pred.kind != "value":
            click.echo(f"{pred.quantity}: {pred.kind} {pred.value}   [{pred.formula}; {pred.regime}; {pred.status}]")
            for name, value, why in pred.bounds:
                click.echo(f"    {name}: {value}   ({why})")
            if pred.refined is not None:
                click.echo(f"    head-mixing bound: {pred.refined}   (sharper, proved; with head mixing, see "
                           "docs/multihead.md)")
        else:
            click.echo(f"{pred.quantity}: {pred.value}   [{pred.formula}; {pred.regime}; {pred.status}]")
    click.echo(f"ambient_dimension: {report.ambient_dimension}")


@click.command("verify")
@architecture_options
@method_options
@click.option("--compare", is_flag=True, help="Also compute the other normalization and explain the difference.")
@clean_errors
def verify_command(widths, attention, tokens, normalization, as_json, method, seed, timeout, prime, m2, quiet,
                   compare):
    """Compute the dimension, predict it, and report agreement (exit 3 on a discrepancy)."""
    arch = parse_architecture(widths, attention, tokens, normalization)
    with progress_display(run_label("verify", method), quiet=quiet or as_json):
        result = api.verify(arch, method=method, seed=seed, timeout=timeout, m2=m2, prime=prime, compare=compare)
    click.echo(result.to_json() if as_json else f"{result.verdict}: {result.message}")
    if result.verdict == "disagree":
        sys.exit(EXIT_DISCREPANCY)
