"""The table of generic ED degrees in docs/ed_degrees.md: every one-layer lightning neurovariety and every
two-neuron quadratic network of the shapes below that msolve finishes within the time limit, written by this
script (nothing in the table is typed by hand).

Each shape runs `ed_degree(..., method="msolve")` (two primes that must agree) within ``--timeout`` seconds
(180 by default: the machine is shared; 10 minutes is the target, for --shape). A shape at least as large as one that
ran out of time, in every number, is not tried (it is listed as skipped). A row that msolve refuses (more
than 12 free weights on the slice, or 40 weights) says so. Beside each count, the closed form where theory
gives one (lightning_cas.geometry.degree.closed_forms: Segre products and duals): an independent check.

    python -m benchmarks.ed_table [--timeout S] [--out docs/ed_degrees.md] [--quick]   (rows: bench/ed_degrees.json)
    python -m benchmarks.ed_table --shape one-layer:3,1,1,2 --timeout 2400 [--threads 2]

The second form measures one shape with its own limit (recorded in its row), replaces its row in
bench/ed_degrees.json and rewrites the table; ``--render`` rewrites the table from the json alone.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from lightning_cas.core.architecture import Architecture
from lightning_cas.core.blocks.linear import Linear
from lightning_cas.core.blocks.power import Power
from lightning_cas.core.network import Network
from lightning_cas.errors import LightningError, TooLargeError
from lightning_cas.geometry.degree.closed_forms import one_layer_generic_ed, two_neuron_generic_ed
from lightning_cas.geometry.degree.m2 import ed_degree
from lightning_cas.geometry.degree.msolve import msolve_ed
from lightning_cas.msolve.runner import msolve_version

# one layer (d, d', a, t): input width, output width, attention dim, tokens
ONE_LAYER = [
    (d, e, a, t) for t in (1, 2, 3) for d in (2, 3) for e in (1, 2, 3) for a in (1, 2) if a <= d and e <= d + 1
]
# two hidden neurons, x^2: (n inputs, o outputs, biases)
TWO_NEURON = [(n, o, b) for b in (False, True) for n in (2, 3, 4, 5, 6) for o in (1, 2, 3)]
# every shape, in the table's order
CASES = [("one-layer", s) for s in ONE_LAYER] + [("two-neuron", s) for s in TWO_NEURON]


def two_neuron(n: int, o: int, bias: bool) -> Network:
    return Network(n, 1, (Linear(2, bias=bias), Power(2), Linear(o, bias=bias)))


def _dominated(shape: tuple, failed: list[tuple], family: str = "two-neuron") -> bool:
    """At least as large as a shape that ran out of time, in every number (biases count as larger). One layer's
    token count is not a size: t = 1 (products of three linear forms) is harder than t = 2 (a Segre product,
    docs/ed_degrees_closed_form.md), so shapes are compared with the same t only."""
    same = [f for f in failed if family != "one-layer" or f[3] == shape[3]]
    return any(all(a >= b for a, b in zip(shape, f)) for f in same)


def build(family: str, shape: tuple) -> Network:
    if family == "one-layer":
        return Architecture(shape[:2], (shape[2],), tokens=shape[3])
    return two_neuron(*shape)


def closed_form(family: str, shape) -> int | None:
    """The generic ED degree in closed form (Chern-Mather degrees), or None where there is none here."""
    return one_layer_generic_ed(*shape) if family == "one-layer" else two_neuron_generic_ed(*shape)


def measure(family: str, shape: tuple, net, timeout: float, threads: int = 1) -> dict:
    row = {"family": family, "shape": list(shape), "network": str(net), "weights": net.parameters}
    row.update(limit_s=timeout, threads=threads)
    start = time.perf_counter()
    try:
        res = (
            ed_degree(net, method="msolve", timeout=timeout)
            if threads == 1
            else msolve_ed(net, timeout=timeout, threads=threads)
        )
        row.update(status="ok", ed_degree=res.ed_degree, coordinates=res.coordinates, dimension=res.dimension)
        row["slice_points"] = res.solutions
    except TooLargeError as exc:
        row.update(status="refused", error=str(exc)[:160])
    except LightningError as exc:
        timed_out = "time limit" in str(exc)
        row.update(status="time limit" if timed_out else "error", error=str(exc)[:160])
    row["elapsed_s"] = round(time.perf_counter() - start, 1)
    return row


def run(timeout: float, quick: bool = False, progress=print) -> list[dict]:
    rows, failed = [], {"one-layer": [], "two-neuron": []}
    for family, shape in CASES[:6] if quick else CASES:
        if _dominated(tuple(int(v) for v in shape), failed[family], family):
            rows.append({"family": family, "shape": list(shape), "status": "skipped"})
            continue
        rows.append(measure(family, shape, build(family, shape), timeout))
        if rows[-1]["status"] == "time limit":
            failed[family].append(tuple(int(v) for v in shape))
        progress(json.dumps(rows[-1]))
    return rows


def _cell(r: dict) -> str:
    if r["status"] == "ok":
        return str(r["ed_degree"])
    if r["status"] == "time limit" and r.get("limit_s"):
        return f"time limit ({r['limit_s']:g} s)"
    skipped = "not tried (a smaller shape ran out of the table's time limit)"
    return {"refused": "refused (slice too large)", "skipped": skipped}.get(r["status"], r["status"])


def _closed_cell(r: dict) -> str:
    """The closed form, and whether msolve's count is it: a disagreement is a finding, said in the cell."""
    value = closed_form(r["family"], r["shape"])
    if value is None:
        return "—"
    if r["status"] != "ok":
        return str(value)
    return f"{value} (agrees)" if value == r["ed_degree"] else f"{value} (msolve DISAGREES)"


