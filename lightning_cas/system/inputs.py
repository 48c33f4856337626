"""Input data for the batch functional dimension: an array of token matrices (N, d_0, t), read exactly
from ``.npy``, ``.npz`` (key ``inputs``, and ``layout`` when it records one) or JSON, with the same
bounded reader, exactness and refusals as the weight points of ``system.points``. Integer token ids of
shape (N, t) are the one-hot token matrices they stand for (what a converted ``nn.Embedding`` takes).
"""

from __future__ import annotations

import hashlib
import io
import os
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from lightning_cas.core import weights
from lightning_cas.core.checks import shown
from lightning_cas.core.limits import MAX_TOKENS
from lightning_cas.core.network import Network
from lightning_cas.core.weights import array_of, entries_of, parse_entry
from lightning_cas.errors import InputError
from lightning_cas.system.arrays import npy_array, npz_arrays, refuse_pickle
from lightning_cas.system.files import check_path, parse_json, read_bytes, write_file

MAX_INPUT_BYTES = 256 * 1024 * 1024
MAX_INPUT_ENTRIES = 4_000_000  # entries of all token matrices together (each becomes an exact rational)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class InputData:
    """Token matrices (N, d_0, t), exactly, and their source."""

    values: np.ndarray  # object array of Fraction
    source: str | None = None
    sha256: str | None = None

    @property
    def count(self) -> int:
        return self.values.shape[0]

    def provenance(self) -> dict:
        return {"source": self.source, "sha256": self.sha256, "samples": self.count}


LAYOUTS = ("features-tokens", "tokens-features")


def check_layout(layout) -> str | None:
    """None (read it from the shape) or one of LAYOUTS; anything else refused in one line."""
    if layout is not None and layout not in LAYOUTS:
        raise InputError(f"the layout must be one of {', '.join(LAYOUTS)}, got {layout!r}.")
    return layout


def inputs_from_array(arch: Network, array, source: str = "the inputs", layout: str | None = None) -> InputData:
    """Token matrices from an array of shape (N, d_0, t) (``features-tokens``, ours: tokens are columns) or
    (N, t, d_0) (``tokens-features``, PyTorch's batches). Without a stated layout the shape decides, and an
    array that fits both (t = d_0) is refused rather than guessed."""
    net = arch
    layout = check_layout(layout)
    arr = array_of(array, source)
    if token_ids(net, arr):
        return _one_hot(net, arr, source)
    net = fit_tokens(net, arr.shape, layout)
    if arr.ndim == 2 and net.tokens == 1:
        arr = arr[:, :, None] if layout != "tokens-features" else arr[:, None, :]
    ours, torch_shape = (net.input, net.tokens), (net.tokens, net.input)
    shape = tuple(arr.shape[1:]) if arr.ndim == 3 else None
    if layout is None and shape == ours == torch_shape:
        raise InputError(
            f"{source}: shape {tuple(arr.shape)} fits both layouts (t = d_0 = {net.input}); say which "
            "with --layout features-tokens (N, d_0, t) or tokens-features (N, t, d_0, PyTorch's)."
        )
    if layout is None:
        layout = "tokens-features" if shape == torch_shape else "features-tokens"
    want = ours if layout == "features-tokens" else torch_shape
    if arr.ndim != 3 or shape != want or arr.shape[0] < 1:
        raise InputError(
            f"{source}: inputs must be an array of shape (N, {net.input}, {net.tokens}) (token "
            f"matrices, tokens as columns), (N, {net.tokens}, {net.input}) (PyTorch's batches, "
            f"--layout tokens-features) or integer token ids 0..{net.input - 1} of shape (N, {net.tokens}) "
            f"(a network that starts with an embedding), got shape {tuple(arr.shape)}."
        )
    if layout == "tokens-features":
        arr = np.swapaxes(arr, 1, 2)
    if arr.size > MAX_INPUT_ENTRIES:  # before any entry is converted
        raise InputError(
            f"{source}: {arr.shape[0]} token matrices ({arr.size} entries) are above the supported "
            f"maximum of {MAX_INPUT_ENTRIES} entries."
        )
    values = np.array(entries_of(arr, source), dtype=object).reshape(arr.shape)
    return InputData(values, source)


def token_ids(net: Network, arr: np.ndarray) -> bool:
    """Whether an array is token ids: integers of shape (N, t), for a network whose d_0 inputs are one-hot
    vectors (one that starts with an embedding, as ``from_torch`` converts it). Never an array that is token
    matrices too: with one token, (N, d_0) is N one-token inputs."""
    if arr.ndim != 2 or arr.shape[1] != net.tokens or net.tokens == 1 and arr.shape[1] == net.input:
        return False
    if arr.dtype == object:
        return all(v.denominator == 1 for v in arr.reshape(-1))
    return arr.dtype.kind in "iu"


