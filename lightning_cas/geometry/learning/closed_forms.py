"""The closed forms of the learning coefficient at w*: linear stacks (Aoyagi) and one attention layer where
V ⊗ KᵀQ = 0 (a product of disjoint groups), with the exact rational linear algebra they need."""

from __future__ import annotations

from fractions import Fraction

from lightning_cas.core import learning
from lightning_cas.core.learning import Bound
from lightning_cas.core.network import Linear, Network
from lightning_cas.results.learning import LearningBound

PRODUCT = "product of disjoint factors"


def closed_forms(net: Network, values) -> list[LearningBound]:
    stack = _linear_stack(net)
    if stack is not None:
        return _linear_bounds(net, values, stack)
    paper = net.paper
    if (
        paper is not None
        and paper.depth == 1
        and not paper.multihead
        and paper.tokens >= 2
        and paper.normalization == "none"
    ):
        return _one_layer_bounds(paper, values)
    return []


def _linear_stack(net: Network) -> list[int] | None:
    """The widths of a stack of bias-free linear blocks, else None."""
    if not all(isinstance(b, Linear) and not b.bias and not b.residual for b in net.blocks):
        return None
    return list(net.widths)


def _matrices(net: Network, values) -> list[list[list[Fraction]]]:
    out = []
    for m in net.weight_matrices:
        flat = values[m.offset : m.stop]
        out.append([list(flat[r * m.cols : (r + 1) * m.cols]) for r in range(m.rows)])
    return out


def _rank(rows) -> int:
    import flint

    if not rows or not rows[0]:
        return 0
    return flint.fmpq_mat(
        len(rows), len(rows[0]), [flint.fmpq(v.numerator, v.denominator) for r in rows for v in r]
    ).rank()


def _product(mats):
    out = mats[0]
    for M in mats[1:]:
        out = [
            [sum((M[i][k] * out[k][j] for k in range(len(out))), Fraction(0)) for j in range(len(out[0]))]
            for i in range(len(M))
        ]
    return out


def _linear_bounds(net: Network, values, widths: list[int]) -> list[LearningBound]:
    """Aoyagi's value at the true map's rank r: the global coefficient over the fiber, so a lower bound of the local
    one everywhere, and equal to it where every factor has rank r. Those points form one orbit of the hidden
    GL's (each hidden space splits as the image of the factor before it plus the kernel of the factor after it),
    and every point of the fiber flows inside its orbit to one of them (shrink the part of each hidden space
    that the next factor kills), so by semicontinuity they carry the least local value: Aoyagi's. A square
    factor invertible at w* is merged into its neighbour first (_absorb), which can bring a point there."""
    mats, short, merged = _absorb(_matrices(net, values), list(widths))
    r = _rank(_product(mats))
    lam, m = learning.deep_linear(short, r)
    where = f"Aoyagi's formula for linear stacks, widths {'-'.join(map(str, short))}, true rank {r}"
    if merged:
        where += f" ({merged} invertible square factor{'s' if merged > 1 else ''} merged into a neighbour)"
    if all(_rank(M) == r for M in mats):
        why = f"{where}, at a point where every factor has rank {r} (the least-rank points carry the global value)"
        return [LearningBound.of("equal", Bound(lam, why, "Aoyagi 2024, least-rank point"), m)]
    why = f"{where}: the coefficient over the whole fiber, at most the local one"
    return [LearningBound.of("lower", Bound(lam, why, "Aoyagi 2024"))]


def _absorb(mats, widths: list[int]):
    """Merge every square factor that is invertible at w* into its neighbour: (W_i, W_(i+1)) ↦ (W_i, W_(i+1) W_i)
    is an analytic change of weights near w* after which K does not depend on W_i, so λ and m are those of the
    stack without that width at the merged point. Returns the factors, the widths and how many were merged."""
    merged = 0
    while len(mats) > 1:
        i = next((i for i, M in enumerate(mats) if len(M) == len(M[0]) and _rank(M) == len(M)), None)
        if i is None:
            break
        lo = i if i + 1 < len(mats) else i - 1
        mats = mats[:lo] + [_product(mats[lo : lo + 2])] + mats[lo + 2 :]
        widths = widths[: lo + 1] + widths[lo + 2 :]
        merged += 1
    return mats, widths, merged