def markdown(rows: list[dict], timeout: float, version: str, load: tuple, elapsed: float) -> str:
    lines = [
        "# Generic ED degrees by msolve",
        "",
        "Written by `python -m benchmarks.ed_table` (do not edit by hand). Each row is `lightning-cas ed --method "
        f"msolve` (the generic metric; counts mod two primes that agree; seed 0) with a limit of {timeout:g} s per "
        "shape on a shared 2-core machine (the target is 10 minutes: shapes that ran out of this limit were "
        "measured again alone, with at least 600 s and both cores, where the s column says 'alone'). A shape "
        f"at least as large as one that ran out of time (with the same t) is not tried. msolve {version}; "
        f"load average {load[0]:.1f} at the start; "
        f"{elapsed / 60:.0f} min in all. "
        "ED degree = critical points on the gauge slice / slice points over a generic point (docs/critical.md). "
        "A row measured on its own (`--shape`) says its limit and threads in the s column. The closed form "
        "(docs/ed_degrees_closed_form.md) is the sum of the polar degrees from Chern-Mather degrees, where the "
        "neurovariety is a Segre product of known varieties: an independent check of the count.",
        "",
        "## One-layer lightning self-attention (d, d', a, t)",
        "",
        "| d | d' | a | t | weights | coordinates | dimension | generic ED degree | closed form | s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    get = lambda r, k: r.get(k, "—")
    for r in rows:
        if r["family"] == "one-layer":
            d, e, a, t = r["shape"]
            lines.append(
                f"| {d} | {e} | {a} | {t} | {get(r, 'weights')} | {get(r, 'coordinates')} | {get(r, 'dimension')} "
                f"| {_cell(r)} | {_closed_cell(r)} | {_seconds(r)} |"
            )
    lines += [
        "",
        "## Two-neuron quadratic networks: x -> P_2 (P_1 x (+ b_1))^2 (+ b_2), P_1 2 x n, P_2 o x 2",
        "",
        "| n | o | biases | weights | coordinates | dimension | generic ED degree | closed form | s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["family"] == "two-neuron":
            n, o, b = r["shape"]
            lines.append(
                f"| {n} | {o} | {'yes' if b else 'no'} | {get(r, 'weights')} | {get(r, 'coordinates')} | "
                f"{get(r, 'dimension')} | {_cell(r)} | {_closed_cell(r)} | {_seconds(r)} |"
            )
    return "\n".join(lines) + "\n"


def _seconds(r: dict) -> str:
    if "elapsed_s" not in r:
        return "—"
    threads = f", {r['threads']} threads" if r.get("threads", 1) > 1 else ""
    alone = r.get("alone")
    return f"{r['elapsed_s']} (alone: limit {r['limit_s']:g} s{threads})" if alone else str(r["elapsed_s"])


def _shape(text: str) -> tuple[str, tuple]:
    family, _, numbers = text.partition(":")
    if family not in ("one-layer", "two-neuron") or not numbers:
        raise SystemExit(f"--shape: one-layer:d,e,a,t or two-neuron:n,o,bias, got {text!r}")
    values = tuple(int(v) for v in numbers.split(","))
    return family, values if family == "one-layer" else (values[0], values[1], bool(values[2]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=180.0)
    parser.add_argument("--out", type=Path, default=Path("docs/ed_degrees.md"))
    parser.add_argument("--quick", action="store_true", help="the first six shapes only")
    parser.add_argument("--shape", help="measure this shape alone, e.g. one-layer:3,1,1,2, and merge its row")
    parser.add_argument("--threads", type=int, default=1, help="msolve threads for --shape")
    parser.add_argument("--render", action="store_true", help="rewrite the table from the json only")
    args = parser.parse_args(argv)
    data = Path("bench") / f"{args.out.stem}.json"
    if args.shape or args.render:
        saved = json.loads(data.read_text())
        if args.shape:
            family, shape = _shape(args.shape)
            row = measure(family, shape, build(family, shape), args.timeout, args.threads)
            row["alone"] = True
            print(json.dumps(row), flush=True)
            saved["rows"] = [r for r in saved["rows"] if (r["family"], r["shape"]) != (family, list(shape))] + [row]
            order = {(f, tuple(s)): i for i, (f, s) in enumerate(CASES)}
            saved["rows"].sort(key=lambda r: order.get((r["family"], tuple(r["shape"])), len(order)))
        meta = saved["meta"]
        rows = saved["rows"]
    else:
        load, start = os.getloadavg(), time.perf_counter()
        rows = run(args.timeout, args.quick, progress=lambda m: print(m, flush=True))
        meta = dict(timeout=args.timeout, version=msolve_version(None), load=list(load))
        meta["elapsed_s"] = time.perf_counter() - start
        saved = {"meta": meta, "rows": rows}
    text = markdown(rows, meta["timeout"], meta["version"], tuple(meta["load"]), meta["elapsed_s"])
    args.out.write_text(text)
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_text(json.dumps(saved, indent=1) + "\n")
    print(f"wrote {args.out} and {data}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
