"""A ground-truth set for estimators of the local learning coefficient: 50+ points (model, w*, λ, m, the theorem
that proves it) across linear stacks, polynomial mlps and lightning attention, generic and singular, with
devinterp's SGLD estimate beside each at its defaults and at one tuned setting, the relative errors, and a plot.

``python -m benchmarks.llc_truth`` writes bench/llc_truth.{json,csv,md,png} (``--no-devinterp`` for the truth
alone). λ comes from ``learning_coefficient`` (exact rows are the ground truth; a bracket is listed as such and
never scored as a truth). devinterp runs as in benchmarks/bench_llc.py (the same data, loss and TorchNetwork at
w*); the tuned setting is the one that did best in that sweep (lr 1e-4, γ = 1, nβ = n/log n) with shorter chains.
"""

from __future__ import annotations

import csv
import json
import sys
import time
from fractions import Fraction
from pathlib import Path

TUNED = {"lr": 1e-4, "localization": 1.0, "nbeta": "n/log n"}
TUNED_DRAWS, TUNED_BURNIN = 400, 100


def _least_rank(rows: int, cols: int, r: int) -> list[int]:
    return [1 if i == j and i < r else 0 for i in range(rows) for j in range(cols)]


def cases() -> list[tuple[str, object, list]]:
    """(name, network, w*) for every row: each linear stack at its least-rank point for every true rank, the
    singular strata of one lightning layer (docs/learning.md) and generic points, and mlps at singular points."""
    from lightning_cas.core.architecture import Architecture
    from lightning_cas.core.network import MLP, Linear, Network

    out = []
    linear = [
        (1, 1, 1),
        (1, 1, 1, 1),
        (2, 1, 2),
        (2, 2, 2),
        (3, 1, 2),
        (2, 3, 2),
        (3, 2, 3),
        (2, 2, 3),
        (3, 3, 3),
        (2, 2, 2, 2),
    ]
    for widths in linear:
        net = Network(widths[0], 1, tuple(Linear(w) for w in widths[1:]))
        for r in range(min(widths) + 1):
            w = [v for m in net.weight_matrices for v in _least_rank(m.rows, m.cols, r)]
            out.append((f"linear {'-'.join(map(str, widths))} rank {r}", net, w))
    deep = Network(2, 1, (Linear(2), Linear(2), Linear(2)))
    out.append(("linear 2-2-2-2 rank 1, middle invertible", deep, [1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0]))
    one, three, two = (Architecture((d, e), (a,), tokens=2) for d, e, a in ((2, 1, 1), (3, 1, 1), (2, 2, 1)))
    wide = Architecture((2, 2), (2,), tokens=2)
    out += [
        ("attention 2-1 zero", one, [0] * 6),
        ("attention 2-1 V=0", one, [1, 2, 3, -1, 0, 0]),
        ("attention 2-1 Q=0", one, [0, 0, 3, -1, 1, 2]),
        ("attention 2-1 K=0", one, [1, 2, 0, 0, 1, 2]),
        ("attention 2-1 aligned", one, [1, 0, 1, 0, 1, 0]),
        ("attention 2-1 generic", one, [1, 2, 3, -1, 1, 2]),
        ("attention 3-1 zero", three, [0] * 9),
        ("attention 3-1 aligned", three, [1, 0, 0, 1, 0, 0, 1, 0, 0]),
        ("attention 3-1 V=0", three, [1, 2, 0, 0, 1, -1, 0, 0, 0]),
        ("attention 3-1 generic", three, [1, 2, 3, 3, -1, 1, 1, 2, -2]),
        ("attention 2-2 zero", two, [0] * 8),
        ("attention 2-2 V rank 1 aligned", two, [1, 0, 1, 0, 1, 0, 2, 0]),
        ("attention 2-2 V=0", two, [1, 2, 3, -1, 0, 0, 0, 0]),
        ("attention 2-2 generic", two, [1, 2, 3, -1, 1, 2, 2, -1]),
        ("attention 2-2 a=2 aligned, K invertible", wide, [1, 2, 2, 4, 1, 0, 0, 1, 1, 2, 2, 4]),
        ("attention 2-2 a=2 aligned, Q K rank 1", wide, [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 2, 0]),
        ("attention 2-2 a=2 both rank 1 apart", wide, [1, 2, 2, 4, 1, 0, 0, 1, 2, -1, 4, -2]),
        ("attention 2-2 a=2 A rank 1", wide, [1, 2, 2, 4, 1, 0, 0, 1, 1, 2, -1, 3]),
    ]
    sos3, sos2, mono = (Network(1, 1, (MLP(h, degree=2, out=1),)) for h in (3, 2, 1))
    mlp = Network(2, 1, (MLP(2, degree=2, out=1),))
    out += [
        ("mlp 1-3-1 U=0 D=(1,1,1)", sos3, [0, 0, 0, 1, 1, 1]),
        ("mlp 1-3-1 U=0 D=(1,2,3)", sos3, [0, 0, 0, 1, 2, 3]),
        ("mlp 1-3-1 generic", sos3, [1, -1, 2, 1, 2, -1]),
        ("mlp 1-2-1 U=0 D=(1,1)", sos2, [0, 0, 1, 1]),
        ("mlp 1-1-1 at 0", mono, [0, 0]),
        ("mlp 1-1-1 U=0 D=1", mono, [0, 1]),
        ("mlp 1-1-1 D=0 U=1", mono, [1, 0]),
        ("mlp 2-2-1 generic", mlp, [1, 2, -1, 1, 1, -1]),
        ("mlp 2-2-1 D=0", mlp, [1, 2, -1, 1, 0, 0]),
    ]
    return out


