"""The multi-head table: computed dimensions of a sweep next to the expected dimension, the
defective cases with their defect, and a plot of computed vs expected against H.

The expected dimension of one layer with H heads is min(H * one-head bound, span) (core.multihead),
also for H = 1, so the whole table is judged by one rule; deep shapes are judged against the
theory's upper bounds. Several methods on one architecture (modp and Macaulay2's jacobian) are
compared, and any disagreement is listed, never merged.

    lightning-cas heads RESULTS_DIR --out heads
"""

from __future__ import annotations

import io
from pathlib import Path

from lightning_cas.batch.records import Origin
from lightning_cas.batch.report import load_results, pyplot
from lightning_cas.batch.tables import to_csv
from lightning_cas.core.multihead import one_head_bound, refined_bound, span_dimension
from lightning_cas.core.network import Network
from lightning_cas.core.predictions import Prediction
from lightning_cas.core.theory import predict_dimension
from lightning_cas.core.verdict import Verdict, judge
from lightning_cas.errors import InputError
from lightning_cas.results.display import printable
from lightning_cas.system.files import write_file

# the table's words for the one verdict
STATUS = {
    Verdict.DEFECT: "defective",
    Verdict.AGREE: "fills",
    Verdict.DISAGREE: "above bound",
    Verdict.NO_PREDICTION: "",
}

TABLE_COLUMNS = (
    "d",
    "d_out",
    "a",
    "H",
    "t",
    "widths",
    "attention",
    "heads",
    "parameters",
    "computed",
    "expected",
    "one_head",
    "span",
    "defect",
    "head_mixing",
    "explained",
    "status",
    "methods",
)


def expected_row(arch: Network) -> dict:
    """Expected dimension and its ingredients (one layer), or the theory's upper bound (deep)."""
    if arch.depth == 1:
        (a, d, e), H, t = arch.paper.layer_shapes[0], arch.heads[0], arch.tokens
        one, _ = one_head_bound(a, d, e, t)
        span = span_dimension(d, e, t)
        return {
            "d": d,
            "d_out": e,
            "a": a,
            "H": H,
            "t": t,
            "one_head": one,
            "span": span,
            "expected": min(H * one, span),
            "head_mixing": min(H * one, span, refined_bound(arch)),
        }
    pred = predict_dimension(arch)
    return {
        "d": arch.widths[0],
        "d_out": arch.widths[-1],
        "a": "-".join(map(str, arch.attention)),
        "H": "-".join(map(str, arch.heads)),
        "t": arch.tokens,
        "one_head": "",
        "span": "",
        "head_mixing": pred.refined if pred.refined is not None else "",
        "expected": pred.value,
    }


def build_rows(records) -> tuple[list[dict], list[str]]:
    """One row per architecture (methods merged when they agree) and the list of disagreements."""
    by_arch: dict = {}
    for r in records:
        if r.status == "ok" and r.architecture.paper is not None and r.architecture.normalization == "none":
            by_arch.setdefault(r.architecture, []).append(r.result)
    rows, problems = [], []
    for arch, results in by_arch.items():
        dims = {res.method: res.dimension for res in results}
        if len(set(dims.values())) > 1:
            problems.append(f"{arch.label()}: methods disagree: {dims}")
        computed = dims.get("modp", next(iter(dims.values())))
        row = expected_row(arch)
        refined = row["head_mixing"] if row["head_mixing"] != "" else None
        bound = Prediction(
            "dimension", row["expected"], None, "the heads table", "derived", kind="upper bound", refined=refined
        )
        j = judge(bound, computed)
        row.update(
            widths="-".join(map(str, arch.widths)),
            attention="-".join(map(str, arch.attention)),
            heads="-".join(map(str, arch.heads)),
            parameters=arch.parameters,
            computed=computed,
            defect="" if j.defect is None else j.defect,
            methods="+".join(sorted(dims)),
            status=STATUS[j.verdict],
            explained="" if j.explained is None else ("yes" if j.explained else "no"),
        )
        if j.verdict is Verdict.DISAGREE:
            what = (
                "the head-mixing bound " + str(min(row["expected"], refined))
                if j.above == "head-mixing bound"
                else "the upper bound " + str(row["expected"])
            )
            problems.append(f"{arch.label()}: computed {computed} is above {what}")
        rows.append(row)
    rows.sort(key=lambda r: (len(r["widths"]), r["widths"], r["attention"], r["t"], r["heads"]))
    return rows, problems


def plot_bytes(rows: list[dict]) -> bytes:
    """The :func:`figure` as a PNG."""
    plt = pyplot()
    fig = figure(rows)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    return buf.getvalue()


