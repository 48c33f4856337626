"""Numeric arrays from the bytes of a file (.npz, .npy, .safetensors), read by the formats' own rules
with numpy's pickle loading off and every size a header claims checked against the bytes there are; a
pickle (torch.save's format) is refused, never unpickled."""

from __future__ import annotations

import io
import math
import struct
import zipfile

import numpy as np

from lightning_cas.core.checks import shown
from lightning_cas.errors import InputError
from lightning_cas.system.files import parse_json

MAX_HEADER_BYTES = 16 * 1024 * 1024
SAFETENSORS_DTYPES = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "BF16": "bf16",
    "I64": "<i8",
    "I32": "<i4",
    "I16": "<i2",
    "I8": "i1",
    "U8": "u1",
    "U16": "<u2",
    "U32": "<u4",
    "U64": "<u8",
}


MAX_ARRAY_BYTES = 512 * 1024 * 1024  # the uncompressed bytes of every array of one file together
NUMBER_KINDS = "iuf"  # integers and floats; bools, complex numbers, strings and objects are refused


def _member_header(archive: zipfile.ZipFile, info: zipfile.ZipInfo, source: str):
    """The shape and dtype an .npz member's .npy header declares (its first bytes only)."""
    with archive.open(info) as fp:
        try:
            version = np.lib.format.read_magic(fp)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, _, dtype = read(fp)
        except (ValueError, OSError, EOFError, SyntaxError) as exc:
            raise InputError(f"{source}: the member {info.filename!r} is not a readable .npy array ({exc}).") from None
    return tuple(shape), dtype


