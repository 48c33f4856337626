"""The result contract: one provenance for every result, typed nested records, lossless JSON.

Every result is a frozen dataclass that inherits :class:`Provenance` (method, certainty, seed,
elapsed_s, m2_version, lightning_cas_version, and free-text ``method_detail`` /
``certainty_detail``) and :class:`JsonResult` (``to_dict``/``from_dict``/``to_json``/``from_json``
with a ``kind`` key). ``from_dict`` is strict: the ``kind`` must match, unknown keys are refused,
and nested records are rebuilt with their types, so ``from_json(r.to_json()) == r`` for every
result (``api.load_result(path)`` reads any result file back as the right class).

``certainty`` is one of ``exact`` (symbolic over QQ, or a proof certificate), ``probabilistic``
(exact arithmetic at random points: wrong only with a stated small probability) and ``numeric``
(floating point with a reported tolerance or gap). See docs/results.md.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from dataclasses import dataclass, field, fields

from lightning_cas.core.checks import integer_value, real_value
from lightning_cas.core.numbers import allow_long_integers
from lightning_cas.core.network import Network
from lightning_cas.core.primes import is_prime
from lightning_cas.errors import InputError, ResultError

CERTAINTIES = ("exact", "probabilistic", "numeric")


def _version() -> str:
    from lightning_cas import __version__

    return __version__


def freeze(value):
    """Lists (from JSON or from a caller) as tuples, recursively, so results compare after a round trip."""
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return {k: freeze(v) for k, v in value.items()}
    return value


def _thaw(value):
    if isinstance(value, (tuple, list)):
        return [_thaw(v) for v in value]
    if isinstance(value, dict):
        return {k: _thaw(v) for k, v in value.items()}
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return value


def _decode(tp, value, where: str):
    """``value`` (from JSON) as an instance of the annotation ``tp``; refuses what does not fit."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None:
            if type(None) in args:
                return None
            raise InputError(f"{where} must not be null.")
        candidates = [arg for arg in args if arg is not type(None)]
        for arg in candidates:  # records that tell their own serialized form apart (Network)
            if hasattr(arg, "accepts") and arg.accepts(value):
                return _decode(arg, value, where)
        return _decode(candidates[0], value, where)
    if tp is typing.Any or tp is object:
        return freeze(value)
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise InputError(f"{where} must be a list, got {type(value).__name__}.")
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
        return freeze(value)
    if tp is tuple:
        if not isinstance(value, (list, tuple)):
            raise InputError(f"{where} must be a list, got {type(value).__name__}.")
        return freeze(value)
    if tp is dict or origin is dict:
        if not isinstance(value, dict):
            raise InputError(f"{where} must be an object, got {type(value).__name__}.")
        return freeze(value)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(value)
        except ValueError:
            raise InputError(f"{where} must be one of {', '.join(str(m.value) for m in tp)}, got {value!r}.") from None
    if isinstance(tp, type) and hasattr(tp, "from_dict"):
        if isinstance(value, tp):
            return value
        return tp.from_dict(value)
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"{where} must be a number, got {value!r}.")
        return float(value)
    if tp in (int, str, bool):
        if not isinstance(value, tp) or (tp is int and isinstance(value, bool)):
            raise InputError(f"{where} must be {tp.__name__}, got {value!r}.")
        return value
    return freeze(value)


OPTIONAL = "lightning_cas.optional"


def optional(default=None):
    """A field written to JSON only when it differs from its default (an extension of a record's JSON)."""
    return field(default=default, metadata={OPTIONAL: True})


