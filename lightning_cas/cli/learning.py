"""CLI command `llc`: the local learning coefficient at given weights, as a proved bracket."""

from __future__ import annotations

import click

from lightning_cas.cli.common import clean_errors, echo, parse_architecture
from lightning_cas.cli.options import (
    LAYOUT_OPTION,
    M2_OPTION,
    QUIET_OPTION,
    SEED_OPTION,
    TIMEOUT_OPTION,
    architecture_options,
)
from lightning_cas.cli.progress import progress_display


@click.command("llc")
@architecture_options
@click.option(
    "--at",
    "at",
    default=None,
    metavar="FILE",
    help="The weights w* (JSON, .npz or .safetensors; floats are read exactly); random integers from "
    "--seed when absent.",
)
@click.option("--no-fiber", is_flag=True, help="Skip Macaulay2's exact dimension of the fiber at w* (small networks).")
@click.option(
    "--inputs",
    default=None,
    metavar="FILE",
    help="The loss on these token matrices (N, d_0, t): their own Gram matrix.",
)
@LAYOUT_OPTION
@click.option("--lct", is_flag=True, help="Add lct/2 (Dmodules' log canonical threshold; 6 weights at most).")
@click.option(
    "--charts",
    default=None,
    metavar="FILE",
    help="Write the Newton polyhedron's chart data (JSON) where it decides λ (docs/learning.md).",
)
@SEED_OPTION
@TIMEOUT_OPTION
@M2_OPTION
@QUIET_OPTION
@clean_errors
def llc_command(
    network,
    widths,
    attention,
    tokens,
    normalization,
    as_json,
    at,
    no_fiber,
    inputs,
    layout,
    lct,
    charts,
    seed,
    timeout,
    m2,
    quiet,
):
    """The local learning coefficient λ at w* (singular learning theory): exact, or a proved bracket."""
    from lightning_cas.geometry.learning.bracket import learning_coefficient

    arch = parse_architecture(widths, attention, tokens, normalization, network)
    point = None
    if at is not None:
        from lightning_cas.system.points import load_weights

        point = load_weights(arch, at)
    with progress_display("llc", quiet=quiet or as_json):
        result = learning_coefficient(
            arch, point, seed=seed, timeout=timeout, m2=m2, fiber=not no_fiber, lct=lct, inputs=inputs, layout=layout
        )
    echo(result.to_json() if as_json else result.text())
    if charts is not None:
        from lightning_cas.geometry.learning.bracket import write_chart_data

        echo(write_chart_data(arch, result, point, charts, seed=seed, m2=m2))
