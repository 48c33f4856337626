"""CLI commands `blocks` and `degrees`: the tables of dimensions and defects of small transformer stacks and
polynomial networks, and of degrees and ED degrees of small one-layer networks."""

from __future__ import annotations

import json

import click

from lightning_cas.cli.common import clean_errors, echo
from lightning_cas.cli.options import JSON_OPTION, Number
from lightning_cas.cli.progress import progress_display


@click.command("blocks")
@click.option(
    "--out",
    default="blocks",
    show_default=True,
    help="Directory for table.csv, defects.csv, findings.md and blocks.png.",
)
@click.option("--quick", is_flag=True, help="A smaller family (a minute instead of several).")
@JSON_OPTION
@clean_errors
def blocks_command(out, quick, as_json):
    """Dimensions and defects of networks of blocks, against the published formulas and proved bounds."""
    from lightning_cas.batch.blocks import build

    # the one display: networks done of all (one line when stderr is not a terminal)
    with progress_display("blocks", quiet=as_json, task="dimensions of networks of blocks", announce=True) as state:
        summary = build(
            out,
            quick=quick,
            progress=None
            if state is None
            else (lambda done, total, label: state.update(label, done=done, total=total, unit="networks")),
        )
    if as_json:
        echo(json.dumps(summary))
        return
    echo(
        f"{summary['networks']} networks: {summary['published']} inside a published formula's regime, "
        f"{summary['defects']} defects ({summary['explained_defects']} explained, "
        f"{summary['unexplained_defects']} with an unexplained part), {summary['disagreements']} "
        f"disagreements; written to {summary['out']}/"
    )


@click.command("degrees")
@click.option("--out", default="degrees", show_default=True, help="Directory for degrees.csv and degrees.md.")
@click.option(
    "--timeout",
    type=Number(integer=False, low=0, low_open=True, high=86400),
    default=120.0,
    show_default=True,
    help="Seconds for each number (a case past it says so in its row).",
)
@JSON_OPTION
@clean_errors
def degrees_command(out, timeout, as_json):
    """Degrees and generic ED degrees of small one-layer networks, each with its method and time."""
    from lightning_cas.batch.degree_table import COLUMNS, degree_rows, write_table

    def shown(row):
        if not as_json:
            echo(", ".join(f"{k}={row[k]}" for k in COLUMNS if row[k] != ""))

    rows = write_table(degree_rows(timeout=timeout), out, progress=shown)
    if as_json:
        echo(json.dumps({"out": out, "rows": rows}))