class Record:
    """Mixin for typed nested records (frozen dataclasses): strict, lossless ``to_dict``/``from_dict``.
    Fields are attributes (``record.name``); a record is not a dict."""

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, (list, tuple, dict)):
                object.__setattr__(self, f.name, freeze(value))

    def to_dict(self) -> dict:
        # a field marked optional is written only when set, so results that never set it keep their JSON
        return {f.name: _thaw(getattr(self, f.name)) for f in fields(self)
                if not (f.metadata.get(OPTIONAL) and getattr(self, f.name) == f.default)}

    def html_fields(self) -> list[tuple[str, object]]:
        """(name, value) pairs shown when the record is displayed in Jupyter (core.display)."""
        return [(f.name, getattr(self, f.name)) for f in fields(self)]

    @classmethod
    def _check_keys(cls, data) -> dict:
        if not isinstance(data, dict):
            raise InputError(f"a {cls.__name__} must be a JSON object, got {type(data).__name__}.")
        names = {f.name for f in fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise InputError(f"unknown {cls.__name__} keys: {', '.join(sorted(map(str, unknown)))}.")
        required = {f.name for f in fields(cls) if f.default is dataclasses.MISSING
                    and f.default_factory is dataclasses.MISSING}
        missing = required - set(data)
        if missing:
            raise InputError(f"the {cls.__name__} is missing {', '.join(sorted(missing))}.")
        return data

    @classmethod
    def from_dict(cls, data: dict):
        data = cls._check_keys(data)
        hints = typing.get_type_hints(cls)
        kwargs = {k: _decode(hints.get(k, typing.Any), v, f"{cls.__name__}.{k}") for k, v in data.items()}
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as exc:
            raise InputError(f"not a valid {cls.__name__}: {str(exc).rstrip('.')}.") from None


class JsonResult(Record):
    """A top-level result: ``to_dict`` carries ``kind`` (the class name), ``from_dict`` checks it.

    A class whose JSON form changed raises ``SCHEMA``: its JSON then carries ``"schema": n``, and
    ``upgrade`` turns what an earlier version wrote (no ``schema`` key: version 1) into today's form,
    so every result file ever written still loads. In Jupyter a result shows itself as HTML.
    """

    SCHEMA: typing.ClassVar[int] = 1

    def to_dict(self) -> dict:
        head = {"kind": type(self).__name__}
        if self.SCHEMA > 1:
            head["schema"] = self.SCHEMA
        return {**head, **super().to_dict()}

    @classmethod
    def upgrade(cls, data: dict, schema: int) -> dict:
        """``data`` (without ``kind`` and ``schema``) written in form ``schema``, in today's form."""
        return data

    def text(self) -> str:
        """What the CLI prints for this result (its type's renderer in core.text or geometry.text);
        a type without one shows its fields."""
        return repr(self)

    def __str__(self) -> str:
        return self.text()

    def _title(self) -> str:
        arch = getattr(self, "architecture", None)
        return type(self).__name__ + (f": {arch}" if arch is not None else "")

    def _certainty(self) -> str | None:
        """The certainty in words: this result's, or that of the result it holds (a job record's)."""
        from lightning_cas.core.text import certainty_text

        if hasattr(self, "certainty"):
            return certainty_text(self)
        inner = getattr(self, "result", None)
        return certainty_text(inner) if hasattr(inner, "certainty") else None

    def _repr_html_(self) -> str:
        from lightning_cas.core.display import html_document

        provenance = {f.name for f in fields(Provenance)} | {"script"}
        own = [(f.name, getattr(self, f.name)) for f in fields(self) if f.name not in provenance]
        made = [(f.name, getattr(self, f.name)) for f in fields(self) if f.name in provenance]
        return html_document(self._title(), [("result", [(k, v) for k, v in own if k != "architecture"]),
                                             ("provenance", made)], certainty=self._certainty())

    def _repr_markdown_(self) -> str:
        """The title, the certainty in words, and the CLI's text as a code block (every text escaped)."""
        from lightning_cas.core.display import markdown_document

        try:
            text = self.text()
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):  # a damaged record: its fields
            text = repr(self)
        return markdown_document(self._title(), self._certainty(), text)

    def to_json(self, **kwargs) -> str:
        allow_long_integers()
        try:
            return json.dumps(self.to_dict(), **kwargs)
        except ValueError as exc:  # an integer beyond even the raised limit
            raise ResultError(f"the {type(self).__name__} holds a number too long to write ({exc})") from None

    @classmethod
    def from_dict(cls, data: dict):
        if not isinstance(data, dict):
            raise InputError(f"a {cls.__name__} must be a JSON object, got {type(data).__name__}.")
        kind = data.get("kind")
        if kind != cls.__name__:
            raise InputError(f"expected a {cls.__name__}, got kind {kind!r}.")
        schema = data.get("schema", 1)
        if isinstance(schema, bool) or not isinstance(schema, int) or not 1 <= schema <= cls.SCHEMA:
            raise InputError(f"a {cls.__name__} of schema {str(schema)[:20]!r}: this version of lightning_cas reads "
                             f"schema 1 to {cls.SCHEMA}.")
        data = {k: v for k, v in data.items() if k not in ("kind", "schema")}
        if schema < cls.SCHEMA:
            data = cls.upgrade(data, schema)
        return super().from_dict(data)

    @classmethod
    def from_json(cls, text: str):
        if not isinstance(text, (str, bytes, bytearray)):
            raise InputError(f"a {cls.__name__} is read from JSON text, got {type(text).__name__}.")
        allow_long_integers()
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise InputError(f"not a JSON result: {exc}.") from None
        return cls.from_dict(data)


@dataclass(frozen=True, kw_only=True)
class Provenance:
    """How a result was obtained; every result carries these keys (keyword-only, after its own fields)."""

    method: str  # a short method name, e.g. "modp", "m2-ker", "strata"
    certainty: str  # exact | probabilistic | numeric
    seed: int | None = None
    elapsed_s: float = 0.0
    m2_version: str | None = None
    lightning_cas_version: str = field(default_factory=_version)
    method_detail: str | None = None  # the method in words
    certainty_detail: str | None = None  # what the certainty covers, e.g. "verdict by certificate"

    def __post_init__(self):
        if self.certainty not in CERTAINTIES:
            raise ValueError(f"certainty must be one of {CERTAINTIES}, got {self.certainty!r}")
        Record.__post_init__(self)


