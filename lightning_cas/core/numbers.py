"""Numbers written as text, read the same way everywhere (command line, sweep specs, weight files).

Only ASCII digits, an optional sign and (for rationals) one slash, or (for decimals) one point and
an exponent, with spaces or tabs around: Python's ``int()``/``float()``/``isdigit()``/``\\d`` also
accept Arabic-Indic, fullwidth and other Unicode digits and ``1_000`` underscores (and ``float()``
takes ``nan`` and ``inf``), so ``"٣"`` would silently become 3 in one place and be refused in another.
"""

from __future__ import annotations

import math
import re
import sys
from fractions import Fraction

# Python refuses int <-> decimal text beyond 4300 digits (a guard against quadratic conversions of
# untrusted input); the ambient dimension of the largest old-flag architecture (widths 256, 8 layers,
# 64 tokens) has 5966 digits, so results of valid architectures need more. 20000 digits convert in
# about 20 ms: still no way to stall the process.
LONG_INTEGER_DIGITS = 20_000

_INTEGER = re.compile(r"[ \t]*[+-]?[0-9]+[ \t]*", re.ASCII)
_DECIMAL = re.compile(r"[ \t]*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[ \t]*", re.ASCII)
_RATIONAL = re.compile(r"[ \t]*([+-]?[0-9]+)[ \t]*(?:/[ \t]*([0-9]+)[ \t]*)?", re.ASCII)


def allow_long_integers(digits: int = LONG_INTEGER_DIGITS) -> None:
    """Let int <-> str conversions take integers of ``digits`` digits (only ever raises the limit)."""
    get = getattr(sys, "get_int_max_str_digits", None)
    if get is not None and 0 < get() < digits:
        sys.set_int_max_str_digits(digits)


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
