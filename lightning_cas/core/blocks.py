"""The blocks a network is made of (``core.network`` stacks them): their keys, weights and degrees.

Each kind has a key table (``Block.KEYS``): every key is checked from it, in one place
(``Block.resolve``; ``_KeyError`` names the key, the network turns it into one line naming the file
and the block). Each block says which weight matrices it owns, in the canonical order.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields, replace
from typing import ClassVar

from lightning_cas.core.checks import integer_value

NORMALIZATIONS = ("none", "softmax")
FUNCTIONS = ("relu", "gelu", "tanh")  # the non-polynomial activations (given weights only)
ACTIVATIONS = ("power",) + FUNCTIONS  # an mlp's: the power of `degree`, or one of the functions
KINDS = ("attention", "mlp", "linear", "power", "activation", "layernorm")
DEFAULT_EPS = 1e-5  # LayerNorm's, as PyTorch's

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
    letter: str  # q k v w o (attention), u d (mlp), p (linear), g (layernorm gain); biases b + that letter
    rows: int
    cols: int  # 1 for a bias vector
    offset: int

    @property
    def bias(self) -> bool:
        return is_bias(self.letter)

    @property
    def vector(self) -> bool:
        """Written as one list of numbers (a bias, or a LayerNorm gain), not as rows of a matrix."""
        return self.bias or self.letter in VECTOR_LETTERS

    @property
    def size(self) -> int:
        return self.rows * self.cols

    @property
    def stop(self) -> int:
        return self.offset + self.size


def is_bias(letter: str) -> bool:
    """A bias vector's letter: b followed by the letter of the matrix it goes with (bo: the output bias)."""
    return letter.startswith("b")


# letters that belong to an attention block rather than to one of its heads (the output bias after the sum)
BLOCK_LETTERS = frozenset({"bo"})
VECTOR_LETTERS = frozenset({"g"})  # weights that are vectors without being biases (a LayerNorm's gain)


def _affine(degrees: frozenset[int], bias: bool) -> frozenset[int]:
    """Degrees after adding a bias (a constant) to entries of the given degrees."""
    return degrees | {0} if bias else degrees


# ---------------------------------------------------------------- the key table


@dataclass(frozen=True)
class Key:
    """One key of a block kind: its check ("positive" with a cap, "flag", "number" (positive and finite),
    or "choice" of ``choices``).
    A key whose dataclass field has no default is required; ``optional`` keys may be None."""

    name: str
    check: str
    cap: int = 0
    choices: tuple[str, ...] = ()
    optional: bool = False


def _check(key: Key, value) -> None:
    if value is None and key.optional:
        return
    if key.check == "positive":
        _positive(value, key.name, key.cap)
    elif key.check == "flag":
        _flag(value, key.name)
    elif key.check == "number":
        _number(value, key.name)
    elif value not in key.choices:
        raise _KeyError(key.name, f"must be one of {', '.join(key.choices)}, got {value!r}")


# ---------------------------------------------------------------- blocks


@dataclass(frozen=True)
class Block:
    """Common shape of every block; concrete kinds below. ``KEYS`` is the block's key table: every key
    is checked from it, once, by ``resolve``."""

    kind: ClassVar[str] = ""
    KEYS: ClassVar[tuple[Key, ...]] = ()
    polynomial: ClassVar[bool] = True  # its map is polynomial (every exact method applies)

    def resolve(self, width: int) -> "Block":
        """This block with its defaults filled in for input width ``width`` (checked)."""
        block = replace(self, out=width) if getattr(self, "out", 0) is None and "out" in self.defaults() else self
        for key in self.KEYS:
            _check(key, getattr(block, key.name))
        if getattr(block, "residual", False) and block.output_width(width) != width:
            raise _KeyError("residual", f"a residual block needs out = its input width {width}, got out = "
                                        f"{block.output_width(width)}")
        return block

    @classmethod
    def required_keys(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING)

    @classmethod
    def defaults(cls) -> dict:
        """The keys that have a default, and the default."""
        return {f.name: f.default for f in fields(cls) if f.default is not MISSING}

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


