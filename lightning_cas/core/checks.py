"""The one type rule for numbers a user hands over (Python API, command line, spec files).

An integer is a Python or numpy integer, never a bool; text is read by ``core.numbers`` (ASCII
digits only). Seeds and time limits are checked here once, for every verb.
"""

from __future__ import annotations

import math
import numbers

from lightning_cas.core.numbers import integer_text
from lightning_cas.errors import InputError

SEED_LIMIT = 2 ** 32  # numpy and Macaulay2 take any such seed; derived seeds wrap inside it
MAX_TIMEOUT_S = 7 * 24 * 3600


def integer_value(value) -> int | None:
    """Python and numpy integers as int; None for bools (numpy's too), floats, Fractions, strings."""
    if isinstance(value, bool) or type(value).__module__ == "numpy" and type(value).__name__.startswith("bool"):
        return None
    if isinstance(value, int):
        return int(value)
    if type(value).__module__ == "numpy" and isinstance(value, numbers.Integral):
        return int(value)
    return None


def as_int(value, name: str) -> int:
    """Accept integers and integral strings only: 2.5, True, '3x' are refused, not rounded."""
    number = integer_value(value)
    if number is not None:
        return number
    if isinstance(value, str):
        number = integer_text(value.strip())
        if number is not None:
            return number
    raise InputError(f"{name} must be an integer, got {value!r}.")


def parse_int_list(text: str, name: str) -> tuple[int, ...]:
    """Parse a CLI list such as '3,3,3' into integers, refusing anything else in one sentence."""
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{name} must be a comma-separated list of integers such as 3,3,3.")
    parts = [p.strip() for p in text.split(",")]
    if any(not p for p in parts):
        raise InputError(f"{name} must be a comma-separated list of integers such as 3,3,3, got {text!r}.")
    return tuple(as_int(p, name) for p in parts)


def check_seed(seed, name: str = "seed") -> int:
    """An integer 0 <= seed < 2^32 (not a bool, float, Fraction or string)."""
    value = integer_value(seed)
    if value is None or not 0 <= value < SEED_LIMIT:
        raise InputError(f"{name} must be an integer between 0 and 2^32 - 1, got {seed!r}.")
    return value


def derived_seed(seed: int, offset: int) -> int:
    """The seed of a sub-computation (a second repetition, a generic comparison point), kept in range."""
    return (seed + offset) % SEED_LIMIT


def check_timeout(timeout) -> float | None:
    """None (the default limits) or a positive, finite number of seconds, at most a week."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or isinstance(timeout, complex):
        raise InputError(f"timeout must be a positive number of seconds, got {timeout!r}.")
    value = float(timeout)
    if not math.isfinite(value) or not 0 < value <= MAX_TIMEOUT_S:
        raise InputError(f"timeout must be a positive, finite number of seconds (at most {MAX_TIMEOUT_S}), "
                         f"got {timeout!r}.")
    return value
