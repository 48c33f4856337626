"""A run's Macaulay2 work as a Jupyter notebook for the Macaulay2 kernel, and its re-execution.

Why: the notebook is the readable record of a sweep (spec, versions, the comparison with the
theory, one cell per Macaulay2 job), and executing it in the kernel re-derives every stored
Macaulay2 number independently of the process that computed it.

Trust: a results directory is data. Scripts are read only from inside it (no absolute paths, no
``..``, no symlinks, regular files only, size-capped), and a script is embedded as runnable code
only when it is exactly what lightning-cas renders for its job; anything else is reported and
shown as inert text. Kernel output counts only through the cell's ``@@LCAS@@`` begin/end markers and
its one ``@@LCAS-JSON@@`` record, and a Macaulay2 error, a kernel-enforced timeout or a missing record
is an error even though the kernel says "ok".

Layout of the notebook: title and comparison table, one setup cell (``setup_source``: loads the
LightningCAS package and prints the kernel's Macaulay2 version), then per job a markdown cell with
the stored result and a code cell (``job_source``).
"""

from __future__ import annotations

import contextlib
import copy
import html
import json
import logging
import math
import os
import re
import stat
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from lightning_cas.batch.sweep import M2_METHODS, JobResult, load_record
from lightning_cas.errors import InputError, LightningError, M2ParseError, NotebookKernelError
from lightning_cas.core.checks import check_path
from lightning_cas.core.display import printable
from lightning_cas.core.files import atomic_write_text
from lightning_cas.macaulay2.parse import json_int, json_int_list, json_record, records

KERNEL = "m2"
KERNELSPEC = {"name": KERNEL, "display_name": "M2", "language": "text/x-macaulay2"}
SCRIPT_MAX_BYTES = 4_000_000  # rendered scripts are ~10 kB; anything near this is not ours
RECORD_MAX_BYTES = 4_000_000
DEFAULT_CELL_LIMIT_S = 600.0  # a job stored without a time limit
GRACE_S = 20  # nbclient's hard limit per cell beyond the kernel's own (silence) limit
STARTUP_S = 60
META = "lightning_cas"  # cell metadata key
TIMEOUT_MARK = "[KERNEL ENFORCED TIMEOUT]"
INCOMPLETE = "the cell's output lacks its own begin/end records"
ATTEMPTS = 3  # a cell whose output came back incomplete is rerun on a fresh kernel
_M2_ERROR = re.compile(r"^\S*:\d+:\d+:\(\d+\):\s*error:.*$", re.M)
_SAFE_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]*")


def _md(text) -> str:
    """Record text inside markdown: printable and HTML-inert."""
    return html.escape(printable(text)).replace("|", "\\|").replace("`", "'")


# ---- reading a results directory without trusting it ------------------------------------------

def read_inside(root: Path, relative: str, max_bytes: int = SCRIPT_MAX_BYTES) -> str:
    """The UTF-8 text of ``root/relative``, refusing (InputError with the reason) absolute paths,
    ``..``, symlinks at any level, non-regular files and files above ``max_bytes``.

    Each component is opened relative to its parent's descriptor with O_NOFOLLOW, so a symlink
    swapped in between check and read is refused too."""
    if not isinstance(relative, str) or not relative:
        raise InputError("no script path")
    if "\\" in relative or "\x00" in relative:
        raise InputError(f"script path '{printable(relative)}' is not a plain relative path")
    parts = PurePosixPath(relative).parts
    if PurePosixPath(relative).is_absolute():
        raise InputError(f"script path '{printable(relative)}' is absolute (outside the results directory)")
    if not parts or any(not _SAFE_PART.fullmatch(p) for p in parts):
        raise InputError(f"script path '{printable(relative)}' leaves the results directory or has unusual names")
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    fds = [os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))]
    try:
        for part in parts[:-1]:
            try:
                fds.append(os.open(part, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | nofollow, dir_fd=fds[-1]))
            except OSError as exc:
                raise InputError(f"script path '{printable(relative)}': {part} is not a plain directory "
                                 f"({exc.strerror})") from None
        try:
            fd = os.open(parts[-1], os.O_RDONLY | nofollow | os.O_NONBLOCK, dir_fd=fds[-1])
        except OSError as exc:
            raise InputError(f"script '{printable(relative)}' cannot be opened without following a link "
                             f"({exc.strerror})") from None
        fds.append(fd)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"script '{printable(relative)}' is not a regular file")
        if info.st_size > max_bytes:
            raise InputError(f"script '{printable(relative)}' has {info.st_size} bytes (limit {max_bytes})")
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise InputError(f"script '{printable(relative)}' is larger than {max_bytes} bytes")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"script '{printable(relative)}' is not UTF-8 text") from None
    finally:
        for fd in reversed(fds):
            os.close(fd)


