"""Judging an executed cell against its stored result, and cleaning what a reader will see.

Kernel output counts only through the cell's own records: ``@@LCAS@@ cell_begin LABEL``, one
``@@LCAS-JSON@@`` record, ``@@LCAS@@ cell_end LABEL``. A Macaulay2 error, a kernel-enforced timeout
or a missing record is an error even though the kernel says "ok" (Debian's kernel reports every
cell as ok), and output that belongs to another cell is never judged.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from lightning_cas.batch.notebook.build import JobCell
from lightning_cas.batch.records import JobResult
from lightning_cas.errors import M2ParseError
from lightning_cas.macaulay2.parse import MARK, json_int, json_int_list, json_record, records

TIMEOUT_MARK = "[KERNEL ENFORCED TIMEOUT]"
INCOMPLETE = "the cell's output lacks its own begin/end records"
JSON_MARK = "@@LCAS-JSON@@"
_M2_ERROR = re.compile(r"^\S*:\d+:\d+:\(\d+\):\s*error:.*$", re.M)
_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")


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


def clean_text(text: str) -> str:
    """Cell output as a reader should see it: no terminal escapes (such as bracketed paste,
    ``\\x1b[?2004h``), no record lines meant for the checker, no kernel chatter about its magic
    lines, no runs of blank lines."""
    lines = [
        line
        for line in _ESCAPE.sub("", text).splitlines()
        if not line.lstrip().startswith((MARK.strip(), JSON_MARK, "[magic succeeded]"))
    ]
    out = []
    for line in lines:
        if line.strip() or (out and out[-1].strip()):
            out.append(line)
    return "\n".join(out).strip("\n") + ("\n" if out else "")


def clean_outputs(cell) -> None:
    """Clean a cell's outputs in place (see :func:`clean_text`); outputs left empty are dropped."""
    kept = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            out["text"] = clean_text(out.get("text", ""))
            if not out["text"].strip():
                continue
        elif out.get("output_type") in ("execute_result", "display_data") and "text/plain" in out.get("data", {}):
            out["data"]["text/plain"] = clean_text(out["data"]["text/plain"])
        kept.append(out)
    cell["outputs"] = kept


def observed(method: str, text: str) -> dict:
    """The comparable quantities in a cell's output (its one JSON record); raises M2ParseError if a
    record or a key is missing."""
    rec = json_record(text)
    got = {"dimension": json_int(rec, "dimension"), "parameters": json_int(rec, "parameters")}
    if rec.get("strategy") == "Jacobian":
        got.update(rank=json_int(rec, "rank"), prime=json_int(rec, "prime"), rows=json_int(rec, "rows"))
    elif rec.get("strategy") == "Implicit":
        got.update(
            degree=json_int(rec, "degree"),
            linear_span=json_int(rec, "linear_span"),
            generator_degrees=json_int_list(rec, "generator_degrees"),
        )
    else:
        raise M2ParseError(f"the cell's record names no strategy of the {method} job")
    got["m2_version"] = rec.get("m2_version") if isinstance(rec.get("m2_version"), str) else None
    return got


def stored(rec: JobResult) -> dict:
    """The quantities of the stored result that its cell recomputes (a jacobian job's cell runs the
    same prime and seed, so its rows too; an implicit job's the ideal's degree and spans)."""
    r = rec.result
    out = {"dimension": r.dimension, "parameters": r.parameters}
    if r.method == "jacobian":
        if r.primes:
            out["prime"] = r.primes[0]
        if r.runs and isinstance(r.runs[0], dict) and "rows" in r.runs[0]:
            out["rows"] = r.runs[0]["rows"]
    if r.implicit is not None:
        out.update(
            degree=r.implicit.degree,
            linear_span=r.implicit.linear_span,
            generator_degrees=list(r.implicit.generator_degrees),
        )
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
        return dict(self.__dict__)


def safe_records(text: str) -> dict:
    try:
        return records(text)
    except M2ParseError:
        return {}


def judge(cell: JobCell, text: str, elapsed_s: float = 0.0, limit_s: float | None = None) -> CellOutcome:
    """Compare one executed cell's output with its stored result."""
    limit = math.ceil(limit_s if limit_s is not None else cell.limit_s)

    def error(message):
        return CellOutcome(cell.label, "error", message, elapsed_s=elapsed_s)

    if TIMEOUT_MARK in text:
        return error(f"the kernel stopped the cell after {limit} s without output (kernel-enforced timeout)")
    m = _M2_ERROR.search(text)
    if m:
        return error(f"Macaulay2 error: {m.group(0)[:300]}")
    recs = safe_records(text)
    if recs.get("cell_begin") != cell.label or recs.get("cell_end") != cell.label:
        if elapsed_s >= limit:
            return error(
                f"the cell printed {'no records' if recs else 'nothing'} and ran into the kernel's "
                f"{limit} s limit for a silent cell"
            )
        return error(f"{INCOMPLETE} (the kernel ended the cell early or its output belongs to another cell)")
    want = stored(cell.record)
    try:
        got = observed(cell.record.method, text)
    except (M2ParseError, ValueError) as exc:
        return error(str(exc))
    diff = {k: {"stored": v, "notebook": got.get(k)} for k, v in want.items() if got.get(k) != v}
    version = got.pop("m2_version")
    run_version = cell.record.result.m2_version
    note = (
        ""
        if version is None or run_version is None or version == run_version
        else f"kernel Macaulay2 {version}, run Macaulay2 {run_version}"
    )
    if diff:
        fields_ = ", ".join(f"{k} {d['notebook']} (stored {d['stored']})" for k, d in diff.items())
        return CellOutcome(cell.label, "differs", fields_ + (f"; {note}" if note else ""), want, got, elapsed_s)
    return CellOutcome(cell.label, "reproduced", note, want, got, elapsed_s)
