"""The blocks table: dimensions and defects of small transformer stacks and polynomial networks.

Every row is one network, computed (exact rank mod p; the numeric backend for softmax), predicted
(``core.block_theory``: a published formula inside its regime, else the least proved upper bound) and
judged by the one verdict. Published cases are found again and flagged (Henry's causal softmax
theorems, the factored multi-head formula, Alexander-Hirschowitz with its exceptions); a defect no
formula predicts is a finding, and the fiber's extra directions at a random point say which weights a
missing symmetry would move (``geometry.fibers.network``).

    lightning-cas blocks --out blocks [--quick]
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from pathlib import Path

from lightning_cas import api
from lightning_cas.batch.tables import to_csv
from lightning_cas.core.network import Attention, Linear, Network, Power
from lightning_cas.core.symmetry import random_weights
from lightning_cas.core.verdict import Verdict, judge
from lightning_cas.geometry.fibers.network import extra_directions
from lightning_cas.system.files import atomic_write_text

COLUMNS = (
    "family",
    "network",
    "parameters",
    "computed",
    "predicted",
    "kind",
    "status",
    "formula",
    "verdict",
    "defect",
    "tight",
    "published",
    "named",
    "causes",
    "unexplained",
    "method",
    "seconds",
)
MAX_FINDINGS = 40


@dataclass(frozen=True)
class Case:
    family: str
    network: Network


def transformer_cases(quick: bool = False) -> list[Case]:
    """Causal/residual transformer stacks with value/output projections and mlp blocks, 1-3 layers."""
    out = []
    models = (2, 3) if quick else (2, 3, 4)
    for d, heads, d_head, layers, causal, residual, mlp in itertools.product(
        models, (1, 2), (1, 2), (1, 2) if quick else (1, 2, 3), (False, True), (False, True), (False, True)
    ):
        if d_head > d:
            continue
        net = Network.transformer(
            d, heads, d_head, layers, d_mlp=2 * d if mlp else None, causal=causal, residual=residual, tokens=3
        )
        if net.parameters <= 400:
            out.append(Case("transformer", net))
    return out


def polynomial_cases(quick: bool = False) -> list[Case]:
    """Linear/power stacks: shallow with one output (the Alexander-Hirschowitz range) and deep ones."""
    out = []
    for d0, r in itertools.product((2, 3, 4, 5), (2, 3, 4)):
        for m in range(1, (8 if quick else 15) + 1):
            net = Network(d0, 1, (Linear(m), Power(r), Linear(1)))
            if net.ambient_dimension <= 126 and net.parameters <= 120:
                out.append(Case("polynomial, shallow", net))
    for widths, r in itertools.product(itertools.product((2, 3, 4), repeat=3), (2, 3)):
        d0, d1, d2 = widths
        out.append(Case("polynomial, deep", Network(d0, 1, (Linear(d1), Power(r), Linear(d2), Power(r), Linear(1)))))
    return out


def softmax_cases() -> list[Case]:
    """Where the published softmax theorems apply (the numeric backend decides them)."""
    return [
        Case("softmax, Henry causal", Network(3, 3, (Attention(3, causal=True, normalization="softmax"),))),
        Case(
            "softmax, Henry causal", Network(3, 3, (Attention(3, causal=True, residual=True, normalization="softmax"),))
        ),
        Case(
            "softmax, Henry causal",
            Network(3, 3, tuple(Attention(3, causal=True, residual=True, normalization="softmax") for _ in range(2))),
        ),
        Case("softmax, Henry factored", Network(4, 3, (Attention(2, heads=2, value=2, normalization="softmax"),))),
    ]


def run_case(case: Case) -> dict:
    start = time.perf_counter()
    net = case.network
    result = api.dimension(net)
    pred = api.predict(net).dimension
    j = judge(pred, result.dimension)
    tight = (pred.reason or "").replace("attained by: ", "") if pred.kind == "upper bound" else ""
    return {
        "family": case.family,
        "network": net.label(),
        "parameters": net.parameters,
        "computed": result.dimension,
        "predicted": pred.value,
        "kind": pred.kind,
        "status": pred.status,
        "formula": pred.formula if pred.kind == "value" else "",
        "verdict": str(j.verdict),
        "defect": "" if j.defect is None else j.defect,
        "tight": tight,
        "published": pred.regime if pred.kind == "value" else "",
        **_split_columns(result),
        "method": result.method,
        "seconds": round(time.perf_counter() - start, 3),
        "_net": net,
    }


def _split_columns(result) -> dict:
    """The defect split (core.defects) as table cells: the named orbit, the causes, the unexplained rest."""
    split = result.explained
    if split is None:
        return {"named": "", "causes": "", "unexplained": ""}
    causes = "; ".join(
        f"{c.mechanism} {c.count}" + ("" if c.block is None else f" (block {c.block})") for c in split.causes
    )
    return {"named": split.named_group, "causes": causes, "unexplained": split.unexplained}


def split_counts(rows: list[dict]) -> dict:
    """How many defects the split explains fully, and how many keep an unexplained part."""
    defects = [r for r in rows if r["verdict"] == str(Verdict.DEFECT)]
    unexplained = [r for r in rows if r.get("unexplained") not in ("", None, 0)]
    return {
        "explained_defects": sum(r.get("unexplained") == 0 for r in defects),
        "unexplained_defects": sum(r.get("unexplained") not in ("", None, 0) for r in defects),
        "unexplained_networks": len(unexplained),
        "split_networks": sum(r.get("unexplained") not in ("", None) for r in rows),
    }


def findings(rows: list[dict]) -> list[str]:
    """The networks whose split keeps an unexplained part, with what is known: the causes found and the
    weights the fiber's extra directions move."""
    lines = []
    for r in rows:
        if r.get("unexplained") in ("", None, 0) or len(lines) >= MAX_FINDINGS:
            continue
        net = r["_net"]
        moved = "; ".join(
            f"{d.count} moving {', '.join(d.matrices)}" for d in extra_directions(net, random_weights(net, 0))
        )
        lines.append(
            f"- `{r['network']}`: computed {r['computed']}, bound {r['predicted']} ({r['tight']}); "
            f"named orbit {r['named']}, explained: {r['causes'] or 'nothing'}; unexplained "
            f"{r['unexplained']}; extra fiber directions beyond the orbit: "
            f"{moved or 'none found at the sample point'}"
        )
    return lines


