"""Test helpers: the forward definition on a chosen arithmetic, with the arithmetic picked from the
arrays the way the tests write them (object arrays of Python numbers are exact); polling for what
another process or thread does."""

from __future__ import annotations

import os
import time

import numpy as np

from lightning_cas.core import forward
from lightning_cas.core.arithmetic import Arithmetic, Float64, IntegersModP

CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")  # the hypothesis profile and example counts


def examples(n: int) -> int:
    """Hypothesis examples for a costly property test: ``n`` under CI (derandomized, the same every run), a
    quarter of it in a local run, which draws new examples each time and so covers more across runs."""
    return n if CI else max(10, n // 4)


class Objects(Arithmetic):
    """Exact arithmetic on numpy object arrays of Python numbers (int, Fraction, sympy): a test oracle."""

    name = "python objects"

    def array(self, values):
        return np.asarray(values, dtype=object)

    def zeros(self, shape):
        out = np.empty(shape, dtype=object)
        out.fill(0)
        return out


def Field(prime: int | None = None) -> Arithmetic:
    """GF(p) on int64, or float64 without a prime."""
    return Float64() if prime is None else IntegersModP(prime)


def _arith(w, X, field):
    if field is not None:
        return field
    exact = all(np.asarray(v).dtype == object or np.asarray(v).dtype.kind in "iu" for v in (w, X))
    return Objects() if exact else Float64()


def jacobian(arch, w, X, field=None):
    ar = _arith(w, X, field)
    return forward.jacobian(arch, ar, ar.array(w), ar.array(X))


def evaluate(arch, w, X, field=None):
    ar = _arith(w, X, field)
    return forward.evaluate(arch, ar, ar.array(w), ar.array(X))


def wait_until(predicate, seconds: float = 10.0, step: float = 0.05) -> bool:
    """True as soon as ``predicate()`` holds, False when it has not within ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return False
