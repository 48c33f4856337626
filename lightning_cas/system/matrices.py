"""Small exact matrices and arrays from files or from Python: a readout, an input point, data sets.

A readout w (d_L x t) and an input point X0 (d_0 x t) come from ``.npy`` or JSON (a nested list of
numbers or rational strings), or from Python as anything array-like; inputs and targets of a data set
(N, d, t) from ``.npy``, ``.npz`` (one array, or the named key) or JSON. Every entry is read exactly (a
float is the binary rational it is); NaN, infinities and wrong shapes are refused in one line.
"""

from __future__ import annotations

import os
from fractions import Fraction

import numpy as np

from lightning_cas.core.weights import parse_entry
from lightning_cas.errors import InputError
from lightning_cas.system.arrays import npy_array, npz_arrays
from lightning_cas.system.files import parse_json, read_bytes
from lightning_cas.system.points import exact_values

MAX_MATRIX_BYTES = 64 * 1024 * 1024


def _from_file(path, what: str, key: str | None = None):
    name = os.fspath(path)
    data = read_bytes(path, what, max_bytes=MAX_MATRIX_BYTES)
    if name.endswith(".npy"):
        return npy_array(data, name), os.path.basename(name)
    if name.endswith(".npz"):
        arrays = npz_arrays(data, name)
        if key in arrays:
            return arrays[key], os.path.basename(name)
        if len(arrays) != 1:
            raise InputError(
                f"{name}: an .npz {what} holds one array (or one named {key!r}), got "
                f"{', '.join(sorted(arrays)) or 'none'}."
            )
        return next(iter(arrays.values())), os.path.basename(name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"the {what} {name!r} is not UTF-8 JSON (use .npy for arrays).") from None
    return parse_json(text, f"{what} {name!r}"), os.path.basename(name)


def _exact(value, where: str) -> np.ndarray:
    """An object array of Fractions from numbers, rational strings, nested lists or numpy arrays."""
    if isinstance(value, np.ndarray) and value.dtype != object:
        return np.array(exact_values(value, where), dtype=object).reshape(value.shape)
    try:
        shaped = np.array(value, dtype=object)
    except ValueError:
        raise InputError(f"{where}: not a rectangular array of numbers.") from None
    if shaped.dtype == object and any(isinstance(v, (list, tuple)) for v in shaped.reshape(-1)):
        raise InputError(f"{where}: not a rectangular array of numbers.")
    flat = [v if isinstance(v, Fraction) else _entry(v, where) for v in shaped.reshape(-1)]
    return np.array(flat, dtype=object).reshape(shaped.shape)


def _entry(v, where: str) -> Fraction:
    if isinstance(v, (np.floating, np.integer)):
        return exact_values(np.asarray([v]), where)[0]
    if isinstance(v, float) and not np.isfinite(v):
        raise InputError(f"{where}: the array holds a NaN or an infinite entry.")
    return parse_entry(v, where)


def exact_array(value, shape: tuple[int, ...], what: str, key: str | None = None) -> tuple[np.ndarray, str | None]:
    """(the array of Fractions, its file name or None) of the given shape; a path is read, anything else
    is taken as array-like. A leading axis of None in ``shape`` takes any positive length."""
    source = None
    if isinstance(value, (str, os.PathLike)):
        value, source = _from_file(value, what, key)
    arr = _exact(value, f"the {what}")
    want = tuple(arr.shape[0] if s is None else s for s in shape)
    if arr.ndim != len(shape) or tuple(arr.shape) != want or (shape and shape[0] is None and arr.shape[0] < 1):
        shown = "(" + ", ".join("N" if s is None else str(s) for s in shape) + ")"
        raise InputError(f"the {what} must have shape {shown}, got {tuple(arr.shape)}.")
    return arr, source
