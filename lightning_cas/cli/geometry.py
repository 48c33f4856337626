"""CLI commands for one-layer geometry (registered in lightning_cas.cli): implicit, singular,
boundary, claims. Each prints a short human summary; one JSON object with --json (= --format json);
Macaulay2 input (``--format m2``) or LaTeX (``--format latex``) for the ideals."""

from __future__ import annotations

import json
import sys

import click

from lightning_cas.cli.common import clean_errors, echo, parse_architecture, plain_architecture
from lightning_cas.cli.options import (
    JSON_OPTION,
    M2_OPTION,
    QUIET_OPTION,
    SEED_OPTION,
    TIMEOUT_OPTION,
    Number,
    apply_options,
    format_option,
    network_options,
)
from lightning_cas.cli.progress import progress_display
from lightning_cas.core.methods import SINGULAR_METHOD_SPELLINGS
from lightning_cas.core.network import Network
from lightning_cas.errors import InputError, UnsupportedError

# the geometry modules (sympy, Macaulay2) load inside each command, so --help needs neither

COORDINATES_OPTION = click.option(
    "--coordinates",
    "all_coordinates",
    is_flag=True,
    help="List every coordinate y_i with its polynomial in the parameters.",
)


def _geometry_options(fn):
    options = [
        click.option("--widths", default=None, help="Widths d,d' of the one layer, e.g. 2,1."),
        click.option("--attention", default=None, help="Attention dimension a, e.g. 1."),
        click.option("--tokens", default=None, help="Number of tokens t (default 2)."),
        JSON_OPTION,
        SEED_OPTION,
        TIMEOUT_OPTION,
        M2_OPTION,
        QUIET_OPTION,
    ]
    return network_options(apply_options(fn, options))


def _ideal_formats(fn):
    """The geometry options, with --format for the commands that print ideals."""
    return _geometry_options(format_option(fn))


def _emit(res, output: str) -> bool:
    """Print ``res`` in a machine format; False for text (the command prints its own summary)."""
    from lightning_cas.geometry.formats import latex_document, m2_script

    if output == "json":
        echo(res.to_json())
    elif output == "m2":
        echo(m2_script(res), nl=False)
    elif output == "latex":
        echo(latex_document(res), nl=False)
    return output != "text"


def _no_ideals(output: str, what: str) -> None:
    if output in ("m2", "latex"):
        raise InputError(
            f"--format {output} writes rings and ideals, and {what} computes none; use --format text or json."
        )


def _arch(network, widths, attention, tokens, verb: str, seed, timeout, m2) -> Network:
    """The architecture, with the common options validated before any progress line is printed."""
    arch = plain_architecture(
        parse_architecture(widths, attention, tokens, None, network),
        "the geometry commands (implicit, singular, boundary, claims)",
    )
    if arch.multihead:
        raise UnsupportedError(
            "the geometry commands (implicit, singular, boundary, claims) study one head; "
            "for several heads use dim, verify or fiber."
        )
    from lightning_cas.options import resolve

    resolve(verb, arch, seed=seed, timeout=timeout, m2=m2)
    return arch


def _run(command: str, message: str, fn, timeout: float | None, quiet: bool):
    """``fn()`` (Macaulay2-backed) under the one progress display; without a terminal, one line says what runs."""
    with progress_display(f"{command} (Macaulay2)", quiet=quiet, task=message, limit=timeout, announce=True):
        return fn()


@click.command("implicit")
@_ideal_formats
@click.option("--one-coordinate", is_flag=True, help="Only output row 1, token 1 (one output coordinate).")
@click.option(
    "--numerical-degree",
    "runs",
    default=0,
    show_default=True,
    type=Number(low=0, high=50),
    help="Also run numericalImageDegree this many times and report the consensus (numeric).",
)
@click.option("--no-ideal", is_flag=True, help="Skip elimination (use with --numerical-degree for large cases).")
@COORDINATES_OPTION
@clean_errors
def implicit_command(
    network,
    widths,
    attention,
    tokens,
    output,
    seed,
    timeout,
    m2,
    quiet,
    one_coordinate,
    runs,
    no_ideal,
    all_coordinates,
):
    """Implicit equations of a one-layer neurovariety: ideal, dimension, degree, generators."""
    arch = _arch(network, widths, attention, tokens, "implicit", seed, timeout, m2)
    # the geometry (sympy, Macaulay2) loads once the options are known to be good
    from lightning_cas.geometry.one_layer.implicit import implicit

    res = _run(
        "implicit",
        "running Macaulay2 (elimination)" if not no_ideal else "running Macaulay2 (numerical degree)",
        lambda: implicit(
            arch,
            one_coordinate=one_coordinate,
            numerical_degree_runs=runs,
            ideal=not no_ideal,
            seed=seed,
            timeout=timeout,
            m2=m2,
        ),
        timeout,
        quiet or output != "text",
    )
    if _emit(res, output):
        return
    from lightning_cas.results.implicit import implicit_text

    echo(implicit_text(res, coordinates=all_coordinates))


