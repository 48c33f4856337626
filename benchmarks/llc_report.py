"""The ``llc`` section written out: bench/llc.csv, the markdown table and the plot of estimate against the
proved λ. Apart from benchmarks.bench_llc, which runs the cases."""

from __future__ import annotations

import csv
import io
import math
from fractions import Fraction
from pathlib import Path

from benchmarks.llc_settings import BATCH, BURNIN, CHAINS, CONFIGS, DRAWS, N_SAMPLES, NOISE


def truth_cell(row: dict) -> str:
    return row["exact"] if row.get("exact") is not None else f"[{row['lower']}, {row['upper']}]"


def estimate_cell(run: dict) -> str:
    return f"{run['mean']:.2f} ± {run['std']:.2f}" if run.get("status") == "ok" else run.get("status", "-")


CSV_FIELDS = (
    "case",
    "point",
    "parameters",
    "lambda_lower",
    "lambda_upper",
    "lambda_exact",
    "multiplicity",
    "config",
    "lr",
    "localization",
    "nbeta",
    "draws",
    "burnin",
    "init_loss",
    "chains",
    "estimate_mean",
    "estimate_std",
    "relative_error",
    "status",
    "seconds",
    "truth_seconds",
)


def csv_text(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        for label, run in (r.get("runs") or {}).items():
            ok = run.get("status") == "ok"
            w.writerow(
                {
                    "case": r["case"],
                    "point": r["point"],
                    "parameters": r["parameters"],
                    "lambda_lower": r["lower"],
                    "lambda_upper": r["upper"],
                    "lambda_exact": r["exact"] or "",
                    "multiplicity": r["multiplicity"] or "",
                    "config": label,
                    "lr": run.get("lr", ""),
                    "localization": run.get("localization", ""),
                    "nbeta": f"{run['nbeta']:.2f}" if "nbeta" in run else "",
                    "draws": run.get("draws", ""),
                    "burnin": run.get("burnin", ""),
                    "init_loss": run.get("init_loss", ""),
                    "chains": CHAINS,
                    "estimate_mean": f"{run['mean']:.4f}" if ok else "",
                    "estimate_std": f"{run['std']:.4f}" if ok else "",
                    "relative_error": f"{run['relative_error']:.3f}" if ok else "",
                    "status": run["status"],
                    "seconds": run["seconds"],
                    "truth_seconds": r["truth_s"],
                }
            )
    return buf.getvalue()


def llc_markdown(rows: list[dict]) -> str:
    """The calibration table (one row per case, one column per configuration) and the error per config."""
    ok = [r for r in rows if r.get("status") == "ok"]
    labels = list(CONFIGS)
    head = ["case", "P", "λ (lightning_cas)"] + labels + ["SGLD s (all configs)"]
    lines = [
        "## devinterp's SGLD estimate against the proved λ (`llc`)",
        "",
        f"n = {N_SAMPLES} Gaussian inputs, noise σ = {NOISE}, batch {BATCH}, {CHAINS} chains; "
        f"sweep: {DRAWS} draws after {BURNIN} burn-in steps at nβ = n/log n = "
        f"{N_SAMPLES / math.log(N_SAMPLES):.1f}; defaults: devinterp's (lr 0.01, γ = 0, nβ = batch/log batch = "
        f"{BATCH / math.log(BATCH):.1f}, 100 draws, no burn-in). Each cell: devinterp's estimate, mean ± std "
        "over chains, and in brackets its relative error against λ (0 inside a bracket).",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for r in ok:
        runs = r["runs"]
        cells = [
            estimate_cell(runs[k]) + (f" ({runs[k]['relative_error']:+.2f})" if runs[k].get("status") == "ok" else "")
            for k in labels
        ]
        lines.append(
            "| "
            + " | ".join(
                [r["case"], str(r["parameters"]), truth_cell(r)]
                + cells
                + [f"{sum(v['seconds'] for v in runs.values()):.1f}"]
            )
            + " |"
        )
    lines += ["", "| config | median abs. rel. error | within 20% | diverged |", "|---|---|---|---|"]
    for k in labels:
        errs = sorted(abs(r["runs"][k]["relative_error"]) for r in ok if r["runs"][k].get("status") == "ok")
        bad = sum(r["runs"][k].get("status") != "ok" for r in ok)
        med = f"{errs[len(errs) // 2]:.2f}" if errs else "-"
        lines.append(f"| {k} | {med} | {sum(e <= 0.2 for e in errs)}/{len(errs)} | {bad} |")
    failed = [r for r in rows if r.get("status") != "ok"]
    lines += [f"- **{r['case']}: {r.get('status')} {r.get('error', '')}**" for r in failed]
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], path: Path) -> None:
    """Estimate against truth (a bracket as a horizontal bar), one marker per configuration, and y = x on
    linear axes; an estimate above the frame is drawn at its top edge with its value written next to it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5.5))
    ok = [r for r in rows if r.get("status") == "ok"]
    top = max([float(Fraction(r["upper"])) for r in ok] + [1.0])
    ceiling = top * 1.4
    for i, label in enumerate(CONFIGS):
        marker, color = "os^vD<>"[i % 7], f"C{i}"
        for r in ok:
            run = r["runs"][label]
            if run.get("status") != "ok":
                continue
            lo, hi = float(Fraction(r["lower"])), float(Fraction(r["upper"]))
            x = (lo + hi) / 2 + (i - 3) * 0.035
            if run["mean"] > ceiling:
                ax.plot(x, ceiling, marker=marker, color=color, ms=5, alpha=0.8)
                ax.annotate(f"{run['mean']:.0f}", (x, ceiling), fontsize=6, xytext=(3, -8), textcoords="offset points")
                continue
            ax.errorbar(
                x, run["mean"], yerr=run["std"], xerr=(hi - lo) / 2, fmt=marker, color=color, ms=5, capsize=2, alpha=0.8
            )
        ax.plot([], [], marker, color=color, label=label)
    ax.plot([0, top * 1.1], [0, top * 1.1], "k--", lw=1, label="y = x")
    ax.set_xlabel("λ(w*) from lightning_cas (bracket as a bar)")
    ax.set_ylabel("devinterp SGLD estimate (mean ± std over chains)")
    ax.set_ylim(-0.2, ceiling + 0.1)
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title("LLC: proved value vs devinterp's SGLD estimate")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_outputs(rows: list[dict], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "llc.csv").write_text(csv_text(rows))
    (out_dir / "llc.md").write_text(
        "# lightning_cas λ vs devinterp\n\n" + llc_markdown(rows) + "\n![estimate vs truth](llc.png)\n"
    )
    try:
        plot(rows, out_dir / "llc.png")
    except ImportError:  # matplotlib is the plot extra
        pass
