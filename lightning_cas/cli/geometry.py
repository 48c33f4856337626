"""CLI commands for one-layer geometry (registered in lightning_cas.cli): implicit, singular,
boundary, claims. Each prints a short human summary; one JSON object with --json (= --format json);
Macaulay2 input (``--format m2``) or LaTeX (``--format latex``) for the ideals."""

from __future__ import annotations

import json
import sys
import threading
import time
from contextlib import contextmanager

import click

from lightning_cas.cli.common import (JSON_OPTION, M2_OPTION, SEED_OPTION, TIMEOUT_OPTION, Number, apply_options,
                                      clean_errors, format_option, network_options, parse_architecture,
                                      plain_architecture)
from lightning_cas.core.architecture import Architecture
from lightning_cas.system.points import load_point
from lightning_cas.errors import InputError, UnsupportedError
from lightning_cas.geometry import claims
from lightning_cas.geometry.boundary import boundary
from lightning_cas.geometry.formats import latex_document, m2_script
from lightning_cas.geometry.implicit import implicit
from lightning_cas.geometry.pointwise import is_singular
from lightning_cas.geometry.singular import SINGULAR_METHOD_SPELLINGS, singular_locus
from lightning_cas.geometry.text import boundary_text, implicit_text, singular_text
from lightning_cas.options import resolve

COORDINATES_OPTION = click.option("--coordinates", "all_coordinates", is_flag=True,
                                  help="List every coordinate y_i with its polynomial in the parameters.")


def _geometry_options(fn):
    options = [
        click.option("--widths", default=None, help="Widths d,d' of the one layer, e.g. 2,1."),
        click.option("--attention", default=None, help="Attention dimension a, e.g. 1."),
        click.option("--tokens", default=None, help="Number of tokens t (default 2)."),
        JSON_OPTION,
        SEED_OPTION,
        TIMEOUT_OPTION,
        M2_OPTION,
    ]
    return network_options(apply_options(fn, options))


def _ideal_formats(fn):
    """The geometry options, with --format for the commands that print ideals."""
    return _geometry_options(format_option(fn))


def _emit(res, output: str) -> bool:
    """Print ``res`` in a machine format; False for text (the command prints its own summary)."""
    if output == "json":
        click.echo(res.to_json())
    elif output == "m2":
        click.echo(m2_script(res), nl=False)
    elif output == "latex":
        click.echo(latex_document(res), nl=False)
    return output != "text"


def _no_ideals(output: str, what: str) -> None:
    if output in ("m2", "latex"):
        raise InputError(f"--format {output} writes rings and ideals, and {what} computes none; use --format "
                         "text or json.")


def _arch(widths, attention, tokens, verb: str, seed, timeout, m2) -> Architecture:
    """The architecture, with the common options validated before any progress line is printed."""
    arch = plain_architecture(parse_architecture(widths, attention, tokens, None),
                              "the geometry commands (implicit, singular, boundary, claims)")
    if arch.multihead:
        raise UnsupportedError("the geometry commands (implicit, singular, boundary, claims) study one head; "
                               "for several heads use dim, verify or fiber.")
    resolve(verb, arch, seed=seed, timeout=timeout, m2=m2)
    return arch


def _progress(message: str) -> None:
    """Long M2 runs: say what is running on stderr (stdout stays clean for --json)."""
    click.echo(f"lightning-cas: {message} ...", err=True)


def run_with_progress(message: str, fn, timeout: float | None = None, console=None):
    """Run ``fn()`` (an M2-backed call) in this thread and show what runs on stderr; stdout stays
    clean for --json.

    The work stays in the main thread, where the verb's deadline (its alarm) applies: ``--timeout``
    has one mechanism. On a terminal (or with a given rich ``console``) a spinner with the elapsed
    time and the limit is drawn by :func:`spinner`; otherwise one line, as logs want.
    """
    if console is None:
        if not sys.stderr.isatty():
            _progress(message)
            return fn()
        from rich.console import Console
        console = Console(stderr=True)
    with spinner(console, message, timeout):
        return fn()


@contextmanager
def spinner(console, message: str, timeout: float | None = None, every_s: float = 0.25):
    """A rich status line ``message: N s (limit T s)`` while the body runs, then one closing line.

    Display only: a daemon thread redraws the elapsed time; the body runs undisturbed in the caller's
    thread, and an exception from it (a time limit, Ctrl-C) ends the display and goes on up.
    """
    start = time.monotonic()
    limit = f" (limit {timeout:g} s)" if timeout else ""
    stop = threading.Event()
    outcome = "stopped after"
    try:
        with console.status(f"{message}: 0 s{limit}") as status:
            def redraw():
                while not stop.wait(every_s):
                    status.update(f"{message}: {time.monotonic() - start:.0f} s{limit}")

            drawer = threading.Thread(target=redraw, daemon=True)
            drawer.start()
            try:
                yield
                outcome = "done in"
            finally:
                stop.set()
                drawer.join()
    finally:
        console.print(f"lightning-cas: {message}: {outcome} {time.monotonic() - start:.1f} s")