def _load_records(path: Path) -> tuple[Path, list[JobResult]]:
    """(results directory, valid records), reading only regular files that are not symlinks."""
    def regular(p: Path) -> bool:
        try:
            info = p.lstat()
        except OSError:
            return False
        return stat.S_ISREG(info.st_mode) and info.st_size <= RECORD_MAX_BYTES

    if path.is_dir():
        recs = [load_record(p, p.stem) for p in sorted(path.glob("*.json")) if regular(p)]
        return path, [r for r in recs if r is not None]
    rec = load_record(path) if regular(path) else None
    if rec is None:
        raise InputError(f"{printable(path)} is not a lightning-cas job result.")
    return path.parent, [rec]


def expected_scripts(rec: JobResult) -> list[str]:
    """The script texts lightning-cas renders for this record's job (what a stored script must be)."""
    from lightning_cas.backends.m2 import M2_PRIME, architecture_params
    from lightning_cas.macaulay2.render import render

    method = rec.job.get("method")
    base = {**architecture_params(rec.architecture), "charP": 0, "seed": rec.job["seed"], "columns": 1}
    if method == "jacobian":
        primes = rec.result.primes if rec.result is not None and rec.result.primes else (M2_PRIME,)
        return [render("dimension_jacobian", **{**base, "charP": primes[0]})]
    if method == "implicit":
        return [render("dimension_implicit", **base, emitGenerators=g) for g in (0, 1)]
    return []


@dataclass
class JobCell:
    """One job's place in the notebook: its script if embedded, or why it was not."""

    record: JobResult
    script: str | None = None
    refused: str | None = None  # why the script is not runnable code

    @property
    def label(self) -> str:
        return self.record.label

    @property
    def runnable(self) -> bool:
        return self.script is not None and self.refused is None

    @property
    def limit_s(self) -> float:
        return float(self.record.job.get("timeout") or DEFAULT_CELL_LIMIT_S)


def _job_cell(rec: JobResult, root: Path) -> JobCell | None:
    if not rec.script:  # a finished Macaulay2 job always stores its script
        ok_m2 = rec.job.get("method") in M2_METHODS and rec.status == "ok"
        return JobCell(rec, refused="no script was stored") if ok_m2 else None
    try:
        text = read_inside(root, rec.script)
    except InputError as exc:
        return JobCell(rec, refused=str(exc))
    if text.rstrip("\n") not in [t.rstrip("\n") for t in expected_scripts(rec)]:
        return JobCell(rec, text, refused="the stored script differs from what lightning-cas renders for this job")
    return JobCell(rec, text)


# ---- building the notebook ----------------------------------------------------------------------

def setup_source() -> str:
    """The first code cell: loads the LightningCAS package once (the job cells' own ``needsPackage``
    then finds it loaded) and reports the kernel's Macaulay2 version."""
    from lightning_cas.macaulay2.render import package_line

    return ('--%timeout=60\n' + package_line() + '\nneedsPackage("LightningCAS", FileName => lcasPackage);\n'
            '<< "@@LCAS@@ m2_version " << version#"VERSION" << endl;')


def job_source(cell: JobCell, limit_s: float | None = None) -> str:
    """A job's code cell: the kernel's time-limit magic (an M2 comment elsewhere), the script, and
    begin/end records naming the job, so output that is cut short or belongs to another cell is
    recognised (the kernel can end a cell early when M2 is busy as the cell arrives)."""
    limit = math.ceil(limit_s if limit_s is not None else cell.limit_s)
    return (f"--%timeout={limit}\n<< \"@@LCAS@@ cell_begin {cell.label}\" << endl;\n{cell.script.rstrip(chr(10))}\n"
            f"<< \"@@LCAS@@ cell_end {cell.label}\" << endl;")


