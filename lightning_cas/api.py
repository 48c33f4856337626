"""The public dimension verbs and the Python sweep: architecture first, keyword-only options.

Every verb validates all its options through ``lightning_cas.options.resolve`` before any work
and bounds the whole call by ``timeout`` (``lightning_cas.deadline``).
"""

from __future__ import annotations

import os

from lightning_cas.core.architecture import Architecture
from lightning_cas.core.theory import TheoryReport
from lightning_cas.core.theory import predict as _predict
from lightning_cas.deadline import m2_limit
from lightning_cas.errors import InputError
from lightning_cas.options import DIMENSION_METHODS, MAX_FAILURE_BOUND, check_architecture, resolve
from lightning_cas.results import DimensionResult, VerifyResult

METHODS = DIMENSION_METHODS


def dimension(arch: Architecture, *, method: str = "auto", seed: int = 0, timeout: float | None = None,
              m2: str | None = None, prime: int | None = None, session=None) -> DimensionResult:
    """Dimension of the neurovariety of ``arch``.

    ``auto`` is ``modp`` for lightning networks (exact rank mod p, fast at any size); ``jacobian`` and ``implicit`` run
    Macaulay2; ``numeric`` is the paper's float protocol, kept as a baseline (and
    the only method for softmax, which is not polynomial).
    """
    opts = resolve("dimension", arch, method=method, seed=seed, timeout=timeout, m2=m2, prime=prime,
                   session=session)
    with opts.deadline() as deadline:
        return _dimension(arch, opts, deadline)


def _dimension(arch: Architecture, opts, deadline) -> DimensionResult:
    result = _compute_dimension(arch, opts, deadline)
    bound = result.failure_bound
    if opts.prime is not None and bound is not None and bound >= MAX_FAILURE_BOUND:
        # the up-front check uses the largest rank; the backend's stated bound also counts what it sampled
        raise InputError(f"the prime {opts.prime} is too small for the {result.method} method on this architecture: "
                         f"the stated failure bound {bound:.3g} is not below {MAX_FAILURE_BOUND:g}; use a larger prime.")
    return result


def _compute_dimension(arch: Architecture, opts, deadline) -> DimensionResult:
    method = opts.method
    if method == "auto":
        method = "modp" if arch.normalization == "none" else "numeric"
    if method == "modp":
        from lightning_cas.backends.modp import dimension_modp
        return dimension_modp(arch, seed=opts.seed, prime=opts.prime)
    if method == "jacobian":
        from lightning_cas.backends.m2 import dimension_jacobian
        with m2_limit(deadline):
            return dimension_jacobian(arch, seed=opts.seed, prime=opts.prime, timeout=deadline.left(), m2=opts.m2,
                                      session=opts.session)
    if method == "implicit":
        from lightning_cas.backends.m2 import dimension_implicit
        with m2_limit(deadline):
            return dimension_implicit(arch, seed=opts.seed, timeout=deadline.left(), m2=opts.m2,
                                      session=opts.session)
    from lightning_cas.backends.numeric import dimension_numeric
    return dimension_numeric(arch, seed=opts.seed)


def predict(arch: Architecture) -> TheoryReport:
    """Closed-form predictions with their regimes (no computation)."""
    return _predict(check_architecture(arch, "predict"))


