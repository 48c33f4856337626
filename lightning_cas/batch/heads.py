"""The multi-head table: computed dimensions of a sweep next to the expected dimension, the
defective cases with their defect, and a plot of computed vs expected against H.

The expected dimension of one layer with H heads is min(H * one-head bound, span) (core.multihead),
also for H = 1, so the whole table is judged by one rule; deep shapes are judged against the
theory's upper bounds. Several methods on one architecture (modp and Macaulay2's jacobian) are
compared, and any disagreement is listed, never merged.

    python -m lightning_cas.batch.heads RESULTS_DIR --out heads
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

from lightning_cas.core.architecture import Architecture
from lightning_cas.core.files import atomic_write_text
from lightning_cas.core.multihead import one_head_bound, refined_bound, span_dimension
from lightning_cas.core.predictions import Prediction
from lightning_cas.core.theory import predict_dimension
from lightning_cas.core.verdict import Verdict, judge

# the table's words for the one verdict
STATUS = {Verdict.DEFECT: "defective", Verdict.AGREE: "fills", Verdict.DISAGREE: "above bound",
          Verdict.NO_PREDICTION: ""}

TABLE_COLUMNS = ("d", "d_out", "a", "H", "t", "widths", "attention", "heads", "parameters", "computed", "expected",
                 "one_head", "span", "defect", "head_mixing", "explained", "status", "methods")


def expected_row(arch: Architecture) -> dict:
    """Expected dimension and its ingredients (one layer), or the theory's upper bound (deep)."""
    if arch.depth == 1:
        (a, d, e), H, t = arch.layer_shapes[0], arch.heads[0], arch.tokens
        one, _ = one_head_bound(a, d, e, t)
        span = span_dimension(d, e, t)
        return {"d": d, "d_out": e, "a": a, "H": H, "t": t, "one_head": one, "span": span,
                "expected": min(H * one, span), "head_mixing": min(H * one, span, refined_bound(arch))}
    pred = predict_dimension(arch)
    return {"d": arch.widths[0], "d_out": arch.widths[-1], "a": "-".join(map(str, arch.attention)),
            "H": "-".join(map(str, arch.heads)), "t": arch.tokens, "one_head": "", "span": "",
            "head_mixing": pred.refined if pred.refined is not None else "", "expected": pred.value}


def build_rows(records) -> tuple[list[dict], list[str]]:
    """One row per architecture (methods merged when they agree) and the list of disagreements."""
    by_arch: dict = {}
    for r in records:
        if r.status == "ok" and r.architecture.normalization == "none":
            by_arch.setdefault(r.architecture, []).append(r.result)
    rows, problems = [], []
    for arch, results in by_arch.items():
        dims = {res.method: res.dimension for res in results}
        if len(set(dims.values())) > 1:
            problems.append(f"{arch.label()}: methods disagree: {dims}")
        computed = dims.get("modp", next(iter(dims.values())))
        row = expected_row(arch)
        refined = row["head_mixing"] if row["head_mixing"] != "" else None
        bound = Prediction("dimension", row["expected"], None, "the heads table", "derived", kind="upper bound",
                           refined=refined)
        j = judge(bound, computed)
        row.update(widths="-".join(map(str, arch.widths)), attention="-".join(map(str, arch.attention)),
                   heads="-".join(map(str, arch.heads)), parameters=arch.parameters, computed=computed,
                   defect="" if j.defect is None else j.defect, methods="+".join(sorted(dims)),
                   status=STATUS[j.verdict], explained="" if j.explained is None else ("yes" if j.explained else "no"))
        if j.verdict is Verdict.DISAGREE:
            what = ("the head-mixing bound " + str(min(row["expected"], refined)) if j.above == "head-mixing bound"
                    else "the upper bound " + str(row["expected"]))
            problems.append(f"{arch.label()}: computed {computed} is above {what}")
        rows.append(row)
    rows.sort(key=lambda r: (len(r["widths"]), r["widths"], r["attention"], r["t"], r["heads"]))
    return rows, problems


