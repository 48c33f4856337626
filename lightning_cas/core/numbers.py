"""Numbers written as text, read the same way everywhere (command line, sweep specs, weight files).

Only ASCII digits, an optional sign and (for rationals) one slash, or (for decimals) one point and
an exponent, with spaces or tabs around: Python's ``int()``/``float()``/``isdigit()``/``\\d`` also
accept Arabic-Indic, fullwidth and other Unicode digits and ``1_000`` underscores (and ``float()``
takes ``nan`` and ``inf``), so ``"٣"`` would silently become 3 in one place and be refused in another.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_INTEGER = re.compile(r"[ \t]*[+-]?[0-9]+[ \t]*", re.ASCII)
_DECIMAL = re.compile(r"[ \t]*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[ \t]*", re.ASCII)
_RATIONAL = re.compile(r"[ \t]*([+-]?[0-9]+)[ \t]*(?:/[ \t]*([0-9]+)[ \t]*)?", re.ASCII)


def integer_text(text: str) -> int | None:
    """The integer an ASCII decimal string spells, else None (never an exception: a string of more
    digits than Python converts, about 4300, is None too)."""
    if not isinstance(text, str) or not _INTEGER.fullmatch(text):
        return None
    try:
        return int(text)
    except ValueError:
        return None


def decimal_text(text: str) -> float | None:
    """The finite float an ASCII decimal string such as ``"2.5"`` or ``"1e3"`` spells, else None
    (never an exception; ``nan``, ``inf`` and overflowing exponents are None)."""
    if not isinstance(text, str) or not _DECIMAL.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def rational_text(text: str) -> Fraction | None:
    """The rational an ASCII string such as ``"-3/4"`` spells, else None; a zero denominator
    raises ZeroDivisionError (the caller names the place)."""
    if not isinstance(text, str):
        return None
    m = _RATIONAL.fullmatch(text)
    if not m:
        return None
    num, den = int(m.group(1)), int(m.group(2) or 1)
    if den == 0:
        raise ZeroDivisionError(text)
    return Fraction(num, den)
