"""The oracle's rank: the Jacobian of W -> (phi_W(X_n))_n by central differences of the oracle's own
forward pass at 200 digits, ranked by mpmath's singular values with a gap.

Central differences with step h = 1e-66 have a truncation error of order h^2 = 1e-132 and a rounding
error of order 10^-200 / h = 1e-134 (times the size of the derivatives, which small networks keep
within a few decades of 1). By Weyl's inequality every singular value moves by at most that error, so
a singular value above 1e-60 of the largest (or of 1, if that is larger) is real: their count is a
**lower bound** on the rank that any certificate's upper bound must respect. That count is the rank
only if no real singular value hides below the floor: a singular value between 1e-120 and 1e-60 leaves
it undecided, and so does a saturated point (a softmax weight, 1 - tanh^2 or GELU's Phi below 1e-50:
such factors make real singular values as small as exp(-10^4), which no fixed precision sees). A ReLU
argument within 1e-60 of 0 sits on or next to a kink, where the step can cross it: nothing is decided.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from mpmath import mp

from lightning_cas.core.network import Network
from tests.oracle.forward import Watch, forward, number

DIGITS = 200
STEP = "1e-66"
KEEP = "1e-60"  # singular values above this (relative to the largest) are real
NOISE = "1e-120"  # below this they are zero unless the point is saturated; between the two: undecided
SATURATED = "1e-50"
KINK = "1e-60"


@dataclass(frozen=True)
class OracleRank:
    """The oracle's verdict on one draw. ``lower``: the singular values that are certainly real (None at a
    kink). ``rank``: the rank when ``status`` is "ok"; None when it is "undecided" (a singular value in the
    band between noise and real), "saturated" (real singular values could hide below the noise) or "kink"."""

    lower: int | None
    rank: int | None
    status: str
    ratios: tuple[float, ...]  # singular values / the largest, descending (floats, for reports)
    seconds: float

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _outputs(net: Network, weights, inputs, watch=None) -> list:
    """All output entries on all inputs, in the order (input, output row, token)."""
    values = []
    for X in inputs:
        Y = forward(net, weights, X, watch)
        values += [Y[r, c] for r in range(Y.rows) for c in range(Y.cols)]
    return values


def jacobian(net: Network, weights, inputs):
    """The Jacobian (rows (input, output row, token), one column per weight) at the current precision, and
    what the forward pass saw at the point itself (kinks, saturation)."""
    w = [number(v) for v in weights]
    h = mp.mpf(STEP)
    watch = Watch()
    rows = len(_outputs(net, w, inputs, watch))
    J = mp.matrix(rows, len(w))
    for k in range(len(w)):
        up, down = list(w), list(w)
        up[k] += h
        down[k] -= h
        for r, (a, b) in enumerate(zip(_outputs(net, up, inputs), _outputs(net, down, inputs))):
            J[r, k] = (a - b) / (2 * h)
    return J, watch


def singular_values(J) -> list:
    """Descending singular values of J (mpmath's SVD of the taller orientation)."""
    M = J if J.rows >= J.cols else J.T
    s = mp.svd_r(M, compute_uv=False)
    return sorted((abs(s[i]) for i in range(len(s))), reverse=True)


def oracle_rank(net: Network, weights, inputs) -> OracleRank:
    """The rank of the differential at ``weights`` on the token matrices ``inputs`` (each d_0 x t; exact
    numbers: ints, Fractions, dyadic floats), decided with a gap or declared undecided."""
    start = time.perf_counter()
    with mp.workdps(DIGITS):
        J, watch = jacobian(net, weights, inputs)
        s = singular_values(J)
        top = s[0] if s else mp.zero
        ratios = tuple(float(x / top) if top else 0.0 for x in s)
        ref = max(top, mp.one)  # the noise is relative to the outputs' size, not to a tiny largest value
        real = sum(1 for x in s if x > mp.mpf(KEEP) * ref)
        if watch.kink < mp.mpf(KINK):
            lower, rank, status = None, None, "kink"
        elif any(mp.mpf(NOISE) * ref <= x <= mp.mpf(KEEP) * ref for x in s):
            lower, rank, status = real, None, "undecided"
        elif watch.saturation < mp.mpf(SATURATED) and real < len(s):
            lower, rank, status = real, None, "saturated"
        else:
            lower, rank, status = real, real, "ok"
    return OracleRank(lower, rank, status, ratios, time.perf_counter() - start)
