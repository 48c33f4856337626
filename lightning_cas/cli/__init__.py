"""The command line: parse, call the API, print. Any LightningError is one line and an exit code.

Commands live one module per concern and are registered here explicitly, by name. A command's
module is imported only when that command runs, so `lightning-cas dim` never imports sympy or the
geometry code (start-up is measured in `make bench`).
"""

from __future__ import annotations

import importlib

import click

from lightning_cas import __version__
from lightning_cas.cli.common import OneLineErrors

# command name -> (module, function): the whole command line at a glance
COMMANDS = {
    "dim": ("lightning_cas.cli.dimension", "dim_command"),
    "predict": ("lightning_cas.cli.dimension", "predict_command"),
    "verify": ("lightning_cas.cli.dimension", "verify_command"),
    "fiber": ("lightning_cas.cli.fiber", "fiber_command"),
    "implicit": ("lightning_cas.cli.geometry", "implicit_command"),
    "singular": ("lightning_cas.cli.geometry", "singular_command"),
    "boundary": ("lightning_cas.cli.geometry", "boundary_command"),
    "claims": ("lightning_cas.cli.geometry", "claims_command"),
    "degree": ("lightning_cas.cli.critical", "degree_command"),
    "ed": ("lightning_cas.cli.critical", "ed_command"),
    "llc": ("lightning_cas.cli.learning", "llc_command"),
    "sweep": ("lightning_cas.cli.batch", "sweep_command"),
    "report": ("lightning_cas.cli.batch", "report_command"),
    "heads": ("lightning_cas.cli.batch", "heads_command"),
    "notebook": ("lightning_cas.cli.batch", "notebook_command"),
    "blocks": ("lightning_cas.cli.blocks", "blocks_command"),
    "degrees": ("lightning_cas.cli.blocks", "degrees_command"),
}


class CommandTable(OneLineErrors):
    """A group whose commands are the table above, each imported on first use."""

    def list_commands(self, ctx):
        return list(COMMANDS)

    def get_command(self, ctx, name):
        spec = COMMANDS.get(name)
        if spec is None:
            return None
        module, attr = spec
        return getattr(importlib.import_module(module), attr)


@click.group(cls=CommandTable, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="lightning-cas")
def main():
    """lightning-cas: dimension, fibers and more for lightning self-attention networks."""