def _one_hot(net: Network, arr: np.ndarray, source: str) -> InputData:
    """Token ids (N, t) as the one-hot token matrices (N, d_0, t) they stand for; said in the source."""
    if arr.size * net.input > MAX_INPUT_ENTRIES:  # before any id is converted
        raise InputError(
            f"{source}: {arr.shape[0]} inputs of {net.tokens} token ids are {arr.size * net.input} one-hot "
            f"entries, above the supported maximum of {MAX_INPUT_ENTRIES}."
        )
    ids = np.array([int(v) for v in arr.reshape(-1)], dtype=object).reshape(arr.shape)
    bad = [(n, j) for n, j in np.ndindex(*ids.shape) if not 0 <= ids[n, j] < net.input]
    if bad:
        n, j = bad[0]
        raise InputError(
            f"{source}: token ids are 0..{net.input - 1} (the network takes one-hot vectors of "
            f"{net.input}), got {shown(ids[n, j])} (input {n + 1}, token {j + 1})."
        )
    values = np.full((ids.shape[0], net.input, net.tokens), Fraction(0), dtype=object)
    for n, j in np.ndindex(*ids.shape):
        values[n, ids[n, j], j] = Fraction(1)
    return InputData(values, f"{source} (token ids, as one-hot vectors)")


def fit_tokens(net: Network, shape, layout: str | None = None) -> Network:
    """The network with the token count of inputs of this ``shape``, when it acts on each token alone (no block
    mixes tokens: its token count is only how many columns an input has); else the network itself."""
    if len(shape) != 3 or any(b.mixes_tokens for b in net.blocks):
        return net
    _, a, b = shape
    d = net.input
    if layout == "features-tokens" or (layout is None and a == d and b != d):
        tokens = b
    elif layout == "tokens-features" or (layout is None and b == d and a != d):
        tokens = a
    else:
        return net
    if tokens == net.tokens or not 1 <= tokens <= MAX_TOKENS:
        return net
    return Network(net.input, tokens, net.blocks)


def _stored_layout(arrays: dict, name: str) -> str | None:
    """The layout an .npz records beside its inputs (the bridge writes one), or None."""
    if "layout" not in arrays:
        return None
    value = arrays["layout"]
    text = str(value.reshape(-1)[0]) if value.dtype.kind == "U" and value.size == 1 else None
    if text not in LAYOUTS:
        raise InputError(f"{name}: the array 'layout' must be one of {', '.join(LAYOUTS)}.")
    return text


def load_inputs(arch: Network, path: str | os.PathLike, layout: str | None = None) -> InputData:
    """Input data: .npy, .npz (key ``inputs``, and ``layout`` when it records one) or JSON (a nested list in
    the features-tokens layout), with its name and sha256. ``layout`` as in ``inputs_from_array``; a stated
    layout that contradicts the one the file records is refused."""
    name = check_path(path, "input file")
    layout = check_layout(layout)
    refuse_pickle(name, "input file")
    arrays = name.endswith((".npy", ".npz"))
    data = read_bytes(name, "input file", max_bytes=MAX_INPUT_BYTES if arrays else weights.MAX_WEIGHT_BYTES)
    refuse_pickle(name, "input file", data)
    if name.endswith(".npy"):
        arr = npy_array(data, name)
    elif name.endswith(".npz"):
        arrays = npz_arrays(data, name, {"inputs": None, "layout": None}, "the inputs", text=("layout",))
        if set(arrays) - {"layout"} != {"inputs"}:
            raise InputError(
                f"{name}: an .npz of inputs holds one array named 'inputs' (and optionally 'layout'), "
                f"got {', '.join(sorted(arrays)) or 'none'}."
            )
        stored = _stored_layout(arrays, name)
        if stored is not None and layout is not None and stored != layout:
            raise InputError(f"{name}: the file records the layout {stored}, not {layout}.")
        layout = layout or stored
        arr = arrays["inputs"]
    else:
        net = arch
        doc = parse_json(data.decode("utf-8", errors="replace"), f"input file {name!r}")
        shaped = (
            isinstance(doc, list)
            and doc
            and all(
                isinstance(mat, list)
                and len(mat) == net.input
                and all(isinstance(row, list) and len(row) == net.tokens for row in mat)
                for mat in doc
            )
        )
        ids = isinstance(doc, list) and doc and all(isinstance(row, list) and len(row) == net.tokens for row in doc)
        if ids and all(isinstance(v, int) and not isinstance(v, bool) for row in doc for v in row):
            out = inputs_from_array(arch, np.array(doc, dtype=object), name)
            return InputData(out.values, os.path.basename(name) + " (token ids, as one-hot vectors)", _digest(data))
        if not shaped:
            raise InputError(
                f"{name}: inputs must be a list of token matrices, each {net.input} rows of "
                f"{net.tokens} numbers (tokens as columns)."
            )
        nested = [[[parse_entry(v, f"{name} input {n + 1}") for v in row] for row in mat] for n, mat in enumerate(doc)]
        return InputData(np.array(nested, dtype=object), os.path.basename(name), _digest(data))
    out = inputs_from_array(arch, arr, name, layout)
    return InputData(out.values, os.path.basename(name) + out.source[len(name) :], _digest(data))


def save_inputs(values, path: str | os.PathLike, layout: str = "features-tokens") -> None:
    """Token matrices as an .npz that records its layout, so it is never misread."""
    check_layout(layout)
    arr = np.asarray(values)
    if arr.ndim != 3:
        raise InputError(f"inputs must be a 3-dimensional array (N, d_0, t) or (N, t, d_0), got {arr.ndim} axes.")
    buffer = io.BytesIO()
    np.savez(buffer, inputs=arr, layout=np.array(layout))
    write_file(path, buffer.getvalue(), "input file")
