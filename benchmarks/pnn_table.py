"""A published table of polynomial networks re-checked: Dao-Rodriguez's MFA_PNNs tables against our sweep.

Their tables (github.com/daokevin06/MFA_PNNs: data/raw/*_architectures.csv, data/processed/counterexamples.csv)
give, per architecture (d_0, ..., d_L) and exponent r, the dimension as the rank of a Jacobian mod two primes
(their README: "not a formal proof"). This script takes those CSV files as they are (never stored here), draws
a sample stratified by file and depth (or takes every row), runs it as one sweep (``lightning-cas sweep`` on a
CSV spec, two workers) and writes a summary: agreements, disagreements with a diagnosis, the rows now proved
(the mod-p rank meets the ambient dimension or another proved bound), and the time.

    python -m benchmarks.pnn_table FILE.csv ... --sample 2000 --out bench/pnn_table.md --work /tmp/pnn
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import time
from collections import Counter, defaultdict
from pathlib import Path

from lightning_cas.batch.spec import parse_csv_spec
from lightning_cas.batch.store import ResultStore
from lightning_cas.batch.sweep import run_sweep


def read_rows(paths) -> list[dict]:
    """Every row of the given tables, with the file it came from; duplicates (same architecture and exponent)
    kept once."""
    seen, rows = set(), []
    for path in paths:
        with open(path, newline="") as fh:
            for row in csv.DictReader(fh):
                widths = tuple(int(w) for w in row["architecture"].strip("[]() ").split(","))
                key = (widths, int(row.get("exponent") or 2))
                if key in seen:
                    continue
                seen.add(key)
                rows.append({**row, "file": Path(path).name, "widths": widths, "exponent": key[1]})
    return rows


def stratified(rows: list[dict], size: int | None, seed: int) -> list[dict]:
    """``size`` rows, each stratum (file, depth) contributing in proportion and at least one; all without size."""
    if size is None or size >= len(rows):
        return rows
    strata = defaultdict(list)
    for row in rows:
        strata[(row["file"], len(row["widths"]) - 1)].append(row)
    rng = random.Random(seed)
    out = []
    for key in sorted(strata):
        members = strata[key]
        take = max(1, round(size * len(members) / len(rows)))
        out += rng.sample(members, min(take, len(members)))
    return out[:size] if len(out) > size else out


def diagnose(ours: int, theirs: int, certainty: str) -> str:
    """Why two dimensions differ: each is a rank of a Jacobian at random points, a lower bound of the
    generic rank, so the larger one is right unless the larger one is not a rank."""
    if ours > theirs:
        why = "proved" if certainty == "exact" else "a lower bound"
        return f"ours is larger ({why}): their ranks mod their primes under-counted"
    return "theirs is larger: one of our runs under-counted (never a proof of a smaller dimension)"


def minimality(widths: tuple[int, ...], exponent: int) -> tuple[bool, bool, list[str]]:
    """(minimal, proved, reasons) for a filling network: every predecessor (one hidden width one smaller)
    must not fill. A predecessor is proved not to fill when a proved upper bound of ``predict`` (the least of
    parameters - orbit, the split and filling bounds) is below the ambient dimension, or when its dimension is
    exact (the rank meets a proved bound) and below it; else its mod-p rank below it says so with its
    failure bound only."""
    from lightning_cas import api
    from lightning_cas.core.block_theory import expected
    from lightning_cas.core.network import Network

    minimal, proved, reasons = True, True, []
    for i in range(1, len(widths) - 1):
        if widths[i] == 1:
            continue
        smaller = widths[:i] + (widths[i] - 1,) + widths[i + 1 :]
        net = Network.polynomial_network(smaller, exponent)
        bound = expected(net)
        if bound.value < net.ambient_dimension:
            reasons.append(f"{list(smaller)}: <= {bound.value} < {net.ambient_dimension} ({bound.reason})")
            continue
        res = api.dimension(net)
        if res.dimension == net.ambient_dimension:
            minimal = False
            reasons.append(f"{list(smaller)} fills ({res.dimension})")
        else:  # exact when the rank meets a proved bound: then the dimension below ambient is proved
            proved = proved and res.certainty == "exact"
            reasons.append(f"{list(smaller)}: {res.dimension} < {net.ambient_dimension} ({res.certainty})")
    return minimal, proved and minimal, reasons


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tables", nargs="+", help="their CSV files (data/raw/*_architectures.csv, counterexamples.csv)")
    ap.add_argument("--sample", type=int, default=None, help="rows, stratified by file and depth (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--work", default="/tmp/pnn_table", help="the sweep's directory (resumable)")
    ap.add_argument("--out", default=None, help="the summary (markdown); a JSON line is printed either way")
    ap.add_argument("--minimal", action="store_true", help="also decide minimality of every filling row")
    ap.add_argument("--max-weights", type=int, default=None, help="only rows with at most this many weights")
    args = ap.parse_args(argv)

    rows = read_rows(args.tables)
    if args.max_weights is not None:
        rows = [r for r in rows if int(r["num_parameters"]) <= args.max_weights]
    rows = stratified(rows, args.sample, args.seed)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    spec = work / "spec.csv"
    with open(spec, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["architecture", "exponent"])
        for row in rows:
            writer.writerow(["[" + ", ".join(map(str, row["widths"])) + "]", row["exponent"]])
    sweep = parse_csv_spec(spec.read_text(), str(spec), max_jobs=200_000)
    start = time.perf_counter()
    summary = run_sweep(sweep, work / "results", jobs=args.jobs)
    elapsed = time.perf_counter() - start
    ours = {}
    for rec in ResultStore(work / "results").records():
        pnn = rec.architecture.polynomial_widths()
        if pnn is not None and rec.result is not None:
            ours[pnn] = rec
    counts = Counter()
    disagreements = []
    by_file = defaultdict(Counter)
    for row in rows:
        rec = ours.get((row["widths"], row["exponent"]))
        f = by_file[row["file"]]
        f["rows"] += 1
        if rec is None:
            counts["not computed"] += 1
            f["not computed"] += 1
            continue
        theirs, dim = int(row["dimension_computed"]), rec.result.dimension
        proved = rec.result.certainty == "exact"
        counts["proved"] += proved
        f["proved"] += proved
        filling = dim == rec.result.ambient_dimension
        counts["filling"] += filling
        if dim == theirs:
            counts["agree"] += 1
            f["agree"] += 1
        else:
            counts["disagree"] += 1
            f["disagree"] += 1
            disagreements.append((row, dim, diagnose(dim, theirs, rec.result.certainty)))
        if str(filling) != row.get("is_full_dimension", str(filling)):
            counts["filling verdict differs"] += 1
        if args.minimal and filling and proved:
            minimal, sure, why = minimality(row["widths"], row["exponent"])
            counts["minimal"] += minimal
            counts["minimal, proved"] += sure
            if str(minimal) != row.get("is_minimal", str(minimal)):
                counts["minimality differs"] += 1
                disagreements.append((row, dim, f"minimality: ours {minimal}, theirs {row['is_minimal']}: {why}"))
    result = {
        "rows": len(rows),
        "ran": summary.ran,
        "cached": summary.cached,
        "elapsed_s": round(elapsed, 1),
        "rows_per_s": round(summary.ran / elapsed, 2) if summary.ran else None,
        **counts,
    }
    print(json.dumps(result))
    if args.out:
        Path(args.out).write_text(report(args, result, by_file, disagreements))
    return result


def report(args, result: dict, by_file, disagreements) -> str:
    lines = [
        "# Dao-Rodriguez's polynomial-network tables, re-checked",
        "",
        "Source: github.com/daokevin06/MFA_PNNs (their data/raw/*_architectures.csv and "
        "data/processed/counterexamples.csv; each dimension there is a Jacobian rank mod two primes). "
        "Their files are not stored here.",
        "",
        f"Command: `python -m benchmarks.pnn_table {' '.join(Path(t).name for t in args.tables)}"
        + (f" --sample {args.sample} --seed {args.seed}" if args.sample else "")
        + (f" --max-weights {args.max_weights}" if args.max_weights else "")
        + f" --jobs {args.jobs}` (a `lightning-cas sweep` of a CSV spec), on the shared two-core machine.",
        "",
        f"- rows: {result['rows']} (computed now: {result['ran']}, from an earlier run of the same sweep: "
        f"{result['cached']})",
        f"- time: {result['elapsed_s']} s ({result['rows_per_s']} rows a second on {args.jobs} workers)",
        f"- agree: {result.get('agree', 0)}, disagree: {result.get('disagree', 0)}, "
        f"not computed: {result.get('not computed', 0)}",
        f"- proved (exact: the mod-p rank meets the ambient dimension, the named group's orbit or another proved "
        f"bound): {result.get('proved', 0)}; filling: {result.get('filling', 0)}; filling verdicts that differ "
        f"from theirs: {result.get('filling verdict differs', 0)}",
        f"- minimality (with --minimal; a filling row is minimal when no predecessor, one hidden width one "
        f"smaller, fills; proved when each predecessor has a proved upper bound below the ambient dimension): "
        f"minimal {result.get('minimal', 0)}, of which proved {result.get('minimal, proved', 0)}; differing "
        f"from theirs: {result.get('minimality differs', 0)}",
        "",
        "| file | rows | agree | disagree | proved |",
        "|---|---|---|---|---|",
    ]
    for name in sorted(by_file):
        c = by_file[name]
        lines.append(f"| {name} | {c['rows']} | {c['agree']} | {c['disagree']} | {c['proved']} |")
    if disagreements:
        lines += [
            "",
            "## Disagreements",
            "",
            "| architecture | r | theirs | ours | diagnosis |",
            "|---|---|---|---|---|",
        ]
        for row, dim, why in disagreements:
            lines.append(f"| {list(row['widths'])} | {row['exponent']} | {row['dimension_computed']} | {dim} | {why} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
