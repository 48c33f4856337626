"""Building the notebook of a run: a title, the comparison table, a setup cell, and per job a
markdown cell with what was stored and a Macaulay2 cell that computes the same dimension: it builds
the job's network with the package's ``neuralNetwork`` (``macaulay2.network.network_call``, the
values the backend's templates get, so any network of blocks) and calls ``dimensionRecord`` on it.

Why the cells are written from the jobs, not copied from the stored scripts: a stored script names
the package by the absolute path of the machine that ran it, and its bytes are whatever is on disk.
A cell built from the job is the package's ``neuralNetwork`` and one call of its
``dimensionRecord``, loaded by name, so the notebook runs wherever the package is installed, and
nothing read from the results directory is ever run. The stored script is still checked (read by
descriptor, hashed against its signed record) and the outcome is said in the job's markdown.

What a cell prints is plain Macaulay2 (its last line is the record ``r``, shown as M2 shows a
HashTable); the begin/end markers and the JSON record that ``--execute`` judges are printed only
when the checking kernel sets ``lcasChecking`` (see :mod:`.execute`), and are removed from the
outputs of the notebook it writes.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

from lightning_cas.backends.m2 import M2_PRIME, check_implicit_size, jacobian_size
from lightning_cas.batch.records import JobResult, Origin, Status, check_numbers, judged, upgrade_result
from lightning_cas.batch.report import scan
from lightning_cas.batch.spec import METHODS, Job, spec_toml
from lightning_cas.batch.store import RecordCheck, ResultStore, verify_record
from lightning_cas.errors import InputError, LightningError
from lightning_cas.macaulay2.network import network_call, network_comments
from lightning_cas.results.dimension import DimensionResult
from lightning_cas.results.display import escape, printable
from lightning_cas.system.files import check_path, read_json

KERNEL = "m2"
KERNELSPEC = {"name": KERNEL, "display_name": "M2", "language": "text/x-macaulay2"}
META = "lightning_cas"  # cell metadata key
DEFAULT_CELL_LIMIT_S = 600.0  # a job stored without a time limit
CELL_MAX_ENTRIES = 300_000  # coefficient-Jacobian entries of a modp job's cell (about 15 s in Macaulay2 1.21)
RESULT_MAX_BYTES = 4_000_000
_LABEL = re.compile(r"[A-Za-z0-9._-]+", re.ASCII)


def md(text) -> str:
    """Record text inside markdown: printable and HTML-inert."""
    return escape(text, "markdown")


@dataclass
class JobCell:
    """One job's place in the notebook: the record, where it came from, its Macaulay2 cell (or
    why it has none) and what was found of its stored script."""

    record: JobResult
    source: Origin
    origin: str  # why it is this user's or a claim
    code: str | None = None  # the Macaulay2 cell
    refused: str | None = None  # why there is no cell
    script: str = ""  # what was found of the stored script

    @property
    def label(self) -> str:
        return self.record.label

    @property
    def runnable(self) -> bool:
        return self.code is not None

    @property
    def limit_s(self) -> float:
        return float(self.record.job.timeout or DEFAULT_CELL_LIMIT_S)


# ---- what the notebook is built from -------------------------------------------------------------


def result_file_record(path: Path) -> RecordCheck:
    """One result file named on the command line: a job record, or a DimensionResult written by
    ``dim --json`` (then a claim: such a file carries no signature)."""
    data = read_json(path, "result file", max_bytes=RESULT_MAX_BYTES)
    kind = data.get("kind") if isinstance(data, dict) else None
    if kind == "JobResult":
        check = verify_record(path)
        if check.record is None:
            raise InputError(f"{printable(path)} is not a valid job record: {check.reason}.")
        return check
    if kind != "DimensionResult":
        raise InputError(f"{printable(path)} is neither a job record nor a dimension result (kind {kind!r}).")
    result = upgrade_result(DimensionResult.from_dict(data))
    method = result.method if result.method in METHODS else "auto"
    job = Job(result.architecture, method, result.seed or 0, None)
    rec = JobResult(job.label, job, Status.OK, None, result, None, "", "not computed", result.elapsed_s, "unknown")
    try:
        check_numbers(rec)
    except InputError as exc:
        raise InputError(f"{printable(path)}: {str(exc).rstrip('.')}.") from None
    return RecordCheck(str(path), Origin.CLAIM, "a result file (dim --json), which carries no signature", judged(rec))


def load_checks(path: Path) -> tuple[Path, list[RecordCheck]]:
    """(results directory, its records with their source), for a directory or one result file."""
    if path.is_dir():
        return path, scan(path)[0]
    if not path.exists():
        raise InputError(f"{printable(path)} does not exist.")
    return path.parent, [result_file_record(path)]


def cell_code(rec: JobResult, limit_s: float | None = None) -> tuple[str | None, str | None]:
    """(the Macaulay2 cell that computes this job's dimension, None) or (None, why there is none).

    The cell builds the job's network with the package's ``neuralNetwork`` from the same integer
    lists the backend's templates get (the old flags' plain stack is such a network too), so a
    network of blocks is checked exactly as a plain stack is."""
    arch = rec.architecture
    if arch.normalization != "none":
        what = getattr(arch, "not_polynomial", "") or "softmax attention"
        return None, f"{what} is not polynomial, so no Macaulay2 computation checks it"
    if not _LABEL.fullmatch(rec.label):
        return None, "its label is not a plain name"
    method = rec.method
    if method == "implicit":
        try:
            check_implicit_size(arch)
        except LightningError as exc:
            return None, str(exc).rstrip(".")
        what = "the implicit ideal over QQ (exact): its dimension and degree"
        ring = "QQ"
        strategy = "Implicit"
    else:
        entries = jacobian_size(arch)
        if entries > CELL_MAX_ENTRIES:
            return None, (
                f"the Jacobian a Macaulay2 cell would build has {entries:,} entries, above the notebook's "
                f"cap of {CELL_MAX_ENTRIES:,}; `lightning-cas sweep --recheck` recomputes such jobs"
            )
        res = rec.result
        prime = res.primes[0] if method == "jacobian" and res is not None and res.primes else M2_PRIME
        what = f"the rank of the coefficient Jacobian at a random point over ZZ/{prime}" + (
            "" if method == "jacobian" else f" (a second computation of this {md(method)} job's dimension)"
        )
        ring = f"ZZ/{prime}"
        strategy = "Jacobian"
    limit = math.ceil(limit_s if limit_s is not None else float(rec.job.timeout or DEFAULT_CELL_LIMIT_S))
    call = f'r = dimensionRecord(N, Strategy => "{strategy}", CoefficientRing => {ring}, Columns => 1);'
    return "\n".join(
        [
            f"--%timeout={limit}",
            f"-- {rec.label}: {what}",
            *network_comments(arch),
            f"setRandomSeed {rec.job.seed};",
            f"N = {network_call(arch)};",
            call,
            f'lcasCheck("{rec.label}", r);',
            "r",
        ]
    ), None


SETUP_LIMIT_S = 60  # the setup cell's limit when no --timeout is given (it loads the package)


def setup_source(limit_s: float | None = None) -> str:
    """The first code cell: loads LightningCAS by name (installed once, see the title cell) and
    defines ``lcasCheck``, which prints a cell's records only for a checking kernel. ``limit_s``: the
    limit of every cell (``--timeout``), this one's too."""
    return "\n".join(
        [
            f"--%timeout={math.ceil(limit_s) if limit_s is not None else SETUP_LIMIT_S}",
            "-- the Macaulay2 package of lightning_cas, installed once (see above) and loaded by name",
            'needsPackage "LightningCAS";',
            "lcasChecking = lcasChecking === true;",
            "lcasCheck = (label, r) -> if lcasChecking then ("
            '<< "@@LCAS@@ cell_begin " << label << endl; printRecord r;',
            '    << "@@LCAS@@ cell_end " << label << endl;);',
            'if lcasChecking then << "@@LCAS@@ m2_version " << version#"VERSION" << endl;',
            'version#"VERSION"',
        ]
    )