def truth(net, weights) -> dict:
    from lightning_cas.geometry.learning.bracket import learning_coefficient

    start = time.perf_counter()
    r = learning_coefficient(net, {"weights": weights})
    return {
        "parameters": r.parameters,
        "lower": r.lower,
        "upper": r.upper,
        "exact": r.learning_coefficient,
        "multiplicity": r.multiplicity,
        "theorem": r.lower_theorem if r.learning_coefficient else f"{r.lower_theorem} | {r.upper_theorem}",
        "truth_s": round(time.perf_counter() - start, 2),
    }


def devinterp_runs(net, weights, lower: str, upper: str) -> dict:
    import benchmarks.bench_llc as bench
    from lightning_cas.system.points import as_point
    from lightning_cas.torch_bridge import TorchNetwork

    model = TorchNetwork(net, calibrate=False)
    model.load_point(as_point(net, {"weights": weights}))
    X, Y = bench.make_data(model)
    runs = {}
    draws = (bench.DRAWS, bench.BURNIN)
    for label, config in (("defaults", {}), ("tuned", TUNED)):
        bench.DRAWS, bench.BURNIN = (TUNED_DRAWS, TUNED_BURNIN) if config else draws
        try:
            run = bench.estimate(model, X, Y, config)
        finally:
            bench.DRAWS, bench.BURNIN = draws
        if run["status"] == "ok":
            run["relative_error"] = bench.relative_error(lower, upper, run["mean"])
        runs[label] = run
    return runs


def run(out_dir: Path = Path("bench"), devinterp: bool = True, progress=print) -> list[dict]:
    rows = []
    for name, net, weights in cases():
        row = {"case": name, "model": net.label(), "weights": weights, **truth(net, weights)}
        if devinterp:
            row["runs"] = devinterp_runs(net, weights, row["lower"], row["upper"])
        rows.append(row)
        progress(f"[llc-truth] {name}: {_value(row)} ({row['theorem']})")
        write(rows, out_dir)  # after every row: a stop keeps what was measured
    return rows


def _value(row) -> str:
    if row["exact"] is None:
        return f"[{row['lower']}, {row['upper']}]"
    return row["exact"] + ("" if row["multiplicity"] in (None, 1) else f" (m = {row['multiplicity']})")


