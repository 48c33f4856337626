"""Executing a run's notebook in the Macaulay2 kernel and judging every job cell.

The checking kernel runs the setup cell with ``lcasChecking = true;`` in front, so each job cell
also prints its records; the notebook written afterwards keeps the setup cell a reader runs and
cell outputs without those records (and without terminal escapes): plain Macaulay2 values.
"""

from __future__ import annotations

import logging
import math
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from lightning_cas.batch.notebook.build import (
    KERNELSPEC,
    META,
    SETUP_LIMIT_S,
    JobCell,
    build_notebook,
    md,
    nbformat_modules,
)
from lightning_cas.batch.notebook.judge import INCOMPLETE, CellOutcome, cell_text, clean_outputs, judge, safe_records
from lightning_cas.batch.notebook.kernel import ATTEMPTS, STARTUP_S, CellLimit, Kernel, kernel_spec
from lightning_cas.batch.records import Status
from lightning_cas.errors import InputError, LightningError, NotebookKernelError
from lightning_cas.results.display import printable
from lightning_cas.system.files import check_path, write_file

KERNEL = KERNELSPEC["name"]
GRACE_S = 20  # nbclient's hard limit per cell beyond the kernel's own (silence) limit, without --timeout
CHECKING = "lcasChecking = true;\n"


@dataclass
class NotebookRun:
    """The outcome of executing a run's notebook in the Macaulay2 kernel."""

    notebook: str
    outcomes: list[CellOutcome]
    kernel: dict
    elapsed_s: float

    @property
    def checked(self) -> list[CellOutcome]:
        return [o for o in self.outcomes if o.verdict not in ("skipped", "unchecked")]

    @property
    def nothing_to_check(self) -> str | None:
        """Why no cell was checked (never a success), or None when some cell was."""
        if self.checked:
            return None
        if not self.outcomes:
            return "the notebook holds no job"
        return (
            f"none of its {len(self.outcomes)} job(s) has a Macaulay2 cell that could run "
            f"({len([o for o in self.outcomes if o.verdict == 'unchecked'])} without a cell, "
            f"{len([o for o in self.outcomes if o.verdict == 'skipped'])} not finished by the sweep)"
        )

    @property
    def ok(self) -> bool:
        """True when there was something to check and every checked cell reproduced."""
        return bool(self.checked) and all(o.verdict == "reproduced" for o in self.checked)

    def to_dict(self) -> dict:
        pick = lambda v: [
            {"label": o.label, "message": o.message, "stored": o.stored, "notebook": o.notebook}
            if v == "differs"
            else {"label": o.label, "message": o.message}
            for o in self.outcomes
            if o.verdict == v
        ]
        return {
            "cells": len(self.checked),
            "reproduced": sum(o.verdict == "reproduced" for o in self.outcomes),
            "differs": pick("differs"),
            "errors": pick("error"),
            "skipped": [o.label for o in self.outcomes if o.verdict == "skipped"],
            "unchecked": pick("unchecked"),
            "nothing_to_check": self.nothing_to_check,
            "kernel": self.kernel,
            "elapsed_s": round(self.elapsed_s, 3),
            "notebook": self.notebook,
        }


def write_notebook_file(nb, output: str | os.PathLike) -> None:
    """Write a notebook; an existing target that is not a regular file is refused, never replaced."""
    nbformat, _ = nbformat_modules()
    output = Path(check_path(output, "notebook"))
    if not output.parent.is_dir():
        raise InputError(f"the directory of the notebook {printable(output)} does not exist.")
    write_file(output, nbformat.writes(nb), "notebook")


def write_notebook(path: str | os.PathLike, output: str | os.PathLike) -> int:
    """Write the notebook (not executed); returns how many job cells it holds."""
    nb, cells = build_notebook(path)
    write_notebook_file(nb, output)
    return sum(c.runnable for c in cells)


def refused_cells(path: str | os.PathLike) -> list[tuple[str, str]]:
    """(label, reason) of jobs that have no Macaulay2 cell."""
    _, cells = build_notebook(path)
    return [(c.label, c.refused) for c in cells if c.refused]


def execute_notebook(
    results: str | os.PathLike,
    output: str | os.PathLike | None = None,
    *,
    kernel: str = KERNEL,
    limit_s: float | None = None,
    startup_timeout: float = STARTUP_S,
) -> NotebookRun:
    """Export the notebook of ``results``, run it in the Jupyter kernel, compare each job cell's
    records with the stored result, and write the executed notebook to ``output`` (if given).

    ``limit_s`` replaces the jobs' own time limits (seconds per cell). Jobs without a cell count
    are reported unchecked, with the reason; jobs the sweep did not finish are skipped."""
    if not isinstance(results, (str, os.PathLike)):
        raise InputError(f"results must be a results directory or a result file, got {type(results).__name__}.")
    _check_limit(limit_s)
    nb, cells = build_notebook(results, limit_s)
    return run_notebook(nb, cells, output, kernel=kernel, limit_s=limit_s, startup_timeout=startup_timeout)


def _check_limit(limit_s) -> None:
    if limit_s is not None and (
        isinstance(limit_s, bool) or not isinstance(limit_s, (int, float)) or not math.isfinite(limit_s) or limit_s <= 0
    ):
        raise InputError(f"the time limit must be a positive number of seconds, got {limit_s!r}.")


def _setup_found(cell) -> dict:
    text = cell_text(cell)
    recs = safe_records(text)
    return {"m2_version": recs.get("m2_version"), "problem": text.strip()[:200]}