def _one_layer_bounds(paper, values) -> list[LearningBound]:
    """One lightning layer f = V X (Xᵀ KᵀQ X), t >= 2: the coefficients are linear and injective on the rank-one
    tensors V ⊗ A (A = KᵀQ; docs/learning.md), so where V* ⊗ A* = 0, K ≍ |V|²·|KᵀQ|², a product of disjoint
    groups of weights: λ = min(λ_V, λ_A), the orders adding when they are equal."""
    ((a, d, e),) = paper.layer_shapes
    Q, K, V, A = _one_layer(paper, values)
    v_zero, a_zero = not any(v for row in V for v in row), not any(v for row in A for v in row)
    if not (v_zero or a_zero):
        return []
    # each factor: (value, order, exact, why); a factor that does not vanish at w* is a unit and drops out
    parts: list[tuple[Fraction, int, bool, str]] = []
    if v_zero:
        parts.append((Fraction(d * e, 2), 1, True, f"V = 0: |V|^2 in {d * e} weights, λ_V = {d * e}/2"))
    if a_zero:
        zero = Fraction(0)
        if all(v == zero for row in Q + K for v in row):
            lam, m = learning.reduced_rank_regression(d, a, d, 0)
            parts.append(
                (
                    lam,
                    m,
                    True,
                    f"K = Q = 0: |KᵀQ|^2 is reduced-rank regression ({d} -> {a} -> {d}, rank 0), "
                    f"λ_A = {lam} (Aoyagi-Watanabe)",
                )
            )
        elif _rank(K) == a or _rank(Q) == a:
            other = "Q" if _rank(K) == a else "K"
            parts.append(
                (
                    Fraction(a * d, 2),
                    1,
                    True,
                    f"KᵀQ = 0 with {'K' if other == 'Q' else 'Q'} of full rank "
                    f"{a}: |KᵀQ|^2 is comparable to |{other}|^2 in {a * d} weights, λ_A = {a * d}/2",
                )
            )
        else:
            lam, _ = learning.reduced_rank_regression(d, a, d, 0)
            parts.append(
                (
                    lam,
                    0,
                    False,
                    f"KᵀQ = 0: λ_A is at least {lam}, the coefficient of |KᵀQ|^2 over its "
                    "whole zero set (Aoyagi-Watanabe at 0)",
                )
            )
    why = "; ".join(p[3] for p in parts)
    where = "one attention layer where V ⊗ KᵀQ = 0 (t >= 2), K ≍ |V|^2 |KᵀQ|^2"
    lam = min(p[0] for p in parts)
    if all(p[2] for p in parts):
        m = sum(p[1] for p in parts if p[0] == lam)
        return [LearningBound.of("equal", Bound(lam, f"{where}: {why}; λ = {lam}, the least", PRODUCT), m)]
    out = [LearningBound.of("lower", Bound(lam, f"{where}: {why}; λ is the least of the factors'", PRODUCT))]
    exact = [p for p in parts if p[2]]
    if exact:
        out.append(
            LearningBound.of("upper", Bound(exact[0][0], f"{where}: λ = min(λ_V, λ_A) <= λ_V = {exact[0][0]}", PRODUCT))
        )
    return out


def _one_layer(paper, values):
    """Q, K (a x d), V (e x d) of one head in the weight order, and A = KᵀQ (d x d), as rows of rationals."""
    ((a, d, e),) = paper.layer_shapes
    Q, K, V = (
        [values[at + i * d : at + (i + 1) * d] for i in range(rows)]
        for at, rows in ((0, a), (a * d, a), (2 * a * d, e))
    )
    return Q, K, V, _product([Q, [list(col) for col in zip(*K)]])


def one_layer_stratum(paper, values) -> str:
    ((a, d, e),) = paper.layer_shapes
    _, _, V, A = _one_layer(paper, values)
    rank_v, rank_a = _rank(V), _rank(A)
    words = f"rank V = {rank_v}, rank KᵀQ = {rank_a} (generic: {min(e, d)} and {min(a, d)})"
    if rank_v == 0 or rank_a == 0:
        return words + ": the vertex (f = 0)"
    if rank_a < a:
        words += "; rank A < a"
    if rank_v == rank_a == 1:
        together = _rank(V + [list(col) for col in zip(*A)])  # the row space of V and the column space of A
        words += "; rank V = rank A = 1" + (", row space of V = column space of A" if together == 1 else "")
    return words