def job_cell(check: RecordCheck, store: ResultStore, limit_s: float | None = None) -> JobCell:
    rec = check.record
    code, refused = cell_code(rec, limit_s)
    if rec.script:
        _, found = store.script_check(rec)
        script = f"`{md(rec.script)}`: {md(found)}"
    else:
        script = "none stored" if rec.method in ("jacobian", "implicit") else "none (not a Macaulay2 job)"
    return JobCell(rec, Origin(check.status), check.reason, code, refused, script)


# ---- the notebook ------------------------------------------------------------------------------


def _outcome(rec: JobResult) -> str:
    if rec.result is None:
        return f"status **{md(rec.status)}**: {md(rec.message or '')}"
    r = rec.result
    return f"dimension **{r.dimension}** (method {md(r.method)}, {md(r.certainty)})"


def _title(root: Path, cells: list[JobCell]) -> str:
    from lightning_cas import __version__

    recs = [c.record for c in cells]
    methods = sorted({r.job.method for r in recs})
    m2_versions = sorted({r.result.m2_version for r in recs if r.result is not None and r.result.m2_version})
    hosts = sorted({r.host for r in recs})
    limits = sorted({r.job.timeout for r in recs if r.job.timeout})
    claims = sum(c.source is Origin.CLAIM for c in cells)
    return "\n".join(
        [
            f"# lightning-cas run `{md(root.resolve().name)}`",
            "",
            f"- jobs: {len(recs)} (methods: {', '.join(map(md, methods)) or 'none'}; statuses: "
            + ", ".join(f"{s} {sum(r.status == s for r in recs)}" for s in Status)
            + ")",
            f"- records: {len(recs) - claims} computed by the exporting user, {claims} claims from elsewhere "
            "(not signed with the exporting user's key: their numbers are what this notebook checks)",
            f"- time limits per job: {', '.join(f'{t:g} s' for t in limits) or 'none stored'}",
            f"- lightning_cas {__version__} (this export); Macaulay2 of the run: "
            f"{', '.join(map(md, m2_versions)) or 'not recorded'}; hosts: {', '.join(map(md, hosts))}",
            "",
            "To run it: the Jupyter kernel `m2` (Debian's macaulay2-jupyter-kernel) and the package LightningCAS "
            "installed once for your Macaulay2 (`lightning-cas notebook --install-package`, or see "
            "docs/notebooks.md). Each job cell starts with `--%timeout=N`, the kernel's time limit. "
            "`lightning-cas notebook RESULTS -o out.ipynb --execute` runs every cell and compares it with the "
            "stored result.",
            "",
            "The spec, as expanded into jobs (`lightning-cas sweep` accepts it as it is):",
            "",
            "```toml",
            spec_toml(printable(root.resolve().name), [r.job for r in recs]),
            "```",
        ]
    )


