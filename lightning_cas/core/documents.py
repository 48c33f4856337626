"""Decoding JSON and TOML text with caps (pure: text in, data out; reading files is system.files).

Every document lightning_cas decodes passes here, so the caps are the same for a sweep spec, a network
file, a weight file and a record: nesting depth, NaN/Infinity refused, integers within the long-integer
limit of core.numbers.
"""

from __future__ import annotations

import json
import tomllib

from lightning_cas.core.numbers import allow_long_integers
from lightning_cas.errors import InputError

MAX_NESTING = 32  # nesting of JSON arrays/objects or TOML tables/arrays; our formats need < 8


def check_depth(value, what: str = "document", max_depth: int = MAX_NESTING) -> None:
    """Refuse a decoded document nested deeper than ``max_depth`` (checked without recursion, so
    later recursive code such as ``json.dumps`` or ``repr`` can never overflow the stack)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > max_depth:
            raise InputError(f"the {what} is nested more than {max_depth} levels deep.")
        stack.extend((child, depth + 1) for child in children)


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number")


def parse_json(text: str, what: str = "document", max_depth: int = MAX_NESTING):
    """Decode JSON text with the depth cap; NaN/Infinity and integers beyond the long-integer limit
    (core.numbers) are refused."""
    allow_long_integers()
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise InputError(f"the {what} is nested more than {max_depth} levels deep.") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"the {what} is not valid JSON: {exc.msg} at line {exc.lineno}.") from None
    except ValueError as exc:  # NaN/Infinity, or Python's limit on integer digits
        raise InputError(f"the {what} holds a value lightning_cas does not accept ({exc}).") from None
    check_depth(value, what, max_depth)
    return value


def parse_toml(text: str, what: str = "TOML document", max_depth: int = MAX_NESTING) -> dict:
    """Decode TOML with the depth cap (tomllib recurses on nested arrays and inline tables)."""
    try:
        value = tomllib.loads(text)
    except RecursionError:
        raise InputError(f"the {what} is nested more than {max_depth} levels deep.") from None
    check_depth(value, what, max_depth)
    return value