def figure(rows: list[dict]):
    """One layer, as small multiples (one panel per token count t): a grid whose rows are (d, a) and
    whose columns are (d', H), each cell the computed dimension, coloured by its defect against the
    expected min(H (one head), span) in discrete classes with a legend."""
    from matplotlib.patches import Patch

    plt = pyplot()
    one = [r for r in rows if isinstance(r["H"], int)]
    ts = sorted({r["t"] for r in one}) or [2]
    lefts = sorted({(r["d"], r["a"]) for r in one})
    tops = sorted({(r["d_out"], r["H"]) for r in one})
    classes = [
        ("fills the expected dimension", "#d9f0d3"),
        ("defect 1", "#fdd0a2"),
        ("defect 2", "#fd8d3c"),
        ("defect 3 or more", "#d94801"),
        ("above a bound (a problem)", "#000000"),
    ]
    fig, axes = plt.subplots(
        len(ts), 1, figsize=(max(8, 0.42 * len(tops) + 2), 0.36 * len(lefts) * len(ts) + 2.5), squeeze=False
    )
    for ax, t in zip((a[0] for a in axes), ts):
        cells = {(r["d"], r["a"], r["d_out"], r["H"]): r for r in one if r["t"] == t}
        for i, (d, a) in enumerate(lefts):
            for j, (e, h) in enumerate(tops):
                r = cells.get((d, a, e, h))
                if r is None:
                    continue
                if r["status"] == STATUS[Verdict.DISAGREE]:
                    k = 4
                else:
                    k = min(3, r["defect"] if isinstance(r["defect"], int) else 0)
                ax.add_patch(plt.Rectangle((j, i), 1, 1, facecolor=classes[k][1], edgecolor="white", linewidth=0.8))
                ax.text(
                    j + 0.5,
                    i + 0.5,
                    str(r["computed"]),
                    ha="center",
                    va="center",
                    fontsize=6.5,
                    color="white" if k >= 3 else "black",
                )
        ax.set_xlim(0, len(tops))
        ax.set_ylim(len(lefts), 0)
        ax.set_xticks([j + 0.5 for j in range(len(tops))], [f"H={h}" for _, h in tops], fontsize=6.5, rotation=90)
        ax.set_yticks([i + 0.5 for i in range(len(lefts))], [f"d={d}, a={a}" for d, a in lefts], fontsize=7)
        for j, (e, h) in enumerate(tops):
            if h == min(hh for ee, hh in tops if ee == e):
                ax.axvline(j, color="grey", linewidth=1.2)
                ax.text(
                    j + sum(ee == e for ee, _ in tops) / 2, -0.35, f"d' = {e}", ha="center", va="bottom", fontsize=8
                )
        ax.set_title(f"t = {t} token{'s' if t > 1 else ''}", fontsize=9, pad=18, loc="left", fontweight="bold")
        ax.tick_params(length=0)
    fig.legend(
        handles=[Patch(facecolor=c, edgecolor="grey", label=name) for name, c in classes],
        loc="lower center",
        ncol=len(classes),
        fontsize=7,
        frameon=False,
    )
    fig.suptitle(
        "One-layer multi-head lightning attention: computed dimension (cell) against the expected "
        "min(H x one head, span)",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0.04, 1, 0.97))
    return fig


def write_heads(results, out, plot: bool = True, echo=print) -> int:
    """Write table.csv, defects.csv, problems.txt (and heads.png) of a sweep's results into ``out``,
    echo the summary, and return the exit status: 3 when something is above a bound or methods
    disagree, else 0. Records from elsewhere (claims) are left out, and counted."""
    checks = load_results(results, judge=False)  # the table judges by its own expected dimension
    claims = sum(c.status == Origin.CLAIM for c in checks)
    rows, problems = build_rows([c.record for c in checks if c.trusted])
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the directory {printable(out)}: {exc.strerror or exc}.") from None
    image = plot_bytes(rows) if plot and rows else None
    write_file(out / "table.csv", to_csv(rows, TABLE_COLUMNS), "heads table")
    defective = [r for r in rows if r["status"] == "defective"]
    write_file(out / "defects.csv", to_csv(defective, TABLE_COLUMNS), "heads table")
    write_file(out / "problems.txt", "".join(p + "\n" for p in problems), "heads problems")
    if image is not None:
        write_file(out / "heads.png", image, "heads plot")
    one = [r for r in rows if isinstance(r["H"], int)]
    echo(
        f"{len(rows)} architectures ({len(one)} one-layer): {sum(r['status'] == 'fills' for r in rows)} fill the "
        f"expected dimension, {len(defective)} defective; written to {printable(out)}/table.csv, defects.csv"
        + (", heads.png" if image is not None else "")
    )
    if claims:
        echo(f"{claims} record(s) from elsewhere (claims) left out; `lightning-cas sweep --recheck` recomputes them")
    echo(
        f"one layer: computed = min(expected, head-mixing bound) in {sum(r['explained'] == 'yes' for r in one)} of "
        f"{len(one)} cases"
    )
    deep = [r for r in rows if not isinstance(r["H"], int) and r["explained"]]
    echo(
        f"deep, several heads: computed = head-mixing bound in {sum(r['explained'] == 'yes' for r in deep)} of "
        f"{len(deep)} cases"
    )
    for r in defective:
        echo(
            f"  defective: widths {r['widths']} a {r['attention']} heads {r['heads']} t {r['t']}: computed "
            f"{r['computed']}, expected {r['expected']} (one head {r['one_head']}, span {r['span']}), "
            f"defect {r['defect']}" + (f"; head-mixing bound {r['head_mixing']}" if r["head_mixing"] != "" else "")
        )
    for p in problems:
        echo(f"  DISAGREEMENT: {printable(p)}")
    return 3 if problems else 0