def _cell(run) -> str:
    if run is None:
        return "—"
    if run["status"] != "ok":
        return "diverged"
    return f"{run['mean']:.2f} ± {run['std']:.2f} ({run['relative_error']:+.2f})"


def write(rows: list[dict], out_dir: Path) -> None:
    out_dir.mkdir(exist_ok=True)
    (out_dir / "llc_truth.json").write_text(json.dumps(rows, indent=1))
    with open(out_dir / "llc_truth.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "model", "weights", "lower", "upper", "lambda", "m", "theorem", "defaults", "tuned"])
        for r in rows:
            runs = r.get("runs", {})
            est = [runs[k]["mean"] if runs.get(k, {}).get("status") == "ok" else "" for k in ("defaults", "tuned")]
            w.writerow(
                [r["case"], r["model"], " ".join(map(str, r["weights"])), r["lower"], r["upper"], r["exact"] or ""]
                + [r["multiplicity"] or "", r["theorem"], *est]
            )
    exact = [r for r in rows if r["exact"] is not None]
    lines = [
        "# Learning coefficients: a ground-truth set, with devinterp beside it",
        "",
        f"{len(rows)} points, {len(exact)} exact. Written by `python -m benchmarks.llc_truth`. devinterp: its defaults,"
        f" and lr {TUNED['lr']:g}, γ = {TUNED['localization']:g}, nβ = n/log n with {TUNED_DRAWS} draws after "
        f"{TUNED_BURNIN} burn-in steps (2 chains, batch 100, n = 2000). In brackets: the relative error (0 inside a "
        "bracket).",
        "",
        "| case | weights | λ (m) | theorem | devinterp defaults | devinterp tuned |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        runs = r.get("runs", {})
        w = " ".join(map(str, r["weights"]))
        lines.append(
            f"| {r['case']} | {w} | {_value(r)} | {r['theorem']} | {_cell(runs.get('defaults'))} | "
            f"{_cell(runs.get('tuned'))} |"
        )
    summary = _summary(exact)
    if summary:
        lines += [
            "",
            "| setting | exact points | median abs. rel. error | within 20% | diverged |",
            "|---|---|---|---|---|",
        ]
        lines += summary
    (out_dir / "llc_truth.md").write_text("\n".join(lines) + "\n")
    _plot(exact, out_dir / "llc_truth.png")


def _summary(exact: list[dict]) -> list[str]:
    out = []
    for label in ("defaults", "tuned"):
        runs = [r["runs"][label] for r in exact if label in r.get("runs", {})]
        if not runs:
            continue
        ok = [abs(x["relative_error"]) for x in runs if x["status"] == "ok"]
        ok.sort()
        median = f"{ok[len(ok) // 2]:.2f}" if ok else "—"
        close = sum(e <= 0.2 for e in ok)
        out.append(f"| {label} | {len(runs)} | {median} | {close}/{len(ok)} | {len(runs) - len(ok)} |")
    return out


def _plot(exact: list[dict], path: Path) -> None:
    rows = [r for r in exact if r.get("runs")]
    if not rows:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 6))
    top = max(float(Fraction(r["exact"])) for r in rows)
    for label, marker in (("defaults", "o"), ("tuned", "s")):
        pts = [
            (float(Fraction(r["exact"])), r["runs"][label]["mean"]) for r in rows if r["runs"][label]["status"] == "ok"
        ]
        if pts:
            ax.scatter(*zip(*pts), marker=marker, alpha=0.7, label=f"devinterp {label}")
    ax.plot([0, top * 1.1], [0, top * 1.1], "k--", lw=1, label="estimate = λ")
    ax.set_xlabel("λ, proved (lightning_cas llc)")
    ax.set_ylabel("devinterp's SGLD estimate")
    ax.set_ylim(-0.5, max(top * 2, 1))
    ax.set_title(f"Local learning coefficient: {len(rows)} exact points")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    run(devinterp="--no-devinterp" not in sys.argv, progress=lambda m: print(m, flush=True))
    print("wrote bench/llc_truth.json, .csv, .md, .png")
