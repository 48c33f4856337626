"""A converted module's steps (its blocks from classes and shapes; its weights read only on ``read``) and the
one place their weights are read, exactly or, in a names pass, as the state_dict entries they come from.

A names pass runs the same readers on names instead of values (``naming``), so the names can never drift
from the order the values are read in: ``from_torch`` keeps them on the point (``WeightPoint.origins``).
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np

from lightning_cas.system.points import exact_values
from lightning_cas.torch_bridge.model import tensor_array

_NAMING = contextvars.ContextVar("naming", default=False)


@dataclass(frozen=True)
class Step:
    """One module's blocks, from its class and shapes; its weights are read only when ``read`` is called."""

    name: str  # how messages name the module
    blocks: tuple  # softmax attention where the module has MultiheadAttention
    takes: int | None  # the features it takes (None: any number)
    gives: int | None  # the features it gives (None: as many as it takes)
    read: Callable[[], list[Fraction]]
    lightning: tuple | None = None  # the blocks of the lightning variant, where they differ
    onehot: bool = False  # it takes token ids, as one-hot vectors: only the first step may


class Origin(str):
    """The state_dict entry a weight is read from (``blocks.0.attn.in_proj_weight[3, 5]``); a reader's
    scaling (the 1/sqrt(d_head) folded into Q) keeps the name."""

    def __mul__(self, other):
        return self

    __rmul__ = __mul__


def entry_names(name: str, shape: tuple) -> list[Origin]:
    """The names of a tensor's entries in row-major order: ``name[i, j]``."""
    return [Origin(f"{name}[{', '.join(map(str, index))}]") for index in np.ndindex(*shape)]


def exact(tensor, name: str) -> list:
    """A tensor's values as exact rationals (row-major), or in a names pass the names of its entries."""
    if _NAMING.get():
        return entry_names(name, tuple(tensor.shape))
    return exact_values(tensor_array(tensor, name), name)


def naming() -> bool:
    """True inside a names pass."""
    return _NAMING.get()


@contextlib.contextmanager
def names_pass():
    """Within it, ``exact`` gives the names of the entries instead of their values."""
    token = _NAMING.set(True)
    try:
        yield
    finally:
        _NAMING.reset(token)


def origins(steps: list[Step]) -> tuple[str, ...]:
    """For each weight of the steps' network, in the canonical order, the state_dict entry it is read from."""
    with names_pass():
        return tuple(str(o) for step in steps for o in step.read())
