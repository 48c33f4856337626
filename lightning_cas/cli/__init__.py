"""The command line: parse, call the API, print. Any LightningError is one line and an exit code.

Commands live one module per concern and are registered here explicitly.
"""

from __future__ import annotations

import click

from lightning_cas import __version__
from lightning_cas.cli import batch, dimension, fiber, geometry
from lightning_cas.cli.common import OneLineErrors


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="lightning-cas")
def main():
    """lightning-cas: dimension, fibers and more for lightning self-attention networks."""


for _module in (dimension, fiber, geometry, batch):
    for _command in _module.COMMANDS:
        main.add_command(_command)
