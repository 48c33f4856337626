"""Kernel vectors proved before they bound a rank from above.

A rank at W is certified from two sides: a nonzero minor bounds it below, and k independent vectors in the
kernel of the differential bound it above by P - k. The mechanisms that offer such vectors (the named group's
tangents, bottlenecks, invisible directions, block-local and tail kernels in ``core.local_kernels`` and
``core.tail_kernels``; junctions, bias shifts, ReLU units and LayerNorm's invariances in
``core.activation_kernels``; a softmax over one token, ``one_key``) are algebraic identities, and an identity
applied to a block it does not hold for (an affine block taken for a linear one, a softmax for a lightning head)
gives a vector that is not in the kernel: the upper bound then falls below the truth and a wrong rank is printed
as certified. So no vector is trusted for being offered: each one is checked against the Jacobian on the
certificate's own inputs, in the same arithmetic as the lower bound, before it counts:

* **exactly** where the network is polynomial given its ReLU patterns (J over QQ, ``exact_images``): a vector
  counts only if J v = 0 exactly;
* **in balls** where it is not (softmax, GELU, tanh, LayerNorm; ``ball_images``): a vector whose image has an
  entry that is a ball excluding 0 is wrong and dropped; one whose every entry contains 0 at the working
  precision counts, resting on its mechanism's identity (the precision doubles, and the check is redone, until
  the certificate closes).

A vector that fails is dropped and the bound widens: an open certificate is an honest answer, a wrong one is not.
The independent vectors are counted by their rank mod p, a lower bound of their rank over QQ, which is what an
upper bound of the rank of J needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from lightning_cas.core.exact_qq import rank_qq
from lightning_cas.core.network import Network


@dataclass(frozen=True)
class Candidates:
    """The vectors the mechanisms offer at W, each named by its mechanism, as exact rationals (fmpq lists of
    length P), and the blocks whose local kernels were too large to compute."""

    vectors: tuple[tuple[str, list], ...]
    skipped: tuple[str, ...] = ()


@dataclass(frozen=True)
class KernelBound:
    """The proved part of the candidates: how many independent vectors passed, what each mechanism added in
    turn, and how many each mechanism offered that failed the check."""

    count: int
    steps: tuple[tuple[str, int], ...]
    offered: int
    dropped: tuple[tuple[str, int], ...]
    skipped: tuple[str, ...] = ()

    def upper_by(self) -> str:
        """The sentence a certificate gives for its upper bound."""
        text = f"{self.count} independent exact kernel vectors, each checked against the Jacobian"
        if self.steps:
            text += ": " + ", ".join(f"{n} {what}" for what, n in self.steps)
        if self.dropped:
            text += "; dropped as not in the kernel: " + ", ".join(f"{n} {what}" for what, n in self.dropped)
        return text


def _fmpq(x):
    import flint

    if isinstance(x, Fraction):
        return flint.fmpq(x.numerator, x.denominator)
    return flint.fmpq(x)


def candidates(net: Network, values, patterns: dict | None = None, streams: list | None = None) -> Candidates:
    """Every vector a mechanism offers at W (exact), in mechanism order. Networks with activation functions or
    LayerNorm take the mechanisms of ``core.activation_kernels`` and the named group's tangents inside attention
    and power mlp blocks (the interface groups there are its junctions); the others take the named group and the
    mechanisms of ``core.local_kernels``. ``patterns``/``streams``: a ReLU network's signs and block inputs on
    given inputs (dead units, blind spots, unit kernels hold on those inputs only)."""
    from lightning_cas.core import activation_kernels, local_kernels

    P = net.parameters
    out: list[tuple[str, list]] = [("one key", v) for v in one_key(net)]
    if net.functions:
        out += [("the named group's tangents", v) for v in local_kernels.named_tangents(net, values,
                                                                                       interfaces=False)]
        out += [(name, [_fmpq(x) for x in vec]) for name, vec in
                activation_kernels.kernel_vectors(net, values, patterns, streams)]
        return Candidates(tuple(out))
    out += [("the named group's tangents", v) for v in local_kernels.named_tangents(net, values)]
    kv = local_kernels.kernel_vectors(net, values)
    for name, vecs in (("bottleneck", kv.bottleneck), ("invisibility", kv.invisible), ("polynomial tails", kv.tail),
                       ("block-local kernels", kv.local + local_kernels.local_kernel_vectors(kv, P))):
        out += [(name, v) for v in vecs]
    return Candidates(tuple(out), kv.skipped)


def one_key(net: Network) -> list:
    """Softmax over a single token: every column of A is 1 whatever the logits, so a head's Q, K and their
    biases are never seen (unit vectors on each of their weights)."""
    import flint

    from lightning_cas.core.network import Attention

    if net.tokens != 1:
        return []
    out = []
    for m in net.weight_matrices:
        b = net.blocks[m.block]
        if isinstance(b, Attention) and b.normalization == "softmax" and m.letter in ("q", "k", "bq", "bk"):
            for i in range(m.offset, m.stop):
                v = [flint.fmpq(0)] * net.parameters
                v[i] = flint.fmpq(1)
                out.append(v)
    return out


def _matrix(vectors, P: int):
    import flint

    return flint.fmpq_mat(P, len(vectors), [_fmpq(v[i]) for i in range(P) for v in vectors])


def exact_images(J, vectors) -> list[bool]:
    """Per vector: J v = 0 exactly (J an fmpq_mat, rows x P)."""
    if not vectors:
        return []
    image = J * _matrix(vectors, J.ncols())
    return [all(image[i, k] == 0 for i in range(image.nrows())) for k in range(len(vectors))]


def ball_images(M, vectors, digits: int) -> list[bool]:
    """Per vector: every entry of M v (M an arb_mat, rows x P) is a ball containing 0 at ``digits`` digits."""
    import flint

    if not vectors:
        return []
    with flint.ctx.workdps(digits):
        image = M * flint.arb_mat(_matrix(vectors, M.ncols()))
        return [all(image[i, k].contains(0) for i in range(image.nrows())) for k in range(len(vectors))]


def bound(P: int, cands: Candidates, passed: list[bool]) -> KernelBound:
    """Count the vectors that passed, mechanism by mechanism (rank mod p of integer rows: a lower bound of their
    rank over QQ), and name what was dropped."""
    rows: list[list] = []
    steps: list[tuple[str, int]] = []
    dropped: dict[str, int] = {}
    rank = 0
    order = list(dict.fromkeys(name for name, _ in cands.vectors))
    for name in order:
        group = [(v, ok) for n, v, ok in ((n, v, ok) for (n, v), ok in zip(cands.vectors, passed)) if n == name]
        bad = sum(1 for _, ok in group if not ok)
        if bad:
            dropped[name] = bad
        rows += [v for v, ok in group if ok]
        new = rank_qq(rows, P) if rows else 0
        if new > rank:
            steps.append((name, new - rank))
        rank = new
    return KernelBound(rank, tuple(steps), len(cands.vectors), tuple(dropped.items()), cands.skipped)