def _outcome_text(rec: JobResult) -> str:
    if rec.result is None:
        return f"status **{_md(rec.status)}**: {_md(rec.message or '')}"
    r = rec.result
    return f"dimension **{r.dimension}** (method {_md(r.method)}, {_md(r.certainty)})"


def _title(root: Path, recs: list[JobResult]) -> str:
    from lightning_cas import __version__

    methods = sorted({r.job.get("method", "?") for r in recs})
    m2_versions = sorted({r.result.m2_version for r in recs if r.result is not None and r.result.m2_version})
    hosts = sorted({r.host for r in recs})
    limits = sorted({r.job.get("timeout") for r in recs if r.job.get("timeout")})
    lines = [f"# lightning-cas run `{_md(root.resolve().name)}`", "",
             f"- jobs: {len(recs)} (methods: {', '.join(map(_md, methods)) or 'none'}; "
             f"statuses: {', '.join(f'{s} {sum(r.status == s for r in recs)}' for s in ('ok', 'timeout', 'error'))})",
             f"- time limits per job: {', '.join(f'{t:g} s' for t in limits) or 'none stored'}",
             f"- lightning_cas {__version__} (this export); Macaulay2 of the run: "
             f"{', '.join(map(_md, m2_versions)) or 'not recorded'}; hosts: {', '.join(map(_md, hosts))}",
             f"- kernel: `{KERNEL}` (Debian's macaulay2-jupyter-kernel). Each job cell starts with "
             "`--%timeout=N`, the kernel's time limit (a plain comment for `M2 --script`).", "",
             "Re-run and check every cell with `lightning-cas notebook RESULTS -o out.ipynb --execute`: "
             "each cell's `@@LCAS@@` records are compared with the stored result.", "",
             "The spec, as expanded into jobs (`lightning-cas sweep` accepts it as it is):", "",
             "```toml", spec_toml(root.resolve().name, recs), "```"]
    return "\n".join(lines)


def spec_toml(name: str, recs: list[JobResult]) -> str:
    """A sweep spec with one [[architecture]] per stored job, which expands to the same jobs."""
    def value(v):
        return json.dumps(list(v) if isinstance(v, tuple) else v)

    out = [f"name = {json.dumps(printable(name))}"]
    for r in recs:
        out += ["", "[[architecture]]"]
        entry = {**r.job.get("architecture", {}), "method": r.job.get("method"), "seed": r.job.get("seed"),
                 "timeout": r.job.get("timeout")}
        out += [f"{k} = {value(v)}" for k, v in entry.items() if v is not None and re.fullmatch(r"[a-z_]+", k)]
    return "\n".join(out)


def _table(recs: list[JobResult]) -> str | None:
    if not any(r.predicted is not None for r in recs):
        return None
    rows = ["| job | method | status | dimension | predicted | agreement | certainty |",
            "|---|---|---|---|---|---|---|"]
    for r in recs:
        res = r.result
        rows.append("| " + " | ".join(_md(v) for v in (
            r.label, res.method if res else r.job.get("method"), r.status, res.dimension if res else "",
            "" if r.predicted is None else f"{r.predicted} ({r.prediction_status})", r.agreement,
            res.certainty if res else "")) + " |")
    agree = sum(r.agreement == "agree" for r in recs)
    disagree = sum(r.agreement == "disagree" for r in recs)
    return f"## Computed vs predicted\n\n{agree} agree, {disagree} disagree.\n\n" + "\n".join(rows)


