"""The paper's numbers of a network: widths d_0..d_L, attention dims a_i, heads H_i, tokens, normalization.

A `Network` is the one noun below the options; when it is the paper's plain stack of attention blocks,
``net.paper`` is this view of it, the numbers the closed forms, the one-layer geometry, Macaulay2's
``neuralNetwork`` and batch labels are written in. The flags ``--widths/--attention/--heads`` are
validated here, once (``Network.from_paper`` builds the network from them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lightning_cas.core.checks import as_int as _as_int
from lightning_cas.core.checks import int_sequence
from lightning_cas.core.limits import MAX_HEADS, MAX_LAYERS, MAX_TOKENS, MAX_WIDTH  # noqa: F401 (the one table)
from lightning_cas.errors import InputError

NORMALIZATIONS = ("none", "softmax")


@dataclass(frozen=True, init=False)
class Paper:
    """The paper's view of a lightning (or softmax) self-attention stack: widths d_0..d_L, attention dims
    a_1..a_L, heads H_1..H_L per layer (default one head per layer, the paper's model).

    >>> paper = Paper(widths=(3, 3, 3), attention=(2, 2), tokens=2)
    >>> paper.depth, paper.parameters, paper.heads
    (2, 42, (1, 1))
    """

    # the fields as validated; __init__ takes any input (lists, comma-separated text, heads None) and checks it
    widths: tuple[int, ...]
    attention: tuple[int, ...]
    tokens: int
    normalization: str
    heads: tuple[int, ...]

    def __init__(self, widths, attention, tokens=2, normalization: str = "none", heads=None) -> None:
        widths = self._int_tuple(widths, "widths")
        attention = self._int_tuple(attention, "attention")
        heads = (1,) * len(attention) if heads is None else self._int_tuple(heads, "heads")
        tokens = _as_int(tokens, "tokens")
        if len(widths) < 2:
            raise InputError("widths needs at least two entries d_0,d_1 (input and output width).")
        if len(widths) - 1 > MAX_LAYERS:
            raise InputError(f"depth {len(widths) - 1} is above the supported maximum of {MAX_LAYERS} layers.")
        if len(attention) != len(widths) - 1:
            raise InputError(
                f"attention needs one entry per layer: {len(widths)} widths mean {len(widths) - 1} "
                f"layers, but {len(attention)} attention dims were given."
            )
        if len(heads) != len(widths) - 1:
            raise InputError(
                f"heads needs one entry per layer: {len(widths)} widths mean {len(widths) - 1} "
                f"layers, but {len(heads)} head counts were given."
            )
        for name, values, cap in (
            ("widths", widths, MAX_WIDTH),
            ("attention", attention, MAX_WIDTH),
            ("heads", heads, MAX_HEADS),
        ):
            for v in values:
                if v <= 0:
                    raise InputError(f"every entry of {name} must be a positive integer, got {v}.")
                if v > cap:
                    raise InputError(f"{name} entry {v} is above the supported maximum of {cap}.")
        if tokens <= 0:
            raise InputError(f"tokens must be a positive integer, got {tokens}.")
        if tokens > MAX_TOKENS:
            raise InputError(f"tokens {tokens} is above the supported maximum of {MAX_TOKENS}.")
        if normalization not in NORMALIZATIONS:
            raise InputError(f"normalization must be one of {', '.join(NORMALIZATIONS)}, got {normalization!r}.")
        object.__setattr__(self, "widths", widths)
        object.__setattr__(self, "attention", attention)
        object.__setattr__(self, "tokens", tokens)
        object.__setattr__(self, "normalization", normalization)
        object.__setattr__(self, "heads", heads)

    @staticmethod
    def _int_tuple(values, name: str) -> tuple[int, ...]:
        return int_sequence(values, name)

    # ---- derived quantities -------------------------------------------------------------
    @property
    def depth(self) -> int:
        return len(self.attention)

    @property
    def degree(self) -> int:
        """Degree of the network as a polynomial in the tokens: 3^L."""
        return 3**self.depth

    @property
    def weight_degree(self) -> int:
        """Degree of phi in the weights: 3 for one layer, D_i = 3 D_{i-1} + 3."""
        deg = 0
        for _ in range(self.depth):
            deg = 3 * deg + 3
        return deg

    @property
    def layer_shapes(self) -> tuple[tuple[int, int, int], ...]:
        """(a_i, d_{i-1}, d_i) per layer (every head of layer i has these shapes)."""
        return tuple((self.attention[i], self.widths[i], self.widths[i + 1]) for i in range(self.depth))

    @property
    def multihead(self) -> bool:
        """Some layer has more than one head (the paper's theory covers one head per layer)."""
        return any(h > 1 for h in self.heads)

    @property
    def head_blocks(self) -> tuple[tuple[int, int, int, int, int], ...]:
        """(layer i, head h, a_i, d_{i-1}, d_i), 0-based, in the canonical weight order: layer by
        layer, head by head, each head's Q, K, V."""
        return tuple((i, h, a, d, e) for i, (a, d, e) in enumerate(self.layer_shapes) for h in range(self.heads[i]))

    @property
    def parameters(self) -> int:
        """Number of weights: sum over layers of H_i (2 a_i d_{i-1} + d_i d_{i-1})."""
        return sum(2 * a * d + e * d for _, _, a, d, e in self.head_blocks)

    @property
    def ambient_dimension(self) -> int:
        """Dimension of the space of maps K^{d_0 x t} -> K^{d_L x t}, entries homogeneous of degree 3^L."""
        n = self.widths[0] * self.tokens
        return self.widths[-1] * self.tokens * math.comb(n + self.degree - 1, self.degree)

    @classmethod
    def accepts(cls, data) -> bool:
        """A serialized old-flag architecture, as opposed to a network of blocks (for union decoding)."""
        return isinstance(data, dict) and "blocks" not in data and "block" not in data

    def to_dict(self) -> dict:
        return {
            "widths": list(self.widths),
            "attention": list(self.attention),
            "tokens": self.tokens,
            "normalization": self.normalization,
            "heads": list(self.heads),
        }

    @classmethod
    def from_dict(cls, data: dict) -> "Paper":
        if not isinstance(data, dict):
            raise InputError("an architecture must be an object with widths, attention, tokens.")
        unknown = set(data) - {"widths", "attention", "tokens", "normalization", "heads"}
        if unknown:
            raise InputError(f"unknown architecture keys: {', '.join(sorted(unknown))}.")
        for key in ("widths", "attention"):
            if key not in data:
                raise InputError(f"the architecture is missing {key}.")
        # files written before heads existed have no "heads": one head per layer
        return cls(
            data["widths"],
            data["attention"],
            data.get("tokens", 2),
            data.get("normalization", "none"),
            data.get("heads"),
        )

    def label(self) -> str:
        """Short human name, also used for result file names: w3-3-3_a2-2_t2_none (one head per layer),
        w3-3_a2_h4_t2_none (heads given only when some layer has several, so old names stay valid)."""
        heads = f"_h{'-'.join(map(str, self.heads))}" if self.multihead else ""
        return (
            f"w{'-'.join(map(str, self.widths))}_a{'-'.join(map(str, self.attention))}{heads}"
            f"_t{self.tokens}_{self.normalization}"
        )

    def __str__(self) -> str:
        heads = f" heads={','.join(map(str, self.heads))}" if self.multihead else ""
        return (
            f"widths={','.join(map(str, self.widths))} attention={','.join(map(str, self.attention))}"
            f"{heads} tokens={self.tokens} normalization={self.normalization}"
        )
