"""The one type rule for values a user hands over (Python API, command line, spec files).

An integer is a Python or numpy integer, never a bool (numpy's neither); a number of seconds is
an integer or a float (numpy's too), finite; a list is a sequence (list, tuple, range, 1-D numpy
array), never a set (no order), a dict (its keys) or a string (its characters); a path is a str
or an ``os.PathLike``. ``None`` where a value is needed, and anything else, is an ``InputError``
naming the value: never a TypeError, AttributeError or OverflowError from deeper down. Text is
read by ``core.numbers`` (ASCII digits only). Seeds and time limits are checked here once, for
every verb.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

from lightning_cas.core.numbers import integer_text
from lightning_cas.errors import InputError

SEED_LIMIT = 2**32  # numpy and Macaulay2 take any such seed; derived seeds wrap inside it
MAX_TIMEOUT_S = 7 * 24 * 3600


def shown(value, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, for messages (a 5000-digit number stays one line)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _numpy(value) -> bool:
    return type(value).__module__ == "numpy"


def integer_value(value) -> int | None:
    """Python and numpy integers as int; None for bools (numpy's too), floats, Fractions, strings."""
    if isinstance(value, bool) or _numpy(value) and type(value).__name__.startswith("bool"):
        return None
    if isinstance(value, int):
        return int(value)
    if _numpy(value) and isinstance(value, numbers.Integral):
        return int(value)
    return None


def real_value(value) -> int | float | None:
    """Integers as :func:`integer_value`, Python and numpy floats as float; None for anything else
    (bools, complex numbers, Fractions, Decimals, strings)."""
    number = integer_value(value)
    if number is not None:
        return number
    if isinstance(value, bool) or _numpy(value) and type(value).__name__.startswith("bool"):
        return None
    if isinstance(value, float) or _numpy(value) and isinstance(value, numbers.Real):
        return float(value)
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
    raise InputError(f"{name} must be an integer, got {shown(value)}.")


def parse_int_list(text: str, name: str) -> tuple[int, ...]:
    """Parse a CLI list such as '3,3,3' into integers, refusing anything else in one sentence."""
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{name} must be a comma-separated list of integers such as 3,3,3.")
    parts = [p.strip() for p in text.split(",")]
    if any(not p for p in parts):
        raise InputError(f"{name} must be a comma-separated list of integers such as 3,3,3, got {text!r}.")
    return tuple(as_int(p, name) for p in parts)


def count_value(value, name: str, low: int, high: int) -> int:
    """An integer option with a range (repeats, runs, budgets): a Python or numpy integer, never a bool,
    float or string, between ``low`` and ``high``."""
    number = integer_value(value)
    if number is None or not low <= number <= high:
        raise InputError(f"{name} must be an integer between {low} and {high}, got {shown(value)}.")
    return number


def as_sequence(values, name: str, what: str) -> list:
    """``values`` as a list when it is a sequence (list, tuple, range, 1-D numpy array), else one
    InputError: a generator is refused too (read once, it could not be validated and then used)."""
    return _sequence(values, name, what)


def _sequence(values, name: str, what: str):
    """``values`` as a list when it is a sequence (a 1-D numpy array too), else one InputError."""
    if _numpy(values) and hasattr(values, "ndim") and hasattr(values, "tolist"):
        if values.ndim != 1:
            raise InputError(f"{name} must be a list of {what}, got a {values.ndim}-dimensional array.")
        return list(values)
    if isinstance(values, (str, bytes, bytearray)) or not isinstance(values, Sequence):
        kinds: dict[type, str] = {
            set: "a set",
            frozenset: "a set",
            dict: "a dict",
            str: "a string",
            bytes: "bytes",
            bytearray: "bytes",
        }
        kind = kinds.get(type(values), type(values).__name__)
        raise InputError(f"{name} must be a list of {what} (a list or tuple), got {kind}: {shown(values)}.")
    return list(values)


def int_sequence(values, name: str) -> tuple[int, ...]:
    """A list of integers (a comma-separated string such as '3,3,3' too, as on the command line)."""
    if isinstance(values, str):
        return parse_int_list(values, name)
    return tuple(as_int(v, name) for v in _sequence(values, name, "integers"))


def string_sequence(values, name: str) -> tuple[str, ...]:
    """A list of strings; one bare string is refused (it would be read as its characters)."""
    items = _sequence(values, name, "strings")
    for item in items:
        if not isinstance(item, str):
            raise InputError(f"every entry of {name} must be a string, got {item!r}.")
    return tuple(items)


def check_seed(seed, name: str = "seed") -> int:
    """An integer 0 <= seed < 2^32 (not a bool, float, Fraction or string)."""
    value = integer_value(seed)
    if value is None or not 0 <= value < SEED_LIMIT:
        raise InputError(f"{name} must be an integer between 0 and 2^32 - 1, got {shown(seed)}.")
    return value


def derived_seed(seed: int, offset: int) -> int:
    """The seed of a sub-computation (a second repetition, a generic comparison point), kept in range."""
    return (seed + offset) % SEED_LIMIT


def check_timeout(timeout, name: str = "timeout") -> float | None:
    """None (the default limits) or a positive, finite number of seconds, at most a week.

    Integers are compared before any conversion, so 10**400 is out of range, not an OverflowError.
    """
    if timeout is None:
        return None
    value = real_value(timeout)
    if value is None:
        raise InputError(f"{name} must be a positive number of seconds, got {shown(timeout)}.")
    finite = isinstance(value, int) or math.isfinite(value)  # an int is compared as it is, never as a float
    if not (finite and 0 < value <= MAX_TIMEOUT_S):
        raise InputError(
            f"{name} must be a positive, finite number of seconds (at most {MAX_TIMEOUT_S}), got {shown(timeout)}."
        )
    return float(value)
