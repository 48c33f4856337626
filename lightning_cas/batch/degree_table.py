"""A table of degrees and generic ED degrees over a grid of one-layer architectures (``lightning-cas degrees``,
``make degrees``).

Each row says which method gave each number and how long it took; a case that fails or runs out of
time says so in its row instead of stopping the table.
"""

from __future__ import annotations

import itertools
import os
import time

from lightning_cas.batch.tables import to_csv
from lightning_cas.core.network import Network
from lightning_cas.errors import LightningError
from lightning_cas.geometry.degree.m2 import degree, ed_degree
from lightning_cas.system.files import atomic_write_text

COLUMNS = (
    "d",
    "d_out",
    "a",
    "tokens",
    "dimension",
    "degree",
    "degree_method",
    "trace_residual",
    "ed_degree",
    "ed_method",
    "seconds",
    "status",
)


def degree_rows(
    ds=(2, 3), outs=(1, 2), attentions=(1, 2), tokens=2, timeout: float = 120.0, seed: int = 0, session=None
):
    """One row per (d, d', a): the degree (auto) and the generic ED degree (auto), each bounded by ``timeout``."""
    for d, e, a in itertools.product(ds, outs, attentions):
        if a > d:
            continue
        arch = Network.from_paper((d, e), (a,), tokens=tokens)
        row = dict.fromkeys(COLUMNS, "")
        row.update(d=d, d_out=e, a=a, tokens=tokens, status="ok")
        start = time.perf_counter()
        try:
            deg = degree(arch, timeout=timeout, seed=seed, session=session)
            row.update(
                dimension=deg.dimension,
                degree=f">={deg.degree}" if deg.lower_bound else deg.degree,
                degree_method=deg.method,
                trace_residual=f"{deg.trace_residual:.2e}" if deg.trace_residual else "",
            )
            ed = ed_degree(arch, timeout=timeout, seed=seed, session=session)
            row.update(ed_degree=f">={ed.ed_degree}" if ed.lower_bound else ed.ed_degree, ed_method=ed.method)
        except LightningError as exc:
            row["status"] = f"{type(exc).__name__}: {exc}"[:200]
        row["seconds"] = round(time.perf_counter() - start, 2)
        yield row


def write_table(rows, out: str, progress=None) -> list[dict]:
    """degrees.csv (the one CSV writer) and degrees.md in ``out``, each row passed to ``progress`` as it comes."""
    os.makedirs(out, exist_ok=True)
    done = []
    for row in rows:
        done.append(row)
        if progress is not None:
            progress(row)
    atomic_write_text(os.path.join(out, "degrees.csv"), to_csv(done, COLUMNS))
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(str(r[c]) for c in COLUMNS) + " |" for r in done]
    atomic_write_text(os.path.join(out, "degrees.md"), "\n".join(lines) + "\n")
    return done
