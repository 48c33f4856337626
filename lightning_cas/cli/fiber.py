"""CLI command `fiber` (registered in lightning_cas.cli): which weights give the same function."""

from __future__ import annotations

from dataclasses import replace

import click

from lightning_cas.cli.common import clean_errors, echo, parse_architecture, plain_architecture
from lightning_cas.cli.options import (
    INTEGER,
    M2_OPTION,
    QUIET_OPTION,
    SEED_OPTION,
    TIMEOUT_OPTION,
    architecture_options,
    format_option,
)
from lightning_cas.cli.progress import progress_display, run_label
from lightning_cas.core.methods import FIBER_METHODS as METHODS
from lightning_cas.errors import InputError


@click.command("fiber")
@architecture_options
@format_option
@click.option(
    "--at",
    "at",
    default=None,
    metavar="FILE",
    help='Weight point: JSON ({"layers": ...} or {"blocks": ...}), .npz or .safetensors; floats exact.',
)
@click.option("--save-point", default=None, help="Write the point used (e.g. the random one) to this file.")
@click.option(
    "--method",
    default="auto",
    show_default=True,
    type=click.Choice(METHODS),
    help="m2 = decompose the fiber in Macaulay2; modp = dimensions only; auto = m2 when small.",
)
@SEED_OPTION
@TIMEOUT_OPTION
@click.option("--prime", default=None, type=INTEGER, help="Decompose over ZZ/prime instead of QQ (faster).")
@M2_OPTION
@QUIET_OPTION
@clean_errors
def fiber_command(
    network, widths, attention, tokens, normalization, output, at, save_point, method, seed, timeout, prime, m2, quiet
):
    """The fiber through a weight point W, compared with the orbit of the named symmetries."""
    from lightning_cas.core.weights import random_point
    from lightning_cas.geometry.fibers.fiber import fiber
    from lightning_cas.system import points
    from lightning_cas.system.points import load_point

    arch = parse_architecture(widths, attention, tokens, normalization, network)
    if arch.paper is None:
        if output == "latex":  # tangent ranks only: there is no ideal to write
            raise InputError(
                "--format latex writes ideals, and the fiber of a network of blocks is computed by "
                "tangent ranks, without one; use --format text, json or m2."
            )
        if output == "m2" and arch.normalization != "none":
            raise InputError(
                "--format m2 builds the network in Macaulay2, which builds polynomial networks only; "
                "this one has softmax attention (use --format text or json)."
            )
        return _network_fiber_command(arch, output, at, save_point, method, seed, timeout, prime, m2, quiet)
    arch = plain_architecture(arch, "fiber")
    point = load_point(arch, at) if at is not None else None
    if save_point is not None:
        if point is None:  # the verb draws the same point; drawn here only when it is to be saved
            point = random_point(arch, seed)
        points.save_point(point, save_point)
    with progress_display(run_label("fiber", method), quiet=quiet or output != "text"):
        result = fiber(arch, point=point, seed=seed, method=method, timeout=timeout, m2=m2, prime=prime)
    if output == "json":
        echo(result.to_json())
        return
    if output in ("m2", "latex"):
        from lightning_cas.geometry.formats import latex_document, m2_script

        echo(m2_script(result) if output == "m2" else latex_document(result), nl=False)
        return
    echo(str(result if at is None else replace(result, point_source=f"file {at}")))


def _network_fiber_command(net, output, at, save_point, method, seed, timeout, prime, m2, quiet):
    """A network of blocks: the tangent ranks of geometry.fibers.network."""
    from lightning_cas.geometry.fibers.fiber import fiber
    from lightning_cas.system.files import check_output_target
    from lightning_cas.system.points import load_weights

    point = load_weights(net, at) if at is not None else None
    if save_point is not None:
        check_output_target(save_point, "weight file")  # a device or a directory is refused before any work
    with progress_display(run_label("fiber", method), quiet=quiet or output != "text"):
        result = fiber(net, point=point, seed=seed, method=method, timeout=timeout, m2=m2, prime=prime)
    if save_point is not None:  # the result holds the point frozen (tuples); its JSON form is the file's
        save_weights_file(result.to_dict()["point"], net, save_point)
    if output == "json":
        echo(result.to_json())
        return
    if output == "m2":
        from lightning_cas.geometry.formats import m2_script

        echo(m2_script(result), nl=False)
        return
    echo(str(result))


def save_weights_file(point_dict, net, path) -> None:
    from lightning_cas.system.points import point_from_data, save_weights

    save_weights(point_from_data(net, point_dict), path)
