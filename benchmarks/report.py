"""The results of a bench run written down: the environment it ran in, the JSON (rewritten atomically after
every row), the Markdown tables next to it, and the tables printed at the end."""

from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path

from benchmarks.bench_dimension import LABELS, M2_TIMEOUT
from benchmarks.summary import ok_time, summarize
from lightning_cas.system.files import atomic_write_text


# ---- results file --------------------------------------------------------------------------
def environment() -> dict:
    import numpy

    env = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
        "numpy": numpy.__version__,
        "blas_env": {
            k: v for k, v in os.environ.items() if k.startswith(("OPENBLAS", "OMP_", "MKL_", "GOTO")) and "KEY" not in k
        },
    }
    try:
        import flint

        env["python_flint"] = flint.__version__
    except Exception:
        pass
    try:
        blas = numpy.show_config(mode="dicts")["Build Dependencies"]["blas"]
        env["numpy_blas"] = {k: blas.get(k) for k in ("name", "version", "openblas configuration")}
    except Exception:
        pass
    try:
        from threadpoolctl import threadpool_info

        env["threadpools"] = threadpool_info()
    except Exception:
        env["threadpools"] = "threadpoolctl not installed"
    try:  # not `import torch`: the workers are forked from this process and on Linux inherit its
        # peak RSS (ru_maxrss survives exec), so the driver must stay small
        from importlib.metadata import PackageNotFoundError, version

        env["torch"] = version("torch")
    except PackageNotFoundError:
        env["torch"] = "not installed (pip install '.[bench]')"
    try:
        from lightning_cas.macaulay2.runner import m2_version

        env["m2_version"] = m2_version()
    except Exception as exc:
        env["m2_version"] = f"unavailable: {exc}"
    return env


def save(path: Path, results: dict) -> None:
    """Atomic rewrite: a reader (or a killed run) sees the old file or the new, never half."""
    results["summary"] = summarize(results)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(results, indent=1) + "\n")


def markdown_path(out: Path) -> Path:
    return out.with_name("RESULTS.md") if out.name == "results.json" else out.with_suffix(".md")


# ---- presentation --------------------------------------------------------------------------
def dim_cell(entry: dict) -> str:
    """A measurement's dimension as a table cell, or why there is none."""
    status = entry.get("status")
    if not entry:
        return "-"
    if status == "ok":
        return str(entry["dimension"])
    return {"refused (too large)": "refused", "timeout": "timeout"}.get(status, "error")


def sec(entry: dict) -> str:
    """A measurement's seconds as a table cell."""
    t = ok_time(entry)
    return f"{t:.3f}" if t is not None else "-"


def _mib(entry: dict, key: str = "peak_rss_bytes") -> str:
    v = entry.get(key)
    return f"{v / 2**20:.0f}" if v else "-"


