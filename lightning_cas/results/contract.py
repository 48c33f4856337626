"""The result contract: one provenance for every result, typed nested records, lossless JSON.

Every result is a frozen dataclass that inherits :class:`Provenance` (method, certainty, seed,
elapsed_s, m2_version, lightning_cas_version, and free-text ``method_detail`` /
``certainty_detail``) and :class:`JsonResult` (``to_dict``/``from_dict``/``to_json``/``from_json``
with a ``kind`` key). ``from_dict`` is strict: the ``kind`` must match, unknown keys are refused,
and nested records are rebuilt with their types, so ``from_json(r.to_json()) == r`` for every
result (``api.load_result(path)`` reads any result file back as the right class). The plain data
the mathematics returns (frozen dataclasses of ``core``, e.g. a ``Prediction``) is written and read
by the same rules, so core never imports this layer. Every result class of ``lightning_cas.results``
enters :data:`KINDS` when its module is imported (``lightning_cas.results.result_class``).

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

from lightning_cas.core.data import Data, freeze
from lightning_cas.core.numbers import allow_long_integers
from lightning_cas.errors import InputError, ResultError
from lightning_cas.results.display import html_document, markdown_document, printable

CERTAINTIES = ("exact", "probabilistic", "numeric", "bounds")


def _version() -> str:
    from lightning_cas import __version__

    return __version__


def encode(value):
    """``value`` in its JSON form: tuples as lists, records and core's plain data as objects."""
    if isinstance(value, (tuple, list)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # plain data of core
        return {f.name: encode(getattr(value, f.name)) for f in fields(value)}
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
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):  # plain data of core, read like a record
        return value if isinstance(value, tp) else decode_dataclass(tp, value)
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


class Record(Data):
    """Mixin for typed nested records (frozen dataclasses): strict, lossless ``to_dict``/``from_dict``.
    Fields are attributes (``record.name``); a record is not a dict."""

    # set by @dataclass on each record class; declared here so the type checker sees a record as a dataclass
    __dataclass_fields__: typing.ClassVar[dict[str, dataclasses.Field[typing.Any]]]

    def to_dict(self) -> dict:
        # a field marked optional is written only when set, so results that never set it keep their JSON
        return {
            f.name: encode(getattr(self, f.name))
            for f in fields(self)
            if not (f.metadata.get(OPTIONAL) and getattr(self, f.name) == f.default)
        }

    def html_fields(self) -> list[tuple[str, object]]:
        """(name, value) pairs shown when the record is displayed in Jupyter (core.display)."""
        return [(f.name, getattr(self, f.name)) for f in fields(self)]

    @classmethod
    def from_dict(cls, data: dict):
        return decode_dataclass(cls, data)