@click.command("singular")
@_ideal_formats
@click.option(
    "--at",
    "at",
    default=None,
    type=click.Path(dir_okay=False),
    help="weights.json: test this point instead of listing the singular locus.",
)
@click.option("--one-coordinate", is_flag=True, help="Only output row 1, token 1 (with --at or --method whole-ideal).")
@click.option(
    "--method",
    type=click.Choice(SINGULAR_METHOD_SPELLINGS),
    default="strata",
    show_default=True,
    help="strata: Jacobian criterion on weight slices by G-orbits (finishes for the small cases); "
    "whole-ideal (also spelled jacobian): minors of the whole implicit ideal.",
)
@COORDINATES_OPTION
@clean_errors
def singular_command(
    network, widths, attention, tokens, output, seed, timeout, m2, quiet, at, one_coordinate, method, all_coordinates
):
    """Singular locus (Jacobian criterion) and its components, or whether a given point is singular."""
    arch = _arch(network, widths, attention, tokens, "singular_locus", seed, timeout, m2)
    # the geometry (sympy, Macaulay2) loads once the options are known to be good
    from lightning_cas.geometry.one_layer.pointwise import is_singular
    from lightning_cas.geometry.one_layer.singular import singular_locus
    from lightning_cas.system.points import load_point

    if at is not None:
        _no_ideals(output, "singular --at")
        point = load_point(arch, at)
        res = _run(
            "singular",
            "running Macaulay2 (implicit ideal)",
            lambda: is_singular(arch, point, seed=seed, timeout=timeout, m2=m2),
            timeout,
            quiet or output != "text",
        )
        if not _emit(res, output):
            echo(str(res))
        return
    res = _run(
        "singular",
        "running Macaulay2 (implicit ideal, Jacobian criterion, minimal primes)",
        lambda: singular_locus(arch, one_coordinate=one_coordinate, seed=seed, timeout=timeout, m2=m2, method=method),
        timeout,
        quiet or output != "text",
    )
    if not _emit(res, output):
        from lightning_cas.results.singular import singular_text

        echo(singular_text(res, coordinates=all_coordinates))


@click.command("boundary")
@_ideal_formats
@click.option(
    "--at",
    "at",
    default=None,
    type=click.Path(dir_okay=False),
    help="weights.json: decide whether phi_W is a boundary point (with a certificate).",
)
@click.option(
    "--verdict-only",
    is_flag=True,
    help="With --at: skip the Zariski closure of the boundary (the singular locus takes ~1 min for d=d'=2).",
)
@COORDINATES_OPTION
@clean_errors
def boundary_command(
    network, widths, attention, tokens, output, seed, timeout, m2, quiet, at, verdict_only, all_coordinates
):
    """Zariski closure of the real boundary and, with --at, a certified interior/boundary verdict."""
    arch = _arch(network, widths, attention, tokens, "boundary", seed, timeout, m2)
    # the geometry (sympy, Macaulay2) loads once the options are known to be good
    from lightning_cas.geometry.one_layer.boundary import boundary
    from lightning_cas.system.points import load_point

    if verdict_only:
        _no_ideals(output, "boundary --verdict-only")
    point = load_point(arch, at) if at is not None else None
    res = _run(
        "boundary",
        "running Macaulay2 (singular and critical loci on G-orbit slices, real verdicts)"
        if not verdict_only
        else "running Macaulay2 (fiber and witness curves at the point)",
        lambda: boundary(arch, point, seed=seed, timeout=timeout, m2=m2, closure=not verdict_only),
        timeout,
        quiet or output != "text",
    )
    if not _emit(res, output):
        from lightning_cas.results.boundary import boundary_text

        echo(boundary_text(res, coordinates=all_coordinates))


@click.command("claims")
@_geometry_options
@click.option("--pointwise-only", is_flag=True, help="Skip the whole singular locus / critical image (fast).")
@clean_errors
def claims_command(network, widths, attention, tokens, as_json, seed, timeout, m2, quiet, pointwise_only):
    """Check the claims of docs/mathematics.md §5 (singular and boundary points) for one small architecture;
    exit 3 on a disagreement."""
    arch = _arch(network, widths, attention, tokens, "check_claims", seed, timeout, m2)
    # the geometry (sympy, Macaulay2) loads once the options are known to be good
    from lightning_cas.geometry.one_layer import claims

    res = _run(
        "claims",
        "running Macaulay2 (singular locus, critical image, strata)",
        lambda: claims.check_claims(arch, seed=seed, timeout=timeout, m2=m2, full=not pointwise_only),
        timeout,
        quiet or as_json,
    )
    if as_json:
        echo(json.dumps(res.to_dict()))
    else:
        echo(str(res))
    if not res.all_agree:
        sys.exit(3)