def verify(arch: Architecture, *, method: str = "auto", seed: int = 0, timeout: float | None = None,
           m2: str | None = None, prime: int | None = None, session=None, compare: bool = False) -> VerifyResult:
    """Compute the dimension and compare it with the theory's prediction.

    ``compare=True`` also computes the other normalization (lightning exactly mod p, softmax
    numerically) and explains where the two differ beyond the scaling terms (e.g. token collapse).
    """
    opts = resolve("verify", arch, method=method, seed=seed, timeout=timeout, m2=m2, prime=prime, session=session)
    if not isinstance(compare, bool):
        raise InputError(f"compare must be True or False, got {compare!r}.")
    with opts.deadline() as deadline:
        computed = _dimension(arch, opts, deadline)
        details = {}
        if compare:
            from lightning_cas.core.softmax import compare_normalizations

            comparison = compare_normalizations(arch, seed=opts.seed)
            comparison.pop("results", None)  # the full results are recomputable; keep the summary
            details["normalizations"] = comparison
    pred = _predict(arch).dimension
    if pred.value is None:
        verdict = "no prediction"
        message = f"computed {computed.dimension}; no closed form applies: {pred.reason}"
    elif pred.refined is not None and computed.dimension > pred.refined:
        verdict = "disagree"  # the head-mixing bound is proved too
        message = (f"DISCREPANCY: computed {computed.dimension} ({computed.method}, {computed.certainty}) is above "
                   f"the head-mixing upper bound {pred.refined} (expected {pred.value}, {pred.formula})")
    elif pred.kind == "upper bound" and computed.dimension < pred.value:
        # below an expected dimension that is only a bound: a secant-type defect, a finding, not an error
        verdict = "defect"
        message = (f"computed {computed.dimension} < expected {pred.value} ({pred.formula}; upper bound): "
                   f"defect {pred.value - computed.dimension}")
        if pred.refined is not None:
            message += ("; explained by head mixing (bound " + str(pred.refined) + ")"
                        if pred.refined == computed.dimension else
                        f"; below the head-mixing bound {pred.refined} too: not explained by head mixing")
    elif pred.value == computed.dimension:
        verdict = "agree"
        bound = "; upper bound attained" if pred.kind == "upper bound" else ""
        message = f"computed {computed.dimension} = predicted {pred.value} ({pred.formula}; {pred.status}{bound})"
    else:
        verdict = "disagree"
        what = "upper bound" if pred.kind == "upper bound" else "predicted"
        message = (f"DISCREPANCY: computed {computed.dimension} ({computed.method}, {computed.certainty}) but "
                   f"{what} {pred.value} ({pred.formula}; regime: {pred.regime}; {pred.status})")
    if not computed.consistent:
        message += "; WARNING: " + "; ".join(computed.notes)
    if compare:
        message += "; lightning vs softmax: " + details["normalizations"]["explanation"]
    return VerifyResult(arch, computed, pred.value, pred.status, pred.regime, pred.reason, verdict, message,
                        details, method=computed.method, certainty=computed.certainty, seed=computed.seed,
                        elapsed_s=computed.elapsed_s, m2_version=computed.m2_version,
                        method_detail="the dimension by " + computed.method + ", compared with the closed forms")


def sweep(spec, *, out: str | os.PathLike, executor: str = "local", jobs: int = 1, timeout: float | None = None,
          m2: str | None = None, force: bool = False, retry_failed: bool = False, only=None,
          scheduler: str | None = None, aggregate: bool = True):
    """Run a sweep (a spec file path, or a parsed ``Sweep``) into the results directory ``out``.

    Delegates to ``lightning_cas.batch``; ``timeout`` overrides every job's own limit. Returns the
    ``SweepSummary`` (counts of ok / timeout / error and agreement with the theory).
    """
    from lightning_cas.batch.spec import Sweep, load_spec
    from lightning_cas.batch.sweep import run_sweep

    opts = resolve("sweep", None, timeout=timeout, m2=m2, jobs=jobs)
    if isinstance(spec, (str, os.PathLike)):
        name = os.fspath(spec)
        spec = load_spec(spec)
    elif isinstance(spec, Sweep):
        name = "<spec>"
    else:
        raise InputError(f"sweep() needs a spec file path or a Sweep, got {type(spec).__name__}.")
    if not isinstance(out, (str, os.PathLike)) or not os.fspath(out):
        raise InputError(f"out must be a directory path, got {out!r}.")
    if executor not in ("local", "dask"):
        raise InputError(f"executor must be local or dask, got {executor!r}.")
    return run_sweep(spec, out, executor=executor, jobs=opts.jobs, scheduler=scheduler, force=bool(force),
                           retry_failed=bool(retry_failed), timeout=opts.timeout, only=only,
                           aggregate=bool(aggregate), m2=opts.m2, spec_name=name)
