"""Tables and plots of a results directory: what was computed next to what the theory predicts.

The plot is the check a reader wants at a glance: computed against predicted dimension (points
on the diagonal agree), and the dimension along each family of architectures.

A results directory is data from disk, not a verdict: a record that this user's key did not
sign is shown with agreement ``untrusted`` (its numbers are claims) and left out of the plot, and
every printed cell goes through :func:`~lightning_cas.core.display.printable`.
"""

from __future__ import annotations

import csv
import dataclasses
import os
from pathlib import Path

from lightning_cas.batch.store import CSV_COLUMNS, JobResult, ResultStore, csv_row
from lightning_cas.core.display import printable
from lightning_cas.errors import InputError

UNTRUSTED = "untrusted"

TABLE_COLUMNS = ("label", "status", "widths", "attention", "tokens", "normalization", "method", "parameters",
                 "dimension", "predicted", "agreement", "elapsed_s")


def load_results(directory: str | os.PathLike) -> list[JobResult]:
    """Every job record in ``directory``: trusted ones as stored, well-formed but unsigned or
    wrongly signed ones with agreement ``untrusted`` and the reason as message; files that are
    not records (corrupted, nested too deep, FIFOs, symlinks) are ignored."""
    path = Path(directory)
    if not path.is_dir():
        raise InputError(f"{printable(path)} is not a results directory.")
    records = []
    for check in ResultStore(path, create=False).checks():
        if check.trusted:
            records.append(check.record)
        elif check.record is not None:
            said = f"; it says: {check.record.message}" if check.record.message else ""
            records.append(dataclasses.replace(check.record, agreement=UNTRUSTED,
                                               message=f"record not trusted: {check.reason}{said}"))
    if not records:
        raise InputError(f"{printable(path)} holds no job results (run lightning-cas sweep first).")
    return records


def _sort_key(r: JobResult):
    a = r.architecture
    return (a.normalization, r.job["method"], a.depth, a.tokens, a.attention, a.widths, r.job["seed"])


def table_rows(records: list[JobResult]) -> list[dict]:
    """One dict per job with the CSV columns, sorted by family then size."""
    return [csv_row(r) for r in sorted(records, key=_sort_key)]


def print_table(rows: list[dict], title: str | None = None, file=None) -> None:
    """A rich table on stdout (plain text when not a terminal), disagreements in red."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(printable(title)) if title else None)
    for col in TABLE_COLUMNS:
        table.add_column(col, justify="right" if col in ("tokens", "parameters", "dimension", "predicted",
                                                          "elapsed_s") else "left", no_wrap=col == "label")
    for row in rows:
        style = {"disagree": "red", "not computed": "yellow", UNTRUSTED: "magenta", "defect": "cyan"}.get(
            row["agreement"])
        table.add_row(*(Text(printable(row[c])) for c in TABLE_COLUMNS), style=style)
    Console(file=file, width=200).print(table)
    for r in rows:
        if r["status"] != "ok" or r["agreement"] == UNTRUSTED:
            Console(file=file, width=200, highlight=False).print(
                Text(printable(f"{r['label']}: {r['status']}: {r['message']}")))


def write_csv(rows: list[dict], path: str | os.PathLike) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


def _family(r: JobResult) -> str:
    a = r.architecture
    return (f"{a.normalization}, L={a.depth}, a={','.join(map(str, sorted(set(a.attention))))}, t={a.tokens}, "
            f"{r.result.method if r.result else r.job['method']}")


def plot(records: list[JobResult], path: str | os.PathLike, title: str | None = None) -> Path:
    """Two panels: computed vs predicted dimension, and dimension against the input width d_0 per family."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("plots need matplotlib (pip install 'lightning_cas[plot]').") from None
    ok = [r for r in records if r.status == "ok" and r.agreement != UNTRUSTED]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5))
    families = sorted({_family(r) for r in ok})
    markers = "os^Dv<>px*h"
    for i, fam in enumerate(families):
        rs = [r for r in ok if _family(r) == fam]
        pairs = [(r.predicted, r.result.dimension) for r in rs if r.predicted is not None]
        if pairs:
            left.scatter(*zip(*pairs), marker=markers[i % len(markers)], label=fam, alpha=0.8)
        pts = sorted((r.architecture.widths[0], r.result.dimension, r.predicted) for r in rs)
        line = right.plot([p[0] for p in pts], [p[1] for p in pts], marker=markers[i % len(markers)],
                          linestyle="-", label=fam)
        pred = [(p[0], p[2]) for p in pts if p[2] is not None]
        if pred:
            right.plot(*zip(*pred), linestyle="--", color=line[0].get_color(), alpha=0.6,
                       label="_nolegend_")
    values = [v for r in ok for v in (r.predicted, r.result.dimension) if v is not None]
    if values:
        lo, hi = min(values), max(values)
        left.plot([lo, hi], [lo, hi], color="grey", linewidth=0.8, label="computed = predicted")
    left.set_xlabel("predicted dimension (closed form)")
    left.set_ylabel("computed dimension")
    left.set_title("computed vs predicted")
    left.legend(fontsize=7)
    right.set_xlabel("input width d_0")
    right.set_ylabel("dimension of the neurovariety")
    right.set_title("dimension by family (dashed: prediction)")
    right.legend(fontsize=6)
    failed = len(records) - len(ok)
    fig.suptitle(printable(title or "lightning_cas results")
                 + (f"  ({failed} job(s) not computed or untrusted)" if failed else ""))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
