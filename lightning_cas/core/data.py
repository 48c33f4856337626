"""Plain data the mathematics returns: frozen dataclasses whose lists are tuples, so two equal values
compare equal however they were built (from Python, or read back from JSON by ``lightning_cas.results``).
"""

from __future__ import annotations

from dataclasses import fields


def freeze(value):
    """Lists (from JSON or from a caller) as tuples, recursively, so results compare after a round trip."""
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return {k: freeze(v) for k, v in value.items()}
    return value


class Data:
    """Mixin for frozen dataclasses of plain data: list and dict fields are frozen when it is made."""

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, (list, tuple, dict)):
                object.__setattr__(self, f.name, freeze(value))
