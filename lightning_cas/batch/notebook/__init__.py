"""A run's work as a Jupyter notebook for the Macaulay2 kernel, and its re-execution.

Why: the notebook is the readable record of a sweep (spec, versions, the comparison with the
theory, one Macaulay2 cell per job that Macaulay2 can check), and executing it in the kernel
re-derives every stored number independently of the process that computed it, including the
claims of records that came from elsewhere.

The pieces, one job each: :mod:`.build` (the notebook from a results directory or one result
file), :mod:`.kernel` (the kernel and the package it loads by name), :mod:`.judge` (an executed
cell against its stored result), :mod:`.execute` (running it all).
"""

from lightning_cas.batch.notebook.build import KERNEL, META, JobCell, build_notebook, cell_code, setup_source
from lightning_cas.batch.notebook.execute import (
    NotebookRun,
    execute_notebook,
    refused_cells,
    run_notebook,
    write_notebook,
)
from lightning_cas.batch.notebook.judge import INCOMPLETE, CellOutcome, cell_text, clean_text, judge, observed
from lightning_cas.batch.notebook.kernel import install_package

__all__ = [
    "INCOMPLETE",
    "KERNEL",
    "META",
    "CellOutcome",
    "JobCell",
    "NotebookRun",
    "build_notebook",
    "cell_code",
    "cell_text",
    "clean_text",
    "execute_notebook",
    "install_package",
    "judge",
    "observed",
    "refused_cells",
    "run_notebook",
    "setup_source",
    "write_notebook",
]
