"""Small networks, dyadic points and integer inputs for the oracle to check, by family.

One generator serves hypothesis (``pick`` draws from a strategy) and the report script (``pick`` is a
seeded ``random.Random.choice``): a draw is a sequence of choices from small lists, so hypothesis can
shrink a failure to a small network. Networks stay at most ``CAP`` weights: the oracle differentiates
its forward pass once per weight at 150 digits.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from fractions import Fraction

from lightning_cas.core.network import MLP, Activation, Attention, LayerNorm, Linear, Network, Position, Power

CAP = 32
# dyadic weights: small multiples of 1/4, zero included (degenerate points are where kernels go wrong)
WEIGHTS = tuple(Fraction(k, 4) for k in range(-6, 7))
ENTRIES = (-2, -1, 0, 1, 2)  # input entries
MAX_INPUTS = 8
FAMILIES = ("softmax", "smooth", "layernorm", "relu", "mixed", "biased", "post-LN", "pre-LN", "position")


@dataclass(frozen=True)
class Case:
    """One draw: a network, a point (flat Fractions, canonical order) and token matrices (N x d_0 x t)."""

    family: str
    network: Network
    weights: tuple[Fraction, ...]
    inputs: tuple[tuple[tuple[int, ...], ...], ...]

    def python(self) -> str:
        """The network as a constructor call, the point and the inputs, pasteable."""
        w = ", ".join(
            f"F({q.numerator}, {q.denominator})" if q.denominator != 1 else f"F({q.numerator})" for q in self.weights
        )
        return (
            f"net = {network_call(self.network)}\nweights = [{w}]\n"
            f"inputs = {[[list(row) for row in X] for X in self.inputs]}"
        )


def network_call(net: Network) -> str:
    """``Network(3, 2, (Attention(1, bias=True), Linear(3, bias=True)))``: the keys that differ from the
    defaults (``out`` always, as resolved)."""
    parts = []
    for b in net.blocks:
        defaults = b.defaults()
        args = []
        for f in fields(b):
            value = getattr(b, f.name)
            if f.name in defaults and value == defaults[f.name] and f.name != "out":
                continue
            args.append(f"{f.name}={value!r}")
        parts.append(f"{type(b).__name__}(" + ", ".join(args) + ")")
    return f"Network({net.input}, {net.tokens}, (" + ", ".join(parts) + ("," if len(parts) == 1 else "") + "))"


def _bias(pick, forced: bool) -> bool:
    return True if forced else pick((True, True, False))


def _attention(pick, width: int, softmax: bool, biased: bool) -> Attention:
    residual = pick((False, False, True))
    out = width if residual else pick((width, 1, 2))
    return Attention(
        pick((1, 2)),
        heads=pick((1, 1, 2)),
        value=pick((None, None, 1)),
        out=out,
        causal=pick((False, True)),
        residual=residual,
        normalization="softmax" if softmax else "none",
        bias=_bias(pick, biased),
    )


def _mlp(pick, width: int, activation: str, biased: bool) -> MLP:
    residual = pick((False, False, True))
    out = width if residual else pick((width, 1, 2))
    return MLP(pick((1, 2)), out=out, residual=residual, bias=_bias(pick, biased), activation=activation)


def _block(pick, kind: str, width: int, biased: bool = False):
    """One block of ``kind`` for input width ``width`` (None when the kind does not fit there); with
    ``biased`` every block that can have biases has them."""
    if kind in ("softmax", "lightning"):
        return _attention(pick, width, kind == "softmax", biased)
    if kind in ("tanh", "gelu", "relu", "silu", "gelu_tanh"):
        return _mlp(pick, width, kind, biased) if pick((True, False)) else Activation(kind)
    if kind == "linear":
        return Linear(pick((1, 2, 3)), bias=_bias(pick, biased))
    if kind == "mlp":
        return _mlp(pick, width, "power", biased)
    if kind == "power":
        return Power(2)
    if kind == "position":
        return Position()
    if kind == "layernorm":
        if width < 2:
            return None
        affine = True if biased else pick((True, True, False))
        return LayerNorm(affine=affine, bias=affine and _bias(pick, biased))
    raise ValueError(kind)


# the block kinds each family draws from; its first kind appears at least once
KINDS = {
    "softmax": ("softmax", "linear", "softmax", "mlp", "lightning"),
    "smooth": (("tanh", "gelu", "silu", "gelu_tanh"), "linear", "lightning", "softmax", "mlp"),
    "layernorm": ("layernorm", "linear", "lightning", "softmax", "tanh"),
    "relu": ("relu", "linear", "lightning", "mlp", "power"),
    "mixed": (
        ("softmax", "tanh", "gelu", "relu", "layernorm"),
        "linear",
        "lightning",
        "softmax",
        "tanh",
        "gelu",
        "relu",
        "layernorm",
        "mlp",
    ),
    # every bias present: affine maps break the symmetries that homogeneous ones have
    "biased": (("softmax", "tanh", "gelu", "layernorm"), "linear", "linear", "lightning", "softmax", "tanh"),
    # a learned positional embedding among the others (its signature), softmax or tanh for a non-polynomial map
    "position": ("position", "softmax", "linear", "lightning", "tanh", "mlp", "position"),
}


def _kind(pick, entry):
    return pick(entry) if isinstance(entry, tuple) else entry


def _post_ln(pick) -> Network:
    """A post-LN transformer layer, x -> LN(x + SA(x)) -> LN(y + FF(y)), as blocks (softmax attention and an mlp,
    both residual, each LayerNorm after one): the residual streams next to norms where the stream mechanisms act
    (core.stream_kernels). Over CAP the attention shrinks to one head of width 1, then blocks go from the end."""
    d0, tokens = pick((2, 2, 3)), pick((2, 3))

    def norm():
        affine = pick((True, True, False))
        return LayerNorm(affine=affine, bias=affine and pick((True, True, False)))

    biased = pick((True, True, False))
    rich = Attention(
        pick((1, 2)),
        heads=pick((1, 1, 2)),
        value=pick((None, None, 1)),
        out=d0,
        causal=pick((False, True)),
        residual=True,
        normalization="softmax",
        bias=biased,
    )
    small = Attention(1, out=d0, residual=True, normalization="softmax", bias=biased)
    activation = pick(("relu", "gelu", "tanh"))
    rest = [norm(), MLP(pick((1, 2)), out=d0, residual=True, bias=pick((True, True, False)), activation=activation)]
    rest.append(norm())
    for attention in (rich, small):
        blocks = [attention, *rest]
        if _weights(d0, tokens, blocks) <= CAP:
            break
    while _weights(d0, tokens, blocks) > CAP:
        blocks.pop()
    return Network(d0, tokens, tuple(blocks))


def _pre_ln(pick) -> Network:
    """A pre-LN (GPT-style) layer, x -> x + SA(LN(x)) -> y + FF(LN(y)), as two residual groups of two blocks, each
    led by a LayerNorm: the shift along 1 through such a group (core.stream_kernels) acts where the attention's
    and the mlp's output biases are both there. Over CAP as in ``_post_ln``; a group is dropped whole."""
    d0, tokens = pick((2, 2, 3)), pick((2, 3))

    def norm():
        affine = pick((True, True, False))
        return LayerNorm(affine=affine, bias=affine and pick((True, True, False)))

    biased = pick((True, True, False))
    options = dict(out=d0, residual=2, normalization="softmax", bias=biased)
    rich = Attention(pick((1, 2)), heads=pick((1, 1, 2)), causal=pick((False, True)), **options)
    small = Attention(1, **options)
    activation = pick(("relu", "gelu", "tanh"))
    mlp = MLP(pick((1, 2)), out=d0, residual=2, bias=pick((True, True, False)), activation=activation)
    for attention in (rich, small):
        blocks = [norm(), attention, norm(), mlp]
        if _weights(d0, tokens, blocks) <= CAP:
            break
    while _weights(d0, tokens, blocks) > CAP:
        blocks = blocks[:-2]
    return Network(d0, tokens, tuple(blocks))