# ---------------------------------------------------------------- the dimension results


@dataclass(frozen=True)
class ImplicitSummary(Record):
    """What the implicit ideal of the ``implicit`` method says besides its dimension."""

    degree: int  # of the variety, in the standard grading
    linear_span: int  # linearly independent coefficients: the coordinates y_i of the ideal's ring
    generator_degrees: tuple[int, ...]  # of a minimal generating set


@dataclass(frozen=True)
class DimensionResult(Provenance, JsonResult):
    """The dimension of the neurovariety of one architecture, and how it was obtained."""

    architecture: Network
    dimension: int
    parameters: int
    ambient_dimension: int | None  # None: not polynomial (softmax)
    primes: tuple[int, ...] = ()
    samples: int | None = None
    runs: tuple[dict, ...] = ()  # one per repetition: prime, seed, rank, rows (numeric: its spectrum)
    consistent: bool = True  # False when repetitions disagreed (never averaged away)
    failure_bound: float | None = None  # Schwartz-Zippel bound on under-estimating, per run
    script: str | None = None
    notes: tuple[str, ...] = ()
    # the rank at given weights and/or on given inputs (absent for a generic dimension)
    at: "Source | None" = optional()  # the weight point: file name and sha256
    inputs: "Source | None" = optional()  # the input data: file name, sha256, count
    generic_dimension: int | None = optional()  # the generic rank, next to the rank at the point
    certificate: "RankCertificate | None" = optional()  # softmax at a point: what was proved
    spectrum: tuple[float, ...] = optional(())  # singular values (float64 or high precision), descending
    bands: "tuple[SpectrumBand, ...]" = optional(())  # the singular values in proved bands, largest first
    near_ranks: "tuple[NearRank, ...]" = optional(())  # the lower ranks the Jacobian at W is close to
    implicit: "ImplicitSummary | None" = optional()  # the ideal's numbers (method implicit only)
    explained: "Explained | None" = optional()  # parameters - dimension split into its causes (core.defects)

    def __post_init__(self):
        Provenance.__post_init__(self)
        check_dimension_numbers(self)

    @property
    def fiber_dimension(self) -> int:
        return self.parameters - self.dimension

    def text(self) -> str:
        from lightning_cas.core.text import dimension_text

        return dimension_text(self)

    @property
    def drop(self) -> int | None:
        """How far the rank at the point falls below the generic rank (None without a point)."""
        return None if self.generic_dimension is None else self.generic_dimension - self.dimension


def _count(result, name: str, low: int, high: int | None = None) -> int:
    """The field ``name`` as an int in [low, high], else a ResultError naming the field."""
    value = integer_value(getattr(result, name))
    kind = type(result).__name__
    if value is None:
        raise ResultError(f"the {kind}'s {name} must be an integer, got {getattr(result, name)!r}")
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ResultError(f"the {kind}'s {name} {value} is not {bound}")
    object.__setattr__(result, name, value)
    return value


def check_dimension_numbers(result: "DimensionResult") -> None:
    """Numbers that contradict each other or the architecture are refused, wherever the result comes
    from (a backend, Macaulay2's record, a worker, a file): the parameters and the ambient dimension
    are the architecture's, 0 <= dimension <= min(parameters, ambient), every run's rank too, the
    failure bound in [0, 1) (1 would guarantee nothing), the primes prime."""
    arch = result.architecture
    if not isinstance(arch, Network):
        raise ResultError(f"a DimensionResult needs a Network, got {type(arch).__name__}")
    parameters = _count(result, "parameters", arch.parameters, arch.parameters)
    if arch.ambient_dimension is None:  # not polynomial: there is no ambient space of coefficients
        if result.ambient_dimension is not None:
            raise ResultError(f"the DimensionResult's ambient_dimension {result.ambient_dimension!r} should be "
                              "null: the network is not polynomial")
        top = parameters
    else:
        top = min(parameters, _count(result, "ambient_dimension", arch.ambient_dimension, arch.ambient_dimension))
    _count(result, "dimension", 0, top)
    if result.samples is not None:
        _count(result, "samples", 0)
    for run in result.runs:
        for key in ("rank", "gap_rank"):
            if isinstance(run, dict) and key in run:
                rank = integer_value(run[key])
                if rank is None or not 0 <= rank <= top:
                    raise ResultError(f"a run's {key} {run[key]!r} is not between 0 and {top}")
    for prime in result.primes:
        value = integer_value(prime)
        if value is None or value < 3 or not is_prime(value):
            raise ResultError(f"the DimensionResult's prime {prime!r} is not a prime")
    if result.failure_bound is not None:
        bound = real_value(result.failure_bound)
        if bound is None or not 0 <= bound < 1:
            raise ResultError(f"the failure bound {result.failure_bound!r} is not in [0, 1): a bound of 1 or "
                              "more guarantees nothing")
    if result.generic_dimension is not None:
        _count(result, "generic_dimension", 0, top)
    split = result.explained
    if split is not None and split.total != parameters - result.dimension:
        raise ResultError(f"the defect split of {arch} adds up to {split.total}, not parameters - dimension = "
                          f"{parameters - result.dimension}")
    cert = result.certificate
    if cert is not None and not 0 <= cert.lower <= cert.upper <= top:
        raise ResultError(f"the rank certificate's bounds {cert.lower} <= rank <= {cert.upper} are not within "
                          f"0 and {top}")


