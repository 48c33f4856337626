"""Decision-boundary ED degrees for `make bench`: both methods (exact mod p, homotopy) per case, the time,
and how far each reaches (the size guard refuses what the homotopy would not finish)."""

from __future__ import annotations

import time

from lightning_cas.core.architecture import Architecture
from lightning_cas.errors import LightningError
from lightning_cas.geometry.decision import boundary_ed

# (d, d', a, t); (2,2,2,2) is the ED-degree-15 case the speed target names (under 30 s)
CASES = [(2, 1, 1, 2), (2, 1, 2, 2), (2, 2, 1, 2), (2, 2, 2, 2), (3, 1, 1, 2), (2, 2, 2, 3)]
TARGET = (2, 2, 2, 2)


def run_decision_rows(timeout: float = 600, cases=CASES) -> list[dict]:
    rows = []
    for d, e, a, t in cases:
        row = {"bench": "decision-ed", "d": d, "d_out": e, "a": a, "tokens": t}
        start = time.perf_counter()
        try:
            res = boundary_ed(Architecture((d, e), (a,), t), seed=0, timeout=timeout)
            row.update(
                status="ok",
                ed_exact=res.ed_degree_exact,
                ed_numeric=list(res.ed_degree_numeric),
                agree=res.agree,
                degree=res.degree,
                variables=res.variables,
            )
        except LightningError as exc:
            row.update(status="error", error=str(exc))
        row["elapsed_s"] = round(time.perf_counter() - start, 3)
        rows.append(row)
    return rows


def bench_decision_target() -> dict:
    """The speed target: a decision-boundary ED degree of 15 in under 30 s."""
    row = run_decision_rows(cases=[TARGET])[0]
    row["target_s"] = 30
    row["met"] = row.get("status") == "ok" and row.get("ed_exact") == 15 and row["elapsed_s"] < 30
    return row


if __name__ == "__main__":
    print(bench_decision_target())
