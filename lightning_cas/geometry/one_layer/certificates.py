"""The exact test behind a boundary certificate: no real preimage along a witness curve.

The certificates themselves (why a real verdict at a point holds) are records of a result, in
``results.certificates``.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass

if typing.TYPE_CHECKING:
    import sympy


# ---------------------------------------------------------------- the exact test of a witness curve


@dataclass(frozen=True)
class WitnessBound:
    """No point q(s), 0 < s <= s0, of a witness curve has a real preimage (the eliminant has this degree)."""

    s0: str
    eliminant_degree: int


def witness_bound(eliminant: str | sympy.Expr | None, variable: str = "t") -> WitnessBound | None:
    """Exact test that q(s) has no real preimage for all 0 < s ≤ s₀; the bound, or None.

    ``eliminant`` is f(s, t), the fiber of q(s) projected to a line (None: no eliminant). A real
    preimage of q(s) gives a real root t of f(s, ·) (``variable`` "t"), or a root u = t² ≥ 0 of the
    eliminant written in u (``variable`` "t^2", the text still says t). These roots can appear only
    where the leading coefficient or the discriminant vanishes (or, for u, where a root crosses 0); if
    none of that happens in (0, s₀] and there is no such root at s₀, no s in (0, s₀] has one.
    """
    import sympy

    from lightning_cas.core.names import parse_polynomial

    if eliminant is None:
        return None
    s, t = sympy.Symbol("s"), sympy.Symbol("t")
    expr = parse_polynomial(eliminant) if isinstance(eliminant, str) else eliminant
    f = sympy.Poly(expr, t)
    if f.degree() < 1:
        return None
    squared = variable.strip() == "t^2"
    # cheap necessary test first: roots at a small s (most kernel directions fail here)
    probe = sympy.Poly(f.as_expr().subs(s, sympy.Rational(1, 10**6)), t)
    if probe.degree() == f.degree() and (probe.count_roots(0, None) if squared else probe.count_roots()):
        return None
    bad = f.LC() * sympy.discriminant(f.as_expr(), t)
    if squared:
        bad *= f.as_expr().subs(t, 0)
    bad = sympy.Poly(sympy.expand(bad), s)
    if bad.is_zero:
        return None
    bad = bad.terms_gcd()[1].clear_denoms()[1]  # s = 0 is p itself; only roots in (0, s0] matter
    s0 = _root_free_start(bad)
    at_s0 = sympy.Poly(f.as_expr().subs(s, s0), t)
    if at_s0.count_roots(0, None) if squared else at_s0.count_roots():
        return None
    return WitnessBound(s0=str(s0), eliminant_degree=f.degree() * (2 if squared else 1))


def _root_free_start(bad) -> sympy.Rational:
    """The largest 1/2^k (k ≥ 0) below every positive root of ``bad`` (integer coefficients, bad(0) ≠ 0).

    Cauchy's bound on the reciprocal polynomial: every root has |s| > |b₀| / (|b₀| + max |b_i|), so no
    Sturm sequence of the (high-degree) polynomial is needed; when 1 is already below it, s₀ = 1.
    """
    import sympy

    coeffs = [abs(int(c)) for c in reversed(bad.all_coeffs())]
    b0, rest = coeffs[0], max(coeffs[1:], default=0)
    k = 0
    while (b0 << k) < b0 + rest:
        k += 1
    return sympy.Rational(1, 2**k)
