"""Tables of job records: one typed row per job, and the one CSV writer.

A row is typed (lists as lists, numbers as numbers, ``None`` for "not there"), which is what
``report --json`` prints; only the CSV form turns it into text, in :func:`to_csv`, the single
place CSV is written (the store's ``results.csv``, ``report --csv``, the heads tables).
"""

from __future__ import annotations

import csv
import io

from lightning_cas.batch.records import JobResult, Origin
from lightning_cas.results.display import escape

CSV_NAME, JSONL_NAME = "results.csv", "results.jsonl"
CSV_COLUMNS = (
    "label",
    "status",
    "widths",
    "attention",
    "heads",
    "tokens",
    "normalization",
    "method",
    "seed",
    "parameters",
    "dimension",
    "predicted",
    "agreement",
    "certainty",
    "elapsed_s",
    "message",
    "source",
    "host",
    "recheck",
    "network",
    # a polynomial network's columns as the field's tables name them (architecture d_0..d_L, exponent r)
    "architecture",
    "exponent",
    "num_parameters",
    "ambient_dimension",
    "is_full_dimension",
    "expected_dimension",
    "defect",
    "proof",
    "split",
)


def job_row(rec: JobResult, source: Origin = Origin.HERE) -> dict:
    """One job as a typed row (the CSV columns, in order)."""
    arch, res = rec.architecture, rec.result
    recheck = None if rec.recheck is None else ("reproduced" if rec.recheck.reproduced else "differs")
    return {
        "label": rec.label,
        "status": str(rec.status),
        "widths": list(arch.widths),
        "attention": list(arch.attention),
        "heads": list(arch.heads),
        "tokens": arch.tokens,
        "normalization": arch.normalization,
        "method": rec.method,
        "seed": rec.job.seed,
        "parameters": arch.parameters,
        "dimension": None if res is None else res.dimension,
        "predicted": rec.predicted,
        "agreement": str(rec.agreement),
        "certainty": None if res is None else res.certainty,
        "elapsed_s": round(rec.elapsed_s, 3),
        "message": rec.message,
        "source": str(source),
        "host": rec.host,
        "recheck": recheck,
        "network": arch.label() if arch.paper is None else None,
        **field_columns(arch, res),
    }


def field_columns(arch, res) -> dict:
    """The columns polynomial-network tables use, beside ours: the architecture and exponent (of a
    polynomial network), the ambient dimension, whether the network fills it, the expected dimension
    min(sum d_i d_(i-1) - sum of hidden widths, ambient) and the defect below it; the proof when the
    dimension is exact, the defect split in one line (or why it was skipped)."""
    pnn = arch.polynomial_widths()
    ambient = arch.ambient_dimension
    dim = None if res is None else res.dimension
    expected = None
    if pnn is not None:
        d = pnn[0]
        expected = sum(a * b for a, b in zip(d, d[1:])) - sum(d[1:-1])
        expected = expected if ambient is None else min(expected, ambient)
    split = None if res is None else res.explained
    skipped = None if res is None else next((n for n in res.notes if "defect split" in n), None)
    return {
        "architecture": None if pnn is None else "[" + ", ".join(map(str, pnn[0])) + "]",
        "exponent": None if pnn is None else pnn[1],
        "num_parameters": arch.parameters,
        "ambient_dimension": ambient,
        "is_full_dimension": None if dim is None or ambient is None else dim == ambient,
        "expected_dimension": expected,
        "defect": None if expected is None or dim is None else expected - dim,
        "proof": None if res is None or res.certainty != "exact" else res.certainty_detail,
        "split": skipped
        if split is None
        else f"named {split.named_group}"
        + "".join(f" + {c.mechanism} {c.count}" for c in split.causes)
        + f" + unexplained {split.unexplained}",
    }


def cell(value) -> str:
    """A typed value as CSV text: lists as ``2-2`` (as the labels write them), None as empty,
    seconds with three decimals, text through the one escaping function (``core.display.escape``)."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return "-".join(map(str, value))
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, int):
        return str(value)
    return escape(value, "csv")  # text from a record (a host, a message): never a live formula


def to_csv(rows: list[dict], columns) -> str:
    """CSV text of typed rows (keys outside ``columns`` are left out)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: cell(row.get(k)) for k in columns})
    return buf.getvalue()