def build_notebook(path: str | os.PathLike, limit_s: float | None = None):
    """(notebook node, job cells) for a results directory or one result JSON."""
    nbformat, v4 = _nbformat()
    root, recs = _load_records(Path(check_path(path, "results directory or result file")))
    recs.sort(key=lambda r: r.label)
    nb = v4.new_notebook()
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = {"name": "Macaulay2", "codemirror_mode": "macaulay2", "file_extension": ".m2"}
    nb.cells.append(v4.new_markdown_cell(_title(root, recs)))
    table = _table(recs)
    if table:
        nb.cells.append(v4.new_markdown_cell(table))
    cells = [c for c in (_job_cell(r, root) for r in recs) if c is not None]
    if any(c.runnable for c in cells):
        nb.cells.append(v4.new_code_cell(setup_source(), metadata={META: {"role": "setup"}}))
    for c in cells:
        rec = c.record
        pred = "no prediction" if rec.predicted is None else f"predicted {rec.predicted} ({_md(rec.prediction_status)})"
        head = (f"## `{_md(c.label)}`\n\nStored: {_outcome_text(rec)}; {pred}; seed {rec.job.get('seed')}, "
                f"time limit {c.limit_s:g} s, took {rec.elapsed_s:.2f} s on {_md(rec.host)}.")
        meta = {META: {"role": "job", "label": c.label}}
        if c.refused:
            nb.cells.append(v4.new_markdown_cell(f"{head}\n\n**Not runnable:** {_md(c.refused)}."))
            if c.script is not None:
                nb.cells.append(v4.new_raw_cell(c.script, metadata=meta))
            continue
        if rec.status != "ok":
            head += "\n\nThe sweep did not finish this job, so there is nothing to compare; the cell is not run."
            meta["tags"] = ["skip-execution"]
        nb.cells.append(v4.new_markdown_cell(head))
        nb.cells.append(v4.new_code_cell(job_source(c, limit_s), metadata=meta))
    nbformat.validate(nb)
    return nb, cells


def _nbformat():
    try:
        import nbformat
        from nbformat import v4
    except ImportError:
        raise InputError("notebook export needs nbformat (pip install 'lightning_cas[notebook]').") from None
    return nbformat, v4


def _write(nb, output: str | os.PathLike) -> None:
    nbformat, _ = _nbformat()
    output = Path(check_path(output, "notebook"))
    output.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(output, nbformat.writes(nb))


def write_notebook(path: str | os.PathLike, output: str | os.PathLike) -> int:
    """Write the notebook (not executed); returns how many runnable job cells it holds."""
    nb, cells = build_notebook(path)
    _write(nb, output)
    return sum(c.runnable for c in cells)


def refused_cells(path: str | os.PathLike) -> list[tuple[str, str]]:
    """(label, reason) of jobs whose script was not embedded as code."""
    _, cells = build_notebook(path)
    return [(c.label, c.refused) for c in cells if c.refused]


# ---- reading a cell's outputs back ----------------------------------------------------------------

def cell_text(cell) -> str:
    """Everything a code cell printed (streams, results, errors) as one text."""
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        elif out.get("output_type") in ("execute_result", "display_data"):
            parts.append(out.get("data", {}).get("text/plain", ""))
        elif out.get("output_type") == "error":
            parts.append(f"{out.get('ename', '')}: {out.get('evalue', '')}")
    return "\n".join(parts)


def observed(method: str, text: str) -> dict:
    """The comparable quantities in a cell's output (its one JSON record); raises M2ParseError if a
    record or a key is missing."""
    rec = json_record(text)
    if method == "jacobian":
        got = {"dimension": json_int(rec, "rank"), "prime": json_int(rec, "prime"), "rows": json_int(rec, "rows"),
               "parameters": json_int(rec, "parameters")}
    elif method == "implicit":
        got = {"dimension": json_int(rec, "dimension"), "parameters": json_int(rec, "parameters"),
               "degree": json_int(rec, "degree"), "linear_span": json_int(rec, "linear_span"),
               "generator_degrees": json_int_list(rec, "generator_degrees")}
    else:
        raise M2ParseError(f"no Macaulay2 cell for method {method!r}")
    got["m2_version"] = rec.get("m2_version") if isinstance(rec.get("m2_version"), str) else None
    return got


_NOTES = {"degree": (re.compile(r"^degree (\d+) "), int),
          "linear_span": (re.compile(r"^(\d+) linearly independent coefficients$"), int),
          "generator_degrees": (re.compile(r"^minimal generator degrees \[([\d, ]*)\]$"),
                                lambda s: [int(v) for v in s.split(",") if v.strip()])}


def stored(rec: JobResult) -> dict:
    """The same quantities from the stored result (only those it holds)."""
    r = rec.result
    out = {"dimension": r.dimension, "parameters": r.parameters}
    if r.method == "jacobian":
        if r.primes:
            out["prime"] = r.primes[0]
        if r.runs and isinstance(r.runs[0], dict) and "rows" in r.runs[0]:
            out["rows"] = r.runs[0]["rows"]
    for note in r.notes:
        for key, (pattern, conv) in _NOTES.items():
            m = pattern.match(note)
            if m:
                out[key] = conv(m.group(1))
    return out


