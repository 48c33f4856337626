"""The summary of a bench run: the targets (delta = 10 with modp, the sweep speed-ups, peak memory) and
every finding of every section, recomputed from the rows whenever the results file is written."""

from __future__ import annotations

from benchmarks.bench_dimension import METHODS

GIB = 1024**3
TARGET_DELTA10_S = 2.0
TARGET_SPEEDUP = 20.0


# section -> (module, its Markdown renderer), rendered by report.render_markdown in this order,
# after its own tables
SECTION_MARKDOWN = {
    "rank": ("benchmarks.bench_rank", "rank_markdown"),
    "blocks": ("benchmarks.bench_blocks", "blocks_markdown"),
    "ratios": ("benchmarks.bench_ratios", "ratio_markdown"),
    "models": ("benchmarks.bench_models", "models_markdown"),
    "llc": ("benchmarks.llc_report", "llc_markdown"),
    "relu": ("benchmarks.bench_relu", "relu_markdown"),
    "scaling": ("benchmarks.bench_scaling", "scaling_markdown"),
}


# ---- summary and targets -------------------------------------------------------------------
def ok_time(entry: dict):
    """The time of a measurement that succeeded, else None (a refusal, a time limit, an error)."""
    return entry.get("time_s") if entry.get("status") == "ok" else None


def sweep_speedup(paper_rows: list[dict], base: str) -> dict | None:
    """modp vs one baseline over the paper sweep: ratio of summed medians (and of best repeats)."""
    pairs = [(ok_time(r["modp"]), ok_time(r.get(base, {}))) for r in paper_rows]
    if not paper_rows or any(a is None or b is None for a, b in pairs):
        return None
    tm, tb = sum(a for a, _ in pairs), sum(b for _, b in pairs)
    deltas = [r["widths"][0] for r in paper_rows]
    fastest = [(min(r["modp"]["times_s"]), min(r[base]["times_s"])) for r in paper_rows]
    return {
        "baseline": base,
        "deltas": deltas,
        "complete": deltas == list(range(3, 11)),
        "modp_total_s": round(tm, 4),
        "baseline_total_s": round(tb, 4),
        "speedup": round(tb / tm, 2),
        "speedup_best_of_repeats": round(sum(b for _, b in fastest) / sum(a for a, _ in fastest), 2),
        "target": TARGET_SPEEDUP,
        "met": tb / tm >= TARGET_SPEEDUP,
    }


def summarize(results: dict) -> dict:
    rows = results.get("sections", {}).get("dimension", [])
    summary: dict = {}
    paper = [r for r in rows if r["group"].startswith("paper")]
    d10 = [r for r in paper if r["widths"][0] == 10]
    if d10 and ok_time(d10[0]["modp"]) is not None:
        t = ok_time(d10[0]["modp"])
        summary["delta10_modp"] = {
            "parameters": d10[0]["parameters"],
            "time_s": round(t, 4),
            "target_s": TARGET_DELTA10_S,
            "met": t < TARGET_DELTA10_S,
        }
    for key, base in (("sweep_vs_paper_protocol", "paper"), ("sweep_vs_fast_float", "numeric")):
        sp = sweep_speedup(paper, base)
        if sp is None:
            continue
        summary[key] = sp
        if base == "numeric":
            one = [ok_time(r.get("numeric_1thread", {})) for r in paper]
            if all(t is not None for t in one):
                sp["float_1thread_total_s"] = round(sum(one), 4)
                sp["speedup_vs_1thread_float"] = round(sum(one) / sp["modp_total_s"], 2)
    peaks = {}
    for m in METHODS:
        key = "m2_peak_rss_bytes" if m == "jacobian" else "peak_rss_bytes"
        vals = [(r[m][key], r["widths"], r["attention"]) for r in rows if r.get(m, {}).get(key)]
        if vals:
            v, w, a = max(vals)
            peaks[m] = {"peak_rss_mib": round(v / 2**20, 1), "at_widths": w, "at_attention": a, "under_1_gib": v < GIB}
            extra = [r[m]["peak_rss_delta_bytes"] for r in rows if r.get(m, {}).get("peak_rss_delta_bytes") is not None]
            if extra and m != "jacobian":
                peaks[m]["max_growth_during_run_mib"] = round(max(extra) / 2**20, 1)
    if peaks:
        summary["peak_memory"] = peaks
    findings = [f"{r['group']} widths {r['widths']}: {f}" for r in rows for f in r["findings"]]
    for r in results.get("sections", {}).get("softmax", []):
        if not r.get("agree"):
            findings.append(
                f"softmax delta={r['delta']}: dimension {r['softmax_dimension']} != paper's {r['expected_softmax']}"
            )
        if not r.get("softmax_consistent", True):
            findings.append(f"softmax delta={r['delta']}: repetitions / high precision not consistent")
    for r in results.get("sections", {}).get("geometry", []):
        if r.get("theory") is not None and r.get("status") == "ok" and r["dimension"] != r["theory"]:
            findings.append(
                f"geometry implicit (d={r['d']}, d'={r['d_out']}, a={r['a']}): dimension "
                f"{r['dimension']} != theory {r['theory']}"
            )
        if r["bench"] == "boundary_verdict" and r.get("boundary") is False:
            findings.append(
                f"geometry boundary_verdict (d={r['d']}, d'={r['d_out']}, a={r['a']}): a point of the "
                "claimed boundary was certified interior"
            )
        if r.get("status") != "ok":
            findings.append(
                f"geometry {r['bench']} (d={r['d']}, d'={r['d_out']}, a={r['a']}, "
                f"one_coordinate={r['one_coordinate']}): {r.get('error', r.get('status'))}"
            )
    soft = results.get("sections", {}).get("softmax", [])
    if soft:
        summary["softmax_sweep"] = {
            "deltas": [r["delta"] for r in soft],
            "softmax_total_s": round(sum(r["softmax_seconds"] for r in soft), 3),
            "lightning_float_total_s": round(sum(r["lightning_float_seconds"] for r in soft), 3),
            "all_match_paper": all(r["agree"] for r in soft),
        }
    if results.get("sections", {}).get("rank"):
        from benchmarks.bench_rank import rank_findings

        findings += rank_findings(results["sections"]["rank"])
    if results.get("sections", {}).get("blocks"):
        from benchmarks.bench_blocks import blocks_findings

        findings += blocks_findings(results["sections"]["blocks"])
    if results.get("sections", {}).get("models"):
        from benchmarks.bench_models import models_findings

        findings += models_findings(results["sections"]["models"])
    if results.get("sections", {}).get("llc"):
        from benchmarks.bench_llc import llc_findings

        findings += llc_findings(results["sections"]["llc"])
    if results.get("sections", {}).get("relu"):
        from benchmarks.bench_relu import relu_findings

        findings += relu_findings(results["sections"]["relu"])
    summary["findings"] = findings
    return summary
