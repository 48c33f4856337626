"""A network as a stack of blocks: the one description every backend, theory and file reads.

A network acts on a d_0 x t token matrix Y (tokens are columns) through blocks in order; each block
maps width d to ``out`` (default d). The kinds, their keys and their weights, in the canonical
weight order (block by block; inside a block as listed; every matrix row-major):

* ``attention`` (heads, attention a, value b, out, causal, residual, normalization, bias): per head
  Q, K (a x d), then V (out x d), or, with a value dim b, W (b x d) and O (out x b), V = O W. It maps
  Y to sum_h V_h Y S_h with S_h = (K_h Y)^T (Q_h Y) (entry (i, j) = <K y_i, Q y_j>, key i, query j);
  causal keeps i <= j; softmax normalizes each column of S_h over the kept keys. With ``bias`` each
  projection is affine, b broadcast over the tokens: per head b_q, b_k (a), b_v (out) or b_w (b),
  after the head's matrices; with a value dim one output bias b_o (out) after the head sum, last.
* ``mlp`` (hidden m, degree r, out, residual, bias): U = W_1 (m x d), D = W_2 (out x m):
  D (U Y)^{o r}; with bias D (U Y + b_u)^{o r} + b_d (b_u, b_d after U, D).
* ``linear`` (out, bias): P (out x d): P Y (+ b_p).
* ``power`` (degree r): Y^{o r}, entrywise, no weights.
* given weights only (not polynomial, no generic dimension; their rank at given weights is exact for ReLU
  and certified otherwise): an mlp's ``activation`` relu, gelu (the erf form), tanh, silu or gelu_tanh in place of the
  power; ``activation`` (function): that function entrywise, no weights; ``layernorm`` (affine, bias,
  eps): PyTorch's LayerNorm over each token's features, g o (y - mean) / sqrt(var + eps) + b_g, the
  gain g and bias b_g (d each) with ``affine``; ``rmsnorm`` (affine, eps): PyTorch's RMSNorm,
  g o y / sqrt(mean(y^2) + eps), the gain g (d) with ``affine``; ``position``: Y + E, E (d x tokens).

Every kind has ``residual`` = n >= 0 (true = 1): block i ends a residual group of blocks i - n + 1..i, whose
output is its input plus theirs (core.residual_groups; nested or disjoint, width kept). The paper's network (the flags
``--widths/--attention/--heads``) is the stack of plain attention blocks; ``Network.from_paper`` builds
it, with the same weight order and names, and ``net.paper`` gives its numbers back (core.paper). Such a
network is written, named and shown in the paper's words, so old result files and cache names stay valid.
Validation happens here, once, before any work: a file names itself, the block and the key.
"""

from __future__ import annotations

__all__ = [
    "Network",
    "Block",
    "Attention",
    "MLP",
    "Linear",
    "Power",
    "Position",
    "Activation",
    "LayerNorm",
    "RMSNorm",
    "WeightMatrix",
    "describe_block",
    "residual_group",
]

import functools
import math
from dataclasses import dataclass, field

from lightning_cas.core import residual_groups
from lightning_cas.core.blocks import (
    BLOCK_TYPES,
    MAX_BLOCKS,
    MAX_NETWORK_DEGREE,
    MAX_TOKENS,
    MAX_WIDTH,
    MLP,
    Activation,
    Attention,
    Block,
    LayerNorm,
    Linear,
    Position,
    Power,
    RMSNorm,
    WeightMatrix,
    _KeyError,
)
from lightning_cas.core.checks import as_sequence
from lightning_cas.core.names import network_weight_names
from lightning_cas.core.network_files import (
    _plain_numbers,
    _top_int,
    describe_block,
    json_text,
    network_blocks,
    toml_text,
)
from lightning_cas.core.paper import Paper
from lightning_cas.core.residual_groups import group_problem, residual_group, skip_in, skip_out
from lightning_cas.core.transformer import transformer_blocks
from lightning_cas.errors import InputError


