"""The public verbs. Each takes an Architecture and the same options (method, seed, timeout)."""

from __future__ import annotations

from lightning_cas.core.architecture import Architecture, check_seed, check_timeout
from lightning_cas.errors import InputError
from lightning_cas.results import DimensionResult, VerifyResult
from lightning_cas.core.theory import TheoryReport
from lightning_cas.core.theory import predict as _predict

METHODS = ("auto", "modp", "jacobian", "implicit", "numeric")


def dimension(arch: Architecture, method: str = "auto", seed: int = 0, timeout: float | None = None,
              m2: str | None = None, prime: int | None = None, session=None) -> DimensionResult:
    """Dimension of the neurovariety of ``arch``.

    ``auto`` is ``modp`` for lightning networks (exact rank mod p, fast at any size); ``jacobian`` and ``implicit`` run
    Macaulay2; ``numeric`` is the paper's float protocol, kept as a baseline (and
    the only method for softmax, which is not polynomial).
    """
    if not isinstance(arch, Architecture):
        raise InputError("dimension() needs an Architecture.")
    seed = check_seed(seed)
    timeout = check_timeout(timeout)
    if method == "auto":
        method = "modp" if arch.normalization == "none" else "numeric"
    if method == "modp":
        from lightning_cas.backends.modp import dimension_modp
        return dimension_modp(arch, seed=seed, prime=prime)
    if method == "jacobian":
        from lightning_cas.backends.m2 import dimension_jacobian
        return dimension_jacobian(arch, seed=seed, prime=prime, timeout=timeout, m2=m2, session=session)
    if method == "implicit":
        from lightning_cas.backends.m2 import dimension_implicit
        return dimension_implicit(arch, seed=seed, timeout=timeout, m2=m2, session=session)
    if method == "numeric":
        from lightning_cas.backends.numeric import dimension_numeric
        return dimension_numeric(arch, seed=seed)
    raise InputError(f"method must be one of {', '.join(METHODS)}, got {method!r}.")


def predict(arch: Architecture) -> TheoryReport:
    """Closed-form predictions with their regimes (no computation)."""
    return _predict(arch)


def verify(arch: Architecture, method: str = "auto", seed: int = 0, timeout: float | None = None,
           m2: str | None = None, prime: int | None = None, compare: bool = False) -> VerifyResult:
    """Compute the dimension and compare it with the theory's prediction.

    ``compare=True`` also computes the other normalization (lightning exactly mod p, softmax
    numerically) and explains where the two differ beyond the scaling terms (e.g. token collapse).
    """
    computed = dimension(arch, method=method, seed=seed, timeout=timeout, m2=m2, prime=prime)
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
    details = {}
    if compare:
        from lightning_cas.core.softmax import compare_normalizations

        comparison = compare_normalizations(arch, seed=seed)
        comparison.pop("results", None)  # the full results are recomputable; keep the summary
        details["normalizations"] = comparison
        message += "; lightning vs softmax: " + comparison["explanation"]
    return VerifyResult(arch, computed, pred.value, pred.status, pred.regime, pred.reason, verdict, message,
                        details)
