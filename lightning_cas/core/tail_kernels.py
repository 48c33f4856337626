"""Exact kernel vectors through a nonlinear polynomial tail: a block's output matrix moved where the rest of
the network cannot tell, to first order.

When every block after block j is a linear, power or mlp block (token-wise polynomials, no attention), the
output at a token is g(y + M u): g the fixed tail; y the stream before block j when the block is residual
(else 0); M = [M_1 .. M_H] the block's output matrices (V or O per head, D, P); u its internal vectors
(Y A, or W_h Y A, per head; (U y)^r for an mlp; y for a linear block). Moving M by δM changes the output
by Dg(y + M u) δM u, a polynomial of degree ≤ D (the tail's degree) in (y, u). It vanishes on all of
S × U (y in the reachable subspace, u in the span its values can take) iff it vanishes at the points of
the principal lattice {β : |β| ≤ D} in coordinates of S × U (a unisolvent set for polynomials of degree
≤ D), so the exact kernel of δM ↦ those values is a set of kernel vectors. Example: after softmax
attention, a power block of degree 2 and a readout of one row make Σ pᵢyᵢ², and the orthogonal group of
diag(p) moves V unseen.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from lightning_cas.core.arithmetic import Rationals
from lightning_cas.core.exact_qq import LOCAL_BUDGET, _identity, _rows, _unit, nullspace, row_basis
from lightning_cas.core.forward import forward
from lightning_cas.core.network import MLP, Attention, Linear, Network, Power
from lightning_cas.core.residual_groups import token_degrees


def _internal(net: Network, j: int, mats, S) -> list[tuple[tuple, list]]:
    """(key of an output matrix, basis rows of the span of the vectors it multiplies), per head."""
    b, ar = net.blocks[j], Rationals()
    if isinstance(b, Attention):
        out = []
        for h, heads in enumerate(mats[j]):
            if b.value is None:
                out.append(((j, h, "v"), S[j]))
            else:
                B = np.array(S[j], dtype=object).reshape(len(S[j]), net.widths[j])
                image = _rows(ar.matmul(B, np.ascontiguousarray(heads["w"].T))) if len(B) else []
                if b.bias:  # O multiplies W Y A + b_w (1^T A)
                    image.append(list(heads["bw"].reshape(-1)))
                out.append(((j, h, "o"), row_basis(image, b.value)))
        return out
    if isinstance(b, MLP):
        return [((j, 0, "d"), _identity(b.hidden))]
    return [((j, 0, "p"), S[j])] if isinstance(b, Linear) else []


def _constant_output(net: Network, j: int, mats):
    """The constant a block adds to its output besides M u (its output bias: b_o, b_d, b_p, or the sum of a
    softmax's value biases, whose attention columns sum to 1), a zero vector without biases; None when the bias
    term is not constant (a lightning head's b_v (1^T A) varies with the tokens: no tail vectors there)."""
    b, ar = net.blocks[j], Rationals()
    e = net.widths[j + 1]
    if not b.bias:
        return ar.zeros((e,))
    letter = b.output_bias()
    if letter is None:
        return None
    total = ar.zeros((e,))
    for heads in mats[j]:  # one b_o, b_d or b_p; a softmax block's b_v per head
        if letter in heads:
            total = ar.add(total, heads[letter].reshape(-1))
    return total


def tail_vectors(net: Network, w, mats, S) -> tuple[list, list[str]]:
    """The kernel vectors of the module docstring at W (flat weights ``w`` in Rationals), and the blocks
    skipped for size."""
    import flint

    P, widths, out, skipped = net.parameters, net.widths, [], []
    where = {(m.block, m.head, m.letter): m for m in net.weight_matrices}
    for j, b in enumerate(net.blocks):
        tail = net.blocks[j + 1 :]
        if (
            not b.output_letters()[0]
            or not tail
            or any(t.mixes_tokens for t in tail)
            or not any(isinstance(t, (Power, MLP)) for t in tail)
        ):
            continue
        if b.residual > 1 or any(k + 1 - t.residual <= j for k, t in enumerate(net.blocks) if k > j and t.residual):
            continue  # a skip from before block j into the tail: the tail is not a function of block j's output
        constant = _constant_output(net, j, mats)
        if constant is None:
            continue
        parts = _internal(net, j, mats, S)
        residual = bool(b.residual)
        d, e = widths[j], widths[j + 1]
        lead = d if residual else 0
        cols = [where[key].cols for key, _ in parts]
        width_in = lead + sum(cols)
        bases = ([S[j]] if residual else []) + [basis for _, basis in parts]
        nvars = sum(len(x) for x in bases)
        degree = max(token_degrees(tail))
        points = math.comb(nvars + degree, degree)
        if points * widths[-1] * e * sum(cols) > LOCAL_BUDGET:
            skipped.append(f"block {j}")
            continue
        first = min((m.offset for m in net.weight_matrices if m.block > j), default=P)
        small = Network(width_in, 1, (Linear(e, bias=True), *tail))  # the bias: the block's constant
        lin = np.empty((e, width_in), dtype=object)
        if residual:  # the stream passes through (e = d)
            lin[:, :d] = np.array(_identity(d), dtype=object).reshape(d, d)
        at = lead
        for key, _ in parts:
            M = mats[key[0]][key[1]][key[2]]
            lin[:, at : at + M.shape[1]] = M
            at += M.shape[1]
        weights = np.concatenate([lin.reshape(-1), np.asarray(constant, dtype=object), w[first:]])
        X = np.empty((points, width_in, 1), dtype=object)
        for n, combo in enumerate(itertools.combinations_with_replacement(range(nvars + 1), degree)):
            beta = [0] * (nvars + 1)
            for c in combo:
                beta[c] += 1
            x, pos, at = [], 0, 0
            for k, basis in enumerate(bases):
                z = beta[pos : pos + len(basis)]
                size = d if (residual and k == 0) else cols[k - (1 if residual else 0)]
                vec = [flint.fmpq(0)] * size
                for coef, row in zip(z, basis):
                    if coef:
                        vec = [a + coef * r for a, r in zip(vec, row)]
                x += vec
                pos += len(basis)
            X[n, :, 0] = x
        _, dY = forward(small, Rationals(), weights, X, tangents=True)  # (points, out, 1, P_small)
        moved = [r * width_in + c for r in range(e) for c in range(lead, width_in)]  # the matrix, not its bias
        rows = [[dY[n, o, 0, k] for k in moved] for n in range(points) for o in range(dY.shape[1])]
        for v in nullspace(rows, len(moved)):
            entries = []
            for idx, x in zip(moved, v):
                if x == 0:
                    continue
                r, c = divmod(idx, width_in)
                c -= lead
                for (key, _), ncol in zip(parts, cols):
                    if c < ncol:
                        m = where[key]
                        entries.append((m.offset + r * m.cols + c, x))
                        break
                    c -= ncol
            out.append(_unit(P, entries))
    return out, skipped
