"""Kernel vectors proved before they bound a rank from above.

A rank at W is certified from two sides: a nonzero minor bounds it below, and k independent vectors in the kernel of
the differential bound it above by P - k. The mechanisms that offer such vectors (the named group's tangents,
bottlenecks, invisible directions, block-local and tail kernels in ``core.local_kernels`` and ``core.tail_kernels``;
junctions, bias shifts, ReLU units and LayerNorm's invariances in ``core.activation_kernels``; shifts along a
residual stream in ``core.stream_kernels``; a softmax over one token, ``one_key``) are algebraic identities, and an
identity applied to a block it does not hold for (an affine block taken for a linear one, a softmax for a lightning
head) gives a vector that is not in the kernel: the upper bound then falls below the truth and a wrong rank is
printed as certified. So no vector is trusted for being offered: each one is checked against the Jacobian on the
certificate's own inputs, in the same arithmetic as the lower bound, before it counts:

* **exactly** where the network is polynomial given its ReLU patterns: a vector counts only if J v = 0
  exactly, from J over QQ (``exact_images``) or, at sizes where that is slow, from residues: D (J v) is an
  integer vector (``denominator``) of entries at most D B in size (``size_bounds``), so if it vanishes mod
  primes whose product exceeds 2 D B (``primes_needed``) it is 0;
* **in balls** where it is not (softmax, GELU, tanh, LayerNorm; ``ball_images``): a vector whose image has an
  entry that is a ball excluding 0 is wrong and dropped; one whose every entry contains 0 at the working
  precision counts, resting on its mechanism's identity (the precision doubles, and the check is redone, until
  the certificate closes).

A vector that fails is dropped and the bound widens: an open certificate is an honest answer, a wrong one is not.
The independent vectors are counted by their rank mod p, a lower bound of their rank over QQ, which is what an
upper bound of the rank of J needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

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
    from lightning_cas.core import activation_kernels, local_kernels, stream_kernels

    P = net.parameters
    out: list[tuple[str, list]] = [("one key", v) for v in one_key(net)]
    if net.functions:
        out += [("the named group's tangents", v) for v in local_kernels.named_tangents(net, values, interfaces=False)]
        out += [
            (name, [_fmpq(x) for x in vec])
            for name, vec in activation_kernels.kernel_vectors(net, values, patterns, streams)
        ]
        return Candidates(tuple(out))
    out += [("the named group's tangents", v) for v in local_kernels.named_tangents(net, values)]
    out += [("stream bias shift", [_fmpq(x) for x in vec]) for _, vec in stream_kernels.stream_vectors(net, values)]
    kv = local_kernels.kernel_vectors(net, values)
    for name, vecs in (
        ("bottleneck", kv.bottleneck),
        ("invisibility", kv.invisible),
        ("polynomial tails", kv.tail),
        ("block-local kernels", kv.local + local_kernels.local_kernel_vectors(kv, P)),
    ):
        out += [(name, v) for v in vecs]
    return Candidates(tuple(out), kv.skipped)


def one_key(net: Network) -> list:
    """Softmax over a single token: every column of A is 1 whatever the logits, so a head's Q, K and their
    biases are never seen (unit vectors on each of their weights)."""
    import flint

    if net.tokens != 1:
        return []
    out = []
    for m in net.weight_matrices:
        b = net.blocks[m.block]
        if b.normalization == "softmax" and m.letter in ("q", "k", "bq", "bk"):  # a softmax attention block
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


# ---------------------------------------------------------------- exact images from residues


def _relu_free(net: Network) -> Network:
    """The network with each ReLU replaced by the identity (a power block of degree 1, keeping its residual and
    the groups' places) and each ReLU mlp by a degree-1 mlp: with its 0/1 patterns fixed, a ReLU multiplies by
    a constant, so these have the degrees of the original's Jacobian."""
    from dataclasses import replace

    from lightning_cas.core.network import MLP, Activation, Power

    blocks = tuple(
        replace(b, activation="power", degree=1)
        if isinstance(b, MLP) and b.activation == "relu"
        else Power(1, residual=b.residual)
        if isinstance(b, Activation) and b.function == "relu"
        else b
        for b in net.blocks
    )
    return Network(net.input, net.tokens, blocks)


def _lcm_denominator(values) -> int:
    out = 1
    for v in values:
        d = Fraction(v).denominator
        out = out * d // math.gcd(out, d)
    return out


def denominator(net: Network, values, X) -> int:
    """D with D * (J v) an integer vector for every integer v: J's entries are polynomials with integer
    coefficients in the weights and the inputs, of degree at most the network's in each."""
    plain = _relu_free(net)
    wdeg, xdeg = plain.weight_degree, max(plain.token_degrees, default=1)
    return _lcm_denominator(values) ** wdeg * _lcm_denominator(np.asarray(X, dtype=object).reshape(-1)) ** xdeg


FLOAT_SAFE = 250  # |log10| of a product of weights and inputs that float64 holds without over- or underflow


def size_bounds(net: Network, values, X, patterns: dict | None, ints) -> list[int] | None:
    """Per integer vector v (``ints``): an integer B with |J v| <= B entrywise, or None when float64 cannot
    hold the sizes. J's entries are sums of products with positive coefficients (matrix products, masks,
    powers; no softmax, GELU or LayerNorm on this route), so |J(W, X)| <= J(|W|, |X|) entrywise, evaluated in
    nonnegative floats whose rounding (relative, at most 1e-12 here) a factor 1.01 covers."""
    from lightning_cas.core.arithmetic import Float64
    from lightning_cas.core.forward import jacobian

    sizes = [abs(float(v)) for v in values] + [abs(float(x)) for x in np.asarray(X, dtype=object).reshape(-1)]
    nonzero = [s for s in sizes if s > 0]
    plain = _relu_free(net)
    degree = plain.weight_degree + max(plain.token_degrees, default=1)
    if nonzero and degree * max(abs(math.log10(min(nonzero))), abs(math.log10(max(nonzero)))) > FLOAT_SAFE:
        return None
    f = Float64()
    J = jacobian(
        net,
        f,
        f.array([abs(float(v)) for v in values]),
        f.array(np.vectorize(lambda x: abs(float(x)), otypes=[float])(np.asarray(X, dtype=object))),
        None,
        None if patterns is None else dict(patterns),
    )
    V = np.array([[abs(float(x)) for x in v] for v in ints], dtype=float).T
    with np.errstate(over="ignore", invalid="ignore"):
        B = (J @ V).max(axis=0) * 1.01 if len(J) else np.zeros(len(ints))
    if not np.all(np.isfinite(B)):
        return None
    return [int(math.ceil(b)) + 1 for b in B]


def primes_needed(D: int, bounds: list[int], known: list[int], values, X, top: int) -> list[int]:
    """More primes below ``top`` (none dividing a denominator of the point or the inputs, none in ``known``)
    until the product of all exceeds 2 D max(bounds): an integer that small which every prime divides is 0."""
    from lightning_cas.core.primes import previous_prime

    dens = _lcm_denominator(values) * _lcm_denominator(np.asarray(X, dtype=object).reshape(-1))
    need = 2 * D * max(bounds, default=1)
    product = math.prod(known)
    out, q = [], top
    while product <= need:
        q = previous_prime(q)
        if dens % q and q not in known:
            out.append(q)
            product *= q
    return out