def npz_arrays(
    data: bytes,
    source: str,
    expected: dict | None = None,
    what: str = "expected here",
    max_bytes: int = MAX_ARRAY_BYTES,
    text: tuple[str, ...] = (),
) -> dict:
    """The arrays of an .npz archive. Before anything is decompressed, the zip directory's names and sizes
    and each member's .npy header are checked: only the names in ``expected`` (name -> shape, or an int for
    a flat array of that many entries, or None for any shape), numbers only, the declared sizes within
    ``max_bytes`` and equal to what the headers claim; then each member is read by its header. The names in
    ``text`` may instead hold one short string (a recorded layout, say)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise InputError(f"{source}: not a readable .npz archive of numeric arrays ({exc}).") from None
    with archive:
        infos = archive.infolist()
        names = [info.filename[:-4] if info.filename.endswith(".npy") else info.filename for info in infos]
        if len(set(names)) != len(names) or not all(info.filename.endswith(".npy") for info in infos):
            raise InputError(
                f"{source}: an .npz archive holds distinct .npy members only, got "
                f"{', '.join(shown(i.filename, 40) for i in infos[:5])}."
            )
        if expected is not None:
            extra = [n for n in names if n not in expected]
            if extra:
                raise InputError(
                    f"{source}: the array {shown(extra[0], 60)} is not {what} (expected {', '.join(expected)})."
                )
        total = sum(info.file_size for info in infos)
        if total > max_bytes:
            raise InputError(
                f"{source}: the arrays would take {total} bytes uncompressed, above the supported "
                f"maximum of {max_bytes}."
            )
        out = {}
        for name, info in zip(names, infos):
            shape, dtype = _member_header(archive, info, source)
            if name in text and dtype.kind == "U" and math.prod(shape) == 1 and dtype.itemsize <= 4 * 64:
                pass  # one short string, no pickle
            elif dtype.kind not in NUMBER_KINDS or dtype.hasobject:
                raise InputError(f"{source}: the array {name!r} holds {dtype} values, not numbers.")
            want = None if expected is None else expected[name]
            if isinstance(want, tuple) and shape != want:
                raise InputError(f"{source}: the array {name!r} has shape {shape}, expected {want}.")
            if isinstance(want, int) and math.prod(shape) != want:
                raise InputError(f"{source}: {name} has {math.prod(shape)} entries, the network {want}.")
            if math.prod(shape) * dtype.itemsize > info.file_size:
                raise InputError(
                    f"{source}: the array {name!r} claims shape {shape} of {dtype}; the member has "
                    f"{info.file_size} bytes."
                )
            try:
                with archive.open(info) as fp:
                    out[name] = np.lib.format.read_array(fp, allow_pickle=False)
            except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
                raise InputError(f"{source}: the array {name!r} is not readable ({exc}).") from None
        return out


def npy_array(data: bytes, source: str) -> np.ndarray:
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise InputError(f"{source}: not a readable .npy array of numbers ({exc}).") from None


def safetensors_arrays(data: bytes, source: str) -> dict:
    """The arrays of a .safetensors file, read by its own rules: an 8-byte header length, a JSON header
    naming dtype, shape and byte range of each tensor, the bytes; a header that lies about sizes or
    ranges is refused (never trusted to index memory)."""
    if len(data) < 8:
        raise InputError(f"{source}: too short to be a .safetensors file.")
    (n,) = struct.unpack("<Q", data[:8])
    if n > MAX_HEADER_BYTES or 8 + n > len(data):
        raise InputError(f"{source}: the .safetensors header claims {n} bytes; the file has {len(data) - 8}.")
    try:
        header = parse_json(data[8 : 8 + n].decode("utf-8"), f"{source} header")
    except UnicodeDecodeError:
        raise InputError(f"{source}: the .safetensors header is not UTF-8.") from None
    if not isinstance(header, dict):
        raise InputError(f"{source}: the .safetensors header is not an object.")
    body = memoryview(data)[8 + n :]
    out, spans = {}, []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise InputError(f"{source}: the tensor {name!r} has no valid dtype, shape and data_offsets.")
        dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if not isinstance(dtype, str) or dtype not in SAFETENSORS_DTYPES:
            raise InputError(f"{source}: the tensor {name!r} has dtype {shown(dtype)}, not a number type.")
        if not isinstance(shape, list) or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape
        ):
            raise InputError(f"{source}: the tensor {name!r} has an invalid shape {shape!r}.")
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in offsets)
        ):
            raise InputError(f"{source}: the tensor {name!r} has invalid data_offsets {offsets!r}.")
        begin, end = offsets
        item = 2 if dtype == "BF16" else np.dtype(SAFETENSORS_DTYPES[dtype]).itemsize
        if not 0 <= begin <= end <= len(body) or end - begin != math.prod(shape) * item:
            raise InputError(
                f"{source}: the tensor {name!r} claims bytes {begin}..{end} for shape {shape} of "
                f"{dtype}; the data has {len(body)} bytes."
            )
        spans.append((begin, end, name))
        raw = bytes(body[begin:end])
        if dtype == "BF16":
            arr = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            arr = np.frombuffer(raw, dtype=SAFETENSORS_DTYPES[dtype])
        out[name] = arr.reshape(shape)
    spans.sort()
    for (_, e0, n0), (b1, _, n1) in zip(spans, spans[1:]):
        if b1 < e0:
            raise InputError(f"{source}: the tensors {n0!r} and {n1!r} overlap.")
    return out


PICKLE_ENDINGS = (".pt", ".pth", ".pkl", ".pickle", ".ckpt", ".bin")


def refuse_pickle(name: str, what: str, data: bytes = b"") -> None:
    """A pickle (torch.save's format, by its ending or its first bytes) is never unpickled: unpickling runs
    code from the file."""
    pickled = (
        data[:1] == b"\x80"
        and data[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05")
        or data[:4] == b"PK\x03\x04"
        and b"data.pkl" in data[:4096]
    )
    if name.lower().endswith(PICKLE_ENDINGS) or pickled:
        raise InputError(
            f"the {what} {name!r} is a pickle, which is never unpickled (it can run code); save a "
            "state_dict with safetensors instead: from safetensors.torch import save_file; "
            "save_file({k: v.contiguous() for k, v in model.state_dict().items()}, 'w.safetensors')."
        )
