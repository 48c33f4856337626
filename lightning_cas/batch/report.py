"""Tables and plots of a results directory: what was computed next to what the theory predicts.

The plot is the check a reader wants at a glance: computed against predicted dimension (points
on the diagonal agree), and the dimension along each family of architectures, with the
prediction drawn so that it stays visible where the two coincide.

A results directory is data from disk, not a verdict: every verdict is recomputed here (see
:func:`~lightning_cas.batch.records.judged`); a record this user's key did not sign is shown as a
*claim*, with where it came from, in the table, the JSON and the plot (hollow markers); and every
printed cell goes through :func:`~lightning_cas.core.display.printable`.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

from lightning_cas.batch.records import JobResult, Origin, Status
from lightning_cas.batch.store import RecordCheck, ResultStore
from lightning_cas.batch.tables import job_row
from lightning_cas.errors import InputError
from lightning_cas.results.display import printable

PLOT_FORMATS = (".png", ".pdf", ".svg")

# the terminal table: (title, row key, right-aligned); the label, certainty and message stay in the CSV/JSON
TABLE_COLUMNS = (
    ("widths", "widths", False),
    ("a", "attention", False),
    ("H", "heads", False),
    ("t", "tokens", True),
    ("norm", "normalization", False),
    ("method", "method", False),
    ("seed", "seed", True),
    ("params", "parameters", True),
    ("dim", "dimension", True),
    ("pred", "predicted", True),
    ("verdict", "agreement", False),
    ("s", "elapsed_s", True),
    ("source", "source", False),
)
STYLES = {"disagree": "red", "not computed": "yellow", "defect": "cyan"}


def scan(directory: str | os.PathLike, judge: bool = True) -> tuple[list[RecordCheck], list[RecordCheck]]:
    """(records, damaged files) of ``directory``: the records (this user's and claims) in name
    order, and the record files that are not valid records with the reason. A directory whose
    files are all damaged is reported as such, not as empty."""
    path = Path(directory)
    if not path.is_dir():
        raise InputError(f"{printable(path)} is not a results directory.")
    checks = ResultStore(path, create=False).checks(judge)
    shown = [c for c in checks if c.record is not None]
    bad = [c for c in checks if c.record is None]
    if not shown:
        if bad:
            raise InputError(
                f"{printable(path)} holds {len(bad)} record file(s) and none is a valid job record "
                f"(e.g. {printable(Path(bad[0].path).name)}: {printable(bad[0].reason)}); "
                "the results directory is damaged."
            )
        raise InputError(f"{printable(path)} holds no job results (run lightning-cas sweep first).")
    return shown, bad


def load_results(directory: str | os.PathLike, judge: bool = True) -> list[RecordCheck]:
    """Every job record in ``directory`` (see :func:`scan`)."""
    return scan(directory, judge)[0]


def _sort_key(check: RecordCheck):
    r, a = check.record, check.record.architecture
    return (a.normalization, r.job.method, a.depth, a.tokens, a.attention, a.heads, a.widths, r.job.seed)


def table_rows(checks: list[RecordCheck]) -> list[dict]:
    """One typed row per job (the CSV columns), sorted by family then size."""
    return [job_row(c.record, Origin(c.status)) for c in sorted(checks, key=_sort_key)]


def provenance(check: RecordCheck) -> str:
    """Where a claim comes from, in words (host, signer, versions) and why it is not this user's."""
    r = check.record
    signer = f"signer {r.signer}" if r.signer else ("unsigned" if r.version < 3 else "signer not recorded")
    parts = [f"host {r.host}", signer, f"record version {r.version}"]
    if r.result is not None:
        parts.append(f"lightning_cas {r.result.lightning_cas_version}")
    reason = check.reason.split(" (it names signer")[0]
    return ", ".join(parts) + f": {reason}"


def claim_notes(checks: list[RecordCheck]) -> list[str]:
    """One line per provenance: how many claims came from there, and which."""
    groups: dict[str, list[str]] = {}
    for c in checks:
        if c.status == Origin.CLAIM:
            groups.setdefault(provenance(c), []).append(c.record.label)
    lines = []
    for where, labels in groups.items():
        host, rest = where.split(", ", 1)
        shown = ", ".join(labels[:3]) + (f" and {len(labels) - 3} more" if len(labels) > 3 else "")
        lines.append(
            f"{len(labels)} claim{'s' if len(labels) > 1 else ''} from {host} ({rest}): {shown}; "
            "`lightning-cas sweep --recheck` or `notebook --execute` re-checks them"
        )
    return lines


def print_table(rows: list[dict], title: str | None = None, file=None, notes: list[str] = ()) -> None:
    """A compact rich table (plain text when not a terminal), then a line per job that failed,
    per claim and per damaged file. Disagreements in red."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from lightning_cas.batch.tables import cell

    table = Table(title=Text(printable(title)) if title else None, box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1))
    for name, _, right in TABLE_COLUMNS:
        table.add_column(name, justify="right" if right else "left", no_wrap=True)
    for row in rows:
        values = [cell(row[key]) if key != "elapsed_s" else f"{row[key]:.2f}" for _, key, _ in TABLE_COLUMNS]
        table.add_row(*(Text(printable(v)) for v in values), style=STYLES.get(row["agreement"]))
    console = Console(file=file, width=200, highlight=False)
    console.print(table)
    for row in rows:
        if row["status"] != Status.OK:
            console.print(Text(printable(f"{row['label']}: {row['status']}: {row['message']}")))
    for line in notes:
        console.print(Text(printable(line)))


def plot_bytes(checks: list[RecordCheck], fmt: str = "png", title: str | None = None) -> bytes:
    """The :func:`figure` as an image in ``fmt`` (png, pdf, svg)."""
    plt = pyplot()
    fig = figure(checks, title)
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=110)
    plt.close(fig)
    return buf.getvalue()


def figure(checks: list[RecordCheck], title: str | None = None):
    """Two panels: computed vs predicted dimension, and dimension against the input width d_0 per
    family (the prediction as open circles behind the computed points and line, so both stay
    visible where they coincide). Claims are drawn hollow."""
    from matplotlib.ticker import MaxNLocator

    plt = pyplot()
    ok = [c for c in checks if c.record.status is Status.OK]
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5.5))
    families = sorted({_family(c.record) for c in ok})
    markers = "os^Dv<>px*h"
    colours = plt.get_cmap("tab10")
    for i, fam in enumerate(families):
        colour, marker = colours(i % 10), markers[i % len(markers)]
        rs = [c for c in ok if _family(c.record) == fam]
        for source in (Origin.HERE, Origin.CLAIM):
            pick = [c.record for c in rs if c.status == source]
            pairs = [(r.predicted, r.result.dimension) for r in pick if r.predicted is not None]
            if pairs:
                left.scatter(
                    *zip(*pairs),
                    marker=marker,
                    s=40,
                    alpha=0.85,
                    label=fam + (" (claims)" if source is Origin.CLAIM else ""),
                    facecolors=colour if source is Origin.HERE else "none",
                    edgecolors=colour,
                )
        pts = sorted(
            (c.record.architecture.widths[0], c.record.result.dimension, c.record.predicted, c.status == Origin.CLAIM)
            for c in rs
        )
        pred = [(p[0], p[2]) for p in pts if p[2] is not None]
        if pred:
            right.plot(
                *zip(*pred),
                linestyle=":",
                linewidth=1.2,
                marker="o",
                markersize=11,
                markerfacecolor="none",
                color=colour,
                alpha=0.7,
                label="_nolegend_",
                zorder=2,
            )
        right.plot(
            [p[0] for p in pts],
            [p[1] for p in pts],
            linestyle="-",
            linewidth=1.2,
            color=colour,
            label=fam,
            marker=marker,
            markersize=5,
            zorder=3,
        )
        claimed = [p for p in pts if p[3]]
        if claimed:  # hollow on top of the line's filled markers
            right.scatter(
                [p[0] for p in claimed],
                [p[1] for p in claimed],
                marker=marker,
                s=30,
                zorder=4,
                facecolors="white",
                edgecolors=colour,
            )
    if any(c.record.predicted is not None for c in ok):
        right.plot(
            [],
            [],
            linestyle=":",
            marker="o",
            markersize=11,
            markerfacecolor="none",
            color="grey",
            label="predicted (its family's colour)",
        )
    values = [v for c in ok for v in (c.record.predicted, c.record.result.dimension) if v is not None]
    if values:
        lo, hi = min(values), max(values)
        left.plot([lo, hi], [lo, hi], color="grey", linewidth=0.8, label="computed = predicted", zorder=1)
    left.set_xlabel("predicted dimension (closed form or bound)")
    left.set_ylabel("computed dimension")
    left.set_title("computed vs predicted (hollow: claims from elsewhere)")
    right.set_xlabel("input width d_0")
    right.set_ylabel("dimension of the neurovariety")
    right.set_title("by family: computed (filled, solid), predicted (open circles, dotted)")
    for ax, size in ((left, 7), (right, 7)):
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=size, loc="upper left")
        ax.grid(True, linewidth=0.3, alpha=0.5)
    failed = len(checks) - len(ok)
    fig.suptitle(printable(title or "lightning_cas results") + (f"  ({failed} job(s) not computed)" if failed else ""))
    right.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.tight_layout()
    return fig


def plot_format(path: str | os.PathLike) -> str:
    """The image format a plot path asks for (its suffix), or a one-line refusal."""
    suffix = Path(path).suffix.lower()
    if suffix not in PLOT_FORMATS:
        raise InputError(f"the plot {printable(os.fspath(path))!r} must end in {', '.join(PLOT_FORMATS)}.")
    return suffix[1:]


def pyplot():
    """matplotlib's pyplot on the Agg backend, or a one-line refusal."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("plots need matplotlib (pip install 'lightning_cas[plot]').") from None
    return plt


def _family(r: JobResult) -> str:
    a = r.architecture
    heads = "" if not a.multihead else f", H={','.join(map(str, a.heads))}"
    return (
        f"{a.normalization}, L={a.depth}, a={','.join(map(str, sorted(set(a.attention))))}{heads}, "
        f"t={a.tokens}, {r.method}"
    )
