"""Weight points: the JSON format every command that takes a point uses, and random points
(pure: reading and writing the files is system.points).

Format: ``{"layers": [{"Q": [[...]], "K": [[...]], "V": [[...]]}, ...]}`` with integers, rationals as
strings (``"3/4"``) or floats (read exactly: a float is the binary rational it is); a layer with
several heads is ``{"heads": [{"Q":..,"K":..,"V":..}, ...]}``. A point is held as a tuple of
per-layer (Q, K, V), each a tuple of rows of ``Fraction``, shaped by the architecture; a layer with
several heads is a ``MultiHead`` tuple of per-head (Q, K, V). Bad files are refused in one sentence.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from lightning_cas.core.checks import check_seed, shown
from lightning_cas.core.network import Network
from lightning_cas.core.numbers import rational_text
from lightning_cas.core.paper import Paper
from lightning_cas.errors import InputError

MAX_DIGITS = 60  # numerators/denominators beyond this are refused, not silently truncated
MAX_WEIGHT_BYTES = 4 * 1024 * 1024
SMALLEST_NORMAL = 2.2250738585072014e-308

Point = tuple  # tuple of (Q, K, V) per layer (MultiHead of them for several heads), tuples of tuples of Fraction


class MultiHead(tuple):
    """The heads of one layer, each a (Q, K, V): a distinct type so a one-head layer keeps its old shape."""


def layer_heads(layer) -> tuple:
    """The (Q, K, V) of every head of a point's layer (a one-head layer is its own single head)."""
    return tuple(layer) if isinstance(layer, MultiHead) else (layer,)


def make_layer(heads) -> tuple:
    """A point's layer from its heads' (Q, K, V): the bare triple for one head."""
    heads = tuple(tuple(h) for h in heads)
    return heads[0] if len(heads) == 1 else MultiHead(heads)


def _rational(value: str) -> Fraction | None:
    try:
        return rational_text(value)
    except ZeroDivisionError:
        raise InputError(f"division by zero in {value!r}.") from None


def smallest_normal(dtype) -> float:
    """The smallest normal number of a float dtype (float16 6.1e-5, float32 and bfloat16 1.2e-38,
    float64 2.2e-308; long double float64's): below it, a nonzero entry of that type is refused."""
    try:
        own = float(np.finfo(dtype).smallest_normal)
    except (TypeError, ValueError):
        own = SMALLEST_NORMAL
    return max(own, SMALLEST_NORMAL)  # long double is held to float64's range: tinier values have 1000s of digits


def exact_float(value, where: str, dtype=np.float64) -> Fraction:
    """A float as the binary rational it is; NaN, infinities and subnormals of its own type (``dtype``:
    float16, bfloat16 (held as float32), float32 or float64) are refused: a subnormal is almost always an
    underflow, not a trained weight, and a float64 one's exact value has over 300 digits."""
    import math

    if not math.isfinite(value):
        raise InputError(f"{where}: the entry {value!r} is not a finite number.")
    tiny = smallest_normal(dtype)
    if value != 0.0 and abs(value) < tiny:
        raise InputError(
            f"{where}: the entry {value!r} is a subnormal {np.dtype(dtype).name} (below {tiny:.2g}); "
            "write 0 or a rational string if it is meant."
        )
    return Fraction(*value.as_integer_ratio()) if hasattr(value, "as_integer_ratio") else Fraction(float(value))


def _size_checked(q: Fraction, where: str) -> Fraction:
    """A rational within MAX_DIGITS digits above and below the line; else refused, naming its size."""
    top, bottom = abs(q.numerator), q.denominator
    for part, value in (("numerator", top), ("denominator", bottom)):
        if value.bit_length() <= 3 * MAX_DIGITS:  # under 55 digits: no need to count them
            continue
        # counted exactly up to 3000 digits (str() has a limit), estimated beyond
        digits = len(str(value)) if value.bit_length() < 10_000 else f"about {int(value.bit_length() * 0.30103)}"
        if not isinstance(digits, int) or digits > MAX_DIGITS:
            raise InputError(
                f"{where}: the entry's {part} has {digits} digits, above the supported maximum of "
                f"{MAX_DIGITS} (a larger rational is refused, not rounded)."
            )
    return q