@dataclass(frozen=True)
class Cause(Record):
    """Kernel directions of one mechanism in one block (None: the whole network) and how many."""

    block: int | None
    mechanism: str  # filling, own defect, bottleneck, invisibility, secant defect
    count: int
    detail: str = ""


@dataclass(frozen=True)
class Explained(Record):
    """parameters - dimension = named_group + sum of the causes' counts + unexplained (core.defects)."""

    named_group: int  # the named group's orbit (rank of its tangents at the point)
    causes: tuple[Cause, ...]
    unexplained: int
    prime: int | None = None
    notes: tuple[str, ...] = ()

    def __post_init__(self):
        Record.__post_init__(self)
        if self.unexplained < 0 or self.named_group < 0 or any(c.count <= 0 for c in self.causes):
            raise ResultError(f"a defect split with negative or empty parts: named {self.named_group}, "
                              f"unexplained {self.unexplained}")

    @property
    def total(self) -> int:
        return self.named_group + sum(c.count for c in self.causes) + self.unexplained

    def lines(self) -> list[str]:
        """The split in words, one line per part (the text output of dim and verify)."""
        out = [f"parameters - dimension = {self.total}: named group {self.named_group}"
               + "".join(f" + {c.mechanism} {c.count}" for c in self.causes) + f" + unexplained {self.unexplained}"]
        for c in self.causes:
            where = "the whole network" if c.block is None else f"block {c.block}"
            out.append(f"  {c.mechanism} {c.count} ({where}): {c.detail}")
        if self.unexplained:
            out.append(f"  unexplained {self.unexplained}: kernel directions no mechanism names (they move "
                       "several blocks at once and are not tangent to the named group)")
        return out


@dataclass(frozen=True)
class Source(Record):
    """Where given weights or inputs came from: the file's name and sha256 (None for a drawn point)."""

    source: str | None
    sha256: str | None
    count: int  # weights of a point, token matrices of inputs
    drawn: str | None = None  # how a point was drawn when no file gave it, e.g. "random integers, seed 0"


@dataclass(frozen=True)
class RankCertificate(Record):
    """What a certified rank rests on: rank >= lower (a minor whose ball excludes 0), rank <= upper (exact
    kernel vectors); certified when the two meet."""

    lower: int
    upper: int
    lower_by: str
    upper_by: str
    digits: int  # the working precision that certified the lower bound

    stopped: str | None = optional()  # why the precision stopped rising before the bounds met (a time limit)

    @property
    def certified(self) -> bool:
        return self.lower == self.upper


class BandKind(enum.StrEnum):
    """What a band of singular values is known to be."""

    CERTIFIED = "certified"  # proved to lie in [smallest, largest]
    ZEROS = "exact zeros"  # exactly 0: exact kernel vectors, or the exact rank
    UNRESOLVED = "unresolved"  # at most largest, not proved zero


@dataclass(frozen=True)
class SpectrumBand(Record):
    """``count`` singular values of the Jacobian, of the given kind (``BandKind``)."""

    count: int
    largest: float
    smallest: float
    kind: BandKind = BandKind.CERTIFIED

    def __post_init__(self):
        try:
            object.__setattr__(self, "kind", BandKind(self.kind))
        except ValueError:
            raise ValueError(f"a spectrum band's kind must be one of {', '.join(k.value for k in BandKind)}, got "
                             f"{self.kind!r}") from None
        Record.__post_init__(self)


@dataclass(frozen=True)
class NearRank(Record):
    """The Jacobian at W is within relative distance ``within`` (proved: σ_{rank+1}/σ_1) of a matrix of rank
    ``rank``: ``directions`` of the rank at W live at about ``scale``; ``blocks`` are the weight blocks
    (0-based block and head) those directions move, with their share."""

    rank: int
    directions: int
    scale: float
    within: float
    blocks: tuple[dict, ...] = ()
