"""Exact kernel vectors along a residual stream: a constant shift of the stream that the blocks on it absorb.

A block with a constant output bias b (the same vector added on every token: b_o, b_d, b_p, a softmax head's
b_v, a LayerNorm's b_g) feeds a stream y. Move b by c: the stream is y + c. A block after it that reads the
stream only through matrices X, each with a bias of its own (attention Q, K, W or V; mlp U; linear P), reads
X (y + c) + b_X = X y + (b_X + X c): moving b_X by -X c undoes it exactly, whatever the block does next
(softmax, ReLU, GELU). A residual block adds the stream to its output, so after it the stream is still
y' + c: the shift goes on to the next block, or stops where it is cancelled, by moving the residual block's
own constant output bias by -c (y + c + f(y) + b - c = y + f(y) + b). A non-residual block that reads through
biased matrices takes the shift in its input biases and ends it. So for each producer and each block that ends
the shift there is one vector per coordinate of c (width directions):

    d b_producer = c,  d b_X = -X c (each reader up to the end),  d b_end = -c (a residual end).

In a post-LN transformer x -> LN1(x + SA(x)) -> LN2(y + FF(y)) this moves LN1's b_g by c, the mlp's b_u by
-U c and its b_d by -c: d_model directions no other mechanism names. A block that reads the stream itself
(an activation, a norm, a power) stops the walk: it does not absorb a shift. The non-residual case without a
stream between (producer, then a biased reader) is ``core.activation_kernels``' bias shift (``core.symmetry``'s
translations on the polynomial route). A residual here wraps one block, x + f(x): the stream a block adds back is
its own input. A larger residual group (``residual = n``) breaks that: the walk stops at a block that ends one or
whose input also feeds one (``_own_stream``), so no vector is offered across a group of several blocks, with
one exception, the pre-LN layer's: a group whose first block is a LayerNorm (y + f(LN(y))) sees a shift along
1 only through its skip, so c = t 1 passes it, and the group's last block's output bias by -t 1 ends it
(``_ones_through_norm_groups``): in x -> x + SA(LN1(x)) -> y + FF(LN2(y)), SA's b_o by t 1 and FF's b_d by -t 1.
"""

from __future__ import annotations

from fractions import Fraction

from lightning_cas.core.network import Network
from lightning_cas.core.residual_groups import groups
from lightning_cas.core.weight_moves import Vectors, input_letters


def _own_stream(blocks, j: int) -> bool:
    """Block j's input is read by block j and at most by j's own skip (residual 0 or 1), and what it adds back is
    that input: the walk's two cases."""
    return blocks[j].residual in (0, 1) and all(last == j for first, last in groups(blocks) if first == j)


def _biased_readers(vs: Vectors, j: int) -> list[tuple]:
    """(matrix, its bias) for every matrix through which block ``j`` reads the stream; [] when it reads the stream
    itself or a matrix has no bias (then it cannot absorb a shift)."""
    out = []
    for letter in input_letters(vs.net.blocks[j]):
        for m in vs.mats(j, letter):
            bias = vs.where.get((j, m.head, "b" + letter))
            if bias is None:
                return []
            out.append((m, bias))
    return out


def _shift(vs: Vectors, producer, readers: list, end, a: int) -> dict:
    """The vector for coordinate a of c: the producer's bias by e_a, each reader's biases by -X e_a, the end's
    output bias by -e_a (``end`` None: the last reader is non-residual and took the shift)."""
    vec: dict[int, Fraction | int] = {producer.offset + a: Fraction(1)}
    for m, bias in readers:
        for row in range(m.rows):
            vec[bias.offset + row] = vec.get(bias.offset + row, 0) - vs.entry(m, row, a)
    if end is not None:
        vec[end.offset + a] = vec.get(end.offset + a, 0) - 1
    return vec


def _producers(vs: Vectors):
    """(s, the output bias of block s - 1, the stream's width d) for every block with an output bias: where a
    shift starts. One head's bias stands for a softmax head's (b_v): the shift of the whole output."""
    blocks = vs.net.blocks
    for s in range(1, len(blocks)):
        letter = blocks[s - 1].output_bias()
        if letter is not None:
            yield s, vs.mats(s - 1, letter)[0], vs.net.widths[s]


def stream_bias_shifts(vs: Vectors) -> None:
    """Every stream bias shift of the network (module docstring), named "stream bias shift"."""
    blocks = vs.net.blocks
    for s, producer, d in _producers(vs):
        readers: list = []
        for j in range(s, len(blocks)):
            if not _own_stream(blocks, j):
                break
            here = _biased_readers(vs, j)
            if not here:
                break
            readers = readers + here
            b = blocks[j]
            if not b.residual:
                if j > s or blocks[s - 1].residual:  # else: activation_kernels' bias shift, already offered
                    for a in range(d):
                        vs.add("stream bias shift", _shift(vs, producer, readers, None, a))
                break
            end = b.output_bias()
            if end is not None:
                m = vs.mats(j, end)[0]
                for a in range(d):
                    vs.add("stream bias shift", _shift(vs, producer, readers, m, a))
    _ones_through_norm_groups(vs)


def _norm_group_end(blocks, j: int) -> int | None:
    """The last block of the one residual group that starts at block j with a LayerNorm (shift invariant, no skip
    of its own), or None."""
    ends = [last for first, last in groups(blocks) if first == j]
    if len(ends) != 1 or ends[0] == j or not blocks[j].shift_invariant:
        return None
    return ends[0]


def _ones_through_norm_groups(vs: Vectors) -> None:
    """The shift along 1 from an output bias through LayerNorm-led groups, ended by a group's last output bias."""
    blocks = vs.net.blocks
    for j, producer, d in _producers(vs):
        while j < len(blocks) and (k := _norm_group_end(blocks, j)) is not None:
            end = blocks[k].output_bias()
            if end is not None:  # the sum over a of the shifts by e_a, no reader between: 1 in, -1 out
                m = vs.mats(k, end)[0]
                vs.add("stream bias shift", {i: v for a in range(d) for i, v in _shift(vs, producer, [], m, a).items()})
            j = k + 1


def stream_vectors(net: Network, values) -> list:
    """(name, dense vector of Fractions) for every stream bias shift at W: the polynomial route's entry (the
    route with activation functions or norms gathers them with its own mechanisms)."""
    vs = Vectors(net, values)
    stream_bias_shifts(vs)
    return vs.dense()
