"""The named symmetry group of a network and its orbits: exactly over QQ, or mod p where speed matters.

The group (docs/mathematics.md, networks as blocks): per attention head GL(a) on (Q, K) and, with a
factored value map, GL(b) on (W, O); in the lightning case a scaling (V, S) -> (c V, S / c) per head;
at an interface between two blocks that are linear in that width (attention, linear, mlp; not power)
GL(width), acting on the output of the first and the input of the second; across a power chain
(linear -> power r ... -> linear) the diagonal torus, scaled by the chain's degree on the far side;
inside an mlp the scaling of each hidden neuron (GL(hidden) for degree 1). A residual stream joins
the interfaces it runs through: one GL(width) acts on all of them together (every block on the
stream conjugated), and only when the stream is bounded by linear blocks on both ends (a stream that
starts at the input or ends at the output is fixed). A residual group of several blocks carries its
input past them: nothing acts where its skip leaves (``Network.skip_in``) or joins (``skip_out``), and a
stream runs only through blocks that are groups of their own. Head and neuron permutations are finite.

Biases ride along with their matrices: a bias is the column of its matrix that multiplies a row of ones,
so whatever multiplies a matrix from the left multiplies its bias too (b_q with Q under GL(a), b_w with
W under GL(b), b_v or b_o with the output side of an interface, b_u with U under the neuron scalings),
and whatever acts from the right (the input side of an interface) leaves it alone. So biases break no
factor of the group, and they add one: at an interface (no residual on either side) where the producer
has an output bias and the consumer reads its input only through biased affine projections, shifting the
producer's bias by v and every consumer bias b_X by -X v changes nothing, so GL(width) grows to the
affine group (translations, dimension width). Softmax adds translations: a key bias changes every logit
of a query by the same amount, which the softmax ignores (b_k is free: a per head), and the value biases
pass through unchanged (columns of the softmax sum to 1), so only sum_h O_h b_w,h + b_o (or sum_h b_v,h)
is seen: b per head with a factored value map, out per head but one with a full one.

The orbit dimension at W is the rank of the infinitesimal action there. The orbit of W lies in the
fiber of W and the generic fiber contains the generic orbit, so parameters - (orbit rank at any W)
bounds the dimension from above, and so does a rank mod p (it is at most the rank over QQ): the
bounds stay valid at any point and any prime; a special point only weakens them. Several lightning heads
mixing with each other add more (``core.head_mixing``).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from lightning_cas.core.arithmetic import Arithmetic, ModP, Rationals
from lightning_cas.core.blocks import GroupFactor
from lightning_cas.core.blocks.base import gl_pairs
from lightning_cas.core.forward import split
from lightning_cas.core.network import MLP, Attention, Network, Position, Power
from lightning_cas.core.primes import DEFAULT_PRIME
from lightning_cas.core.rank_modp import RowEchelon, blas_threads
from lightning_cas.core.weights import flat, random_point

TANGENT_CHUNK = 512  # tangents streamed into the echelon form per step


def _linear_out(block) -> bool:
    return not isinstance(block, (Power, Position))  # Y + E moves with its input, absorbs nothing


def _linear_in(block) -> bool:
    return not isinstance(block, (Power, Position))


def _streams(net: Network) -> list[tuple[int, int]]:
    """Interfaces 0..n (0 the input, n the output) joined by residual blocks: (first, last) of each class. A
    stream runs through a block that is a residual group of its own (Y + b(Y)) and starts no larger group; a
    larger group's skip carries its input past blocks that a change of the stream would not conjugate."""
    n, out, k = len(net.blocks), [], 0
    while k <= n:
        e = k
        while e < n and net.blocks[e].residual == 1 and not _starts_group(net, e, 2):
            e += 1
        out.append((k, e))
        k = e + 1
    return out


