"""Generic ED degrees in closed form, from Chern-Mather degrees: an independent check of msolve's counts.

A projective variety X of dimension m is described here by mu = (mu_0, ..., mu_m), mu_k the degree of the
k-dimensional part of its Chern-Mather class. Three facts turn mu into numbers and back (docs/ed_degrees.md):

* the polar degrees: delta_i = sum_{j >= i} (-1)^(m - j) C(j + 1, i + 1) mu_j (Piene; for smooth X the
  Chern class of the tangent bundle), and the generic ED degree is their sum,
  sum_k (-1)^(m + k) (2^(k + 1) - 1) mu_k;
* projective duality reverses the polar degrees: delta_i(X*) = delta_(N - 1 - i)(X) for X in P^N;
* Chern-Mather classes multiply under products, and in the Segre embedding deg [P^a x P^b] = C(a + b, a).

The one-layer networks (d, 1, 1, t >= 2) compute (sum_i x_i^T S x_i)(q . x_j) with S = sym(v k^T) of rank
at most 2, so their neurovariety is the Segre product of {rank S <= 2} in P(Sym^2) with P^(d - 1): for d = 2
the plane P^2, for d = 3 the determinantal cubic, dual to the Veronese surface. The two-neuron quadratic
network x -> P_2 (P_1 x)^2 with one output is {rank S <= 2} itself.
"""

from __future__ import annotations

from math import comb

Degrees = tuple[int, ...]  # mu_0, ..., mu_m


def projective_space(n: int) -> Degrees:
    """P^n: c(T P^n) = (1 + h)^(n + 1), its k-dimensional part C(n + 1, n - k) [P^k]."""
    return tuple(comb(n + 1, n - k) for k in range(n + 1))


def veronese_surface() -> Degrees:
    """v_2(P^2) in P^5: the same Chern class, degrees taken with H = 2h."""
    return tuple(comb(3, 2 - k) * 2**k for k in range(3))


def polar_degrees(mu: Degrees) -> Degrees:
    m = len(mu) - 1
    return tuple(sum((-1) ** (m - j) * comb(j + 1, i + 1) * mu[j] for j in range(i, m + 1)) for i in range(m + 1))


def from_polar_degrees(delta: Degrees) -> Degrees:
    """The inverse of :func:`polar_degrees` (triangular, +-1 on the diagonal)."""
    m = len(delta) - 1
    mu = [0] * (m + 1)
    for i in range(m, -1, -1):
        rest = sum((-1) ** (m - j) * comb(j + 1, i + 1) * mu[j] for j in range(i + 1, m + 1))
        mu[i] = (-1) ** (m - i) * (delta[i] - rest)
    return tuple(mu)


def dual(mu: Degrees, ambient: int) -> Degrees:
    """The dual variety's degrees, X in P^ambient; its dimension: the largest index with a nonzero polar degree."""
    delta = polar_degrees(mu)
    reversed_delta = [delta[ambient - 1 - i] if 0 <= ambient - 1 - i < len(delta) else 0 for i in range(ambient)]
    while reversed_delta and reversed_delta[-1] == 0:
        reversed_delta.pop()
    return from_polar_degrees(tuple(reversed_delta))


def segre_product(mu: Degrees, nu: Degrees) -> Degrees:
    a_max, b_max = len(mu) - 1, len(nu) - 1
    return tuple(
        sum(mu[a] * nu[k - a] * comb(k, a) for a in range(max(0, k - b_max), min(a_max, k) + 1))
        for k in range(a_max + b_max + 1)
    )


def generic_ed_degree(mu: Degrees) -> int:
    """The sum of the polar degrees: the ED degree of the affine cone for a generic quadratic form."""
    m = len(mu) - 1
    return sum((-1) ** (m + k) * (2 ** (k + 1) - 1) * mu[k] for k in range(m + 1))


def rank_two_symmetric(d: int) -> Degrees | None:
    """{S in Sym^2(C^d): rank S <= 2} in P(Sym^2): all of P^2 for d = 2, the determinantal cubic (dual to the
    Veronese surface) for d = 3; None beyond (no closed form here)."""
    if d == 2:
        return projective_space(2)
    if d == 3:
        return dual(veronese_surface(), 5)
    return None


def one_layer_generic_ed(d: int, d_out: int, a: int, tokens: int) -> int | None:
    """The closed form for the one-layer network (d, d_out, a, tokens), or None where there is none here."""
    if d_out != 1 or a != 1 or tokens < 2:
        return None
    y = rank_two_symmetric(d)
    return None if y is None else generic_ed_degree(segre_product(y, projective_space(d - 1)))


def two_neuron_generic_ed(n: int, outputs: int, bias: bool) -> int | None:
    """The closed form for x -> P_2 (P_1 x)^2 with two hidden neurons, or None."""
    if outputs != 1 or bias:
        return None
    y = rank_two_symmetric(n)
    return None if y is None else generic_ed_degree(y)
