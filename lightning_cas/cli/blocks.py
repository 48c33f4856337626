"""CLI command `blocks`: the table of dimensions and defects of small transformer stacks and polynomial networks."""

from __future__ import annotations

import json

import click

from lightning_cas.cli.common import JSON_OPTION, clean_errors


@click.command("blocks")
@click.option("--out", default="blocks", show_default=True, help="Directory for table.csv, defects.csv, findings.md "
              "and blocks.png.")
@click.option("--quick", is_flag=True, help="A smaller family (a minute instead of several).")
@JSON_OPTION
@clean_errors
def blocks_command(out, quick, as_json):
    """Dimensions and defects of networks of blocks, against the published formulas and proved bounds."""
    from lightning_cas.batch.blocks import build

    def progress(done, total, label):
        if not as_json and done % 25 == 0:
            click.echo(f"lightning-cas: {done}/{total} networks ({label})", err=True)
    summary = build(out, quick=quick, progress=progress)
    if as_json:
        click.echo(json.dumps(summary))
        return
    click.echo(f"{summary['networks']} networks: {summary['published']} inside a published formula's regime, "
               f"{summary['defects']} defects ({summary['explained_defects']} explained, "
               f"{summary['unexplained_defects']} with an unexplained part), {summary['disagreements']} "
               f"disagreements; written to {summary['out']}/")