def dimension_table(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    head = [
        "case",
        "widths",
        "a",
        "t",
        "P",
        "theory",
        "modp",
        "M2",
        "paper",
        "fast float",
        "agree",
        "modp s",
        "paper s",
        "fast float s",
        "fast float 1T s",
        "M2 s",
        "modp MiB",
        "paper MiB",
        "fast float MiB",
        "M2 MiB",
    ]
    body = []
    for r in rows:
        agree = {True: "yes", False: "**DISAGREE**", None: "-"}[r["agree"]]
        if r["theory_verdict"] == "disagree":
            agree += " / **THEORY DISAGREES**"
        body.append(
            [
                r["group"],
                ",".join(map(str, r["widths"])),
                ",".join(map(str, r["attention"])),
                str(r["tokens"]),
                str(r["parameters"]),
                str(r["theory"] if r["theory"] is not None else "n/a"),
                dim_cell(r["modp"]),
                dim_cell(r["jacobian"]),
                dim_cell(r.get("paper", {})),
                dim_cell(r["numeric"]),
                agree,
                sec(r["modp"]),
                sec(r.get("paper", {})),
                sec(r["numeric"]),
                sec(r.get("numeric_1thread", {})),
                sec(r["jacobian"]),
                _mib(r["modp"]),
                _mib(r.get("paper", {})),
                _mib(r["numeric"]),
                _mib(r["jacobian"], "m2_peak_rss_bytes"),
            ]
        )
    return head, body


def softmax_table(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    head = [
        "delta",
        "paper",
        "softmax dim",
        "agree",
        "softmax s",
        "min gap (dec)",
        "high prec.",
        "lightning float dim",
        "lightning float s",
    ]
    body = [
        [
            str(r["delta"]),
            str(r["expected_softmax"]),
            str(r["softmax_dimension"]),
            "yes" if r["agree"] else "**DISAGREE**",
            f"{r['softmax_seconds']:.3f}",
            str(r["softmax_min_gap_decades"]),
            "yes" if r["softmax_high_precision"] else "no",
            str(r["lightning_float_dimension"]),
            f"{r['lightning_float_seconds']:.3f}",
        ]
        for r in rows
    ]
    return head, body


def _geometry_detail(r: dict) -> str:
    if "certificate" in r:
        return f"boundary: {str(r.get('boundary')).lower()} ({r['certificate']})"
    return str(r.get("pieces", r.get("candidates", r.get("generator_degrees", "-"))))


def geometry_table(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    head = [
        "bench",
        "d",
        "d'",
        "a",
        "one coord.",
        "status",
        "dim",
        "theory",
        "degree",
        "#gens",
        "gen degrees / pieces / candidates / verdict",
        "s",
    ]
    body = [
        [
            r["bench"] + (f" t={r['tokens']}" if r.get("tokens", 2) != 2 else ""),
            str(r["d"]),
            str(r["d_out"]),
            str(r["a"]),
            "yes" if r["one_coordinate"] else "no",
            r["status"] if r["status"] == "ok" else f"**{r['status']}**: {r.get('error', '')}"[:120],
            str(r.get("dimension", "-")),
            str(r.get("theory", "-")),
            str(r.get("degree", "-")) + (f" (consensus {r['consensus']})" if "consensus" in r else ""),
            str(r.get("generators", "-")),
            _geometry_detail(r),
            f"{r['elapsed_s']:.1f}",
        ]
        for r in rows
    ]
    return head, body


def _md_table(head, body) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in body]
    return "\n".join(lines)


def _yes(flag) -> str:
    return "**MET**" if flag else "**NOT MET**"


def render_markdown(results: dict) -> str:
    s = results.get("summary", {})
    secs = results.get("sections", {})
    env = results.get("environment", {})
    out = [
        "# lightning_cas benchmark",
        "",
        f"Generated by `python -m benchmarks.bench` ({'quick' if results.get('quick') else 'full'} run"
        f"{', --only ' + results['only'] if results.get('only') else ''}) "
        f"on {results.get('started', '?')}; finished {results.get('finished', 'not finished (partial)')}. "
        f"Machine: {env.get('cpus')} CPUs (shared), load average at start {env.get('loadavg_start')}, "
        f"numpy {env.get('numpy')} ({(env.get('numpy_blas') or {}).get('name', '?')} "
        f"{(env.get('numpy_blas') or {}).get('version', '')}), python-flint {env.get('python_flint')}, "
        f"Macaulay2 {env.get('m2_version')}, torch {env.get('torch', '?')}. "
        f"BLAS environment: {env.get('blas_env') or 'none set'}.",
    ]
    runs = results.get("section_runs", {})
    # a section belongs to an earlier run when that run's start is not this one's ("run"; older files: "started")
    earlier = {n: r for n, r in runs.items() if r.get("run", r.get("started")) != results.get("started") and n in secs}
    if earlier:
        out[-1] += (
            " Sections kept from an earlier run (`--only`): "
            + "; ".join(
                f"{n} measured {r.get('started')} to {r.get('finished')}"
                + (
                    f" (load average at start {r['environment']['loadavg_start']})"
                    if (r.get("environment") or {}).get("loadavg_start")
                    else ""
                )
                for n, r in earlier.items()
            )
            + "."
        )
    out += ["", "## Targets", ""]
    t = s.get("delta10_modp")
    out.append(
        f"- delta = 10 (L = 2, t = 3, a = 2, {t['parameters']} parameters) with modp: {t['time_s']:.3f} s "
        f"(target < {t['target_s']:g} s): {_yes(t['met'])}"
        if t
        else "- delta = 10 with modp: not measured"
    )
    sp = s.get("sweep_vs_paper_protocol")
    out.append(
        f"- whole delta = {sp['deltas'][0]}..{sp['deltas'][-1]} sweep vs the **paper-protocol** float64 "
        f"baseline (the issue's target): modp {sp['modp_total_s']:.3f} s vs {sp['baseline_total_s']:.3f} s in "
        f"the same run: **{sp['speedup']:.2f}x** (target >= {sp['target']:g}x): {_yes(sp['met'])}"
        + ("" if sp["complete"] else " (sweep incomplete)")
        + f"; best-of-repeats ratio {sp['speedup_best_of_repeats']:.2f}x"
        if sp
        else "- sweep speed-up vs the paper-protocol baseline: not measured"
    )
    sp = s.get("sweep_vs_fast_float")
    out.append(
        f"- same sweep vs our **fast float** (vectorized forward-mode float64 Jacobian, same N = 250, SVD "
        f"rank; not the paper's protocol, so not the issue's target, kept as the honest harder comparison): "
        f"modp {sp['modp_total_s']:.3f} s vs {sp['baseline_total_s']:.3f} s: **{sp['speedup']:.2f}x** "
        f"(20x would {'be' if sp['met'] else 'NOT be'} reached against it)"
        + ("" if sp["complete"] else " (sweep incomplete)")
        + f"; best-of-repeats ratio {sp['speedup_best_of_repeats']:.2f}x"
        + (
            f"; against it with one BLAS thread ({sp['float_1thread_total_s']:.3f} s) "
            f"{sp['speedup_vs_1thread_float']:.2f}x"
            if "speedup_vs_1thread_float" in sp
            else ""
        )
        if sp
        else "- sweep speed-up vs the fast float baseline: not measured"
    )
    for m, p in s.get("peak_memory", {}).items():
        label = LABELS[m]
        growth = (
            f"; at most {p['max_growth_during_run_mib']} MiB of it grew during the measured runs"
            if "max_growth_during_run_mib" in p
            else ""
        )
        out.append(
            f"- peak memory, {label}: {p['peak_rss_mib']} MiB at widths {p['at_widths']} "
            f"(target < 1 GiB): {_yes(p['under_1_gib'])}{growth}"
        )
    out += [
        "",
        "Times are the median of the repeats inside one fresh worker process (M2: one run, start-up "
        "included). modp performs its default two independent exact ranks (two primes, two seeds). The "
        "paper-protocol baseline (`benchmarks/paper_baseline.py`) re-implements the paper's NeuroDim script for "
        "our network: torch float64 model, N = 250 Gaussian token matrices, the Jacobian assembled one "
        "`backward(retain_graph=True)` per output entry (7500 passes at delta = 10), rank by "
        "`torch.linalg.matrix_rank`; it runs ONE trial (the paper's script takes the best of 5, so its full "
        "protocol costs about 5x more) with ONE torch/BLAS thread (in a pilot on this shared machine two threads "
        "were 1.5-15x slower and erratic), both choices in the baseline's favour; torch's import is outside the "
        "timing. Fast float (ours) builds the same matrix in one vectorized forward-mode pass (numpy). "
        "Peak memory is the worker's ru_maxrss (interpreter + numpy + flint included); for M2 it is the M2 "
        "process's own peak RSS.",
    ]
    soft = {r["delta"]: r["lightning_float_seconds"] for r in secs.get("softmax", [])}
    twice = [
        (ok_time(r["numeric"]), soft[r["widths"][0]])
        for r in secs.get("dimension", [])
        if r["group"].startswith("paper") and r["widths"][0] in soft and ok_time(r["numeric"]) is not None
    ]
    if twice:
        a, b = sum(x for x, _ in twice), sum(y for _, y in twice)
        same = runs.get("dimension", {}).get("started") == runs.get("softmax", {}).get("started")
        out += [
            "",
            "Timing noise: the fast float (ours) baseline of the same paper shapes was timed twice "
            + ("in this run, " if same else "(in two different runs, see above), ")
            + f"{a:.3f} s in the dimension section and {b:.3f} s in the softmax section "
            f"({max(a, b) / min(a, b):.1f}x "
            "apart). Its multi-threaded OpenBLAS SVD is very sensitive to other load on this shared 2-core "
            "machine, so read speed-ups with that spread in mind (the one-BLAS-thread column is steadier).",
        ]
    out += ["", "## Findings", ""]
    findings = s.get("findings", [])
    out += [f"- **{f}**" for f in findings] or [
        "- none: every computed dimension agrees across methods and with the theory wherever the theory predicts."
    ]
    if secs.get("dimension"):
        out += [
            "",
            "## Dimension backends",
            "",
            _md_table(*dimension_table(secs["dimension"])),
            "",
            "`refused` = the M2 jacobian size guard (TooLargeError); `timeout` = M2 exceeded the per-case limit "
            f"({results.get('m2_timeout', M2_TIMEOUT):g} s); theory `n/a` = outside every regime with a "
            "closed form.",
        ]
    if secs.get("geometry"):
        out += [
            "",
            "## One-layer geometry: implicitization, singular locus, boundary",
            "",
            _md_table(*geometry_table(secs["geometry"])),
        ]
    if secs.get("softmax"):
        ss = s.get("softmax_sweep", {})
        out += [
            "",
            "## Softmax sweep",
            "",
            _md_table(*softmax_table(secs["softmax"])),
            "",
            f"Softmax sweep total {ss.get('softmax_total_s')} s (robust protocol: three float64 points, high "
            f"precision when a gap is unclear) vs the lightning float64 baseline "
            f"{ss.get('lightning_float_total_s')}"
            " s for the same shapes.",
        ]
    if secs.get("rank"):
        from benchmarks.bench_rank import rank_markdown

        out += ["", rank_markdown(secs["rank"]).rstrip()]
    if secs.get("blocks"):
        from benchmarks.bench_blocks import blocks_markdown

        out += ["", blocks_markdown(secs["blocks"]).rstrip()]
    if secs.get("ratios"):
        from benchmarks.bench_ratios import ratio_markdown

        out += ["", ratio_markdown(secs["ratios"]).rstrip()]
    if secs.get("models"):
        from benchmarks.bench_models import models_markdown

        out += ["", models_markdown(secs["models"]).rstrip()]
    if secs.get("llc"):
        from benchmarks.llc_report import llc_markdown

        out += ["", llc_markdown(secs["llc"]).rstrip()]
    return "\n".join(out) + "\n"


def print_tables(results: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 200)
    secs = results.get("sections", {})
    for name, fn in (("dimension", dimension_table), ("geometry", geometry_table), ("softmax", softmax_table)):
        if not secs.get(name):
            continue
        head, body = fn(secs[name])
        table = Table(title=name, show_lines=False)
        for h in head:
            table.add_column(h)
        for row in body:
            styled = [f"[bold red]{c.strip('*')}[/]" if "**" in c else c for c in row]
            table.add_row(*styled)
        console.print(table)
    for f in results.get("summary", {}).get("findings", []):
        console.print(f"[bold red]FINDING[/]: {f}")
    md = render_markdown(results)
    targets = md.split("## Targets")[1].split("Times are")[0].strip()
    console.print(targets.replace("**", ""))
