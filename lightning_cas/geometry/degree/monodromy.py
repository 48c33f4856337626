"""The exact count monodromy stops at: before a monodromy run, msolve's count of the same critical points
(``ed_msolve``), within a short budget, when the msolve binary is at hand.

Why: monodromy's count is found-and-stable, a lower bound that does stop short (7 or 8 of the 10 critical
points of the Segre cone). With msolve's number of critical points on the gauge slice as MonodromySolver's
``TargetSolutionCount`` it stops as soon as it has them all, and the result says whether it reached the exact
count; only where no exact count is available does it stay a lower bound.
"""

from __future__ import annotations

from lightning_cas.errors import LightningError
from lightning_cas.results.degrees import EDDegreeResult

EXACT_FIRST_SECONDS = 60.0  # msolve's share before monodromy (half the time limit when that is shorter)


def exact_count(arch, metric: str, values, source, seed: int, timeout: float | None, msolve):
    """(msolve's EDDegreeResult or None, a note saying why there is none)."""
    from lightning_cas.geometry.degree.msolve import MAX_WEIGHTS, msolve_ed
    from lightning_cas.msolve.runner import find_msolve

    if arch.parameters > MAX_WEIGHTS:
        return None, f"no exact count to stop at: msolve expands at most {MAX_WEIGHTS} weights"
    try:
        find_msolve(msolve)
    except LightningError:
        return None, "no exact count to stop at: msolve was not found (--msolve PATH, or the msolve extra)"
    budget = EXACT_FIRST_SECONDS if timeout is None else min(EXACT_FIRST_SECONDS, timeout / 2)
    try:
        res = msolve_ed(
            arch,
            metric=metric,
            inputs=values if metric == "data" else None,
            source=source,
            seed=seed,
            timeout=budget,
            msolve=msolve,
        )
    except LightningError as exc:
        return None, f"no exact count to stop at: msolve did not finish in {budget:g} s ({type(exc).__name__})"
    if res.ed_degree is None:
        return None, "no exact count to stop at: msolve's two primes gave no count"
    return res, ""


def reconcile(value: int | None, exact: EDDegreeResult | None, why: str) -> tuple[int | None, bool, str]:
    """(the ED degree to report, whether it is a lower bound only, the note) from monodromy's count and the
    exact one."""
    if exact is None:
        return value, True, why
    primes = " and ".join(map(str, exact.primes))
    if value == exact.ed_degree:
        return value, False, f"monodromy reached the exact count {value} (msolve mod {primes}) and stopped there"
    if value is not None and value > exact.ed_degree:
        return (
            value,
            True,
            (
                f"the methods DISAGREE: monodromy found {value} distinct critical images, msolve counts "
                f"{exact.ed_degree} mod {primes}; monodromy's count is kept as a lower bound"
            ),
        )
    return (
        exact.ed_degree,
        False,
        (f"the count is msolve's, mod {primes}: monodromy found only {value} of its {exact.ed_degree} critical images"),
    )
