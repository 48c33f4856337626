"""Results beside their words: the result contract and one module per family of results.

A layer just above the mathematics (``core``) and below everything that touches files, processes or
Macaulay2: pure, like core, and core never imports it. ``contract`` holds what every result shares
(provenance, lossless JSON, strict decoding, the certainty in words), ``display`` the one escaping
function and the Jupyter views, ``documents`` the capped JSON/TOML decoding, ``formats`` the parts of
the Macaulay2/LaTeX forms that results share. Each family module holds its result types with their
text, Macaulay2 and LaTeX forms beside their fields.

Every result class enters the registry when its module is imported, so the kind a JSON file names
is mapped to its class without a list written by hand; :func:`result_class` imports the families
one by one only until the kind is found (reading a dimension needs no sympy).
"""

from __future__ import annotations

import importlib

from lightning_cas.errors import InputError

# the family modules, cheapest first (the ideal families import sympy)
FAMILIES = (
    "dimension",
    "verify",
    "theory",
    "degrees",
    "critical",
    "fibers",
    "implicit",
    "singular",
    "boundary",
    "claims",
    "learning",
)


def _registry() -> dict[str, type]:
    from lightning_cas.results.contract import KINDS

    return KINDS


def result_kinds() -> dict[str, str]:
    """Every result kind and the module that defines it (every family imported)."""
    for family in FAMILIES:
        importlib.import_module(f"{__name__}.{family}")
    return {kind: cls.__module__ for kind, cls in sorted(_registry().items())}


def result_class(kind) -> type:
    """The result class a JSON result's ``kind`` names (InputError for any other kind)."""
    kinds = _registry()
    if isinstance(kind, str):
        for family in FAMILIES:
            if kind in kinds:
                return kinds[kind]
            importlib.import_module(f"{__name__}.{family}")
        if kind in kinds:
            return kinds[kind]
    raise InputError(f"unknown result kind {kind!r}; expected one of {', '.join(result_kinds())}.")
