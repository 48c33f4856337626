"""A table of degrees and generic ED degrees over a grid of one-layer architectures (``make degrees``).

Each row says which method gave each number and how long it took; a case that fails or runs out of
time says so in its row instead of stopping the table.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import time

from lightning_cas.core.architecture import Architecture
from lightning_cas.errors import LightningError
from lightning_cas.geometry.degrees import degree, ed_degree
from lightning_cas.system.files import atomic_write_text

COLUMNS = ("d", "d_out", "a", "tokens", "dimension", "degree", "degree_method", "trace_residual", "ed_degree",
           "ed_method", "seconds", "status")


def degree_rows(ds=(2, 3), outs=(1, 2), attentions=(1, 2), tokens=2, timeout: float = 120.0, seed: int = 0,
                session=None):
    """One row per (d, d', a): the degree (auto) and the generic ED degree (auto), each bounded by ``timeout``."""
    for d, e, a in itertools.product(ds, outs, attentions):
        if a > d:
            continue
        arch = Architecture((d, e), (a,), tokens=tokens)
        row = dict.fromkeys(COLUMNS, "")
        row.update(d=d, d_out=e, a=a, tokens=tokens, status="ok")
        start = time.perf_counter()
        try:
            deg = degree(arch, timeout=timeout, seed=seed, session=session)
            row.update(dimension=deg.dimension, degree=f">={deg.degree}" if deg.lower_bound else deg.degree,
                       degree_method=deg.method, trace_residual=deg.trace_residual or "")
            ed = ed_degree(arch, timeout=timeout, seed=seed, session=session)
            row.update(ed_degree=f">={ed.ed_degree}" if ed.lower_bound else ed.ed_degree, ed_method=ed.method)
        except LightningError as exc:
            row["status"] = f"{type(exc).__name__}: {exc}"[:200]
        row["seconds"] = round(time.perf_counter() - start, 2)
        yield row


def write_table(rows, out: str) -> None:
    os.makedirs(out, exist_ok=True)
    rows = list(rows)
    with open(os.path.join(out, "degrees.csv"), "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(str(r[c]) for c in COLUMNS) + " |" for r in rows]
    atomic_write_text(os.path.join(out, "degrees.md"), "\n".join(lines) + "\n")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Degrees and generic ED degrees of small one-layer networks.")
    parser.add_argument("--out", default="degrees")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per number")
    args = parser.parse_args(argv)

    def shown(rows):
        for row in rows:
            print(", ".join(f"{k}={row[k]}" for k in COLUMNS if row[k] != ""), flush=True)
            yield row

    write_table(shown(degree_rows(timeout=args.timeout)), args.out)


if __name__ == "__main__":
    main()