def _starts_group(net: Network, i: int, size: int) -> bool:
    """A residual group of at least ``size`` blocks starts at block i."""
    return any(j + 1 - b.residual == i for j, b in enumerate(net.blocks) if b.residual >= size)


def _interface_actions(net: Network) -> list[tuple[str, int, int, int, int]]:
    """(kind "gl" or "torus", first interface, last interface, consumer block, chain degree R)."""
    n, actions = len(net.blocks), []
    for s, e in _streams(net):
        if s == 0 or e == n:
            continue  # the input or the output is fixed
        producer, consumer = net.blocks[s - 1], net.blocks[e]
        if not _linear_out(producer) or net.skip_out(s - 1) or net.skip_in(e):
            continue  # a skip leaves or joins the stream at its ends: no change of it is undone there
        inner_ok = all(isinstance(net.blocks[j], (Attention, MLP)) for j in range(s, e))
        if _linear_in(consumer) and inner_ok:
            actions.append(("gl", s, e, e, 1))
        elif s == e and isinstance(consumer, Power):
            j, degree = e, 1  # follow the power chain to the block that absorbs it
            while j < n and isinstance(power := net.blocks[j], Power) and not net.skip_out(j):
                degree *= power.degree
                j += 1
            if j < n and _linear_in(net.blocks[j]) and not any(net.skip_in(k) for k in range(e, j + 1)):
                actions.append(("gl" if degree == 1 else "torus", s, e, j, degree))
    return actions


def _output_bias(net: Network, block: int) -> tuple | None:
    """The key of the bias added to the whole output of ``block`` (constant over the tokens), or None."""
    letter = net.blocks[block].output_bias()  # a softmax head's b_v counts: sum_i A[i, j] = 1
    return None if letter is None else (block, 0, letter)


def _input_projections(net: Network, block: int) -> list[tuple]:
    """The matrices through which ``block`` reads its input, each with a bias of its own."""
    b = net.blocks[block]
    if not b.bias:
        return []
    return [(block, h, x) for h in range(b.heads) for x in b.input_letters()]


def _translation_interfaces(net: Network) -> list[int]:
    """Interfaces k (after block k, 1-based) where the producer's output bias can be shifted into the consumer's."""
    blocks = net.blocks
    return [
        k
        for k in range(1, len(blocks))
        if not net.skip_out(k - 1)
        and not net.skip_in(k)
        and _output_bias(net, k - 1) is not None
        and _input_projections(net, k)
    ]


def group_factors(arch: Network) -> tuple[GroupFactor, ...]:
    """Every continuous factor of the named group (module docstring), in a fixed order."""
    net = arch
    widths, out = net.widths, []
    for i, b in enumerate(net.blocks):
        out += b.group_factors(f"block {i}")
    for k in _translation_interfaces(net):
        out.append(GroupFactor("translations", f"width {widths[k]} after block {k}", widths[k]))
    for kind, s, e, _, degree in _interface_actions(net):
        w = widths[s]
        where = f"width {w} after block {s - 1}" + (f" through block {e - 1}" if e > s else "")
        if kind == "gl":
            out.append(GroupFactor("GL(width)", where, w * w))
        else:
            out.append(GroupFactor("torus", where + f" (power chain of degree {degree})", w))
    return tuple(out)


def group_dimension(arch: Network) -> int:
    """Dimension of the named group (a group, not an orbit: its orbits can be smaller)."""
    return sum(f.dimension for f in group_factors(arch))


def head_permutations(arch: Network) -> int:
    """Order of the finite group permuting the heads within each attention block: prod H_i!."""
    return math.prod(math.factorial(b.heads) for b in arch.blocks)


# ---------------------------------------------------------------- tangents of the action


