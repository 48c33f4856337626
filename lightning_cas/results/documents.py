"""Decoding JSON and TOML text with caps (pure: text in, data out; reading files is system.files).

Every document lightning_cas decodes passes here, so the caps are the same for a sweep spec, a network
file, a weight file and a record: nesting depth, NaN/Infinity refused, integers within the long-integer
limit of core.numbers.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable

from lightning_cas.core.checks import shown
from lightning_cas.core.numbers import allow_long_integers
from lightning_cas.errors import InputError

MAX_NESTING = 32  # nesting of JSON arrays/objects or TOML tables/arrays; our formats need < 8
MAX_DOCUMENT_CHARS = 64 * 1024 * 1024  # any document, before it is decoded (the file readers cap far lower)
MAX_KEY_PARTS = MAX_NESTING  # parts of one dotted TOML key (tomllib's work is quadratic in them)


def check_depth(value, what: str = "document", max_depth: int = MAX_NESTING) -> None:
    """Refuse a decoded document nested deeper than ``max_depth`` (checked without recursion, so
    later recursive code such as ``json.dumps`` or ``repr`` can never overflow the stack)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children: Iterable
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


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs):
    """An object's pairs as a dict; a key given twice is refused (TOML refuses it too), never the last one."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _check_size(text, what: str) -> None:
    if not isinstance(text, str):
        raise InputError(f"the {what} must be text, got {type(text).__name__}.")
    if len(text) > MAX_DOCUMENT_CHARS:
        raise InputError(f"the {what} has {len(text)} characters, above the supported maximum of {MAX_DOCUMENT_CHARS}.")


def parse_json(text: str, what: str = "document", max_depth: int = MAX_NESTING):
    """Decode JSON text with the size and depth caps; duplicate keys, NaN/Infinity and integers beyond the
    long-integer limit (core.numbers) are refused."""
    _check_size(text, what)
    allow_long_integers()
    try:
        value = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except _DuplicateKey as exc:
        raise InputError(f"the {what} gives the key {shown(exc.args[0])} twice in one object.") from None
    except RecursionError:
        raise InputError(f"the {what} is nested more than {max_depth} levels deep.") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"the {what} is not valid JSON: {exc.msg} at line {exc.lineno}.") from None
    except ValueError as exc:  # NaN/Infinity, or Python's limit on integer digits
        raise InputError(f"the {what} holds a value lightning_cas does not accept ({exc}).") from None
    check_depth(value, what, max_depth)
    return value


def _key_parts(text: str, what: str) -> None:
    """Refuse, before tomllib sees it, a dotted key (``a.b.c = ..`` or ``[a.b.c]``) of more than
    MAX_KEY_PARTS parts: one linear scan of each line's leading key, quotes respected (the scan stops at
    the first character a key cannot hold, so values are never counted)."""
    for number, line in enumerate(text.splitlines(), start=1):
        dots, quote, i = 0, "", 0
        stripped = line.lstrip().lstrip("[")
        while i < len(stripped):
            c = stripped[i]
            if quote:
                if c == "\\" and quote == '"':
                    i += 1
                elif c == quote:
                    quote = ""
            elif c in "\"'":
                quote = c
            elif c == ".":
                dots += 1
            elif not (c.isalnum() or c in "_- \t"):
                break
            i += 1
        if dots >= MAX_KEY_PARTS:
            raise InputError(f"the {what} has a key of more than {MAX_KEY_PARTS} dotted parts (line {number}).")


def parse_toml(text: str, what: str = "TOML document", max_depth: int = MAX_NESTING) -> dict:
    """Decode TOML with the size, key and depth caps (tomllib recurses on nested arrays and inline tables,
    and its work on one dotted key grows with the square of its parts)."""
    _check_size(text, what)
    _key_parts(text, what)
    try:
        value = tomllib.loads(text)
    except RecursionError:
        raise InputError(f"the {what} is nested more than {max_depth} levels deep.") from None
    check_depth(value, what, max_depth)
    return value