def _table(cells: list[JobCell]) -> str | None:
    if not any(c.record.predicted is not None for c in cells):
        return None
    rows = [
        "| job | record | method | status | dimension | predicted (status of the formula) | verdict | certainty |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        r, res = c.record, c.record.result
        rows.append(
            "| "
            + " | ".join(
                md(v)
                for v in (
                    r.label,
                    "computed here" if c.source is Origin.HERE else "claim",
                    r.method,
                    r.status,
                    res.dimension if res else "",
                    "" if r.predicted is None else f"{r.predicted} ({r.prediction_status})",
                    r.agreement,
                    res.certainty if res else "",
                )
            )
            + " |"
        )
    agree = sum(c.record.agreement == "agree" for c in cells)
    disagree = sum(c.record.agreement == "disagree" for c in cells)
    return (
        f"## Computed vs predicted\n\n{agree} agree, {disagree} disagree (verdicts recomputed at export).\n\n"
        + "\n".join(rows)
    )


def _job_markdown(c: JobCell) -> str:
    rec = c.record
    pred = "no prediction" if rec.predicted is None else f"predicted {rec.predicted} ({md(rec.prediction_status)})"
    who = (
        "computed by the exporting user"
        if c.source is Origin.HERE
        else f"a **claim** from host {md(rec.host)} ({md(c.origin)})"
    )
    lines = [
        f"## `{md(c.label)}`",
        "",
        f"Stored: {_outcome(rec)}; {pred}; seed {rec.job.seed}, time limit {c.limit_s:g} s, took "
        f"{rec.elapsed_s:.2f} s; {who}.",
        "",
        f"Stored script: {c.script}.",
    ]
    if c.code is None:
        lines += ["", f"**No Macaulay2 cell:** {md(c.refused)}."]
    elif rec.status is not Status.OK:
        lines += ["", "The sweep did not finish this job, so there is nothing to compare; the cell is not run."]
    return "\n".join(lines)


def build_notebook(path: str | os.PathLike, limit_s: float | None = None):
    """(notebook node, job cells) for a results directory or one result JSON."""
    nbformat, v4 = nbformat_modules()
    root, checks = load_checks(Path(check_path(path, "results directory or result file")))
    checks.sort(key=lambda c: c.record.label)
    store = ResultStore(root, create=False)
    cells = [job_cell(c, store, limit_s) for c in checks]
    nb = v4.new_notebook()
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = {"name": "Macaulay2", "codemirror_mode": "macaulay2", "file_extension": ".m2"}
    nb.cells.append(v4.new_markdown_cell(_title(root, cells)))
    table = _table(cells)
    if table:
        nb.cells.append(v4.new_markdown_cell(table))
    if any(c.runnable for c in cells):
        nb.cells.append(v4.new_code_cell(setup_source(limit_s), metadata={META: {"role": "setup"}}))
    for c in cells:
        nb.cells.append(v4.new_markdown_cell(_job_markdown(c)))
        if c.code is None:
            continue
        meta = {META: {"role": "job", "label": c.label}}
        if c.record.status is not Status.OK:
            meta["tags"] = ["skip-execution"]
        nb.cells.append(v4.new_code_cell(c.code, metadata=meta))
    nbformat.validate(nb)
    return nb, cells


def nbformat_modules():
    try:
        import nbformat
        from nbformat import v4
    except ImportError:
        raise InputError("notebook export needs nbformat (pip install 'lightning_cas[notebook]').") from None
    return nbformat, v4
