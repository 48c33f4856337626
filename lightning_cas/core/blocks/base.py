"""What every block kind shares: ``Block`` with its common attributes and roles, the key table, weight
matrices, limits, and the registry of kinds (``register``; one module per kind registers itself).

Each kind has a key table (``Block.KEYS``): every key is checked from it, in one place
(``Block.resolve``; ``_KeyError`` names the key, the network turns it into one line naming the file
and the block). Each block says which weight matrices it owns, in the canonical order, and answers the
questions algorithms across blocks ask (which matrices read its input, which write its output, its group
factors), so those algorithms ask the block instead of testing its class.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields, replace
from typing import Any, ClassVar

from lightning_cas.core.checks import integer_value
from lightning_cas.core.limits import (  # noqa: F401 (the one table)
    MAX_BLOCKS,
    MAX_DEGREE,
    MAX_HEADS,
    MAX_NETWORK_BYTES,
    MAX_NETWORK_DEGREE,
    MAX_TOKENS,
    MAX_WIDTH,
)

NORMALIZATIONS = ("none", "softmax")
FUNCTIONS = ("relu", "gelu", "tanh", "silu", "gelu_tanh")  # non-polynomial activations (given weights only)
# piecewise linear: the rank is constant on each region of the weights and inputs, with no generic value
NOT_ANALYTIC = frozenset({"relu"})
ACTIVATIONS = ("power",) + FUNCTIONS  # an mlp's: the power of `degree`, or one of the functions
DEFAULT_EPS = 1e-5  # LayerNorm's, as PyTorch's


@dataclass(frozen=True)
class WeightMatrix:
    """One weight matrix of a network: where it sits in the flat weight vector, and its name."""

    block: int  # 0-based block index
    head: int  # 0-based head index (0 for blocks without heads)
    letter: str  # q k v w o (attention), u d (mlp), p (linear), g (a norm's gain); biases b + that letter
    rows: int
    cols: int  # 1 for a bias vector
    offset: int

    @property
    def bias(self) -> bool:
        return is_bias(self.letter)

    @property
    def vector(self) -> bool:
        """Written as one list of numbers (a bias, or a norm's gain), not as rows of a matrix."""
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
VECTOR_LETTERS = frozenset({"g"})  # weights that are vectors without being biases (a LayerNorm's or RMSNorm's gain)


def degrees_affine(degrees: frozenset[int], bias: bool) -> frozenset[int]:
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
    elif key.check == "count":
        _count(value, key.name, key.cap)
    elif key.check == "number":
        _number(value, key.name)
    elif value not in key.choices:
        raise _KeyError(key.name, f"must be one of {', '.join(key.choices)}, got {value!r}")


# ---------------------------------------------------------------- blocks


@dataclass(frozen=True)
class GroupFactor:
    """One factor of the named group: what it is, where it acts, its dimension."""

    name: str  # "GL(a)", "GL(b)", "scaling", "GL(width)", "torus", "neuron scaling"
    where: str
    dimension: int


@dataclass(frozen=True)
class Block:
    """Common shape of every block; concrete kinds in their own modules. ``KEYS`` is the block's key table:
    every key is checked from it, once, by ``resolve``. The plain class attributes are the defaults of the
    keys most kinds share (a kind with that key declares it as a field), so ``b.heads`` is 1 on any block."""

    kind: ClassVar[str] = ""
    KEYS: ClassVar[tuple[Key, ...]] = ()
    heads = 1
    residual = 0  # every kind declares it: the number of blocks of the residual group this block ends
    normalization = "none"
    mixes_tokens: ClassVar[bool] = False  # its output on a token depends on other tokens (attention)
    shift_invariant: ClassVar[bool] = False  # it maps y + c 1 as y (LayerNorm subtracts the mean)
    keeps_span: ClassVar[bool] = False  # it scales each token's vector by a positive number (RMSNorm)
    mean_free: ClassVar[bool] = False  # before its gain and bias, its output has mean 0 (LayerNorm)
    residual_written: ClassVar[bool] = False  # its files write residual = false (kinds that had it before groups)

    @property
    def polynomial(self) -> bool:
        """Its map is polynomial (every exact method applies)."""
        return True

    @property
    def bias(self) -> bool | None:
        """It has biases (a kind with biases declares the key; None until resolved: a LayerNorm's follows affine)."""
        return False

    # ---- roles the algorithms across blocks ask for (core.weight_moves, symmetry, local and tail kernels)
    def input_letters(self) -> list[str]:
        """The matrices (per head) through which it reads its input stream; empty: it reads the stream itself."""
        return []

    def output_letters(self) -> tuple[list[str], str | None]:
        """(matrices per head, bias) its output is linear in on the left, or ([], None)."""
        return [], None

    def output_bias(self) -> str | None:
        """The letter of the bias that shifts its whole output by the same vector on every token, or None."""
        return self.output_letters()[1]

    def named_function(self) -> str | None:
        """The non-polynomial function it applies other than softmax (relu, gelu, tanh, layernorm, ...)."""
        return None

    @property
    def analytic(self) -> bool:
        """Real analytic in its weights and inputs (polynomials, softmax, the norms with eps > 0, gelu, tanh,
        silu): a network of such blocks has a generic rank, its maximum, reached on an open dense set."""
        return self.named_function() not in NOT_ANALYTIC

    def group_factors(self, where: str) -> list[GroupFactor]:
        """The factors of the named group inside this block (``core.symmetry``); ``where`` names the block."""
        return []

    def group_tangents(self, tb, i: int):
        """Yield the tangents at W (arrays (k, P) of ``tb.ar``) of its own group factors, as block ``i``;
        ``tb`` is ``core.symmetry``'s builder (left, right, copy, unit on (block, head, letter) keys)."""
        return iter(())

    def gain_letters(self) -> list[str]:
        """The per-feature weights that a diagonal E scales on its output side (a norm's gain and bias)."""
        return []

    def rotated_basis(self, width: int) -> list | None:
        """A basis (Fraction rows) of the features it commutes with every rotation of, or None."""
        return None

    def dimensions(self) -> tuple[int, ...]:
        """Its inner dimensions (attention, value, hidden): memory estimates take the widest."""
        return ()

    def resolve(self, width: int) -> "Block":
        """This block with its defaults filled in for input width ``width`` (checked)."""
        block = self.filled(width)
        for key in block.KEYS:
            _check(key, getattr(block, key.name))
        if type(block.residual) is not int:  # true and false mean 1 and 0
            block = block.with_residual(int(block.residual))
        if block.residual == 1 and block.output_width(width) != width:
            raise _KeyError(
                "residual",
                f"a residual block needs out = its input width {width}, got out = {block.output_width(width)}",
            )
        block.check(width)
        return block

    def without_residual(self) -> "Block":
        """This block without its residual connection (Y + b(Y) is determined by b: the same kernels)."""
        return self.with_residual(0) if self.residual else self

    def with_residual(self, n: int) -> "Block":
        """This block ending a residual group of ``n`` blocks (every kind declares the field; the base only
        names its default, hence the cast)."""
        kind: Any = self
        return replace(kind, residual=n)

    def residual_tag(self) -> str:
        """The label's residual suffix: "" (none), "r" (around this block), "r3" (a group of three blocks)."""
        return "" if not self.residual else "r" if self.residual == 1 else f"r{self.residual}"

    def filled(self, width: int) -> "Block":
        """This block with the defaults that depend on its input (out = the input width) filled in."""
        return self

    def at_tokens(self, tokens: int) -> "Block":
        """This block on a network of ``tokens`` tokens (a position block takes one column per token)."""
        return self

    def check(self, width: int) -> None:
        """The kind's checks beyond its key table, on the filled block (raise ``_KeyError``)."""

    @classmethod
    def required_keys(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING)

    @classmethod
    def defaults(cls) -> dict:
        """The keys that have a default, and the default."""
        return {f.name: f.default for f in fields(cls) if f.default is not MISSING}

    def output_width(self, width: int) -> int:
        """Its output width on input width ``width`` (kinds with ``out`` override)."""
        return width

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
        """Every key; ``residual`` as true or false for 0 and 1 (files written before groups stay the same), and
        left out at 0 on the kinds that had no such key then."""
        out = {"kind": self.kind, **{f.name: getattr(self, f.name) for f in fields(self)}}
        n = out.get("residual")
        if isinstance(n, int) and not isinstance(n, bool) and n <= 1:
            out["residual"] = bool(n)
        if not n and not self.residual_written:
            out.pop("residual", None)
        return out

    def short(self) -> str:
        """A file-name-safe tag of this block (for labels)."""
        raise NotImplementedError


def resolved_out(out: int | None) -> int:
    """``out`` of a resolved block (``filled`` sets it to the input width when the file left it out)."""
    if out is None:
        raise ValueError("the block is not resolved: its out follows the input width (Network resolves it)")
    return out


def gl_pairs(n: int):
    """The (row, column) index pairs of the n^2 elementary matrices: a basis of gl(n)."""
    import numpy as np

    rr, cc = np.divmod(np.arange(n * n), n)
    return rr, cc


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
_RESIDUAL = Key("residual", "count", MAX_BLOCKS)  # n: this block ends a residual group of the last n blocks
_BIAS = Key("bias", "flag")


# ---------------------------------------------------------------- the registry of kinds

BLOCK_TYPES: dict[str, type[Block]] = {}  # kind -> class, in the order the kind modules register


def register(cls: type[Block]) -> type[Block]:
    """A block kind's class decorator: the one row that makes the kind known to files and messages."""
    BLOCK_TYPES[cls.kind] = cls
    return cls


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


def _count(value, key: str, cap: int) -> None:
    """A count 0..cap; true and false count as 1 and 0."""
    if isinstance(value, bool):
        return
    if integer_value(value) is None or value < 0:
        raise _KeyError(key, f"must be true, false or a block count >= 0, got {value!r}")
    if value > cap:
        raise _KeyError(key, f"{value} is above the supported maximum of {cap}")


def _flag(value, key: str) -> None:
    if not isinstance(value, bool):
        raise _KeyError(key, f"must be true or false, got {value!r}")
