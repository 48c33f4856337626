"""A network as the header values of a template, and the checks of what Macaulay2 sends back about it.

The templates never see an object: only validated integers and lists of them (``render.m2_literal``).
Every network, the old flags' plain stack included, goes in as ``inputWidth``, ``tokens`` and one
integer list per block (``neuralNetwork`` in the package reads them):
``{0, heads, a, b, out, causal, residual}`` for attention (b = 0: a full value map),
``{1, hidden, degree, out, residual}`` for mlp, ``{2, out}`` for linear and ``{3, degree}`` for power;
a block with biases appends 1 to its list (a bias-free list keeps its old form). ``residual`` is the size n
of the residual group the block ends (0 none, 1 the block alone); a linear or power block that ends one goes
on with it, ``{2, out, bias, n}`` and ``{3, degree, n}`` (without one, its list keeps its old form);
``{4, n}`` is a position block (E, width x tokens, added to Y).
The package builds the network from these numbers itself, so the weight count it reports back is an
independent check that both sides mean the same network.
"""

from __future__ import annotations

from lightning_cas.core.network import MLP, Attention, Block, Linear, Network, Position, Power, describe_block
from lightning_cas.errors import M2ParseError, UnsupportedError
from lightning_cas.macaulay2.parse import json_int
from lightning_cas.macaulay2.render import m2_literal

ATTENTION, MLP_CODE, LINEAR, POWER, POSITION = 0, 1, 2, 3, 4


def _attention(block: Attention) -> list[int]:
    if block.normalization != "none":
        raise UnsupportedError(
            "Macaulay2 builds polynomial networks only; softmax attention is not polynomial, use --method numeric."
        )
    return [
        ATTENTION,
        block.heads,
        block.attention,
        block.value or 0,
        block.out,
        int(block.causal),
        int(block.residual),
    ] + _bias(block)


def _linear(block: Linear) -> list[int]:
    if block.residual:
        return [LINEAR, block.out, int(bool(block.bias)), int(block.residual)]
    return [LINEAR, block.out] + _bias(block)


# each polynomial kind's integer list (``neuralNetwork`` in the package reads it): one row per kind; the
# kinds that are not polynomial have none (a network with one is refused before a template is written)
CODES = {
    Attention: _attention,
    MLP: lambda b: [MLP_CODE, b.hidden, b.degree, b.out, int(b.residual)] + _bias(b),
    Linear: _linear,
    Power: lambda b: [POWER, b.degree] + ([int(b.residual)] if b.residual else []),
    Position: lambda b: [POSITION, int(b.residual)],
}


def block_list(block: Block) -> list[int]:
    """One block as the integer list of the template header (softmax has no polynomial form: refused)."""
    code = CODES.get(type(block))
    if code is None:
        raise TypeError(f"no template form for a {type(block).__name__} block")
    return code(block)


def _bias(block: Block) -> list[int]:
    return [1] if block.bias else []


def package_params(arch: Network) -> dict:
    """Template parameters of the package templates: the network as its blocks."""
    net = arch
    return {"inputWidth": net.input, "tokens": net.tokens, "blocks": [block_list(b) for b in net.blocks]}


def network_call(arch: Network) -> str:
    """The package call that builds this network, ``neuralNetwork(inputWidth, tokens, {blocks})``, from
    the same values the templates get: the one way a network becomes Macaulay2 code a reader runs."""
    p = package_params(arch)
    return f"neuralNetwork({m2_literal(p['inputWidth'])}, {m2_literal(p['tokens'])}, {m2_literal(p['blocks'])})"


def network_comments(arch: Network, mark: str = "--") -> list[str]:
    """What each integer list of :func:`network_call` is, one comment line per block (the block's own
    description, so every field it has is named)."""
    net = arch
    lines = [f"{mark} N: {net.tokens} token(s) of width {net.input}, {net.parameters} weights; its blocks:"]
    for i, (block, code) in enumerate(zip(net.blocks, package_params(net)["blocks"]), start=1):
        lines.append(f"{mark}   block {i} {m2_literal(code)}: {_safe(describe_block(block))}")
    return lines


def _safe(text) -> str:
    """One comment line: no line breaks or control characters (a description holds only numbers and names)."""
    return "".join(c if c.isprintable() else "?" for c in str(text))


def one_head_params(arch: Network) -> dict:
    """Template parameters of the one-layer geometry templates (``implicitModel(widths, attention, tokens)``)."""
    return {"widths": list(arch.widths), "attention": list(arch.attention), "tokens": arch.tokens}


def check_parameters(arch: Network, rec: dict, script: str) -> None:
    """M2 built the network from the blocks itself: its weight count must be ours."""
    got = json_int(rec, "parameters", script)
    if got != arch.parameters:
        raise M2ParseError(f"Macaulay2 built a network with {got} weights, expected {arch.parameters}", script)


def check_dimension(arch: Network, value: int, script: str, what: str = "dimension") -> int:
    """A dimension (or rank) from Macaulay2, refused unless 0 <= value <= min(parameters, ambient):
    the image of the parametrization can be no larger than its source or its target."""
    top = min(arch.parameters, arch.ambient_dimension)
    if not 0 <= value <= top:
        raise M2ParseError(
            f"Macaulay2 reported {what} {value} for a network of {arch.parameters} weights into a "
            f"{arch.ambient_dimension}-dimensional space; it must lie between 0 and {top}",
            script,
        )
    return value


def check_fiber_dimension(arch: Network, value: int, script: str, what: str = "fiber dimension") -> int:
    """A fiber (or fiber component) dimension from Macaulay2: a subvariety of the weights, so 0..parameters."""
    if not 0 <= value <= arch.parameters:
        raise M2ParseError(
            f"Macaulay2 reported {what} {value} for a network of {arch.parameters} weights; it must "
            f"lie between 0 and {arch.parameters}",
            script,
        )
    return value
