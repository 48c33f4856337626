"""Reading and writing a network file's pieces: the top-level keys, a block from its table (every key checked,
with one line naming the file, the block and the key), the top-level integers, the TOML text, and a block in
words (``core.network`` stacks them)."""

from __future__ import annotations

from dataclasses import fields, replace

from lightning_cas.core.blocks import BLOCK_TYPES, KINDS, MAX_BLOCKS, REQUIRED_KEYS, Block
from lightning_cas.core.checks import integer_value, shown
from lightning_cas.errors import InputError


def _plain_numbers(block: Block) -> Block:
    """The block with numpy integers and bools as Python ints and bools (sizes never wrap or overflow)."""
    changes: dict[str, bool | int | None] = {}
    for f in fields(block):
        value = getattr(block, f.name)
        if type(value).__module__ == "numpy" and type(value).__name__.startswith("bool"):
            changes[f.name] = bool(value)
        elif integer_value(value) is not None and type(value) is not int:
            changes[f.name] = integer_value(value)
    return replace(block, **changes) if changes else block


def describe_block(b: Block) -> str:
    """One block in words, every field that is set: ``attention(attention=2, heads=1, out=4, causal=True)``."""
    shown = [
        f
        for f in fields(b)
        if getattr(b, f.name) not in (None, False, "none")
        and not (f.name == "activation" and getattr(b, f.name) == "power")
        and not (f.name == "degree" and not b.polynomial)
    ]  # an mlp's relu, gelu or tanh has no degree
    parts = [f"{f.name}={True if f.name == 'residual' and b.residual == 1 else getattr(b, f.name)}" for f in shown]
    return f"{b.kind}(" + ", ".join(parts) + ")"


def _top_int(value, key: str, source: str, cap: int) -> int:
    number = integer_value(value)
    if number is None:
        raise InputError(f"{source}: {key} must be a positive integer, got {value!r}.")
    if number <= 0:
        raise InputError(f"{source}: {key} must be a positive integer, got {number}.")
    if number > cap:
        raise InputError(f"{source}: {key} {number} is above the supported maximum of {cap}.")
    return number


def _block_from_dict(entry, index: int, source: str) -> Block:
    if not isinstance(entry, dict):
        raise InputError(f"{source}: block {index} must be a table of keys, got {type(entry).__name__}.")
    kind = entry.get("kind")
    if kind is None:
        raise InputError(f"{source}: block {index}: the key `kind` is missing (one of {', '.join(KINDS)}).")
    if not isinstance(kind, str) or kind not in BLOCK_TYPES:
        raise InputError(f"{source}: block {index}: kind {shown(kind)} is unknown (one of {', '.join(KINDS)}).")
    cls = BLOCK_TYPES[kind]
    allowed = {f.name for f in fields(cls)}
    unknown = sorted(set(entry) - allowed - {"kind"})
    if unknown:
        raise InputError(
            f"{source}: block {index} ({kind}): unknown key {unknown[0]!r} (a {kind} block takes "
            f"{', '.join(sorted(allowed))})."
        )
    for key in REQUIRED_KEYS[kind]:
        if key not in entry:
            raise InputError(f"{source}: block {index} ({kind}): the key `{key}` is missing.")
    defaults = cls.defaults()
    # a key written as null means its default where the default is null (out, value)
    values = {
        k: v for k, v in entry.items() if k != "kind" and not (v is None and k in defaults and defaults[k] is None)
    }
    return cls(**values)


def network_blocks(data, source: str) -> list[Block]:
    """The blocks of a network file's top-level table, its keys checked (``Network.from_dict`` validates the rest)."""
    if not isinstance(data, dict):
        raise InputError(f"{source}: a network must be an object with input, tokens and blocks.")
    unknown = set(data) - {"input", "tokens", "block", "blocks"}
    if unknown:
        raise InputError(
            f"{source}: unknown key(s) {', '.join(sorted(map(str, unknown)))} (expected input, tokens, block)."
        )
    if "input" not in data:
        raise InputError(f"{source}: the input width `input` is missing.")
    if "block" in data and "blocks" in data:
        raise InputError(f"{source}: give the blocks once, as [[block]] tables (or a `blocks` list in JSON).")
    raw = data.get("block", data.get("blocks"))
    if not isinstance(raw, list) or not raw:
        raise InputError(f"{source}: a network needs at least one [[block]] table.")
    if len(raw) > MAX_BLOCKS:  # before any block is read
        raise InputError(f"{source}: {len(raw)} blocks is above the supported maximum of {MAX_BLOCKS}.")
    blocks = [_block_from_dict(entry, i, source) for i, entry in enumerate(raw)]
    return blocks


def json_text(data: dict) -> str:
    """The JSON form of a network file (``data``: input, tokens and blocks)."""
    import json

    return json.dumps(data, indent=1) + "\n"


def toml_text(width: int, tokens: int, blocks) -> str:
    """The TOML form of a network file: keys at their default left out."""
    lines = [f"input = {width}", f"tokens = {tokens}"]
    for b in blocks:
        lines += ["", "[[block]]", f'kind = "{b.kind}"']
        for key, value in b.to_dict().items():
            if key == "kind" or value is None or value == b.defaults().get(key, object()):
                continue
            text = (
                ("true" if value else "false")
                if isinstance(value, bool)
                else (
                    f'"{value}"'
                    if isinstance(value, str)
                    else repr(float(value))
                    if isinstance(value, float)
                    else str(int(value))
                )
            )
            lines.append(f"{key} = {text}")
    return "\n".join(lines) + "\n"