@dataclass
class CellOutcome:
    """What re-running one job cell gave: reproduced, differs, error or skipped."""

    label: str
    verdict: str
    message: str = ""
    stored: dict = field(default_factory=dict)
    notebook: dict = field(default_factory=dict)
    elapsed_s: float = 0.0

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items()}


def judge(cell: JobCell, text: str, elapsed_s: float = 0.0, limit_s: float | None = None) -> CellOutcome:
    """Compare one executed cell's output with its stored result."""
    limit = math.ceil(limit_s if limit_s is not None else cell.limit_s)

    def error(message):
        return CellOutcome(cell.label, "error", message, elapsed_s=elapsed_s)

    if TIMEOUT_MARK in text:
        return error(f"the kernel stopped the cell after {limit} s without output "
                     "(kernel-enforced timeout)")
    m = _M2_ERROR.search(text)
    if m:
        return error(f"Macaulay2 error: {m.group(0)[:300]}")
    recs = _safe_records(text)
    if recs.get("cell_begin") != cell.label or recs.get("cell_end") != cell.label:
        if elapsed_s >= limit:
            return error(f"the cell printed {'no records' if recs else 'nothing'} and ran into the kernel's "
                         f"{limit} s limit for a silent cell")
        return error(f"{INCOMPLETE} (the kernel ended the cell early or its output belongs to another cell)")
    want = stored(cell.record)
    try:
        got = observed(cell.record.result.method, text)
    except (M2ParseError, ValueError) as exc:
        return error(str(exc))
    diff = {k: {"stored": v, "notebook": got.get(k)} for k, v in want.items() if got.get(k) != v}
    version = got.pop("m2_version")
    note = "" if version is None or version == cell.record.result.m2_version else \
        f"kernel Macaulay2 {version}, run Macaulay2 {cell.record.result.m2_version}"
    if diff:
        fields_ = ", ".join(f"{k} {d['notebook']} (stored {d['stored']})" for k, d in diff.items())
        return CellOutcome(cell.label, "differs", fields_ + (f"; {note}" if note else ""), want, got, elapsed_s)
    return CellOutcome(cell.label, "reproduced", note, want, got, elapsed_s)


# ---- executing in the kernel ---------------------------------------------------------------------

@dataclass
class NotebookRun:
    """The outcome of executing a run's notebook in the Macaulay2 kernel."""

    notebook: str
    outcomes: list[CellOutcome]
    kernel: dict
    elapsed_s: float

    @property
    def checked(self) -> list[CellOutcome]:
        return [o for o in self.outcomes if o.verdict != "skipped"]

    @property
    def ok(self) -> bool:
        """True when there was something to check and every checked cell reproduced."""
        return bool(self.checked) and all(o.verdict == "reproduced" for o in self.checked)

    def to_dict(self) -> dict:
        pick = lambda v: [{"label": o.label, "message": o.message, "stored": o.stored, "notebook": o.notebook}
                          if v == "differs" else {"label": o.label, "message": o.message}
                          for o in self.outcomes if o.verdict == v]
        return {"cells": len(self.checked), "reproduced": sum(o.verdict == "reproduced" for o in self.outcomes),
                "differs": pick("differs"), "errors": pick("error"),
                "skipped": [o.label for o in self.outcomes if o.verdict == "skipped"],
                "kernel": self.kernel, "elapsed_s": round(self.elapsed_s, 3), "notebook": self.notebook}


def kernel_environment() -> dict:
    """The kernel's environment: plain terminal (no escape codes), no user kernel config, quiet debugger."""
    env = {k: v for k, v in os.environ.items() if k != "M2JK_CONFIG"}
    env.update(TERM="dumb", PYDEVD_DISABLE_FILE_VALIDATION="1")
    return env


def _kernel_spec(name: str) -> dict:
    try:
        from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    except ImportError:
        raise InputError("notebook execution needs nbclient (pip install 'lightning_cas[notebook]').") from None
    try:
        spec = KernelSpecManager().get_kernel_spec(name)
    except NoSuchKernel:
        raise NotebookKernelError(f"the Jupyter kernel '{printable(name)}' is not installed; `make setup` installs "
                                  "Debian's macaulay2-jupyter-kernel (kernelspec m2).") from None
    return {"name": name, "display_name": spec.display_name, "argv": spec.argv[:3],
            "resource_dir": spec.resource_dir}