def run_notebook(
    nb,
    cells: list[JobCell],
    output: str | os.PathLike | None = None,
    *,
    kernel: str = KERNEL,
    limit_s: float | None = None,
    startup_timeout: float = STARTUP_S,
    grace_s: float | None = None,
) -> NotebookRun:
    """Execute a notebook built by :func:`build_notebook` (possibly edited since) and judge every
    job cell (matched by its metadata label) against its stored result.

    Every cell, the setup cell too, gets the kernel's own silence limit (its ``--%timeout`` magic)
    and a hard limit of ``limit + grace_s`` from nbclient; ``grace_s`` is GRACE_S under the jobs' own
    limits and 0 under ``limit_s`` (``--timeout``: no cell runs longer). After a failed cell the kernel
    is replaced by a fresh one; a cell whose output came back without its own end record is rerun (up
    to ATTEMPTS runs) within what is left of its limit, and so is the setup cell."""
    try:
        import nbclient  # noqa: F401
    except ImportError:
        raise InputError("notebook execution needs nbclient (pip install 'lightning_cas[notebook]').") from None
    _check_limit(limit_s)
    if grace_s is None:
        grace_s = GRACE_S if limit_s is None else 0
    start = time.perf_counter()
    info = kernel_spec(kernel)
    nb.metadata["kernelspec"] = {**nb.metadata.get("kernelspec", KERNELSPEC), "name": kernel}
    by_label = {c.label: c for c in cells}
    outcomes = {
        c.label: CellOutcome(c.label, "unchecked", f"no Macaulay2 cell: {c.refused}")
        if c.record.status is Status.OK
        else CellOutcome(c.label, "skipped", f"stored status {c.record.status}")
        for c in cells
        if c.refused
    }
    roles = [(i, c, c.get("metadata", {}).get(META, {})) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    setup = next(((i, c) for i, c, m in roles if m.get("role") == "setup"), None)
    todo = [
        (i, c, by_label[m["label"]])
        for i, c, m in roles
        if m.get("role") == "job" and m.get("label") in by_label and m["label"] not in outcomes
    ]
    for _, _, job in todo:
        if job.record.status is not Status.OK:
            outcomes[job.label] = CellOutcome(job.label, "skipped", f"stored status {job.record.status}")
    todo = [t for t in todo if t[2].label not in outcomes]
    quiet = logging.getLogger("asyncio")  # nbclient's pollers of a replaced kernel log "never retrieved"
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)
    with tempfile.TemporaryDirectory(prefix="lcas-nb-") as work:
        session = None
        try:
            if todo:
                if setup is None:
                    raise InputError("the notebook has no lightning-cas setup cell.")
                setup_limit = (SETUP_LIMIT_S if limit_s is None else limit_s) + grace_s
                session = Kernel(nb, kernel, work, startup_timeout, setup_limit, setup, CHECKING, _setup_found)
                info.update(session.start())
            for index, cell, job in todo:
                limit = math.ceil(limit_s if limit_s is not None else job.limit_s)
                limits = CellLimit(limit + grace_s)
                for attempt in range(1, ATTEMPTS + 1):
                    t0 = time.perf_counter()
                    failure = session.run(cell, index, limits)
                    took = time.perf_counter() - t0
                    outcome = (
                        CellOutcome(job.label, "error", failure, elapsed_s=took)
                        if failure
                        else judge(job, cell_text(cell), took, limit)
                    )
                    if outcome.verdict == "error":
                        session.start()
                    if not outcome.message.startswith(INCOMPLETE) or attempt == ATTEMPTS or limits.spent():
                        break
                if attempt > 1:
                    outcome.message = (outcome.message + "; " if outcome.message else "") + f"{attempt} runs"
                cell.metadata[META].update(verdict=outcome.verdict, message=outcome.message)
                outcomes[job.label] = outcome
        except LightningError:
            raise
        except Exception as exc:  # the client failed
            raise NotebookKernelError(
                f"the Jupyter kernel '{printable(kernel)}' failed: "
                f"{printable(type(exc).__name__)}: {printable(str(exc))[:300]}."
            ) from None
        finally:
            if session is not None:
                session.close()
            quiet.setLevel(level)
    for c in cells:
        if c.label not in outcomes:
            outcomes[c.label] = (
                CellOutcome(c.label, "skipped", f"stored status {c.record.status}")
                if c.record.status is not Status.OK
                else CellOutcome(c.label, "error", "the notebook has no code cell for this job")
            )
    run = NotebookRun(
        str(output) if output else "", [outcomes[c.label] for c in cells], info, time.perf_counter() - start
    )
    for c in nb.cells:
        if c.cell_type == "code":
            clean_outputs(c)
    _, v4 = nbformat_modules()
    nb.cells.append(v4.new_markdown_cell(_summary(run, by_label)))
    if output:
        write_notebook_file(nb, output)
    return run


def _summary(run: NotebookRun, cells: dict) -> str:
    d = run.to_dict()
    claims = [o for o in run.checked if o.label in cells and cells[o.label].source == "claim"]
    lines = [f"## Re-execution in the `{md(run.kernel.get('name'))}` kernel", ""]
    if run.nothing_to_check:
        lines.append(
            f"**Nothing to check**: {md(run.nothing_to_check)}; the kernel was not started, and nothing was reproduced."
        )
    else:
        lines.append(
            f"{d['reproduced']} of {d['cells']} cells reproduced their stored result "
            f"(kernel Macaulay2 {md(run.kernel.get('m2_version'))}, {run.elapsed_s:.1f} s)."
        )
    if claims:
        lines.append(
            f"Of {len(claims)} claims from elsewhere, {sum(o.verdict == 'reproduced' for o in claims)} reproduced."
        )
    for o in run.outcomes:
        if o.verdict != "reproduced":
            lines.append(f"- `{md(o.label)}`: {o.verdict}: {md(o.message)}")
    return "\n".join(lines)