class _Tangents:
    """Builds tangent vectors (rows of length P) of the action at W, in an arithmetic."""

    def __init__(self, net: Network, ar: Arithmetic, w):
        self.net, self.ar = net, ar
        self.w = w
        self.mats = split(net, ar, w)
        self.where = {(m.block, m.head, m.letter): m for m in net.weight_matrices}

    def new(self, k: int) -> np.ndarray:
        return self.ar.zeros((k, self.net.parameters))

    def left(self, T, key, basis_rows, basis_cols, sign: int = 1):
        """d M = E_rc M for basis pairs (r, c): row r of dM is row c of M (times sign); M's bias with it."""
        bias = (key[0], key[1], "b" + key[2])
        if not key[2].startswith("b") and bias in self.where:
            self.left(T, bias, basis_rows, basis_cols, sign)
        m = self.where[key]
        M = self.mats[key[0]][key[1]][key[2]]
        k = len(basis_rows)
        cols = m.offset + np.asarray(basis_rows)[:, None] * m.cols + np.arange(m.cols)[None, :]
        vals = M[np.asarray(basis_cols), :]
        T[np.arange(k)[:, None], cols] = self.ar.add(
            T[np.arange(k)[:, None], cols], vals if sign == 1 else self.ar.scale(vals, sign)
        )

    def right(self, T, key, basis_rows, basis_cols, sign: int = -1):
        """d M = M E_rc for basis pairs (r, c): column c of dM is column r of M (times sign)."""
        m = self.where[key]
        M = self.mats[key[0]][key[1]][key[2]]
        k = len(basis_rows)
        cols = m.offset + np.arange(m.rows)[None, :] * m.cols + np.asarray(basis_cols)[:, None]
        vals = np.ascontiguousarray(M[:, np.asarray(basis_rows)].T)
        T[np.arange(k)[:, None], cols] = self.ar.add(
            T[np.arange(k)[:, None], cols], vals if sign == 1 else self.ar.scale(vals, sign)
        )

    def unit(self, T, rows, key, entries, value=1):
        """T[row, entry of key] = value for each (row, entry) pair."""
        m = self.where[key]
        T[np.asarray(rows), m.offset + np.asarray(entries)] = self.ar.array(np.full(len(rows), value, dtype=np.int64))

    def copy(self, T, row: int, key, sign: int = 1):
        """dM = sign M, and the same for M's own bias (b_o is not O_h's own: the scaling of a head leaves it)."""
        bias = (key[0], key[1], "b" + key[2])
        if key[2] not in ("o",) and not key[2].startswith("b") and bias in self.where:
            self.copy(T, row, bias, sign)
        m = self.where[key]
        M = self.mats[key[0]][key[1]][key[2]].reshape(-1)
        T[row, m.offset : m.stop] = M if sign == 1 else self.ar.scale(M, sign)


def _output_side(net: Network, block: int) -> list[tuple]:
    """The matrices a GL on the output of ``block`` multiplies from the left (their biases with them)."""
    b = net.blocks[block]  # O of head 1 brings b_o
    return [(block, h, letter) for h in range(b.heads) for letter in b.output_letters()[0]]


def _input_side(net: Network, block: int) -> list[tuple]:
    """The matrices a GL on the input of ``block`` multiplies from the right."""
    b = net.blocks[block]
    return [(block, h, letter) for h in range(b.heads) for letter in b.input_letters()]


