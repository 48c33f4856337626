"""Benchmark: the paper's softmax experiment (L = 2, t = 3, a = 2, widths delta = 3..10, N = 250)
with the robust softmax protocol, timed against the paper's plain float rank on the lightning
network of the same shape (the float baseline of ``backends.numeric``).

Run alone with ``python -m benchmarks.bench_softmax``; ``make bench`` calls ``run_softmax_bench``.
"""

from __future__ import annotations

import json
import time

from lightning_cas.backends.numeric import PAPER_SAMPLES, dimension_numeric
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.theory import predict_dimension

PAPER_WIDTHS = tuple(range(3, 11))


def run_softmax_bench(widths=PAPER_WIDTHS, seed: int = 0, samples: int = PAPER_SAMPLES) -> list[dict]:
    """One row per delta: softmax dimension, time, gaps, next to the lightning float baseline."""
    rows = []
    for delta in widths:
        soft = Architecture((delta,) * 3, (2, 2), 3, "softmax")
        light = Architecture((delta,) * 3, (2, 2), 3, "none")
        start = time.perf_counter()
        rs = dimension_numeric(soft, seed=seed, samples=samples)
        soft_s = time.perf_counter() - start
        start = time.perf_counter()
        rl = dimension_numeric(light, seed=seed, samples=samples)
        light_s = time.perf_counter() - start
        expected = delta * delta + 8 * delta - 8  # the paper's Figure 3
        rows.append(
            {
                "benchmark": "softmax_paper_sweep",
                "delta": delta,
                "widths": list(soft.widths),
                "attention": list(soft.attention),
                "tokens": soft.tokens,
                "samples": samples,
                "seed": seed,
                "expected_softmax": expected,
                "predicted_softmax": predict_dimension(soft).value,
                "softmax_dimension": rs.dimension,
                "softmax_seconds": round(soft_s, 3),
                "softmax_repetitions": sum(1 for r in rs.runs if r["precision"] == "float64"),
                "softmax_min_gap_decades": min(r["gap_decades"] for r in rs.runs),
                "softmax_high_precision": any(r["precision"] != "float64" for r in rs.runs),
                "softmax_consistent": rs.consistent,
                "lightning_float_dimension": rl.dimension,
                "lightning_float_seconds": round(light_s, 3),
                "lightning_predicted": predict_dimension(light).value,
                "agree": rs.dimension == expected,
            }
        )
    return rows


if __name__ == "__main__":
    for row in run_softmax_bench():
        print(json.dumps(row))
