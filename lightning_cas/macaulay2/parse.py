"""Parsing Macaulay2 output: our one-line records, never M2's 2-D pretty printing.

Every template prints one JSON record, ``@@LCAS-JSON@@ {...}`` (``printRecord`` in
``m2/LightningCAS.m2``): integers and Booleans are JSON numbers and Booleans, rationals and
polynomials are strings. ``json_record`` and the typed getters below check every value.
Plain scripts (the runner's tests, the notebook's cell markers) print ``@@LCAS@@ key value``
lines, read by ``records``: integers, lists of integers ``{1, 2}``, version strings, or
polynomials separated by `` ; ``. Anything else is refused with the offending text.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from typing import TYPE_CHECKING

from lightning_cas.core import names
from lightning_cas.errors import M2ParseError

if TYPE_CHECKING:
    import sympy

MARK = "@@LCAS@@ "
_INT = re.compile(r"^-?\d+$", re.ASCII)
_INT_LIST = re.compile(r"^\{\s*(-?\d+(\s*,\s*-?\d+)*)?\s*\}$", re.ASCII)


def records(output: str, script: str | None = None) -> dict[str, str]:
    """All ``@@LCAS@@`` records of an M2 run, as raw strings by key (a repeated key is an error)."""
    found: dict[str, str] = {}
    for line in output.splitlines():
        line = line.rstrip("\r")
        if not line.startswith(MARK):
            continue
        key, _, value = line[len(MARK) :].partition(" ")
        if not key or key in found:
            raise M2ParseError(f"malformed or repeated Macaulay2 record: {line[:200]!r}", script)
        found[key] = value.strip()
    return found


def require(recs: dict[str, str], key: str, script: str | None = None) -> str:
    if key not in recs:
        raise M2ParseError(f"Macaulay2 output lacks the record {key!r} (got {sorted(recs)})", script)
    return recs[key]


def parse_int(text: str, script: str | None = None) -> int:
    if not _INT.match(text):
        raise M2ParseError(f"expected an integer from Macaulay2, got {text[:200]!r}", script)
    return _to_int(text, script)


# Our records carry ranks, degrees and counts: far below this. A cap of our own, not Python's
# int <-> str limit, which lightning_cas raises for the long numbers of large architectures.
MAX_DIGITS = 4300


def _to_int(text: str, script: str | None) -> int:
    if len(text.strip().lstrip("+-")) > MAX_DIGITS:
        raise M2ParseError(f"integer from Macaulay2 too long ({len(text)} characters): {text[:60]!r}...", script)
    try:
        return int(text)
    except ValueError:
        raise M2ParseError(
            f"integer from Macaulay2 too long ({len(text)} characters): {text[:60]!r}...", script
        ) from None


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"an integer of {len(text)} digits")
    return int(text)


def parse_int_list(text: str, script: str | None = None) -> list[int]:
    if not _INT_LIST.match(text):
        raise M2ParseError(f"expected a list of integers from Macaulay2, got {text[:200]!r}", script)
    inner = text.strip()[1:-1].strip()
    return [_to_int(v.strip(), script) for v in inner.split(",")] if inner else []


def parse_polynomial(text: str, script: str | None = None) -> sympy.Expr:
    """One M2 polynomial (``toString`` form) as a sympy expression whose symbols carry M2's names
    (``q_(1,2,3)``, ``y_4``: core.names); refuses anything but arithmetic."""
    try:
        return names.parse_polynomial(text.strip() if isinstance(text, str) else text)
    except ValueError as exc:
        raise M2ParseError(f"not a polynomial in Macaulay2 output: {str(text)[:200]!r} ({exc})", script) from None


def parse_polynomial_list(text: str, script: str | None = None) -> list[sympy.Expr]:
    """Polynomials joined by `` ; `` (the separator our templates use)."""
    if not text.strip():
        return []
    return [parse_polynomial(part, script) for part in text.split(" ; ")]


# ---------------------------------------------------------------- JSON records (the package)

JSON_MARK = "@@LCAS-JSON@@ "
_RATIONAL = re.compile(r"^-?\d+(/\d+)?$", re.ASCII)


def _no_floats(text: str):
    raise ValueError(f"a non-integer number {text[:60]!r}")


def json_record(output: str, script: str | None = None) -> dict:
    """The one ``@@LCAS-JSON@@`` record of an M2 run, as a dict (none, two, or bad JSON: an error).

    Floats, NaN and infinities are refused: exact values travel as integers or strings."""
    lines = [line.rstrip("\r")[len(JSON_MARK) :] for line in output.splitlines() if line.startswith(JSON_MARK)]
    if len(lines) != 1:
        raise M2ParseError(f"expected one JSON record from Macaulay2, got {len(lines)}", script)
    try:
        value = json.loads(lines[0], parse_float=_no_floats, parse_constant=_no_floats, parse_int=_json_int)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError; so is a too-long int
        raise M2ParseError(
            f"malformed JSON record from Macaulay2 ({str(exc)[:100]}): {lines[0][:200]!r}", script
        ) from None
    if not isinstance(value, dict):
        raise M2ParseError(f"the Macaulay2 record is not a JSON object: {lines[0][:200]!r}", script)
    return value


def json_get(rec: dict, key: str, script: str | None = None):
    if not isinstance(rec, dict):
        raise M2ParseError(f"expected a record (JSON object) from Macaulay2, got {str(rec)[:200]!r}", script)
    if key not in rec:
        raise M2ParseError(f"Macaulay2 record lacks the key {key!r} (got {sorted(rec)})", script)
    return rec[key]


def _json_typed(rec: dict, key: str, script: str | None, fits, what: str):
    """rec[key], refused with one message shape unless ``fits(value)``."""
    value = json_get(rec, key, script)
    if not fits(value):
        raise M2ParseError(f"expected {what} for {key!r} from Macaulay2, got {str(value)[:200]!r}", script)
    return value


def json_int(rec: dict, key: str, script: str | None = None) -> int:
    return _json_typed(rec, key, script, lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer")


def json_bool(rec: dict, key: str, script: str | None = None) -> bool:
    return _json_typed(rec, key, script, lambda v: isinstance(v, bool), "true/false")


def json_str(rec: dict, key: str, script: str | None = None) -> str:
    return _json_typed(rec, key, script, lambda v: isinstance(v, str), "a string")


def json_list(rec: dict, key: str, script: str | None = None) -> list:
    return _json_typed(rec, key, script, lambda v: isinstance(v, list), "a list")


def json_object(rec: dict, key: str, script: str | None = None) -> dict:
    return _json_typed(rec, key, script, lambda v: isinstance(v, dict), "a record (JSON object)")


def json_int_list(rec: dict, key: str, script: str | None = None) -> list[int]:
    values = json_list(rec, key, script)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise M2ParseError(f"expected a list of integers for {key!r} from Macaulay2, got {str(values)[:200]!r}", script)
    return values


def json_polynomials(rec: dict, key: str, script: str | None = None) -> list[sympy.Expr]:
    """A list of polynomial strings, each through ``parse_polynomial``'s checks."""
    values = json_list(rec, key, script)
    if not all(isinstance(v, str) for v in values):
        raise M2ParseError(
            f"expected polynomials (strings) for {key!r} from Macaulay2, got {str(values)[:200]!r}", script
        )
    return [parse_polynomial(v, script) for v in values]


def is_exact_rational(value) -> bool:
    """How a record carries an exact rational: a JSON integer, or a string "p" or "p/q"."""
    return (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, str) and bool(_RATIONAL.match(value))
    )


def json_rationals(rec: dict, key: str, script: str | None = None) -> list[Fraction] | None:
    """A list of exact rationals, JSON integers or strings ("3", "-3/8"), or None for JSON null."""
    values = json_get(rec, key, script)
    if values is None:
        return None
    if (
        not isinstance(values, list)
        or not all(is_exact_rational(v) for v in values)
        or any(isinstance(v, str) and max(map(len, v.lstrip("-").split("/"))) > MAX_DIGITS for v in values)
    ):
        raise M2ParseError(
            f"expected a list of rationals for {key!r} from Macaulay2, got {str(values)[:200]!r}", script
        )
    try:
        return [Fraction(v) for v in values]
    except (ValueError, ZeroDivisionError):
        raise M2ParseError(f"bad rational for {key!r} from Macaulay2: {str(values)[:200]!r}", script) from None
