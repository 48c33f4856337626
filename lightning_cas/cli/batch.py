"""CLI commands for batch runs (registered in lightning_cas.cli): sweep, report, heads, notebook.

stdout stays machine-readable (one JSON line, a makefile, or labels); progress goes to stderr.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from lightning_cas.batch.spec import MAX_JOBS_CEILING
from lightning_cas.cli.common import clean_errors, echo
from lightning_cas.cli.options import M2_OPTION, Number
from lightning_cas.cli.progress import progress_display
from lightning_cas.errors import InputError
from lightning_cas.results.display import printable
from lightning_cas.system.files import write_file


@click.command("sweep")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--out", default=None, help="Results directory (default: results/<spec name>).")
@click.option(
    "--jobs", "-j", "njobs", default=1, show_default=True, type=Number(low=1, high=256), help="Jobs run in parallel."
)
@click.option("--executor", default="local", show_default=True, type=click.Choice(["local", "dask"]))
@click.option(
    "--scheduler",
    default=None,
    help="Dask scheduler address, e.g. tcp://host:8786 (default: $DASK_SCHEDULER_ADDRESS, else a local cluster).",
)
@click.option("--force", is_flag=True, help="Recompute results that are already stored.")
@click.option("--retry-failed", is_flag=True, help="Recompute stored timeouts and errors.")
@click.option(
    "--recheck",
    is_flag=True,
    help="Recompute the jobs whose records came from elsewhere (claims, not "
    "signed with your key) and say which were reproduced.",
)
@click.option(
    "--timeout",
    default=None,
    type=Number(integer=False, low=0, low_open=True),
    help="Seconds per job (overrides the spec).",
)
@click.option("--only", multiple=True, help="Run only this job label (repeatable); see --list.")
@click.option("--no-aggregate", is_flag=True, help="Do not rewrite results.csv / results.jsonl.")
@click.option("--list", "list_only", is_flag=True, help="Print the job labels, one a line, and stop.")
@click.option("--make-rules", is_flag=True, help="Print a makefile with one target per result file, and stop.")
@click.option(
    "--command", default="lightning-cas", show_default=True, help="How the --make-rules recipes call lightning-cas."
)
@click.option(
    "--max-jobs",
    default=None,
    type=Number(low=1, high=MAX_JOBS_CEILING),
    help=f"Accept a spec of more jobs than the default limit of 10000 (at most {MAX_JOBS_CEILING}).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress display on stderr.")
@M2_OPTION
@clean_errors
def sweep_command(
    spec,
    out,
    njobs,
    executor,
    scheduler,
    force,
    retry_failed,
    recheck,
    timeout,
    only,
    no_aggregate,
    list_only,
    make_rules,
    command,
    max_jobs,
    quiet,
    m2,
):
    """Run every job of a TOML sweep SPEC; one JSON result per job, plus results.csv/.jsonl.

    Stored results are reused (a corrupted file is recomputed); records from elsewhere are left
    as claims unless --recheck; a failing job is recorded with status timeout or error and the
    sweep goes on. Prints one JSON summary line.
    """
    from lightning_cas.batch.executors import check_scheduler
    from lightning_cas.batch.makerules import make_rules as rules
    from lightning_cas.batch.spec import MAX_SPEC_JOBS, load_spec
    from lightning_cas.batch.sweep import run_sweep
    from lightning_cas.options import check_m2, check_timeout  # noqa: F401

    timeout, m2 = check_timeout(timeout), check_m2(m2)
    if executor == "dask":
        check_scheduler(scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS") or None)
    sweep = load_spec(spec, max_jobs or MAX_SPEC_JOBS)
    out = out or str(Path("results") / sweep.name)
    if list_only:
        for job in sweep.jobs:
            echo(job.label)
        return
    if make_rules:
        echo(rules(sweep, spec, out, command, max_jobs), nl=False)
        return
    with progress_display("sweep", quiet=quiet) as state:  # the one display: jobs done of all, the last label
        update = (
            None
            if state is None
            else (lambda done, total, label: state.update(label, done=done, total=total, unit="jobs"))
        )
        summary = run_sweep(
            sweep,
            out,
            executor=executor,
            jobs=njobs,
            scheduler=scheduler,
            force=force,
            retry_failed=retry_failed,
            recheck=recheck,
            timeout=timeout,
            only=only or None,
            aggregate=not no_aggregate,
            m2=m2,
            progress=update,
            spec_name=spec,
        )
    for line in summary.broken_locks:
        echo(f"lightning-cas: warning: broke a stale lock of {printable(line)}", err=True)
    for line in summary.notes:
        echo(f"lightning-cas: note: {printable(line)}", err=True)
    echo(json.dumps(summary.to_dict()))


def _parent(path: str) -> None:
    """Create the directory an output file goes into (as the commands always did)."""
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the directory of {printable(path)}: {exc.strerror or exc}.") from None


@click.command("report")
@click.argument("results", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--plot",
    "plot_path",
    default=None,
    help="Image to write: .png, .pdf or .svg (default: RESULTS/dimensions.png; with --json only when given).",
)
@click.option("--no-plot", is_flag=True, help="Draw no plot.")
@click.option("--csv", "csv_path", default=None, help="Also write the table as CSV here.")
@click.option("--title", default=None, help="Plot title.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON lines (one typed object per job) instead of a table.")
@clean_errors
def report_command(results, plot_path, no_plot, csv_path, title, as_json):
    """Table of a results directory (architecture, parameters, dimension, prediction, verdict, method,
    time, and whether each record was computed here or is a claim from elsewhere) and a plot.

    Every verdict is recomputed from the stored dimension; records not signed with your key are
    shown as claims, with where they came from."""
    from lightning_cas.batch import report
    from lightning_cas.batch.tables import CSV_COLUMNS, to_csv

    draw = not no_plot and (plot_path is not None or not as_json)
    explicit = plot_path is not None
    plot_path = plot_path or str(Path(results) / "dimensions.png")
    plt = None
    if draw:
        fmt = report.plot_format(plot_path)
        try:
            plt = report.pyplot()
        except InputError:
            if explicit:
                raise
            echo(
                "lightning-cas: warning: no plot: matplotlib is not installed (pip install 'lightning_cas[plot]').",
                err=True,
            )
    checks, invalid = report.scan(results)
    rows = report.table_rows(checks)
    written = []
    if csv_path:
        _parent(csv_path)
        write_file(csv_path, to_csv(rows, CSV_COLUMNS), "CSV table")
        written.append(f"table: {csv_path}")
    if plt is not None:
        _parent(plot_path)
        write_file(plot_path, report.plot_bytes(checks, fmt, title or Path(results).name), "plot")
        written.append(f"plot: {plot_path}")
    notes = report.claim_notes(checks) + [
        f"{Path(c.path).name}: not a valid record, ignored: {c.reason}" for c in invalid
    ]
    if as_json:
        for row in rows:
            echo(json.dumps(row))
        for line in notes:
            echo(f"lightning-cas: note: {printable(line)}", err=True)
    else:
        report.print_table(rows, title=title or results, notes=notes)
    if written:
        echo(printable("  ".join(written)), err=True)


@click.command("heads")
@click.argument("results", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--out",
    default="heads",
    show_default=True,
    help="Directory for table.csv, defects.csv, problems.txt and heads.png.",
)
@click.option("--no-plot", is_flag=True, help="Draw no plot.")
@clean_errors
def heads_command(results, out, no_plot):
    """The multi-head table of a sweep's RESULTS: computed dimensions next to the expected
    min(H * one-head bound, span), the defective cases with their defect, and a plot against H.
    Exits 3 when a computed value is above a bound or two methods disagree."""
    from lightning_cas.batch import heads

    sys.exit(heads.write_heads(results, out, plot=not no_plot, echo=click.echo))


@click.command("notebook")
@click.argument("results", type=click.Path(exists=True), required=False)
@click.option("--output", "-o", default=None, help="Notebook to write (default: RESULTS/scripts.ipynb).")
@click.option(
    "--execute",
    is_flag=True,
    help="Run every job cell in the Macaulay2 Jupyter kernel, write the "
    "executed notebook and check each cell against the stored result (exit 0 only if all reproduced).",
)
@click.option("--json", "as_json", is_flag=True, help="With --execute: one JSON object on stdout.")
@click.option("--kernel", default="m2", show_default=True, help="Jupyter kernel name (with --execute).")
@click.option(
    "--timeout",
    default=None,
    type=Number(integer=False, low=0, low_open=True, high=86400),
    help="Seconds per cell, the setup cell and reruns included; no cell runs longer (default: "
    "each job's own time limit, with 20 s of grace).",
)
@click.option(
    "--install-package",
    is_flag=True,
    help="Copy the Macaulay2 package LightningCAS into "
    "~/.Macaulay2/code/, where Macaulay2 and its Jupyter kernel load it by name.",
)
@clean_errors
def notebook_command(results, output, execute, as_json, kernel, timeout, install_package):
    """Write the work of a run (a results directory, one job record or one `dim --json` result) as a
    Jupyter notebook for the Macaulay2 kernel: one Macaulay2 cell per job that Macaulay2 can check;
    with --execute, re-run it there and report per cell."""
    from lightning_cas.batch import notebook

    if install_package:
        echo(json.dumps({"installed": str(notebook.install_package())}))
        if results is None:
            return
    if results is None:
        raise click.UsageError("missing argument RESULTS (a results directory or a result JSON).")
    path = Path(results)
    output = output or str((path if path.is_dir() else path.parent) / "scripts.ipynb")
    if not execute:
        count = notebook.write_notebook(path, output)
        echo(json.dumps({"notebook": output, "scripts": count}))
        for label, reason in notebook.refused_cells(path):
            echo(f"lightning-cas: note: {printable(label)}: no Macaulay2 cell: {printable(reason)}.", err=True)
        if not count:
            echo(
                "lightning-cas: warning: the notebook has no Macaulay2 cell, so --execute has nothing to check.",
                err=True,
            )
        sys.stdout.flush()
        return
    run = notebook.execute_notebook(path, output, kernel=kernel, limit_s=timeout)
    summary = run.to_dict()
    if as_json:
        echo(json.dumps(summary))
    else:
        for o in run.outcomes:
            echo(f"{o.verdict:<11} {printable(o.label)}" + (f"  {printable(o.message)}" if o.message else ""))
        if run.nothing_to_check:
            echo(f"nothing to check: {printable(run.nothing_to_check)}; notebook: {printable(output)}")
        else:
            echo(
                f"{summary['reproduced']} of {summary['cells']} cells reproduced in kernel "
                f"{printable(kernel)} (Macaulay2 {printable(run.kernel.get('m2_version'))}), "
                f"{summary['elapsed_s']:.1f} s; notebook: {printable(output)}"
            )
    sys.stdout.flush()
    if not run.ok:
        sys.exit(1)
