"""An architecture as the header values of a template, and the check that Macaulay2 built the same one.

The templates never see an object: only validated integers and lists of them (``render.m2_literal``).
The package builds the network from these numbers itself, so the weight count it reports back is
an independent check that both sides mean the same network.
"""

from __future__ import annotations

from lightning_cas.core.architecture import Architecture
from lightning_cas.errors import M2ParseError
from lightning_cas.macaulay2.parse import json_int


def architecture_params(arch: Architecture) -> dict:
    """The architecture as template parameters (every template builds the network from these)."""
    return {"widths": list(arch.widths), "attention": list(arch.attention), "tokens": arch.tokens,
            "heads": list(arch.heads)}


def head_counts(arch: Architecture) -> list[int]:
    """Heads per layer (one each unless the architecture says otherwise)."""
    heads = getattr(arch, "heads", None)
    if heads is None:
        return [1] * arch.depth
    if isinstance(heads, int):
        return [heads] * arch.depth
    return [int(h) for h in heads]


def one_head_params(arch: Architecture) -> dict:
    """Template parameters of the one-layer geometry templates (one head: no ``heads`` value)."""
    return {k: v for k, v in architecture_params(arch).items() if k != "heads"}


def package_params(arch: Architecture) -> dict:
    """Template parameters of the package templates: the architecture and its heads."""
    return {**architecture_params(arch), "heads": head_counts(arch)}


def check_parameters(arch: Architecture, rec: dict, script: str) -> None:
    """M2 built the network from the widths itself: its weight count must be ours."""
    got = json_int(rec, "parameters", script)
    if got != arch.parameters:
        raise M2ParseError(f"Macaulay2 built a network with {got} weights, expected {arch.parameters}", script)


def check_dimension(arch: Architecture, value: int, script: str, what: str = "dimension") -> int:
    """A dimension (or rank) from Macaulay2, refused unless 0 <= value <= min(parameters, ambient):
    the image of the parametrization can be no larger than its source or its target."""
    top = min(arch.parameters, arch.ambient_dimension)
    if not 0 <= value <= top:
        raise M2ParseError(f"Macaulay2 reported {what} {value} for a network of {arch.parameters} weights into a "
                           f"{arch.ambient_dimension}-dimensional space; it must lie between 0 and {top}", script)
    return value


def check_fiber_dimension(arch: Architecture, value: int, script: str, what: str = "fiber dimension") -> int:
    """A fiber (or fiber component) dimension from Macaulay2: a subvariety of the weights, so 0..parameters."""
    if not 0 <= value <= arch.parameters:
        raise M2ParseError(f"Macaulay2 reported {what} {value} for a network of {arch.parameters} weights; it must "
                           f"lie between 0 and {arch.parameters}", script)
    return value