def _csv(rows, columns) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def plot(rows: list[dict], path: Path) -> Path:
    """Per token count t: computed and expected dimension against H for every one-layer (d, d', a)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    one = [r for r in rows if isinstance(r["H"], int)]
    ts = sorted({r["t"] for r in one})
    fig, axes = plt.subplots(2, len(ts), figsize=(5 * len(ts), 9), squeeze=False)
    for col, t in enumerate(ts):
        top, bottom = axes[0][col], axes[1][col]
        families = sorted({(r["d"], r["d_out"], r["a"]) for r in one if r["t"] == t})
        for fam in families:
            pts = sorted((r["H"], r["computed"], r["expected"]) for r in one if r["t"] == t
                         and (r["d"], r["d_out"], r["a"]) == fam)
            line = top.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", linewidth=0.8, markersize=3)
            top.plot([p[0] for p in pts], [p[2] for p in pts], linestyle="--", linewidth=0.6,
                     color=line[0].get_color(), alpha=0.6)
            bad = [p for p in pts if p[1] < p[2]]
            if bad:
                top.scatter([p[0] for p in bad], [p[1] for p in bad], marker="x", color="red", zorder=3, s=30)
        top.set_title(f"one layer, t = {t}: computed (solid) vs expected (dashed)")
        top.set_xlabel("heads H")
        top.set_ylabel("dimension")
        top.set_xticks([1, 2, 3, 4])
        pairs = [(r["expected"], r["computed"], r["H"]) for r in one if r["t"] == t]
        sc = bottom.scatter([p[0] for p in pairs], [p[1] for p in pairs], c=[p[2] for p in pairs], cmap="viridis",
                            s=14)
        hi = max(max(p[0] for p in pairs), max(p[1] for p in pairs))
        bottom.plot([0, hi], [0, hi], color="grey", linewidth=0.8)
        bottom.set_xlabel("expected min(H (one head), span)")
        bottom.set_ylabel("computed (modp)")
        bottom.set_title("below the diagonal: defective (red x above)")
        fig.colorbar(sc, ax=bottom, label="H")
    fig.suptitle("Multi-head lightning attention: computed vs expected dimension")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv=None) -> int:
    from lightning_cas.batch.report import load_results

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="a sweep's results directory")
    parser.add_argument("--out", default="heads", help="where table.csv, defects.csv and heads.png go")
    args = parser.parse_args(argv)
    rows, problems = build_rows(load_results(args.results))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "table.csv", _csv(rows, TABLE_COLUMNS))
    defective = [r for r in rows if r["status"] == "defective"]
    atomic_write_text(out / "defects.csv", _csv(defective, TABLE_COLUMNS))
    plot(rows, out / "heads.png")
    one = [r for r in rows if isinstance(r["H"], int)]
    print(f"{len(rows)} architectures ({len(one)} one-layer): {sum(r['status'] == 'fills' for r in rows)} fill the "
          f"expected dimension, {len(defective)} defective; written to {out}/table.csv, defects.csv, heads.png")
    print(f"one layer: computed = min(expected, head-mixing bound) in {sum(r['explained'] == 'yes' for r in one)} of "
          f"{len(one)} cases")
    deep = [r for r in rows if not isinstance(r["H"], int) and r["explained"]]
    print(f"deep, several heads: computed = head-mixing bound in {sum(r['explained'] == 'yes' for r in deep)} of "
          f"{len(deep)} cases")
    for r in defective:
        print(f"  defective: widths {r['widths']} a {r['attention']} heads {r['heads']} t {r['t']}: computed "
              f"{r['computed']}, expected {r['expected']} (one head {r['one_head']}, span {r['span']}), "
              f"defect {r['defect']}" + (f"; head-mixing bound {r['head_mixing']}" if r["head_mixing"] != "" else ""))
    for p in problems:
        print(f"  DISAGREEMENT: {p}")
    atomic_write_text(out / "problems.txt", "".join(p + "\n" for p in problems))
    return 3 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