_OUT = Key("out", "positive", MAX_WIDTH)
_RESIDUAL = Key("residual", "flag")
_BIAS = Key("bias", "flag")


@dataclass(frozen=True)
class Attention(Block):
    attention: int
    heads: int = 1
    value: int | None = None
    out: int | None = None
    causal: bool = False
    residual: bool = False
    normalization: str = "none"
    bias: bool = False
    kind: ClassVar[str] = "attention"
    KEYS: ClassVar[tuple[Key, ...]] = (Key("attention", "positive", MAX_WIDTH), Key("heads", "positive", MAX_HEADS),
                                       _OUT, Key("value", "positive", MAX_WIDTH, optional=True),
                                       Key("causal", "flag"), _RESIDUAL,
                                       Key("normalization", "choice", choices=NORMALIZATIONS), _BIAS)

    @property
    def polynomial(self) -> bool:
        return self.normalization == "none"

    def matrices(self, width: int):
        out = []
        for h in range(self.heads):
            out += [(h, "q", self.attention, width), (h, "k", self.attention, width)]
            if self.value is None:
                out.append((h, "v", self.out, width))
            else:
                out += [(h, "w", self.value, width), (h, "o", self.out, self.value)]
            if self.bias:  # Q y + b_q, K y + b_k, V y + b_v (or W y + b_w)
                out += [(h, "bq", self.attention, 1), (h, "bk", self.attention, 1)]
                out.append((h, "bv", self.out, 1) if self.value is None else (h, "bw", self.value, 1))
        if self.bias and self.value is not None:  # one output bias after the head sum, as PyTorch has
            out.append((0, "bo", self.out, 1))
        return out

    def token_degrees(self, degrees):
        products = _sums(_affine(degrees, self.bias), 3)
        products = _affine(products, self.bias and self.value is not None)
        if self.normalization != "none":
            products = frozenset()  # not polynomial
        return products | degrees if self.residual else products

    def weight_degree(self, degree: int) -> int:
        value = 2 if self.value is not None else 1
        return max(3 * degree + 2 + value, degree if self.residual else 0)

    def short(self) -> str:
        tag = f"A{self.heads}x{self.attention}" + (f"v{self.value}" if self.value is not None else "") + f"o{self.out}"
        return tag + ("c" if self.causal else "") + ("r" if self.residual else "") + \
            ("s" if self.normalization == "softmax" else "") + ("b" if self.bias else "")


@dataclass(frozen=True)
class MLP(Block):
    hidden: int
    degree: int = 2
    out: int | None = None
    residual: bool = False
    bias: bool = False
    activation: str = "power"
    kind: ClassVar[str] = "mlp"
    KEYS: ClassVar[tuple[Key, ...]] = (Key("hidden", "positive", MAX_WIDTH), Key("degree", "positive", MAX_DEGREE),
                                       _OUT, _RESIDUAL, _BIAS, Key("activation", "choice", choices=ACTIVATIONS))

    def resolve(self, width: int) -> "Block":
        block = super().resolve(width)
        if block.activation != "power" and block.degree != 2:
            raise _KeyError("degree", f"is the power of activation = \"power\"; with activation = "
                                      f"\"{block.activation}\" leave it out")
        return block

    @property
    def polynomial(self) -> bool:
        return self.activation == "power"

    def matrices(self, width: int):
        bias = [(0, "bu", self.hidden, 1), (0, "bd", self.out, 1)] if self.bias else []
        return [(0, "u", self.hidden, width), (0, "d", self.out, self.hidden)] + bias

    def token_degrees(self, degrees):
        if not self.polynomial:
            return frozenset()
        products = _affine(_sums(_affine(degrees, self.bias), self.degree), self.bias)
        return products | degrees if self.residual else products

    def weight_degree(self, degree: int) -> int:
        return max(self.degree * (degree + 1) + 1, degree if self.residual else 0)

    def short(self) -> str:
        act = f"p{self.degree}" if self.polynomial else self.activation
        return f"M{self.hidden}{act}o{self.out}" + ("r" if self.residual else "") + ("b" if self.bias else "")


