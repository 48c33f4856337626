"""Residual groups: ``residual = n`` on block i makes blocks i - n + 1..i one group whose output is its input
plus the blocks applied in order (n = 1: Y + b(Y); a pre-LN layer x + attn(LN(x)) is a group of two).

Groups are nested or disjoint, start at block 0 or later, and keep the width. The questions the analyses ask
of them (``skip_in``: a block's input also feeds a skip; ``skip_out``: a block's output is added to one) and
the degrees through a stack with its groups live here, next to the check (``core.network`` asks these)."""

from __future__ import annotations

from lightning_cas.core.blocks import Block


def groups(blocks) -> list[tuple[int, int]]:
    """(first, last) block of every residual group, by last block."""
    return [(i + 1 - b.residual, i) for i, b in enumerate(blocks) if b.residual]


def group_problem(blocks, widths) -> str | None:
    """What is wrong with the groups of ``blocks`` (input widths ``widths``, one more than blocks), in one
    phrase starting with the block, or None."""
    spans = groups(blocks)
    for first, last in spans:
        n = last - first + 1
        if first < 0:
            return f"block {last} ({blocks[last].kind}): residual {n} reaches before block 0 (it has {last} before it)"
        if widths[first] != widths[last + 1]:
            return (
                f"block {last} ({blocks[last].kind}): residual {n} adds the input of block {first} (width "
                f"{widths[first]}) to its output (width {widths[last + 1]}): a residual group needs equal widths"
            )
    for a, (s1, e1) in enumerate(spans):
        for s2, e2 in spans[a + 1 :]:  # e1 < e2: nested when s2 <= s1, disjoint when s2 > e1
            if s1 < s2 <= e1:
                return (
                    f"block {e1} (residual {e1 - s1 + 1}, blocks {s1}..{e1}) and block {e2} (residual "
                    f"{e2 - s2 + 1}, blocks {s2}..{e2}): residual groups overlap; they must be nested or disjoint"
                )
    return None


def skip_in(blocks, i: int) -> bool:
    """Block i's input also feeds a skip (some residual group starts at block i)."""
    return any(first == i for first, _ in groups(blocks))


def skip_out(blocks, i: int) -> bool:
    """Block i's output is added to a skip (block i ends a residual group)."""
    return bool(blocks[i].residual)


def plain_interface(blocks, k: int) -> bool:
    """Interface k (the input of block k, 0 < k < len): block k - 1's output is all of it and block k alone
    reads it, so a change of it made on one side can be undone on the other."""
    return 0 < k < len(blocks) and not skip_out(blocks, k - 1) and not skip_in(blocks, k)


def through(blocks, start, step, join):
    """The values at the interfaces 0..n of a quantity carried through ``blocks`` (``step(block, value)``), a
    group's output joined with its input (``join``); ``start`` at interface 0. Groups reaching before the
    first of ``blocks`` are ignored (a sub-stack's own groups only)."""
    values = [start]
    for i, b in enumerate(blocks):
        value = step(b, values[-1])
        if b.residual and i + 1 - b.residual >= 0:
            value = join(value, values[i + 1 - b.residual])
        values.append(value)
    return values


def token_degrees(blocks, degrees: frozenset[int] = frozenset({1})) -> frozenset[int]:
    """The homogeneous degrees in the tokens after ``blocks`` with their groups."""
    return through(blocks, degrees, lambda b, d: b.token_degrees(d), frozenset.union)[-1]


def weight_degree(blocks, degree: int = 0) -> int:
    """The degree in the weights after ``blocks`` with their groups."""
    return through(blocks, degree, lambda b, d: b.weight_degree(d), max)[-1]


def largest(blocks) -> int:
    """The largest residual group (0 without any)."""
    return max((b.residual for b in blocks), default=0)


def residual_group(*blocks: Block) -> tuple[Block, ...]:
    """The blocks as one residual group: the last one's ``residual`` set to their number, so the stack
    computes x + b_n(...b_1(x)). ``residual_group(LayerNorm(), Attention(4, residual=False))`` is a pre-LN
    attention sublayer; splice it into a block list with ``*``."""
    from lightning_cas.errors import InputError

    if not blocks or not all(isinstance(b, Block) for b in blocks):
        raise InputError("residual_group takes one or more blocks.")
    if blocks[-1].residual and len(blocks) > 1:
        raise InputError("residual_group: its last block already ends a residual group; nest groups inside it.")
    return blocks[:-1] + (blocks[-1].with_residual(len(blocks)),)