def execute_notebook(results: str | os.PathLike, output: str | os.PathLike | None = None, *,
                     kernel: str = KERNEL, limit_s: float | None = None,
                     startup_timeout: float = STARTUP_S) -> NotebookRun:
    """Export the notebook of ``results``, run it in the Jupyter kernel, compare each job cell's
    records with the stored result, and write the executed notebook to ``output`` (if given).

    ``limit_s`` replaces the jobs' own time limits (seconds per cell). Refused scripts count as
    errors; jobs the sweep did not finish are skipped."""
    _check_limit(limit_s)
    nb, cells = build_notebook(results, limit_s)
    return run_notebook(nb, cells, output, kernel=kernel, limit_s=limit_s, startup_timeout=startup_timeout)


def _check_limit(limit_s) -> None:
    if limit_s is not None and (isinstance(limit_s, bool) or not isinstance(limit_s, (int, float))
                                or not math.isfinite(limit_s) or limit_s <= 0):
        raise InputError(f"the time limit must be a positive number of seconds, got {limit_s!r}.")


class _Kernel:
    """One kernel for a notebook, replaced by a fresh one (new client, new kernel, setup cell rerun)
    after any failed cell, so a cell cut off early never leaves output or state for the next."""

    def __init__(self, nb, kernel: str, work: str, startup_timeout: float, grace_s: float, setup):
        self.nb, self.kernel, self.work = nb, kernel, work
        self.startup_timeout, self.grace_s = startup_timeout, grace_s
        self.setup = setup  # (index, cell) of the setup cell
        self.stack = contextlib.ExitStack()
        self.client = None
        self.starts = 0

    def start(self) -> dict:
        """Start a kernel and run the setup cell; returns what is known about the kernel."""
        problem = ""
        for _ in range(ATTEMPTS):
            info = self._start_once()
            index, original = self.setup
            cell = original if self.starts == 1 else copy.deepcopy(original)
            failure = self.run(cell, index, 60)
            if self.starts > 1:  # nbclient stores the executed cell at its index: keep the first run's
                self.nb.cells[index] = original
            recs = _safe_records(cell_text(cell))
            if not failure and "m2_version" in recs:
                return {**info, "m2_version": recs["m2_version"]}
            problem = failure or cell_text(cell).strip()[:200] or "no output"
        raise NotebookKernelError(f"the '{printable(self.kernel)}' kernel did not run the setup cell "
                                  f"({printable(problem)}).")

    def _start_once(self) -> dict:
        from nbclient import NotebookClient

        self.stack.close()
        self.stack = contextlib.ExitStack()
        self.starts += 1
        self.client = NotebookClient(self.nb, kernel_name=self.kernel, timeout=STARTUP_S,
                                     startup_timeout=self.startup_timeout, allow_errors=True, record_timing=True,
                                     shutdown_kernel="immediate", resources={"metadata": {"path": self.work}})
        log = self.stack.enter_context(open(Path(self.work) / "kernel.log", "ab"))
        try:
            self.stack.enter_context(self.client.setup_kernel(env=kernel_environment(), stdout=log, stderr=log))
        except Exception as exc:
            raise NotebookKernelError(f"the Jupyter kernel '{printable(self.kernel)}' did not start "
                                      f"({printable(type(exc).__name__)}: {printable(str(exc))[:200]}); its log ends: "
                                      f"{printable(self.log_tail())}.") from None
        try:
            content = self.client.wait_for_reply(self.client.kc.kernel_info()).get("content", {})
        except Exception:  # the reply is informative only
            content = {}
        return {k: content.get(k) for k in ("implementation", "implementation_version")}

    def log_tail(self, size: int = 400) -> str:
        try:
            return (Path(self.work) / "kernel.log").read_bytes()[-size:].decode("utf-8", "replace").strip()
        except OSError:
            return ""

    def run(self, cell, index: int, limit: int) -> str | None:
        """Execute one cell; the failure (hard time limit, dead kernel), or None."""
        from nbclient.exceptions import CellTimeoutError, DeadKernelError

        self.client.timeout = limit + self.grace_s
        try:
            self.client.execute_cell(cell, index)
        except CellTimeoutError:
            return f"the cell exceeded the {limit + self.grace_s:g} s limit and was stopped"
        except DeadKernelError:
            return "the kernel died during the cell"
        return None

    def close(self) -> None:
        self.stack.close()