def draw_network(pick, family: str) -> Network:
    """A network of the family with at most CAP weights and its non-polynomial piece in it."""
    if family == "post-LN":
        return _post_ln(pick)
    if family == "pre-LN":
        return _pre_ln(pick)
    kinds = KINDS[family]
    d0, tokens = pick((1, 2, 3)), pick((1, 2, 3))
    if family == "layernorm":
        d0 = pick((2, 3))
    count = pick((1, 2, 2, 3))
    signature = pick(range(count))
    blocks: list = []
    width = d0
    for slot in range(count):
        kind = _kind(pick, kinds[0]) if slot == signature else _kind(pick, pick(kinds[1:]))
        block = _block(pick, kind, width, family == "biased")
        if block is None:
            continue
        trial = blocks + [block]
        if _weights(d0, tokens, trial) <= CAP:
            blocks, width = trial, block.resolve(width).output_width(width)
    if not _has(blocks, kinds[0]):  # the signature did not fit: its smallest form after the rest, or alone
        smallest = _smallest(pick, kinds[0], width)
        if isinstance(smallest, Activation) and family == "layernorm":  # width 1 at the end: first, on d_0 >= 2
            blocks = [LayerNorm(affine=False)] + blocks
        elif _weights(d0, tokens, blocks + [smallest]) <= CAP:
            blocks = blocks + [smallest]
        else:
            blocks = [_smallest(pick, kinds[0], d0)]
    if family == "position" and all(b.polynomial for b in blocks):  # a certificate is for a non-polynomial map
        blocks.append(Activation("tanh"))
    if not _weights(d0, tokens, blocks):  # a weightless activation: an embedding before it
        blocks.insert(0, Linear(2, bias=True))
    return Network(d0, tokens, tuple(_grouped(pick, d0, blocks)))


