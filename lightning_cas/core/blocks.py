"""The blocks a network is made of (``core.network`` stacks them): their keys, weights and degrees.

Each block validates its own keys (``_KeyError`` names the key; the network turns it into one line
naming the file and the block) and says which weight matrices it owns, in the canonical order.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import ClassVar

from lightning_cas.core.checks import integer_value

NORMALIZATIONS = ("none", "softmax")
KINDS = ("attention", "mlp", "linear", "power")

# Limits that keep every method's memory finite (far above what a backend can finish) and every
# derived number printable.
MAX_WIDTH = 256
MAX_BLOCKS = 32
MAX_TOKENS = 64
MAX_HEADS = 64
MAX_DEGREE = 16  # of one mlp or power block
MAX_NETWORK_DEGREE = 3 ** 8  # of the whole network in the tokens (eight attention layers)
MAX_NETWORK_BYTES = 1024 * 1024


@dataclass(frozen=True)
class WeightMatrix:
    """One weight matrix of a network: where it sits in the flat weight vector, and its name."""

    block: int  # 0-based block index
    head: int  # 0-based head index (0 for blocks without heads)
    letter: str  # q k v w o (attention), u d (mlp), p (linear)
    rows: int
    cols: int
    offset: int

    @property
    def size(self) -> int:
        return self.rows * self.cols

    @property
    def stop(self) -> int:
        return self.offset + self.size


# ---------------------------------------------------------------- blocks


@dataclass(frozen=True)
class Block:
    """Common shape of every block; concrete kinds below."""

    kind: ClassVar[str] = ""

    def resolve(self, width: int) -> "Block":
        """This block with its defaults filled in for input width ``width`` (checked)."""
        raise NotImplementedError

    def output_width(self, width: int) -> int:
        return getattr(self, "out", None) or width

    def matrices(self, width: int) -> list[tuple[int, str, int, int]]:
        """(head, letter, rows, cols) of its weights for input width ``width``, in canonical order."""
        return []

    def token_degrees(self, degrees: frozenset[int]) -> frozenset[int]:
        """The homogeneous degrees (in the tokens) of its output entries, given those of its input."""
        raise NotImplementedError

    def weight_degree(self, degree: int) -> int:
        """The degree in the weights of its output entries, given that of its input."""
        raise NotImplementedError

    def to_dict(self) -> dict:
        return {"kind": self.kind, **{f.name: getattr(self, f.name) for f in fields(self)}}

    def short(self) -> str:
        """A file-name-safe tag of this block (for labels)."""
        raise NotImplementedError


def _sums(degrees: frozenset[int], count: int) -> frozenset[int]:
    """Degrees of products of ``count`` entries whose degrees lie in ``degrees`` (sumsets as bit masks:
    linear in the largest degree, which the network caps before asking)."""
    if not degrees:
        return frozenset()
    out = 1  # bit k set: degree k occurs
    for _ in range(count):
        step = 0
        for b in degrees:
            step |= out << b
        out = step
    return frozenset(k for k in range(out.bit_length()) if out >> k & 1)


@dataclass(frozen=True)
class Attention(Block):
    attention: int
    heads: int = 1
    value: int | None = None
    out: int | None = None
    causal: bool = False
    residual: bool = False
    normalization: str = "none"
    kind: ClassVar[str] = "attention"

    def resolve(self, width: int) -> "Attention":
        out = self.out if self.out is not None else width
        _positive(self.attention, "attention", MAX_WIDTH)
        _positive(self.heads, "heads", MAX_HEADS)
        _positive(out, "out", MAX_WIDTH)
        if self.value is not None:
            _positive(self.value, "value", MAX_WIDTH)
        _flag(self.causal, "causal")
        _flag(self.residual, "residual")
        if self.normalization not in NORMALIZATIONS:
            raise _KeyError("normalization", f"must be one of {', '.join(NORMALIZATIONS)}, got {self.normalization!r}")
        _residual_width(self.residual, out, width)
        return replace(self, out=out)

    def matrices(self, width: int):
        out = []
        for h in range(self.heads):
            out += [(h, "q", self.attention, width), (h, "k", self.attention, width)]
            if self.value is None:
                out.append((h, "v", self.out, width))
            else:
                out += [(h, "w", self.value, width), (h, "o", self.out, self.value)]
        return out

    def token_degrees(self, degrees):
        products = _sums(degrees, 3)
        if self.normalization != "none":
            products = frozenset()  # not polynomial
        return products | degrees if self.residual else products

    def weight_degree(self, degree: int) -> int:
        value = 2 if self.value is not None else 1
        return max(3 * degree + 2 + value, degree if self.residual else 0)

    def short(self) -> str:
        tag = f"A{self.heads}x{self.attention}" + (f"v{self.value}" if self.value is not None else "") + f"o{self.out}"
        return tag + ("c" if self.causal else "") + ("r" if self.residual else "") + \
            ("s" if self.normalization == "softmax" else "")


@dataclass(frozen=True)
class MLP(Block):
    hidden: int
    degree: int = 2
    out: int | None = None
    residual: bool = False
    kind: ClassVar[str] = "mlp"

    def resolve(self, width: int) -> "MLP":
        out = self.out if self.out is not None else width
        _positive(self.hidden, "hidden", MAX_WIDTH)
        _positive(self.degree, "degree", MAX_DEGREE)
        _positive(out, "out", MAX_WIDTH)
        _flag(self.residual, "residual")
        _residual_width(self.residual, out, width)
        return replace(self, out=out)

    def matrices(self, width: int):
        return [(0, "u", self.hidden, width), (0, "d", self.out, self.hidden)]

    def token_degrees(self, degrees):
        products = _sums(degrees, self.degree)
        return products | degrees if self.residual else products

    def weight_degree(self, degree: int) -> int:
        return max(self.degree * (degree + 1) + 1, degree if self.residual else 0)

    def short(self) -> str:
        return f"M{self.hidden}p{self.degree}o{self.out}" + ("r" if self.residual else "")


@dataclass(frozen=True)
class Linear(Block):
    out: int
    kind: ClassVar[str] = "linear"

    def resolve(self, width: int) -> "Linear":
        _positive(self.out, "out", MAX_WIDTH)
        return self

    def matrices(self, width: int):
        return [(0, "p", self.out, width)]

    def token_degrees(self, degrees):
        return degrees

    def weight_degree(self, degree: int) -> int:
        return degree + 1

    def short(self) -> str:
        return f"L{self.out}"


@dataclass(frozen=True)
class Power(Block):
    degree: int = 2
    kind: ClassVar[str] = "power"

    def resolve(self, width: int) -> "Power":
        _positive(self.degree, "degree", MAX_DEGREE)
        return self

    def token_degrees(self, degrees):
        return _sums(degrees, self.degree)

    def weight_degree(self, degree: int) -> int:
        return self.degree * degree

    def short(self) -> str:
        return f"P{self.degree}"


BLOCK_TYPES: dict[str, type[Block]] = {"attention": Attention, "mlp": MLP, "linear": Linear, "power": Power}
REQUIRED_KEYS = {"attention": ("attention",), "mlp": ("hidden",), "linear": ("out",), "power": ()}


class _KeyError(Exception):
    """A problem with one key of one block (turned into an InputError naming the block)."""

    def __init__(self, key: str, problem: str):
        super().__init__(problem)
        self.key, self.problem = key, problem


def _positive(value, key: str, cap: int) -> None:
    if integer_value(value) is None:
        raise _KeyError(key, f"must be a positive integer, got {value!r}")
    if value <= 0:
        raise _KeyError(key, f"must be a positive integer, got {value}")
    if value > cap:
        raise _KeyError(key, f"{value} is above the supported maximum of {cap}")


def _flag(value, key: str) -> None:
    if not isinstance(value, bool):
        raise _KeyError(key, f"must be true or false, got {value!r}")


def _residual_width(residual: bool, out: int, width: int) -> None:
    if residual and out != width:
        raise _KeyError("residual", f"a residual block needs out = its input width {width}, got out = {out}")
