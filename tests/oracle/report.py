"""The oracle's table: draws per family and what became of them, and every wrong certificate in full.

    PYTHONPATH=$PWD python -m tests.oracle.report --draws 300 [--seed 0]

The draws are split evenly over the families (seeded, the same every run). Outcomes as in
tests/oracle/check.py: certified, open, refused, inconclusive, wrong, error.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

from tests.oracle.check import OUTCOMES, check
from tests.oracle.networks import FAMILIES, draw_case


def run(draws: int, seed: int):
    rng = random.Random(seed)
    counts: dict[str, Counter] = {family: Counter() for family in FAMILIES}
    bad, oracle_seconds, api_seconds, slowest = [], [], [], 0.0
    sides = Counter()  # where the oracle's rank sits in an open certificate
    for i in range(draws):
        family = FAMILIES[i % len(FAMILIES)]
        outcome = check(draw_case(rng.choice, family))
        counts[family][outcome.kind] += 1
        api_seconds.append(outcome.seconds)
        if outcome.oracle is not None:
            oracle_seconds.append(outcome.oracle.seconds)
            slowest = max(slowest, outcome.oracle.seconds)
        if outcome.kind in ("wrong", "error"):
            bad.append(outcome)
        if outcome.kind == "open":
            rank = outcome.oracle.rank
            sides[
                "at the lower bound"
                if rank == outcome.lower
                else "at the upper bound"
                if rank == outcome.upper
                else "strictly between"
            ] += 1
    return counts, bad, oracle_seconds, api_seconds, slowest, sides


def table(counts: dict[str, Counter]) -> str:
    head = f"{'family':<10}" + "".join(f"{k:>13}" for k in OUTCOMES) + f"{'draws':>8}"
    lines = [head, "-" * len(head)]
    total = Counter()
    for family, c in counts.items():
        total.update(c)
        lines.append(f"{family:<10}" + "".join(f"{c[k]:>13}" for k in OUTCOMES) + f"{sum(c.values()):>8}")
    lines.append(f"{'all':<10}" + "".join(f"{total[k]:>13}" for k in OUTCOMES) + f"{sum(total.values()):>8}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="the table only, not every wrong case")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    counts, bad, oracle_s, api_s, slowest, sides = run(args.draws, args.seed)
    print(table(counts))
    print(
        f"\n{args.draws} draws in {time.perf_counter() - start:.1f} s; per draw the oracle "
        f"{sum(oracle_s) / max(len(oracle_s), 1):.3f} s on average ({slowest:.2f} s at most), the API "
        f"{sum(api_s) / max(len(api_s), 1):.3f} s"
    )
    if sides:
        print("open certificates, the oracle's rank: " + ", ".join(f"{n} {where}" for where, n in sides.items()))
    if not args.quiet:
        for outcome in bad:
            print("\n" + outcome.report())
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