def parse_entry(value, where: str) -> Fraction:
    """An integer, a Fraction, a rational string like "3/4" or a float (read exactly, as the binary
    rational it is); Python's or numpy's, never a bool. The same reading for JSON and Python values."""
    if isinstance(value, bool) or _numpy(value) and value.dtype.kind == "b":
        raise InputError(f'{where}: entries must be numbers or rational strings like "3/4", got {value!r}.')
    if _numpy(value) and value.dtype.kind in "iu":
        q = Fraction(int(value))
    elif _numpy(value) and value.dtype.kind == "f":
        return exact_float(value, where, value.dtype)  # its own type's subnormal range
    elif isinstance(value, int):
        q = Fraction(value)
    elif isinstance(value, Fraction):
        q = value
    elif isinstance(value, float):
        return exact_float(value, where)  # a double's exact value has at most 1075 binary digits
    elif isinstance(value, str) and len(value) > 2 * MAX_DIGITS + 8:
        raise InputError(
            f"{where}: the entry has {len(value)} characters, more than a rational of {MAX_DIGITS}-digit "
            "numerator and denominator."
        )
    elif isinstance(value, str) and (parsed := _rational(value)) is not None:
        q = parsed
    else:
        raise InputError(f'{where}: entries must be numbers or rational strings like "3/4", got {shown(value)}.')
    return _size_checked(q, where)


def _numpy(value) -> bool:
    return isinstance(value, np.generic)


def exact_values(array: np.ndarray, where: str, dtype=None) -> list[Fraction]:
    """The entries of a numeric array as exact rationals: every float dtype (float16, bfloat16 (ml_dtypes'
    or held as float32), float32, float64, long double) as the binary rational it holds, never rounded
    through a narrower type; NaN, inf and the subnormals of ``dtype`` (default: the array's own; a caller
    that widened float16 or bfloat16 names the type the values were stored in) refused."""
    if array.dtype.name == "bfloat16":  # ml_dtypes: widening to float32 is exact, and keeps its subnormals'
        array, dtype = array.astype(np.float32), dtype or np.float32
    if array.dtype.kind == "b" or array.dtype.kind not in "iuf":
        raise InputError(f"{where}: the array holds {array.dtype} values, not numbers.")
    flat_values = array.reshape(-1)
    if array.dtype.kind != "f":
        return [Fraction(int(v)) for v in flat_values]
    wide = flat_values if array.dtype.itemsize > 8 else flat_values.astype(np.float64)  # widening is exact
    if not np.all(np.isfinite(wide)):
        raise InputError(f"{where}: the array holds a NaN or an infinite entry.")
    kind = np.dtype(dtype or array.dtype)
    tiny = (wide != 0) & (np.abs(wide) < smallest_normal(kind))
    if tiny.any():
        raise InputError(
            f"{where}: the array holds a subnormal {kind.name} ({float(wide[tiny][0])!r}, below "
            f"{smallest_normal(kind):.2g}); write 0 if it is meant."
        )
    if wide.dtype.itemsize > 8:
        return [Fraction(*v.as_integer_ratio()) for v in wide]
    return [Fraction(float(v)) for v in wide]


def array_of(value, where: str) -> np.ndarray:
    """``value`` as an array, read before any shape is trusted: a numeric numpy array (or anything numpy
    reads as one, a tensor say) as it is; nested Python lists (and object arrays) as an object array of
    Fractions, each entry read by :func:`parse_entry` (integers, Fractions, rational strings, floats, numpy
    scalars: the same reading as JSON; so are the strings of a numpy string array). Lists of different
    lengths are refused in one line, never numpy's ValueError."""
    if not isinstance(value, (list, tuple, np.ndarray)):
        try:
            value = np.asarray(value)
        except (ValueError, TypeError):
            raise InputError(f"{where}: not an array of numbers, got {type(value).__name__}.") from None
    if isinstance(value, np.ndarray) and value.dtype.kind not in "OU":  # strings are read as in JSON, below
        return value
    try:
        shaped = np.array(value, dtype=object)
    except ValueError:
        shaped = None
    if shaped is None or any(isinstance(v, (list, tuple, np.ndarray)) for v in shaped.reshape(-1)):
        raise InputError(f"{where}: not a rectangular array (its lists have different lengths).")
    return np.array([parse_entry(v, where) for v in shaped.reshape(-1)], dtype=object).reshape(shaped.shape)


def entries_of(array: np.ndarray, where: str) -> list[Fraction]:
    """The entries of an :func:`array_of` result as exact rationals, in row-major order."""
    return list(array.reshape(-1)) if array.dtype == object else exact_values(array, where)


def _matrix(data, rows: int, cols: int, where: str) -> tuple:
    if not isinstance(data, list) or len(data) != rows:
        got = len(data) if isinstance(data, list) else type(data).__name__
        raise InputError(f"{where} must be a list of {rows} rows of {cols} entries, got {got} rows.")
    out = []
    for r, row in enumerate(data):
        if not isinstance(row, list) or len(row) != cols:
            got = len(row) if isinstance(row, list) else type(row).__name__
            raise InputError(f"{where} row {r + 1} must have {cols} entries, got {got}.")
        out.append(tuple(parse_entry(v, f"{where}[{r + 1}][{c + 1}]") for c, v in enumerate(row)))
    return tuple(out)