def plot(rows: list[dict], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 6))
    families = sorted({r["family"] for r in rows})
    markers = {"agree": "o", "defect": "v", "disagree": "X", "no prediction": "s"}
    for fam in families:
        for verdict, marker in markers.items():
            pts = [
                (r["predicted"], r["computed"])
                for r in rows
                if r["family"] == fam and r["verdict"] == verdict and r["predicted"] is not None
            ]
            if pts:
                ax.scatter(
                    [p[0] for p in pts],
                    [p[1] for p in pts],
                    marker=marker,
                    s=22,
                    alpha=0.75,
                    label=f"{fam}: {verdict} ({len(pts)})",
                )
    hi = max(max(r["computed"] for r in rows), max((r["predicted"] or 0) for r in rows))
    ax.plot([1, hi], [1, hi], color="grey", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("predicted (a published value, or the least proved upper bound)")
    ax.set_ylabel("computed (exact rank mod p; numeric for softmax)")
    ax.set_title("Networks of blocks: computed against predicted dimension\n(below the diagonal: a defect)")
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def build(out: str | Path, quick: bool = False, progress=None) -> dict:
    """Compute the table into ``out``: table.csv, defects.csv, findings.md, blocks.png; returns counts."""
    out = Path(out)
    cases = transformer_cases(quick) + polynomial_cases(quick) + ([] if quick else softmax_cases())
    rows = []
    for k, case in enumerate(cases, 1):
        rows.append(run_case(case))
        if progress is not None:
            progress(k, len(cases), case.network.label())
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "table.csv", to_csv(rows, COLUMNS))
    defects = [r for r in rows if r["verdict"] == str(Verdict.DEFECT)]
    atomic_write_text(out / "defects.csv", to_csv(defects, COLUMNS))
    published = [r for r in rows if r["kind"] == "value"]
    text = [
        "# Networks of blocks: findings",
        "",
        f"{len(rows)} networks; {len(published)} inside the regime of a published formula "
        f"({sum(r['verdict'] == 'agree' for r in published)} agree); {len(defects)} below the least proved "
        f"upper bound; {sum(r['verdict'] == 'disagree' for r in rows)} disagreements.",
        "",
        "## Published cases found again",
        "",
    ]
    exceptions = [
        r
        for r in published
        if "exception" in r["published"]
        or "defective for" in r["published"]
        and r["computed"] < min(r["parameters"], 10**9)
        and "m = 1;" not in r["published"]
    ]
    named = [r for r in published if "Alexander" not in r["published"] and "shallow" not in r["published"]]
    text += [
        f"- `{r['network']}`: {r['computed']} ({r['formula']}; {r['published']}; {r['status']}): {r['verdict']}"
        for r in named
    ]
    shallow = [r for r in published if "shallow" in r["published"]]
    text += [
        f"- {len(shallow)} shallow polynomial networks with one output (Alexander-Hirschowitz, proved): "
        f"{sum(r['verdict'] == 'agree' for r in shallow)} agree; the defective ones among them:"
    ]
    text += [f"  - `{r['network']}`: {r['computed']} ({r['published']})" for r in exceptions]
    counts = split_counts(rows)
    text += [
        "",
        "## Defects split into their causes",
        "",
        f"{counts['split_networks']} networks carry a defect split (parameters - dimension = named orbit + "
        f"mechanisms + unexplained); of the {len(defects)} defects, {counts['explained_defects']} are fully "
        f"explained and {counts['unexplained_defects']} keep an unexplained part "
        f"({counts['unexplained_networks']} networks in all keep one). Mechanisms found: "
        + (", ".join(f"{name} in {n}" for name, n in _mechanism_counts(rows)) or "none")
        + ".",
        "",
        "## What stays unexplained",
        "",
    ] + (findings(rows) or ["- nothing: every split adds up with no unexplained part"])
    atomic_write_text(out / "findings.md", "\n".join(text) + "\n")
    plot(rows, out / "blocks.png")
    return {
        "networks": len(rows),
        "published": len(published),
        "defects": len(defects),
        "disagreements": sum(r["verdict"] == "disagree" for r in rows),
        **counts,
        "out": str(out),
    }


def _mechanism_counts(rows: list[dict]) -> list[tuple[str, int]]:
    seen: dict[str, int] = {}
    for r in rows:
        for name in {part.split(" (")[0].rsplit(" ", 1)[0] for part in (r.get("causes") or "").split("; ") if part}:
            seen[name] = seen.get(name, 0) + 1
    return sorted(seen.items(), key=lambda kv: -kv[1])