@dataclass(frozen=True)
class Network:
    """A network: input width, token count, blocks (validated and with every default resolved).

    >>> net = Network(4, 3, (Attention(2, value=2), MLP(8), Linear(1), Power(2)))
    >>> net.widths, net.parameters
    ((4, 4, 4, 1, 1), 100)
    """

    input: int
    tokens: int = 2
    blocks: tuple[Block, ...] = field(default=())

    def __post_init__(self):
        self._validate("network")

    def _validate(self, source: str) -> None:
        width = _top_int(self.input, "input", source, MAX_WIDTH)
        tokens = _top_int(self.tokens, "tokens", source, MAX_TOKENS)
        blocks = self.blocks
        blocks = tuple(as_sequence(blocks, f"{source}: blocks", "blocks"))
        if not blocks:
            raise InputError(f"{source}: a network needs at least one block.")
        if len(blocks) > MAX_BLOCKS:
            raise InputError(f"{source}: {len(blocks)} blocks is above the supported maximum of {MAX_BLOCKS}.")
        resolved, widths = [], [width]
        for i, block in enumerate(blocks):
            if not isinstance(block, Block):
                names = [cls.__name__ for cls in BLOCK_TYPES.values()]
                raise InputError(
                    f"{source}: block {i} must be an {', '.join(names[:-1])} or {names[-1]} block, "
                    f"got {type(block).__name__}."
                )
            try:
                block = _plain_numbers(block).at_tokens(tokens).resolve(width)
            except _KeyError as exc:
                raise InputError(f"{source}: block {i} ({block.kind}): {exc.key} {exc.problem}.") from None
            resolved.append(block)
            width = block.output_width(width)
            widths.append(width)
        problem = group_problem(resolved, widths)
        if problem is not None:
            raise InputError(f"{source}: {problem}.")
        object.__setattr__(self, "input", int(self.input))
        object.__setattr__(self, "tokens", tokens)
        object.__setattr__(self, "blocks", tuple(resolved))
        if not self.parameters:
            raise InputError(f"{source}: the network has no weights (only power blocks); there is nothing to compute.")
        # the largest degree by arithmetic (one degree through every block), before any degree set is built
        tops: list[frozenset[int]] = [frozenset({1})]
        for i, block in enumerate(self.blocks, start=1):
            top = block.token_degrees(tops[-1]) | (tops[i - block.residual] if block.residual else frozenset())
            top = frozenset({max(top)}) if top else top
            tops.append(top)
            if top and max(top) > MAX_NETWORK_DEGREE:
                raise InputError(
                    f"{source}: the network has degree {max(top)} in the tokens after block {i}, above "
                    f"the supported maximum of {MAX_NETWORK_DEGREE}."
                )

    @classmethod
    def from_paper(cls, widths, attention=None, tokens=2, normalization: str = "none", heads=None) -> "Network":
        """The paper's stack of plain attention blocks from its numbers (or from a `Paper`): validated once
        by `Paper`, the weight order and names the paper's."""
        paper = widths if isinstance(widths, Paper) else Paper(widths, attention, tokens, normalization, heads)
        net = cls(
            paper.widths[0],
            paper.tokens,
            tuple(
                Attention(attention=a, heads=h, out=e, normalization=paper.normalization)
                for (a, _, e), h in zip(paper.layer_shapes, paper.heads)
            ),
        )
        net.__dict__["paper"] = paper  # the very numbers it came from
        return net

    @functools.cached_property
    def paper(self) -> Paper | None:
        """The paper's numbers (widths, attention, heads, layer shapes, label) when this is its plain stack of
        attention blocks, else None: what the closed forms and the one-layer geometry read."""
        stack = self.plain_stack()
        if stack is None:
            return None
        widths, attention, heads, normalization = stack
        return Paper(widths, attention, self.tokens, normalization, heads)

    @classmethod
    def from_dict(cls, data, source: str = "network") -> "Network":
        paper_keys, network_keys = {"widths", "attention"}, {"input", "block", "blocks"}
        if isinstance(data, dict) and paper_keys & set(data) and not network_keys & set(data):
            return cls.from_paper(Paper.from_dict(data))  # the paper's spelling (old results, batch specs)
        blocks = network_blocks(data, source)
        net = cls.__new__(cls)
        object.__setattr__(net, "input", data["input"])
        object.__setattr__(net, "tokens", data.get("tokens", 2))
        object.__setattr__(net, "blocks", tuple(blocks))
        net._validate(source)
        return net

    def to_dict(self) -> dict:
        """The paper's spelling (widths, attention, ...) for its network, else input, tokens and blocks; both
        read back through `from_dict`."""
        if self.paper is not None:
            return self.paper.to_dict()
        return self.blocks_dict()

    def blocks_dict(self) -> dict:
        """Input, tokens and blocks, whatever the network (the network file's form)."""
        return {"input": self.input, "tokens": self.tokens, "blocks": [b.to_dict() for b in self.blocks]}

    def to_json(self) -> str:
        """The JSON form of a network file (``Network.from_dict(json.loads(...))`` gives this network back)."""
        return json_text(self.blocks_dict())

    def to_toml(self) -> str:
        """The TOML form of a network file (``load_network`` reads it back to an equal network)."""
        return toml_text(self.input, self.tokens, self.blocks)

    @property
    def widths(self) -> tuple[int, ...]:
        """The width before every block and after the last: d_0, ..., d_n."""
        out, width = [self.input], self.input
        for b in self.blocks:
            width = b.output_width(width)
            out.append(width)
        return tuple(out)

    @property
    def output(self) -> int:
        return self.widths[-1]

    @property
    def polynomial(self) -> bool:
        """No softmax, activation function or LayerNorm anywhere: the map is a polynomial and every exact
        method applies."""
        return all(b.polynomial for b in self.blocks)

    @property
    def analytic(self) -> bool:
        """Every block analytic (no relu): the map has a generic rank, so a generic dimension."""
        return all(b.analytic for b in self.blocks)

    @property
    def functions(self) -> tuple[str, ...]:
        """The non-polynomial pieces other than softmax, in order, once each (relu, gelu, tanh, layernorm):
        a network with any has a rank at given weights only (its rank changes with the weights)."""
        found: list[str] = []
        for b in self.blocks:
            name = b.named_function()
            if name is not None and name not in found:
                found.append(name)
        return tuple(found)

    @property
    def not_polynomial(self) -> str:
        """What makes the map not polynomial, in words ("softmax attention", "relu and layernorm"; "" if
        nothing): the one phrase every refusal uses."""
        parts = (["softmax attention"] if any(b.normalization != "none" for b in self.blocks) else []) + list(
            self.functions
        )
        return " and ".join(parts)

    @property
    def biased(self) -> bool:
        """Some block has biases: the map is affine-polynomial, not homogeneous (no cone)."""
        return any(b.bias for b in self.blocks)

    @property
    def normalization(self) -> str:
        """ "softmax" if any attention block normalizes, else "none" (the backends' switch)."""
        return "none" if self.polynomial else "softmax"

    @property
    def token_degrees(self) -> frozenset[int]:
        """The homogeneous degrees in the tokens of the output entries (one degree unless residual)."""
        return residual_groups.token_degrees(self.blocks)

    @property
    def degree(self) -> int:
        """The total degree in the tokens (the largest homogeneous degree)."""
        return max(self.token_degrees, default=0)

    @property
    def weight_degree(self) -> int:
        """The degree of an output entry in the weights (Schwartz-Zippel bounds use it)."""
        return residual_groups.weight_degree(self.blocks)

    def skip_in(self, i: int) -> bool:
        """Block i's input also feeds a skip: no change of it can be absorbed by block i alone."""
        return skip_in(self.blocks, i)

    def skip_out(self, i: int) -> bool:
        """Block i's output is added to a skip: no change can be pushed out of it into the next block."""
        return skip_out(self.blocks, i)

    @property
    def weight_matrices(self) -> tuple[WeightMatrix, ...]:
        """Every weight matrix in the canonical order, with its offset in the flat weight vector."""
        out, offset, width = [], 0, self.input
        for i, b in enumerate(self.blocks):
            for head, letter, rows, cols in b.matrices(width):
                out.append(WeightMatrix(i, head, letter, rows, cols, offset))
                offset += rows * cols
            width = b.output_width(width)
        return tuple(out)

    @property
    def parameters(self) -> int:
        return sum(m.size for m in self.weight_matrices)

    @property
    def ambient_dimension(self) -> int | None:
        """Dimension of the space of polynomial maps with the network's degrees (None with softmax).

        Without attention every token goes through the same map, so one token's maps are the space. The
        paper's network has the paper's (with softmax too: the space its closed forms are stated in)."""
        if self.paper is not None:
            return self.paper.ambient_dimension
        if not self.polynomial:
            return None
        if not any(b.mixes_tokens for b in self.blocks):
            return self.output * sum(math.comb(self.input + k - 1, k) for k in self.token_degrees)
        n = self.input * self.tokens
        return self.output * self.tokens * sum(math.comb(n + k - 1, k) for k in self.token_degrees)

    @property
    def rows_per_sample(self) -> int:
        """Jacobian rows one token matrix contributes."""
        return self.output * self.tokens

    @property
    def widest(self) -> int:
        """The largest width any intermediate array of the forward pass has (widths, attention, value
        and hidden dims, tokens): the backends' memory estimates use it."""
        dims = list(self.widths) + [self.tokens]
        for b in self.blocks:
            dims += list(b.dimensions())
        return max(dims)

    @property
    def depth(self) -> int:
        """The number of blocks (tables sort by it, next to the old flags' number of layers)."""
        return len(self.blocks)

    @property
    def attention(self) -> tuple[int, ...]:
        """The attention dims of the attention blocks, in order (the old flags' column in tables)."""
        return tuple(b.attention for b in self.blocks if isinstance(b, Attention))

    @property
    def heads(self) -> tuple[int, ...]:
        """The head counts of the attention blocks, in order."""
        return tuple(b.heads for b in self.blocks if isinstance(b, Attention))

    @property
    def multihead(self) -> bool:
        return any(b.heads > 1 for b in self.blocks)

    def weight_names(self) -> list[str]:
        """The name of every weight in the canonical order (core.names, Macaulay2's indexed variables):
        letter_(i,r,c) (block i, 1-based), or letter_(i,h,r,c) in an attention block with several heads;
        a bias entry letter_(i,r) or letter_(i,h,r) (bq, bk, bv, bw per head; bo, bu, bd, bp)."""
        return network_weight_names(self.weight_matrices, self.blocks)

    def label(self) -> str:
        """File-name-safe and unique: net_d4_t3_A1x2v2o4c-M8p2o4-L1-P2; the paper's label for its network
        (w3-3-3_a2-2_t2_none), so cache names stay what they were."""
        if self.paper is not None:
            return self.paper.label()
        return f"net_d{self.input}_t{self.tokens}_" + "-".join(b.short() for b in self.blocks)

    def __str__(self) -> str:
        if self.paper is not None:
            return str(self.paper)
        return f"input={self.input} tokens={self.tokens} blocks=" + " | ".join(describe_block(b) for b in self.blocks)

    @classmethod
    def transformer(
        cls,
        d_model: int,
        n_heads: int,
        d_head: int,
        n_layers: int,
        *,
        d_mlp: int | None = None,
        mlp_degree: int = 2,
        causal: bool = True,
        residual: bool = True,
        tokens: int = 3,
        normalization: str = "none",
        bias: bool = False,
    ) -> "Network":
        """A bias-free transformer stack in PyTorch's terms: per layer an attention block with n_heads heads,
        query/key/value dim d_head and an output projection (value dim d_head), then an mlp block
        (x -> W_2 (W_1 x)^{mlp_degree}) when d_mlp is given; no biases, no LayerNorm. Its parameter count is
        PyTorch's bias-free count: 4 d_model n_heads d_head + 2 d_model d_mlp per layer. With ``bias`` every
        projection has its bias, as PyTorch's defaults do (3 n_heads d_head + d_model for the attention,
        d_mlp + d_model for the mlp)."""
        blocks = transformer_blocks(
            d_model, n_heads, d_head, n_layers, d_mlp, mlp_degree, causal, residual, normalization, bias
        )
        return cls(d_model, tokens, blocks)

    @classmethod
    def polynomial_network(cls, widths, exponent: int = 2) -> "Network":
        """The polynomial network (d_0, d_1, ..., d_L) with activation x^r, as the field writes it: x -> W_L
        s(W_(L-1) ... s(W_1 x)), s the entrywise r-th power, no biases, one token; linear and power blocks."""
        widths = tuple(widths)
        if len(widths) < 2:
            raise InputError(f"a polynomial network needs at least two widths (d_0, d_1), got {list(widths)}.")
        blocks: list[Block] = []
        for k, d in enumerate(widths[1:]):
            blocks += ([Power(exponent)] if k else []) + [Linear(d)]
        return cls(widths[0], 1, tuple(blocks))

    def polynomial_widths(self) -> tuple[tuple[int, ...], int] | None:
        """(widths, exponent) when this is a polynomial network as the field writes it (see
        ``polynomial_network``), else None."""
        blocks, exponents = self.blocks, set()
        if self.tokens != 1 or len(blocks) % 2 == 0:
            return None
        for k, b in enumerate(blocks):
            if k % 2 == 0 and not (isinstance(b, Linear) and not b.bias and not b.residual):
                return None
            if k % 2 == 1:
                if not isinstance(b, Power) or b.residual:
                    return None
                exponents.add(b.degree)
        if len(exponents) > 1:
            return None
        return (self.widths[0],) + tuple(self.widths[1::2]), exponents.pop() if exponents else 1

    def plain_stack(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], str] | None:
        """(widths, attention, heads, normalization) when this is the paper's network (only plain attention
        blocks: full value map, not causal, not residual, no biases, one normalization), else None."""
        plain = [
            b
            for b in self.blocks
            if isinstance(b, Attention) and b.value is None and not b.causal and not b.residual and not b.bias
        ]
        if len(plain) != len(self.blocks):
            return None
        norms = {b.normalization for b in plain}
        if len(norms) != 1:
            return None
        return self.widths, tuple(b.attention for b in plain), tuple(b.heads for b in plain), norms.pop()