def run_notebook(nb, cells: list[JobCell], output: str | os.PathLike | None = None, *, kernel: str = KERNEL,
                 limit_s: float | None = None, startup_timeout: float = STARTUP_S,
                 grace_s: float = GRACE_S) -> NotebookRun:
    """Execute a notebook built by :func:`build_notebook` (possibly edited since) and judge every
    job cell (matched by its metadata label) against its stored result.

    A cell gets the kernel's own silence limit (its ``--%timeout`` magic) and a hard limit of
    ``limit + grace_s`` from nbclient. After a failed cell the kernel is replaced by a fresh one;
    a cell whose output came back without its own end record is rerun (up to ATTEMPTS runs)."""
    try:
        import nbclient  # noqa: F401
    except ImportError:
        raise InputError("notebook execution needs nbclient (pip install 'lightning_cas[notebook]').") from None
    _check_limit(limit_s)
    start = time.perf_counter()
    info = _kernel_spec(kernel)
    nb.metadata["kernelspec"] = {**nb.metadata.get("kernelspec", KERNELSPEC), "name": kernel}
    by_label = {c.label: c for c in cells}
    outcomes = {c.label: CellOutcome(c.label, "error", f"not run: {c.refused}") for c in cells if c.refused}
    roles = [(i, c, c.get("metadata", {}).get(META, {})) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    setup = next(((i, c) for i, c, m in roles if m.get("role") == "setup"), None)
    todo = [(i, c, by_label[m["label"]]) for i, c, m in roles
            if m.get("role") == "job" and m.get("label") in by_label and m["label"] not in outcomes]
    for _, _, job in todo:
        if job.record.status != "ok":
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
                session = _Kernel(nb, kernel, work, startup_timeout, grace_s, setup)
                info.update(session.start())
            for index, cell, job in todo:
                limit = math.ceil(limit_s if limit_s is not None else job.limit_s)
                for attempt in range(1, ATTEMPTS + 1):
                    t0 = time.perf_counter()
                    failure = session.run(cell, index, limit)
                    took = time.perf_counter() - t0
                    outcome = (CellOutcome(job.label, "error", failure, elapsed_s=took) if failure
                               else judge(job, cell_text(cell), took, limit))
                    if outcome.verdict == "error":
                        session.start()
                    if not outcome.message.startswith(INCOMPLETE) or attempt == ATTEMPTS:
                        break
                if attempt > 1:
                    outcome.message = (outcome.message + "; " if outcome.message else "") + f"{attempt} runs"
                cell.metadata[META].update(verdict=outcome.verdict, message=outcome.message)
                outcomes[job.label] = outcome
        except LightningError:
            raise
        except Exception as exc:  # the client failed
            raise NotebookKernelError(f"the Jupyter kernel '{printable(kernel)}' failed: "
                                      f"{printable(type(exc).__name__)}: {printable(str(exc))[:300]}.") from None
        finally:
            if session is not None:
                session.close()
            quiet.setLevel(level)
    for c in cells:
        if c.label not in outcomes:
            outcomes[c.label] = (CellOutcome(c.label, "skipped", f"stored status {c.record.status}")
                                 if c.record.status != "ok" else
                                 CellOutcome(c.label, "error", "the notebook has no code cell for this job"))
    run = NotebookRun(str(output) if output else "", [outcomes[c.label] for c in cells],
                      info, time.perf_counter() - start)
    _, v4 = _nbformat()
    nb.cells.append(v4.new_markdown_cell(_summary(run)))
    if output:
        _write(nb, output)
    return run


def _safe_records(text: str) -> dict:
    try:
        return records(text)
    except M2ParseError:
        return {}


def _summary(run: NotebookRun) -> str:
    d = run.to_dict()
    lines = [f"## Re-execution in the `{_md(run.kernel.get('name'))}` kernel", "",
             f"{d['reproduced']} of {d['cells']} cells reproduced their stored result "
             f"(kernel Macaulay2 {_md(run.kernel.get('m2_version'))}, {run.elapsed_s:.1f} s)."]
    for o in run.outcomes:
        if o.verdict != "reproduced":
            lines.append(f"- `{_md(o.label)}`: {o.verdict}: {_md(o.message)}")
    return "\n".join(lines)