def paper_of(arch: Network) -> Paper:
    """The paper's numbers of a network the per-layer (Q, K, V) form is written for; refused in one line otherwise."""
    if isinstance(arch, Paper):
        return arch
    if arch.paper is None:
        raise InputError(
            "the per-layer (Q, K, V) form is for the paper's network (plain attention blocks); give "
            "this network's point as blocks or flat weights."
        )
    return arch.paper


def point_from_dict(arch: Network, data) -> Point:
    """Validate a decoded JSON point against the architecture's shapes."""
    if not isinstance(data, dict) or "layers" not in data:
        raise InputError('a weight point must be a JSON object {"layers": [{"Q": ..., "K": ..., "V": ...}, ...]}.')
    unknown = sorted(map(str, set(data) - {"layers"}))
    if unknown:
        raise InputError(f'unknown weight point key(s) {", ".join(map(repr, unknown))}: a point has only "layers".')
    layers = data["layers"]
    if not isinstance(layers, list) or len(layers) != arch.depth:
        got = len(layers) if isinstance(layers, list) else type(layers).__name__
        raise InputError(f"the point must have {arch.depth} layer(s), got {got}.")
    point = []
    for i, ((a, d, e), layer) in enumerate(zip(paper_of(arch).layer_shapes, layers), start=1):
        H = arch.heads[i - 1]
        if isinstance(layer, dict) and set(layer) == {"heads"}:
            heads = layer["heads"]
            if not isinstance(heads, list) or len(heads) != H:
                got = len(heads) if isinstance(heads, list) else type(heads).__name__
                raise InputError(f"layer {i} must have {H} head(s), got {got}.")
        elif H == 1:
            heads = [layer]
        else:
            raise InputError(
                f'layer {i} has {H} heads: it must be an object {{"heads": [{{"Q": ..., "K": ..., "V": ...}}, ...]}}.'
            )
        parsed = []
        for h, head in enumerate(heads, start=1):
            where = f"layer {i}" if H == 1 else f"layer {i} head {h}"
            if not isinstance(head, dict) or set(head) != {"Q", "K", "V"}:
                raise InputError(f"{where} must be an object with exactly the keys Q, K, V.")
            parsed.append(
                (
                    _matrix(head["Q"], a, d, f"{where} Q"),
                    _matrix(head["K"], a, d, f"{where} K"),
                    _matrix(head["V"], e, d, f"{where} V"),
                )
            )
        point.append(make_layer(parsed))
    return tuple(point)


def point_to_dict(point: Point) -> dict:
    """JSON form; integers stay integers, other rationals become "p/q" strings."""

    def entry(q: Fraction):
        return q.numerator if q.denominator == 1 else f"{q.numerator}/{q.denominator}"

    def head(qkv):
        return {name: [[entry(v) for v in row] for row in M] for name, M in zip("QKV", qkv)}

    return {
        "layers": [
            {"heads": [head(h) for h in layer]} if isinstance(layer, MultiHead) else head(layer) for layer in point
        ]
    }


def random_point(arch: Network, seed: int, bound: int = 9) -> Point:
    """A random integer point with entries in +-[1, bound], reproducible from ``seed``.

    Never zero: a drawn W must not sit on a coordinate hyperplane (with 0 allowed, 1 entry in 19
    lands there and e.g. the depth-2 scalar network's fiber splits into hyperplanes).
    """
    check_seed(seed)
    rng = np.random.default_rng(seed)
    layers: list[list[tuple]] = [[] for _ in range(arch.depth)]
    for i, _, a, d, e in paper_of(arch).head_blocks:
        mats = []
        for rows in (a, a, e):
            mags = rng.integers(1, bound + 1, (rows, d))
            signs = rng.choice([-1, 1], (rows, d))
            mats.append(tuple(tuple(Fraction(int(m * s)) for m, s in zip(mr, sr)) for mr, sr in zip(mags, signs)))
        layers[i].append(tuple(mats))
    return tuple(make_layer(heads) for heads in layers)


def flat(point: Point) -> list[Fraction]:
    """All entries in the canonical weight order (layer by layer, head by head, Q, K, V row-major)."""
    return [v for layer in point for head in layer_heads(layer) for M in head for row in M for v in row]


def unflat(arch: Network, values) -> Point:
    """The point of the flat weights ``values`` (the canonical order of :func:`flat`, which it inverts)."""
    values = list(values)
    if len(values) != arch.parameters:
        raise InputError(f"the point has {len(values)} weights, the architecture {arch.parameters}.")
    layers: list[list] = [[] for _ in range(arch.depth)]
    at = 0
    for i, _, a, d, e in paper_of(arch).head_blocks:
        mats = []
        for rows in (a, a, e):
            mats.append(tuple(tuple(values[at + r * d : at + (r + 1) * d]) for r in range(rows)))
            at += rows * d
        layers[i].append(tuple(mats))
    return tuple(make_layer(heads) for heads in layers)