def tangent_blocks(arch: Network, w, ar: Arithmetic, interfaces: bool = True):
    """The tangents of the named group's action at W (flat weights in ``ar``), as (k, P) arrays; without
    ``interfaces`` only the factors inside a block (GL(a), GL(b), the scalings, translations inside softmax),
    which hold whatever surrounds the block (next to LayerNorm or an activation the interface factors do not)."""
    net = arch
    tb = _Tangents(net, ar, w)
    for i, b in enumerate(net.blocks):
        yield from b.group_tangents(tb, i)
    if not interfaces:
        return
    for k in _translation_interfaces(net):  # d b_out = e_r, d b_X = -X e_r
        n = net.widths[k]
        T = tb.new(n)
        tb.unit(T, range(n), _output_bias(net, k - 1), range(n))
        for key in _input_projections(net, k):
            bias = tb.where[(key[0], key[1], "b" + key[2])]
            T[:, bias.offset : bias.stop] = tb.ar.sub(
                T[:, bias.offset : bias.stop], np.ascontiguousarray(tb.mats[key[0]][key[1]][key[2]].T)
            )
        yield T
    for kind, s, e, consumer, degree in _interface_actions(net):
        n = net.widths[s]
        rr, cc = gl_pairs(n) if kind == "gl" else (np.arange(n), np.arange(n))
        T = tb.new(len(rr))
        for key in _output_side(net, s - 1):
            tb.left(T, key, rr, cc)
        for j in range(s, e):  # residual blocks on the stream are conjugated
            for key in _output_side(net, j):
                tb.left(T, key, rr, cc)
            for key in _input_side(net, j):
                tb.right(T, key, rr, cc)
        for key in _input_side(net, consumer):
            tb.right(T, key, rr, cc, sign=-degree)
        yield T


def orbit_bytes(arch: Network) -> int:
    """Peak memory of :func:`orbit_rank_modp`: the echelon form (at most P^2 / 4 entries, three copies while
    it is updated) and the tangents pending (a chunk and the largest block, a GL of the widest dimension),
    8 bytes each: what a caller checks against the machine before asking."""
    net = arch
    P = net.parameters
    return 8 * (3 * P * P // 4 + 2 * (TANGENT_CHUNK + net.widest**2) * P) + 64 * 2**20


def orbit_rank_modp(arch: Network, w, prime: int = DEFAULT_PRIME, extra=()) -> int:
    """Rank mod p of the action's tangents at W (any representatives; and ``extra`` tangent arrays)."""
    net = arch
    ar = ModP(prime)
    wc = ar.array(w)
    ech = RowEchelon(net.parameters, prime)
    pending, rows = [], 0
    with blas_threads():
        for T in itertools.chain(tangent_blocks(net, wc, ar), extra):  # streamed, never all at once
            pending.append(T)
            rows += len(T)
            if rows >= TANGENT_CHUNK:  # few large blocks: the echelon form's products stay thick
                ech.add(np.concatenate(pending))
                pending, rows = [], 0
        if pending:
            ech.add(np.concatenate(pending))
    return ech.rank


def orbit_tangents(arch: Network, point) -> list[list[Fraction]]:
    """One tangent vector per Lie algebra basis element at W, exactly (Fractions, canonical order)."""
    net = arch
    values = flat(point) if not isinstance(point, (list, np.ndarray)) else list(point)
    ar = Rationals()
    out = []
    for T in tangent_blocks(net, ar.array(values), ar):
        out += [[Fraction(int(v.p), int(v.q)) for v in row] for row in T]
    return out


def orbit_dimension(arch: Network, point) -> int:
    """Dimension of the named group's orbit through W = rank of its infinitesimal action, over QQ."""
    from lightning_cas.core.model import rank_over_qq

    return rank_over_qq(orbit_tangents(arch, point))


def generic_orbit_dimension(arch: Network, seed: int = 0, prime: int = DEFAULT_PRIME) -> int:
    """The orbit rank mod p at a random nonzero integer point (reproducible from ``seed``): the generic
    orbit dimension unless the point or the prime is special, and a valid bound either way."""
    net = arch
    return orbit_rank_modp(net, random_weights(net, seed), prime)


def random_weights(arch: Network, seed: int, bound: int = 9) -> list[int]:
    """Random nonzero integers in +-[1, bound], flat, reproducible from ``seed`` (for an old-flag
    architecture the same values as ``weights.random_point``)."""
    if arch.paper is not None:
        return [int(v) for v in flat(random_point(arch, seed, bound))]
    rng = np.random.default_rng(seed)
    n = arch.parameters
    return [int(v) for v in rng.integers(1, bound + 1, n) * rng.choice([-1, 1], n)]
