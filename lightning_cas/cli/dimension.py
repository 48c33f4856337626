"""CLI commands `dim`, `predict`, `verify`: the dimension of one architecture, its theory, and the two compared."""

from __future__ import annotations

import json
import sys

import click

from lightning_cas.cli.common import (EXIT_DISCREPANCY, echo, TIMEOUT_OPTION, architecture_options, clean_errors,
                                      describe_provenance, method_options, parse_architecture)
from lightning_cas.cli.progress import progress_display, run_label
from lightning_cas.core.architecture import as_network


@click.command("dim")
@architecture_options
@method_options
@click.option("--at", "at", default=None, metavar="FILE",
              help="The rank at these weights (JSON, .npz or .safetensors; floats are read exactly).")
@click.option("--inputs", default=None, metavar="FILE",
              help="The rank on these token matrices (N, d_0, t): .npy, .npz (key inputs) or JSON.")
@click.option("--exact", is_flag=True, help="With --at/--inputs: over QQ instead of mod two primes (small sizes).")
@click.option("--spectrum", is_flag=True, help="Print the singular values, in bands.")
@clean_errors
def dim_command(widths, attention, tokens, normalization, as_json, method, seed, timeout, prime, m2, quiet, at,
                inputs, exact, spectrum):
    """Dimension of the neurovariety of one architecture, or the rank at given weights (functional dimension)."""
    from lightning_cas import api

    arch = parse_architecture(widths, attention, tokens, normalization)
    point = data = None
    if at is not None or inputs is not None:  # the file readers load only for the files
        from lightning_cas.system.points import load_inputs, load_weights

        point = None if at is None else load_weights(arch, at)
        data = None if inputs is None else load_inputs(arch, inputs)
    with progress_display(run_label("dim", method), quiet=quiet or as_json):
        result = api.dimension(arch, method=method, seed=seed, timeout=timeout, m2=m2, prime=prime, at=point,
                               inputs=data, exact=exact, spectrum=spectrum)
    if as_json:
        echo(result.to_json())
    else:
        echo(f"{arch}")
        for line in dimension_lines(result, spectrum):
            echo(line)
        for note in result.notes:
            echo(f"note: {note}")
        if result.explained is not None:
            echo("\n".join(result.explained.lines()))
    if not result.consistent:
        echo("lightning-cas: warning: " + "; ".join(result.notes), err=True)


def dimension_lines(result, spectrum: bool = False) -> list[str]:
    """The text of a dimension or rank-at-a-point result, after the architecture line (notes excepted)."""
    where, how, c = _where(result), describe_provenance(result), result.certificate
    lines = [f"rank between {c.lower} and {c.upper}{where}   ({how})" if c is not None and not c.certified
             else f"dimension {result.dimension}{where}   ({how})"]
    if result.generic_dimension is not None:
        lines.append(f"generic dimension {result.generic_dimension}, drop {result.drop}")
    if c is not None:
        lines.append(f"certified: rank {c.lower}: >= by {c.lower_by}; <= by {c.upper_by}" if c.certified else
                     f"not certified: rank >= {c.lower} ({c.lower_by}); rank <= {c.upper} ({c.upper_by})"
                     + (f"; {c.stopped} stopped it at {c.digits} digits" if c.stopped else ""))
    for near in result.near_ranks:
        moved = ", ".join(f"block {b['block']}" + (f" head {b['head']}" if _has_heads(result, b['block']) else "")
                          + f" {b['share']:.0%}" for b in near.blocks)
        lines.append(f"near-drop: {near.directions} directions at scale {near.scale:.0e}"
                     + (f" (moving {moved})" if moved else "")
                     + f": within {near.within:.1e} of rank {near.rank} (relative distance, proved)")
    fiber = ("tangent space of the fiber at the point" if result.generic_dimension is not None
             else "kernel of the differential at the point" if result.at is not None or result.inputs is not None
             else "generic fiber dimension")
    ambient = ("no ambient space of coefficients (not polynomial)" if result.ambient_dimension is None
               else f"ambient dimension {result.ambient_dimension}")
    lines.append(f"parameters {result.parameters}, {fiber} {result.fiber_dimension}, {ambient}")
    if result.failure_bound is not None:
        lines.append(f"failure bound {result.failure_bound:.3g} (probability that a run under-counts)")
    if spectrum and result.bands:
        lines.append("singular values of the Jacobian at the point, in proved bands:")
        for b in result.bands:
            lines.append(f"  {b.count} exact zeros" if b.kind == "exact zeros" else
                         f"  {b.count} at most {b.largest:.3g}, not resolved (not proved zero)"
                         if b.kind == "unresolved" else f"  {b.count} in [{b.smallest:.3g}, {b.largest:.3g}]")
    elif spectrum and result.spectrum:
        from lightning_cas.backends.local import spectrum_bands

        lines.append("spectrum bands (float64; count: largest .. smallest): " + "; ".join(
            f"{n}: {a:.3g} .. {b:.3g}" for n, a, b in spectrum_bands(result.spectrum)))
    return lines


def _has_heads(result, block: int) -> bool:
    blocks = as_network(result.architecture).blocks
    return 0 <= block < len(blocks) and getattr(blocks[block], "heads", 1) > 1


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
    from lightning_cas import api

    report = api.predict(parse_architecture(widths, attention, tokens, normalization), timeout=timeout)
    if as_json:
        echo(json.dumps(report.to_dict()))
        return
    echo(f"{report.architecture}")
    for pred in (report.dimension, report.parameters, report.symmetry_group_dimension, report.fiber_dimension):
        if pred.value is None:
            echo(f"{pred.quantity}: no prediction ({pred.reason})")
        elif pred.kind != "value":
            echo(f"{pred.quantity}: {pred.kind} {pred.value}   [{pred.formula}; {pred.regime}; {pred.status}]")
            for name, value, why in pred.bounds:
                echo(f"    {name}: {value}   ({why})")
            if pred.refined is not None:
                echo(f"    head-mixing bound: {pred.refined}   (sharper, proved; with head mixing, see "
                           "docs/multihead.md)")
        else:
            echo(f"{pred.quantity}: {pred.value}   [{pred.formula}; {pred.regime}; {pred.status}]")
    echo(f"ambient_dimension: {report.ambient_dimension}")


@click.command("verify")
@architecture_options
@method_options
@click.option("--compare", is_flag=True, help="Also compute the other normalization and explain the difference.")
@clean_errors
def verify_command(widths, attention, tokens, normalization, as_json, method, seed, timeout, prime, m2, quiet,
                   compare):
    """Compute the dimension, predict it, and report agreement (exit 3 on a discrepancy)."""
    from lightning_cas import api

    arch = parse_architecture(widths, attention, tokens, normalization)
    with progress_display(run_label("verify", method), quiet=quiet or as_json):
        result = api.verify(arch, method=method, seed=seed, timeout=timeout, m2=m2, prime=prime, compare=compare)
    echo(result.to_json() if as_json else f"{result.verdict}: {result.message}")
    if not as_json and result.explained is not None:
        echo("\n".join(result.explained.lines()))
    if result.verdict == "disagree":
        sys.exit(EXIT_DISCREPANCY)