@dataclass(frozen=True)
class Linear(Block):
    out: int
    bias: bool = False
    kind: ClassVar[str] = "linear"
    KEYS: ClassVar[tuple[Key, ...]] = (_OUT, _BIAS)

    def matrices(self, width: int):
        return [(0, "p", self.out, width)] + ([(0, "bp", self.out, 1)] if self.bias else [])

    def token_degrees(self, degrees):
        return _affine(degrees, self.bias)

    def weight_degree(self, degree: int) -> int:
        return degree + 1

    def short(self) -> str:
        return f"L{self.out}" + ("b" if self.bias else "")


@dataclass(frozen=True)
class Power(Block):
    degree: int = 2
    kind: ClassVar[str] = "power"
    KEYS: ClassVar[tuple[Key, ...]] = (Key("degree", "positive", MAX_DEGREE),)

    def token_degrees(self, degrees):
        return _sums(degrees, self.degree)

    def weight_degree(self, degree: int) -> int:
        return self.degree * degree

    def short(self) -> str:
        return f"P{self.degree}"


@dataclass(frozen=True)
class Activation(Block):
    """relu, gelu or tanh entrywise, no weights: a network with one has a rank at given weights only."""

    function: str
    kind: ClassVar[str] = "activation"
    KEYS: ClassVar[tuple[Key, ...]] = (Key("function", "choice", choices=FUNCTIONS),)
    polynomial: ClassVar[bool] = False

    def token_degrees(self, degrees):
        return frozenset()

    def weight_degree(self, degree: int) -> int:
        return degree

    def short(self) -> str:
        return f"F{self.function}"


@dataclass(frozen=True)
class LayerNorm(Block):
    """PyTorch's LayerNorm over the features of each token: g o (y - mean) / sqrt(var + eps) + b_g (the gain
    g and bias b_g with ``affine``, as elementwise_affine; ``bias`` defaults to ``affine``)."""

    affine: bool = True
    bias: bool | None = None
    eps: float = DEFAULT_EPS
    kind: ClassVar[str] = "layernorm"
    KEYS: ClassVar[tuple[Key, ...]] = (Key("affine", "flag"), _BIAS, Key("eps", "number"))
    polynomial: ClassVar[bool] = False

    def resolve(self, width: int) -> "Block":
        block = replace(self, bias=self.affine) if self.bias is None else self
        block = super(LayerNorm, block).resolve(width)
        if block.bias and not block.affine:
            raise _KeyError("bias", "needs affine = true (PyTorch has no bias without elementwise_affine)")
        if width < 2:
            raise _KeyError("affine", "a LayerNorm needs at least two features (one feature normalizes to 0)")
        return block

    @classmethod
    def defaults(cls) -> dict:
        return {**super().defaults(), "bias": True}

    def matrices(self, width: int):
        return ([(0, "g", width, 1)] if self.affine else []) + ([(0, "bg", width, 1)] if self.bias else [])

    def token_degrees(self, degrees):
        return frozenset()

    def weight_degree(self, degree: int) -> int:
        return degree + 1

    def short(self) -> str:
        eps = "" if self.eps == DEFAULT_EPS else f"e{self.eps:g}"
        return "N" + ("g" if self.affine else "") + ("b" if self.bias else "") + eps


BLOCK_TYPES: dict[str, type[Block]] = {"attention": Attention, "mlp": MLP, "linear": Linear, "power": Power,
                                       "activation": Activation, "layernorm": LayerNorm}
REQUIRED_KEYS = {kind: cls.required_keys() for kind, cls in BLOCK_TYPES.items()}


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


def _number(value, key: str) -> None:
    import math

    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise _KeyError(key, f"must be a positive finite number, got {value!r}")


def _flag(value, key: str) -> None:
    if not isinstance(value, bool):
        raise _KeyError(key, f"must be true or false, got {value!r}")