def _check_keys(cls, data) -> dict:
    if not isinstance(data, dict):
        raise InputError(f"a {cls.__name__} must be a JSON object, got {type(data).__name__}.")
    names = {f.name for f in fields(cls)}
    unknown = set(data) - names
    if unknown:
        raise InputError(f"unknown {cls.__name__} keys: {', '.join(sorted(map(str, unknown)))}.")
    required = {
        f.name for f in fields(cls) if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    missing = required - set(data)
    if missing:
        raise InputError(f"the {cls.__name__} is missing {', '.join(sorted(missing))}.")
    return data


def decode_dataclass(cls, data):
    """An instance of the dataclass ``cls`` (a record, or plain data of core) from its JSON object: unknown
    or missing keys refused, every field decoded by its annotation, the constructor's checks run."""
    data = _check_keys(cls, data)
    hints = typing.get_type_hints(cls)
    kwargs = {k: _decode(hints.get(k, typing.Any), v, f"{cls.__name__}.{k}") for k, v in data.items()}
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise InputError(f"not a valid {cls.__name__}: {str(exc).rstrip('.')}.") from None


KINDS: dict[str, type] = {}  # kind -> result class, filled as the result modules are imported


class JsonResult(Record):
    """A top-level result: ``to_dict`` carries ``kind`` (the class name), ``from_dict`` checks it.

    A class whose JSON form changed raises ``SCHEMA``: its JSON then carries ``"schema": n``, and
    ``upgrade`` turns what an earlier version wrote (no ``schema`` key: version 1) into today's form,
    so every result file ever written still loads. In Jupyter a result shows itself as HTML.
    """

    SCHEMA: typing.ClassVar[int] = 1

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__module__.startswith("lightning_cas.results."):  # a result any file may hold (not a job record)
            KINDS.setdefault(cls.__name__, cls)

    def to_dict(self) -> dict:
        head: dict[str, object] = {"kind": type(self).__name__}
        if self.SCHEMA > 1:
            head["schema"] = self.SCHEMA
        return {**head, **super().to_dict()}

    @classmethod
    def upgrade(cls, data: dict, schema: int) -> dict:
        """``data`` (without ``kind`` and ``schema``) written in form ``schema``, in today's form."""
        return data

    def text(self) -> str:
        """What the CLI prints for this result (written beside its type); a type without one shows its fields."""
        return repr(self)

    def __str__(self) -> str:
        return self.text()

    def _title(self) -> str:
        arch = getattr(self, "architecture", None)
        return type(self).__name__ + (f": {arch}" if arch is not None else "")

    def _certainty(self) -> str | None:
        """The certainty in words: this result's, or that of the result it holds (a job record's)."""
        if hasattr(self, "certainty"):
            return certainty_text(self)
        inner = getattr(self, "result", None)
        return certainty_text(inner) if hasattr(inner, "certainty") else None

    def _repr_html_(self) -> str:
        provenance = {f.name for f in fields(Provenance)} | {"script"}
        own = [(f.name, getattr(self, f.name)) for f in fields(self) if f.name not in provenance]
        made = [(f.name, getattr(self, f.name)) for f in fields(self) if f.name in provenance]
        return html_document(
            self._title(),
            [("result", [(k, v) for k, v in own if k != "architecture"]), ("provenance", made)],
            certainty=self._certainty(),
        )

    def _repr_markdown_(self) -> str:
        """The title, the certainty in words, and the CLI's text as a code block (every text escaped)."""
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
            raise InputError(
                f"a {cls.__name__} of schema {str(schema)[:20]!r}: this version of lightning_cas reads "
                f"schema 1 to {cls.SCHEMA}."
            )
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
    certainty: str  # exact | probabilistic | numeric | bounds (proved ends that do not meet)
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


# ---------------------------------------------------------------- provenance in words


def provenance_text(result) -> str:
    """Method, certainty, primes, failure bound, seed, Macaulay2 version and time, in one parenthesis."""
    how = [result.method, result.certainty]
    if getattr(result, "primes", None):
        how.append("primes " + ", ".join(map(str, result.primes)))
    if getattr(result, "failure_bound", None) is not None:  # what "probabilistic" risks, in numbers
        how.append(f"failure bound {result.failure_bound:.2g} per run")
    how.append(f"seed {result.seed}")
    if result.m2_version:
        how.append(f"Macaulay2 {result.m2_version}")
    how.append(f"{result.elapsed_s:.3g} s")
    return "; ".join(how)


def certainty_text(result) -> str:
    """How sure the result is, in words: certified (a proof at a point), exact, probabilistic with its
    failure bound, or numeric (and, for a rank at a point, whether it was certified)."""
    inner = getattr(result, "computed", None)  # a VerifyResult: the certainty is its computation's
    if inner is not None and hasattr(inner, "certainty"):
        return certainty_text(inner)
    cert = getattr(result, "certificate", None)
    detail = f" ({result.certainty_detail})" if getattr(result, "certainty_detail", None) else ""
    if cert is not None and hasattr(cert, "certified"):
        if cert.certified:
            return (
                f"certified: rank = {cert.lower} (rank >= {cert.lower} by {cert.lower_by}; rank <= {cert.upper} "
                f"by {cert.upper_by})"
            )
        return (
            f"{result.certainty}, NOT certified: {cert.lower} <= rank <= {cert.upper} proved, the value between "
            "them is a float estimate"
        )
    if result.certainty in ("exact", "bounds"):
        return result.certainty + detail
    if result.certainty == "probabilistic":
        bound = getattr(result, "failure_bound", None)
        if bound is not None:
            return f"probabilistic: wrong with probability at most {bound:.2g} per run{detail}"
        return "probabilistic: exact arithmetic at random points" + (detail or " (no numeric bound recorded)")
    return "numeric: floating point with a tolerance or gap, not certified" + detail


def how(result) -> str:
    """Method, certainty, Macaulay2 version and time, as the geometry results print them."""
    return f"{result.method}; {result.certainty}; Macaulay2 {result.m2_version}; {result.elapsed_s:.3g} s"


def lines_text(lines) -> str:
    """Lines of a result's text, joined and made safe on a terminal (newlines kept)."""
    return printable("\n".join(lines), keep_newlines=True)
