"""Kernel vectors under construction: the changes of weights a mechanism writes, and the letters of the matrices
through which a block reads its input and writes its output (shared by ``core.activation_kernels`` and
``core.relu_kernels``)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from lightning_cas.core.network import MLP, Attention, Linear, Network


def input_letters(block) -> list[str]:
    """The matrices through which a block reads its input stream (empty: it reads the stream itself)."""
    if isinstance(block, Attention):
        return ["q", "k", "v" if block.value is None else "w"]
    return {MLP: ["u"], Linear: ["p"]}.get(type(block), [])


def output_letters(block) -> tuple[list[str], str | None]:
    """(matrices, bias) the block's output is linear in (on the left), or ([], None)."""
    if isinstance(block, Attention):
        if block.value is None:
            return ["v"], ("bv" if block.bias else None)
        return ["o"], ("bo" if block.bias else None)
    if isinstance(block, MLP):
        return ["d"], ("bd" if block.bias else None)
    if isinstance(block, Linear):
        return ["p"], ("bp" if block.bias else None)
    return [], None


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


def affine_out(b) -> bool:
    return bool(output_letters(b)[0]) and not getattr(b, "residual", False)


def affine_in(b) -> bool:
    return bool(input_letters(b)) and not getattr(b, "residual", False)


def fmpq(q: Fraction):
    import flint

    return flint.fmpq(q.numerator, q.denominator)
