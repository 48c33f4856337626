"""``Architecture(...)``: the public spelling of the paper's network, which is a `Network`.

There is one network noun below the options; this name stays because users and the paper write
``Architecture(widths, attention, tokens)``. It returns ``Network.from_paper(...)``, whose ``paper``
view holds the numbers.
"""

from __future__ import annotations

from lightning_cas.core.checks import as_int, parse_int_list
from lightning_cas.core.network import Network
from lightning_cas.core.paper import MAX_HEADS, MAX_LAYERS, MAX_TOKENS, MAX_WIDTH, NORMALIZATIONS, Paper
from lightning_cas.errors import InputError, UnsupportedError

__all__ = [
    "Architecture",
    "check_architecture",
    "Paper",
    "NORMALIZATIONS",
    "MAX_WIDTH",
    "MAX_LAYERS",
    "MAX_TOKENS",
    "MAX_HEADS",
]


class Architecture:
    """The paper's network from its numbers: ``Architecture(widths, attention, tokens=2,
    normalization="none", heads=None)`` is a `Network` (not an instance of this class).

    >>> net = Architecture(widths=(3, 3, 3), attention=(2, 2), tokens=2)
    >>> net.paper.depth, net.parameters, net.heads
    (2, 42, (1, 1))
    """

    def __new__(cls, widths, attention, tokens=2, normalization: str = "none", heads=None) -> Network:  # type: ignore[misc]
        return Network.from_paper(widths, attention, tokens, normalization, heads)

    @staticmethod
    def from_cli(
        widths: str, attention: str, tokens: str | int, normalization: str = "none", heads: str | None = None
    ) -> Network:
        """Build from the CLI strings ``--widths 3,3,3 --attention 2,2 --tokens 2 [--heads 2,1]``."""
        return Network.from_paper(
            parse_int_list(widths, "--widths"),
            parse_int_list(attention, "--attention"),
            as_int(tokens, "--tokens"),
            normalization,
            None if heads is None else parse_int_list(heads, "--heads"),
        )

    @staticmethod
    def from_dict(data) -> Network:
        """The paper's network from its JSON form (widths, attention, tokens, normalization, heads)."""
        return Network.from_paper(Paper.from_dict(data))


def check_architecture(arch, verb: str, *, networks: bool = True) -> Network:
    """``arch`` itself when it is a Network (unless ``networks`` is False: then only the paper's network);
    else one InputError naming the verb, before any work."""
    if not isinstance(arch, Network):
        raise InputError(
            f"{verb}() needs a Network (Architecture(...) or Network(...)) first, got {type(arch).__name__}."
        )
    if not networks and arch.paper is None:
        raise InputError(
            f"{verb}() is for the paper's network (plain attention blocks); this network has "
            "causal, residual, factored, mlp, linear or power blocks."
        )
    if arch.functions and verb not in ("dimension", "llc"):
        raise UnsupportedError(
            f"{verb}() needs a polynomial or softmax network: with "
            f"{' and '.join(arch.functions)} a network has no variety or ideal; its generic rank (without "
            "relu) is `dim`, its rank at given weights `dim --at FILE --inputs FILE`."
        )
    return arch
