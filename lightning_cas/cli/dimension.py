"""CLI commands `dim`, `predict`, `verify`: the dimension of one architecture, its theory, and the two compared."""

from __future__ import annotations

import json
import sys

import click

from lightning_cas import api
from lightning_cas.cli.common import (EXIT_DISCREPANCY, architecture_options, clean_errors, describe_provenance,
                                      method_options, parse_architecture, progress_display, run_label)


@click.command("dim")
@architecture_options
@method_options
@clean_errors
def dim_command(widths, attention, tokens, normalization, as_json, method, seed, timeout, prime, m2, quiet):
    """Dimension of the neurovariety of one architecture."""
    arch = parse_architecture(widths, attention, tokens, normalization)
    with progress_display(run_label("dim", method), quiet=quiet or as_json):
        result = api.dimension(arch, method=method, seed=seed, timeout=timeout, m2=m2, prime=prime)
    if as_json:
        click.echo(result.to_json())
    else:
        click.echo(f"{arch}")
        click.echo(f"dimension {result.dimension}   ({describe_provenance(result)})")
        click.echo(f"parameters {result.parameters}, generic fiber dimension {result.fiber_dimension}, "
                   f"ambient dimension {result.ambient_dimension}")
        for note in result.notes:
            click.echo(f"note: {note}")
    if not result.consistent:
        click.echo("lightning-cas: warning: " + "; ".join(result.notes), err=True)


@click.command("predict")
@architecture_options
@clean_errors
def predict_command(widths, attention, tokens, normalization, as_json):
    """Closed-form predictions from the theory, each with its regime."""
    report = api.predict(parse_architecture(widths, attention, tokens, normalization))
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