@click.command("implicit")
@_ideal_formats
@click.option("--one-coordinate", is_flag=True, help="Only output row 1, token 1 (one output coordinate).")
@click.option("--numerical-degree", "runs", default=0, show_default=True, type=Number(low=0, high=50),
              help="Also run numericalImageDegree this many times and report the consensus (numeric).")
@click.option("--no-ideal", is_flag=True, help="Skip elimination (use with --numerical-degree for large cases).")
@COORDINATES_OPTION
@clean_errors
def implicit_command(widths, attention, tokens, output, seed, timeout, m2, one_coordinate, runs, no_ideal,
                     all_coordinates):
    """Implicit equations of a one-layer neurovariety: ideal, dimension, degree, generators."""
    arch = _arch(widths, attention, tokens, "implicit", seed, timeout, m2)
    res = run_with_progress(
        "running Macaulay2 (elimination)" if not no_ideal else "running Macaulay2 (numerical degree)",
        lambda: implicit(arch, one_coordinate=one_coordinate, numerical_degree_runs=runs,
                         ideal=not no_ideal, seed=seed, timeout=timeout, m2=m2), timeout)
    if _emit(res, output):
        return
    click.echo(implicit_text(res, coordinates=all_coordinates))


@click.command("singular")
@_ideal_formats
@click.option("--at", "at", default=None, type=click.Path(dir_okay=False),
              help="weights.json: test this point instead of listing the singular locus.")
@click.option("--one-coordinate", is_flag=True, help="Only output row 1, token 1 (with --at or --method whole-ideal).")
@click.option("--method", type=click.Choice(SINGULAR_METHOD_SPELLINGS), default="strata", show_default=True,
              help="strata: Jacobian criterion on weight slices by G-orbits (finishes for the small cases); "
                   "whole-ideal (also spelled jacobian): minors of the whole implicit ideal.")
@COORDINATES_OPTION
@clean_errors
def singular_command(widths, attention, tokens, output, seed, timeout, m2, at, one_coordinate, method,
                     all_coordinates):
    """Singular locus (Jacobian criterion) and its components, or whether a given point is singular."""
    arch = _arch(widths, attention, tokens, "singular_locus", seed, timeout, m2)
    if at is not None:
        _no_ideals(output, "singular --at")
        point = load_point(arch, at)
        res = run_with_progress("running Macaulay2 (implicit ideal)",
                                lambda: is_singular(arch, point, seed=seed, timeout=timeout, m2=m2), timeout)
        if not _emit(res, output):
            click.echo(str(res))
        return
    res = run_with_progress("running Macaulay2 (implicit ideal, Jacobian criterion, minimal primes)",
                            lambda: singular_locus(arch, one_coordinate=one_coordinate, seed=seed,
                                                   timeout=timeout, m2=m2, method=method), timeout)
    if not _emit(res, output):
        click.echo(singular_text(res, coordinates=all_coordinates))


@click.command("boundary")
@_ideal_formats
@click.option("--at", "at", default=None, type=click.Path(dir_okay=False),
              help="weights.json: decide whether phi_W is a boundary point (with a certificate).")
@click.option("--verdict-only", is_flag=True,
              help="With --at: skip the Zariski closure of the boundary (the singular locus takes ~1 min for d=d'=2).")
@COORDINATES_OPTION
@clean_errors
def boundary_command(widths, attention, tokens, output, seed, timeout, m2, at, verdict_only, all_coordinates):
    """Zariski closure of the real boundary and, with --at, a certified interior/boundary verdict."""
    arch = _arch(widths, attention, tokens, "boundary", seed, timeout, m2)
    if verdict_only:
        _no_ideals(output, "boundary --verdict-only")
    point = load_point(arch, at) if at is not None else None
    res = run_with_progress("running Macaulay2 (singular and critical loci on G-orbit slices, real verdicts)"
                            if not verdict_only else "running Macaulay2 (fiber and witness curves at the point)",
                            lambda: boundary(arch, point, seed=seed, timeout=timeout, m2=m2,
                                             closure=not verdict_only), timeout)
    if not _emit(res, output):
        click.echo(boundary_text(res, coordinates=all_coordinates))


@click.command("claims")
@_geometry_options
@click.option("--pointwise-only", is_flag=True, help="Skip the whole singular locus / critical image (fast).")
@clean_errors
def claims_command(widths, attention, tokens, as_json, seed, timeout, m2, pointwise_only):
    """Check the claims of docs/mathematics.md §5 (singular and boundary points) for one small architecture;
    exit 3 on a disagreement."""
    arch = _arch(widths, attention, tokens, "check_claims", seed, timeout, m2)
    res = run_with_progress("running Macaulay2 (singular locus, critical image, strata)",
                            lambda: claims.check_claims(arch, seed=seed, timeout=timeout, m2=m2,
                                                          full=not pointwise_only), timeout)
    if as_json:
        click.echo(json.dumps(res.to_dict()))
    else:
        click.echo(str(res))
    if not res.all_agree:
        sys.exit(3)
