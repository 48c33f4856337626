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