def _grouped(pick, d0: int, blocks: list) -> list:
    """Sometimes one residual group of 2 or 3 blocks (a pre-LN sublayer's shape), where the widths allow and
    its last block ends no group of its own (single-block residuals inside it stay: nested)."""
    widths = [d0]
    for b in blocks:
        widths.append(b.resolve(widths[-1]).output_width(widths[-1]))
    spans = tuple(
        (s, e)
        for e in range(len(blocks))
        for s in range(max(0, e - 2), e)
        if widths[s] == widths[e + 1] and not blocks[e].residual
    )
    if not spans or not pick((False, True)):
        return blocks
    s, e = pick(spans)
    return blocks[:e] + [replace(blocks[e], residual=e - s + 1)] + blocks[e + 1 :]


def _has(blocks: list, entry) -> bool:
    """Some block is of the family's signature kind (one of them, for a tuple)."""
    kinds = entry if isinstance(entry, tuple) else (entry,)
    for b in blocks:
        name = (
            "softmax"
            if getattr(b, "normalization", "none") == "softmax"
            else "layernorm"
            if isinstance(b, LayerNorm)
            else "position"
            if isinstance(b, Position)
            else getattr(b, "activation", getattr(b, "function", None))
        )
        if name in kinds:
            return True
    return False


def _smallest(pick, entry, width: int):
    """The signature's block with the fewest weights (a LayerNorm needs width 2; on width 1, a tanh)."""
    kind = _kind(pick, entry)
    if kind == "softmax":
        return Attention(1, out=1, normalization="softmax", bias=True)
    if kind == "layernorm":
        return LayerNorm(affine=False) if width >= 2 else Activation("tanh")
    if kind == "position":
        return Position()
    return Activation(kind)


def _weights(d0: int, tokens: int, blocks: list) -> int:
    if not blocks:
        return 0
    try:
        return Network(d0, tokens, tuple(blocks)).parameters
    except Exception:  # no weights at all: the network refuses itself
        return 0


def draw_case(pick, family: str) -> Case:
    """A network of the family, a dyadic point and integer token matrices: one, or enough for as many
    Jacobian rows as weights (fewer rows cap the rank and hide a wrong upper bound), or one more."""
    net = draw_network(pick, family)
    weights = tuple(pick(WEIGHTS) for _ in range(net.parameters))
    enough = min(-(-net.parameters // net.rows_per_sample), MAX_INPUTS)
    count = pick((1, enough, min(enough + 1, MAX_INPUTS)))
    inputs = tuple(
        tuple(tuple(pick(ENTRIES) for _ in range(net.tokens)) for _ in range(net.input)) for _ in range(count)
    )
    return Case(family, net, weights, inputs)
