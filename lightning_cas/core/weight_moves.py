"""Kernel vectors under construction: the changes of weights a mechanism writes, and the letters of the matrices
through which a block reads its input and writes its output (shared by ``core.activation_kernels`` and
``core.relu_kernels``)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from lightning_cas.core.network import Block, Network
from lightning_cas.core.residual_groups import plain_interface


def input_letters(block: Block) -> list[str]:
    """The matrices through which a block reads its input stream (empty: it reads the stream itself)."""
    return block.input_letters()


def output_letters(block: Block) -> tuple[list[str], str | None]:
    """(matrices, bias) the block's output is linear in (on the left), or ([], None)."""
    return block.output_letters()


class Vectors:
    """Kernel vectors under construction: each a dict {flat index: Fraction}, named by mechanism."""

    def __init__(self, net: Network, values):
        self.net, self.P = net, net.parameters
        self.values = [Fraction(v) for v in values]
        self.where = {}  # (block, head, letter) -> WeightMatrix
        for m in net.weight_matrices:
            self.where[(m.block, m.head, m.letter)] = m
        self.found: list[tuple[str, dict]] = []

    def mats(self, block: int, letter: str):
        """Every weight matrix of that letter in the block (one per head)."""
        return [m for (b, _, x), m in self.where.items() if b == block and x == letter]

    def entry(self, m, r: int, c: int) -> Fraction:
        return self.values[m.offset + r * m.cols + c]

    def add(self, name: str, vec: dict) -> None:
        vec = {k: v for k, v in vec.items() if v}
        if vec:
            self.found.append((name, vec))

    def dense(self) -> list[tuple[str, np.ndarray]]:
        out = []
        for name, vec in self.found:
            d = np.array([Fraction(0)] * self.P, dtype=object)
            for k, v in vec.items():
                d[k] += v
            out.append((name, d))
        return out


def move(vs: Vectors, block: int, E: dict, sign: int, vec: dict, out: bool) -> None:
    """Add sign * (E M) for each output matrix and bias of ``block`` (``out``), or sign * (M E) for each
    input matrix of it; E is sparse {(a, b): value} on the stream."""
    b = vs.net.blocks[block]
    if out:
        mats, bias = output_letters(b)
        letters = mats + ([bias] if bias else [])
        for letter in letters:
            for m in vs.mats(block, letter):
                for (a, c), e in E.items():  # (E M)[a, :] += e M[c, :]
                    for col in range(m.cols):
                        k = m.offset + a * m.cols + col
                        vec[k] = vec.get(k, 0) + sign * e * vs.entry(m, c, col)
    else:
        for letter in input_letters(b):
            for m in vs.mats(block, letter):
                for (a, c), e in E.items():  # (M E)[:, c] += e M[:, a]
                    for row in range(m.rows):
                        k = m.offset + row * m.cols + c
                        vec[k] = vec.get(k, 0) + sign * e * vs.entry(m, row, a)


def affine_out(net: Network, i: int) -> bool:
    """Block i writes its output through matrices, and that output is all of the next interface and only the
    next block reads it (no residual skip on either side): a change E there is pushed into block i + 1."""
    return bool(net.blocks[i].output_letters()[0]) and plain_interface(net.blocks, i + 1)


def affine_in(net: Network, i: int) -> bool:
    """Block i reads its input through matrices, and that input is the previous block's output alone, read by
    block i alone: a change of it can be absorbed by block i."""
    return bool(net.blocks[i].input_letters()) and plain_interface(net.blocks, i)


def fmpq(q: Fraction):
    import flint

    return flint.fmpq(q.numerator, q.denominator)
