"""Weight points of any network: read exactly, from JSON, .npz and .safetensors.

A point is the flat weight vector in the canonical order (``Network.weight_matrices``), held as
exact rationals: a float is the binary rational it is, so the rank at trained weights is a question
about exact numbers. Files, each through the bounded reader, refused in one line when they are not
what they claim:

* JSON: ``{"blocks": [{"heads": [{"Q": .., "K": .., "V": ..}]}, {"U": .., "D": ..}, {"P": ..}, {}]}``
  (a one-head attention block may give Q, K, V (or W, O) directly), the old ``{"layers": [...]}`` of
  the paper's network, or ``{"weights": [...]}`` flat. Entries: integers, rational strings, floats.
  Biases are lists under their letters: ``bq``, ``bk``, ``bv`` or ``bw`` per head, ``bo`` beside
  ``heads`` (one output bias per block), ``bu``, ``bd`` (mlp), ``bp`` (linear).
* ``.npz`` and ``.safetensors``: one array per weight matrix, named as the PyTorch bridge names its
  parameters: ``blocks.{i}.{letter}`` (i from 0), attention matrices stacked over heads (H, rows,
  cols), mlp ``u`` and ``d``, linear ``p``; biases ``blocks.{i}.bq`` (H, a) and so on per head,
  ``bo`` (out,), ``bu``, ``bd``, ``bp`` vectors; or a single flat array ``weights``.

Input data (token matrices) is read by ``system.inputs``, the pickle refusal is ``system.arrays``; both
are importable from here as before.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from lightning_cas.core import weights
from lightning_cas.core.blocks import BLOCK_LETTERS
from lightning_cas.core.checks import shown
from lightning_cas.core.network import Attention, Network
from lightning_cas.core.weights import array_of, entries_of, exact_values, flat, parse_entry, point_from_dict  # noqa: F401
from lightning_cas.errors import InputError
from lightning_cas.system.arrays import PICKLE_ENDINGS, npz_arrays, refuse_pickle, safetensors_arrays  # noqa: F401
from lightning_cas.system.files import atomic_write_text, check_path, parse_json, read_bytes, read_json
from lightning_cas.system.inputs import (  # noqa: F401
    LAYOUTS,
    MAX_INPUT_BYTES,
    MAX_INPUT_ENTRIES,
    InputData,
    check_layout,
    inputs_from_array,
    load_inputs,
    save_inputs,
)

MAX_POINT_BYTES = 512 * 1024 * 1024  # a trained model's weights; the engine refuses sizes it cannot finish
LETTERS = {
    "q": "Q",
    "k": "K",
    "v": "V",
    "w": "W",
    "o": "O",
    "u": "U",
    "d": "D",
    "p": "P",
    # biases keep their lower-case letters and are vectors (one list of numbers)
    "bq": "bq",
    "bk": "bk",
    "bv": "bv",
    "bw": "bw",
    "bo": "bo",
    "bu": "bu",
    "bd": "bd",
    "bp": "bp",
    "g": "g",
    "bg": "bg",
}  # a LayerNorm's gain and bias: vectors


@dataclass(frozen=True)
class WeightPoint:
    """The weights of one network, exactly, and where they came from (a file and its sha256, or none)."""

    network: Network
    values: tuple[Fraction, ...]
    source: str | None = None
    sha256: str | None = None
    # per weight, the name it had where it came from (a PyTorch state_dict entry), when it had one
    origins: tuple[str, ...] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if len(self.values) != self.network.parameters:
            raise InputError(f"the point has {len(self.values)} weights, the network {self.network.parameters}.")
        if self.origins is not None and len(self.origins) != len(self.values):
            raise InputError(f"the point has {len(self.values)} weights but {len(self.origins)} origins.")

    def origin_names(self) -> dict[str, str]:
        """Each weight's canonical name (``Network.weight_names``) and the name it had where it came from
        (``{"q_(1,1,1,1)": "blocks.0.attn.in_proj_weight[0, 0]", ...}``); empty when it had none."""
        if self.origins is None:
            return {}
        return dict(zip(self.network.weight_names(), self.origins))

    def floats(self) -> np.ndarray:
        return np.array([float(v) for v in self.values])

    def __repr__(self) -> str:
        """A line, not thousands of Fractions: the network, the count, the first entries and the source."""
        head = ", ".join(_text(v) for v in self.values[:4]) + (", ..." if len(self.values) > 4 else "")
        where = f", source={self.source!r}" if self.source else ""
        return f"WeightPoint({self.network.label()}, {len(self.values)} weights [{head}]{where})"

    def to_dict(self) -> dict:
        """The JSON blocks form (integers stay integers, other rationals "p/q" strings)."""
        return {"blocks": _blocks_dict(self.network, list(self.values))}

    def provenance(self) -> dict:
        return {"source": self.source, "sha256": self.sha256, "weights": len(self.values)}


def _text(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def _entry_out(q: Fraction):
    return q.numerator if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def _blocks_dict(net: Network, values: list) -> list[dict]:
    blocks: list[dict] = [{} for _ in net.blocks]
    for m in net.weight_matrices:
        rows = [[_entry_out(values[m.offset + r * m.cols + c]) for c in range(m.cols)] for r in range(m.rows)]
        if m.vector:
            rows = [row[0] for row in rows]
        b = net.blocks[m.block]
        if isinstance(b, Attention) and m.letter in BLOCK_LETTERS:
            blocks[m.block][LETTERS[m.letter]] = rows
        elif isinstance(b, Attention):
            heads = blocks[m.block].setdefault("heads", [{} for _ in range(b.heads)])
            heads[m.head][LETTERS[m.letter]] = rows
        else:
            blocks[m.block][LETTERS[m.letter]] = rows
    return blocks


# ---------------------------------------------------------------- exact entries


def _vector_values(data, rows: int, where: str) -> list[Fraction]:
    if not isinstance(data, list) or len(data) != rows or any(isinstance(v, (list, dict)) for v in data):
        raise InputError(f"{where} must be a list of {rows} numbers (a bias vector).")
    return [parse_entry(v, f"{where}[{r + 1}]") for r, v in enumerate(data)]


def _values_of(m, data, where: str) -> list[Fraction]:
    return _vector_values(data, m.rows, where) if m.vector else _matrix_values(data, m.rows, m.cols, where)


def _matrix_values(data, rows: int, cols: int, where: str) -> list[Fraction]:
    if not isinstance(data, list) or len(data) != rows or not all(isinstance(r, list) and len(r) == cols for r in data):
        raise InputError(f"{where} must be {rows} rows of {cols} entries.")
    return [parse_entry(v, f"{where}[{r + 1}][{c + 1}]") for r, row in enumerate(data) for c, v in enumerate(row)]


# ---------------------------------------------------------------- from a decoded document


def point_from_data(arch: Network, data, source: str = "the point") -> WeightPoint:
    """A point from its JSON form (blocks, the old layers form of the paper's network, or flat weights)."""
    net = arch
    if not isinstance(data, dict):
        raise InputError(f"{source}: a weight point must be an object with blocks, layers or weights.")
    keys = set(data)
    if keys == {"weights"}:
        values = data["weights"]
        if not isinstance(values, list) or len(values) != net.parameters:
            got = len(values) if isinstance(values, list) else type(values).__name__
            raise InputError(f"{source}: weights must be a list of {net.parameters} numbers, got {got}.")
        return WeightPoint(net, tuple(parse_entry(v, f"{source} weight {k + 1}") for k, v in enumerate(values)))
    if keys == {"layers"}:
        if net.paper is None:
            raise InputError(
                f"{source}: the layers form is for the paper's network; give this network's point as blocks."
            )
        return WeightPoint(net, tuple(flat(point_from_dict(net, data))))
    if keys != {"blocks"}:
        raise InputError(
            f"{source}: a weight point has exactly one of the keys blocks, layers, weights; got "
            f"{', '.join(shown(k, 40) for k in sorted(map(str, keys))) or 'none'}."
        )  # a key is any text
    blocks = data["blocks"]
    if not isinstance(blocks, list) or len(blocks) != len(net.blocks):
        got = len(blocks) if isinstance(blocks, list) else type(blocks).__name__
        raise InputError(f"{source}: the network has {len(net.blocks)} blocks, the point {got}.")
    values: list[Fraction | None] = [None] * net.parameters
    for i, (b, entry) in enumerate(zip(net.blocks, blocks)):
        where = f"{source} block {i} ({b.kind})"
        mats = [m for m in net.weight_matrices if m.block == i]
        if not isinstance(entry, dict):
            raise InputError(f"{where} must be an object.")
        if isinstance(b, Attention):
            shared = [m for m in mats if m.letter in BLOCK_LETTERS]
            outer = {LETTERS[m.letter] for m in shared}
            entry = dict(entry)
            given = {k: entry.pop(k) for k in outer if k in entry}
            heads = entry.get("heads") if set(entry) == {"heads"} else ([entry] if b.heads == 1 else None)
            if not isinstance(heads, list) or len(heads) != b.heads:
                raise InputError(f'{where} has {b.heads} head(s): give {{"heads": [...]}} with one object each.')
            if set(given) != outer:
                raise InputError(f"{where} needs the key(s) {', '.join(sorted(outer))} beside its heads.")
            for m in shared:
                values[m.offset : m.stop] = _values_of(m, given[LETTERS[m.letter]], f"{where} {LETTERS[m.letter]}")
            for h, head in enumerate(heads):
                names = {LETTERS[m.letter] for m in mats if m.head == h and m.letter not in BLOCK_LETTERS}
                if not isinstance(head, dict) or set(head) != names:
                    raise InputError(f"{where} head {h} must have exactly the keys {', '.join(sorted(names))}.")
                for m in (m for m in mats if m.head == h and m.letter not in BLOCK_LETTERS):
                    values[m.offset : m.stop] = _values_of(
                        m, head[LETTERS[m.letter]], f"{where} head {h} {LETTERS[m.letter]}"
                    )
        else:
            names = {LETTERS[m.letter] for m in mats}
            if set(entry) != names:
                raise InputError(f"{where} must have exactly the keys {', '.join(sorted(names)) or '(none)'}.")
            for m in mats:
                values[m.offset : m.stop] = _values_of(m, entry[LETTERS[m.letter]], f"{where} {LETTERS[m.letter]}")
    return WeightPoint(net, tuple(values))


def as_point(arch: Network, value, name: str = "the point") -> WeightPoint:
    """What the Python verbs accept as a point: a WeightPoint, the JSON form (a dict), the flat weights (a list
    or array), or the old per-layer (Q, K, V) tuples of the paper's network."""
    net = arch
    if isinstance(value, WeightPoint):
        if value.network != net:
            raise InputError(f"{name} belongs to another network ({value.network.parameters} weights).")
        return value
    if isinstance(value, dict):
        return point_from_data(arch, value, name)
    if isinstance(value, np.ndarray) or (isinstance(value, list) and value and not isinstance(value[0], (list, tuple))):
        size = value.size if isinstance(value, np.ndarray) else len(value)
        if size != net.parameters:  # before any entry is converted
            raise InputError(f"{name} has {size} weights, the network {net.parameters}.")
        return WeightPoint(net, tuple(entries_of(array_of(value, name), name)))  # "p/q" and Fractions too
    if isinstance(value, (tuple, list)):
        if net.paper is None:
            raise InputError(
                f"{name}: per-layer (Q, K, V) is the paper's network's form; give this network's "
                "point as a dict of blocks or flat weights."
            )
        return WeightPoint(net, tuple(flat(_old_point(net, value, name))))
    raise InputError(f"{name} must be a WeightPoint, a dict, or a list of weights, got {type(value).__name__}.")


def _old_point(arch: Network, value, name: str):
    layers = []
    for i, layer in enumerate(value, start=1):
        if not isinstance(layer, (list, tuple)) or len(layer) != 3:
            raise InputError(f"{name}: layer {i} must be a triple (Q, K, V).")
        # entries as given: parse_entry reads Fractions and numpy scalars (with their own subnormal range)
        layers.append(
            {
                k: [list(row) if isinstance(row, (list, tuple, np.ndarray)) else row for row in M]
                for k, M in zip("QKV", layer)
            }
        )
    return point_from_dict(arch, {"layers": layers})


def state_names(net: Network) -> dict[str, tuple]:
    """The array names of a network's weights (PyTorch bridge, .npz, .safetensors) and their shapes."""
    out = {}
    for i, b in enumerate(net.blocks):
        mats = [m for m in net.weight_matrices if m.block == i]
        for letter in dict.fromkeys(m.letter for m in mats):
            m = next(x for x in mats if x.letter == letter)
            shape = (m.rows,) if m.vector else (m.rows, m.cols)
            if isinstance(b, Attention) and letter not in BLOCK_LETTERS:
                shape = (b.heads, *shape)
            out[f"blocks.{i}.{letter}"] = shape
    return out


def point_from_arrays(arch: Network, arrays: dict, source: str = "the point") -> WeightPoint:
    """A point from named arrays (a state_dict as numpy arrays, an .npz, a .safetensors file)."""
    net = arch
    if set(arrays) == {"weights"}:
        flat_array = array_of(arrays["weights"], f"{source} weights")
        if flat_array.size != net.parameters:
            raise InputError(f"{source}: weights has {flat_array.size} entries, the network {net.parameters}.")
        return WeightPoint(net, tuple(entries_of(flat_array, f"{source} weights")))
    names = state_names(net)
    missing = sorted(set(names) - set(arrays))
    extra = sorted(set(arrays) - set(names))
    if missing:
        raise InputError(f"{source}: the array {missing[0]!r} is missing (expected {', '.join(names)}).")
    if extra:
        raise InputError(
            f"{source}: the array {extra[0]!r} is not a weight of this network (expected {', '.join(names)})."
        )
    values: list[Fraction | None] = [None] * net.parameters
    for name, shape in names.items():
        arr = array_of(arrays[name], f"{source} {name}")
        if tuple(arr.shape) != shape:
            raise InputError(f"{source}: the array {name!r} has shape {tuple(arr.shape)}, expected {shape}.")
        _, i, letter = name.split(".")
        vals = entries_of(arr, f"{source} {name}")
        for m in (m for m in net.weight_matrices if m.block == int(i) and m.letter == letter):
            size = m.size
            values[m.offset : m.stop] = vals[m.head * size : (m.head + 1) * size]
    return WeightPoint(net, tuple(values))


# ---------------------------------------------------------------- files


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_weights(arch: Network, path: str | os.PathLike) -> WeightPoint:
    """A weight file (JSON, .npz or .safetensors, by its ending), with its name and sha256."""
    name = check_path(path, "weight file")
    refuse_pickle(name, "weight file")
    arrays = name.endswith((".npz", ".safetensors"))
    data = read_bytes(name, "weight file", max_bytes=MAX_POINT_BYTES if arrays else weights.MAX_WEIGHT_BYTES)
    refuse_pickle(name, "weight file", data)
    source = name
    if name.endswith(".npz"):
        net = arch
        expected = {**state_names(net), "weights": net.parameters}
        point = point_from_arrays(arch, npz_arrays(data, source, expected, "a weight of this network"), source)
    elif name.endswith(".safetensors"):
        point = point_from_arrays(arch, safetensors_arrays(data, source), source)
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(
                f"the weight file {name!r} is not UTF-8 JSON (use .npz or .safetensors for arrays)."
            ) from None
        point = point_from_data(arch, parse_json(text, f"weight file {name!r}"), source)
    return WeightPoint(point.network, point.values, os.path.basename(name), _digest(data))


def save_weights(point: WeightPoint, path: str | os.PathLike) -> None:
    """The JSON blocks form, written atomically."""
    from lightning_cas.system.files import atomic_write_text

    atomic_write_text(path, json.dumps(point.to_dict()) + "\n")


# The old-flag weight file (core.weights has the format): read and written here, through the one door.
def load_point(arch: Network, path: str | os.PathLike) -> tuple:
    """Read and validate a weight file through the bounded reader (no FIFOs, devices or huge or
    deeply nested files); every problem is one clear InputError. Every format ``load_weights`` reads is
    accepted (the old layers JSON, the blocks or flat JSON, .npz, .safetensors): the same files for every
    command."""
    name = check_path(path, "weight file")
    if name.endswith((".npz", ".safetensors")):
        return weights.unflat(arch, load_weights(arch, name).values)
    data = read_json(name, "weight file", max_bytes=weights.MAX_WEIGHT_BYTES)
    if isinstance(data, dict) and set(data) != {"layers"}:
        return weights.unflat(arch, point_from_data(arch, data, name).values)
    return weights.point_from_dict(arch, data)


def save_point(point: tuple, path: str | os.PathLike) -> None:
    """Write atomically (temp file + rename); a target that is not a regular file is refused."""
    atomic_write_text(path, json.dumps(weights.point_to_dict(point)) + "\n", "weight file")
