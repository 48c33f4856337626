"""Certificates of real verdicts at a point of a one-layer neuromanifold, as records of a result.

A certificate says why a verdict holds; each kind is its own class with the fields it needs, and the
predicates ``is_interior``, ``is_boundary`` and ``is_vertex`` say what it proves:

* :class:`SubmersionCertificate` (interior): a regular real preimage, φ_W a smooth point of X, so
  W ↦ φ_W is a submersion onto X(ℝ) near φ_W;
* :class:`BranchCertificate` (interior): the whole complex fiber is real regular orbits, so every
  branch of X at φ_W is covered by a real neighbourhood of one of them;
* :class:`WitnessCurveCertificate` (boundary): q(s) = φ_W − s φ₂(δ) is a real point of X without a real
  preimage for 0 < s ≤ s₀ (:func:`witness_bound`, Sturm counts of the fiber eliminant), and q(s) → φ_W;
* :class:`ConeCertificate` (the vertex is a boundary point): X(ℝ) and M are cones, and a witness curve
  somewhere shows X(ℝ) ≠ M.

The JSON form is ``{"kind": ..., <the fields of that kind>}``; ``legacy_certificate`` reads the form
written before the kinds were classes (all eight fields, ``null`` where a kind has none). The exact
test behind the boundary one (:func:`geometry.one_layer.certificates.witness_bound`) is mathematics, in geometry.
"""

from __future__ import annotations

import enum
import typing
from dataclasses import dataclass, fields

from lightning_cas.errors import InputError
from lightning_cas.results.contract import Record

if typing.TYPE_CHECKING:
    pass


class CertificateKind(enum.StrEnum):
    SUBMERSION = "submersion"
    BRANCHES = "branches"
    WITNESS_CURVE = "witness curve"
    CONE = "cone over a witness"


class Blocks(enum.StrEnum):
    """The two weight blocks a witness curve moves (the parametrization is bilinear in them)."""

    V_A = "V,A"
    V_K = "V,K"
    V_Q = "V,Q"
    Q_K = "Q,K"


@dataclass(frozen=True)
class Certificate(Record):
    """Why a verdict holds (abstract: one subclass per kind). ``Certificate.from_dict`` reads any kind."""

    KIND: typing.ClassVar[CertificateKind]

    def __post_init__(self):
        if not hasattr(type(self), "KIND"):
            raise TypeError(
                "Certificate is abstract: make a SubmersionCertificate, BranchCertificate, "
                "WitnessCurveCertificate or ConeCertificate"
            )
        super().__post_init__()

    @classmethod
    def kinds(cls) -> tuple[type, ...]:
        """The concrete certificate classes (one per kind)."""
        return tuple(_BY_KIND.values())

    @property
    def kind(self) -> CertificateKind:
        return self.KIND

    @property
    def is_interior(self) -> bool:
        return False

    @property
    def is_boundary(self) -> bool:
        return False

    @property
    def is_vertex(self) -> bool:
        return False

    def to_dict(self) -> dict:
        return {"kind": str(self.KIND), **super().to_dict()}

    def html_fields(self) -> list[tuple[str, object]]:
        return [("kind", self.KIND), *super().html_fields()]

    @classmethod
    def from_dict(cls, data):
        if not isinstance(data, dict):
            raise InputError(f"a certificate must be a JSON object, got {type(data).__name__}.")
        kind = data.get("kind")
        sub = _BY_KIND.get(kind) if isinstance(kind, str) else None
        if sub is None or not issubclass(sub, cls):
            raise InputError(
                f"unknown certificate kind {str(kind)[:40]!r}; expected one of "
                f"{', '.join(str(k) for k in _BY_KIND if issubclass(_BY_KIND[k], cls))}."
            )
        return super(Certificate, sub).from_dict({k: v for k, v in data.items() if k != "kind"})


@dataclass(frozen=True)
class SubmersionCertificate(Certificate):
    """Interior: a regular real preimage of a smooth point."""

    KIND = CertificateKind.SUBMERSION
    regular_preimages: int

    @property
    def is_interior(self) -> bool:
        return True


@dataclass(frozen=True)
class BranchCertificate(Certificate):
    """Interior: the whole complex fiber consists of real regular orbits (a singular point may qualify)."""

    KIND = CertificateKind.BRANCHES
    regular_preimages: int

    @property
    def is_interior(self) -> bool:
        return True


@dataclass(frozen=True)
class WitnessCurveCertificate(Certificate):
    """Boundary: a curve of real points of X without real preimages, for 0 < s <= s0, ending at φ_W."""

    KIND = CertificateKind.WITNESS_CURVE
    blocks: Blocks  # the two weight blocks the parametrization is bilinear in
    preimage_V_A: tuple  # the critical preimage (V, A)
    direction: tuple  # the kernel direction delta, in the order of the parametrization's weights
    s0: str  # exact rational
    eliminant_degree: int

    @property
    def is_boundary(self) -> bool:
        return True


@dataclass(frozen=True)
class ConeCertificate(Certificate):
    """The vertex is a boundary point: a witness curve at the weight point ``at`` shows X(ℝ) ≠ M."""

    KIND = CertificateKind.CONE
    at: dict
    witness: WitnessCurveCertificate

    @property
    def is_boundary(self) -> bool:
        return True

    @property
    def is_vertex(self) -> bool:
        return True


# looked up by the "kind" string of a JSON object (a CertificateKind is a str)
_BY_KIND: dict[str, type[Certificate]] = {
    c.KIND: c for c in (SubmersionCertificate, BranchCertificate, WitnessCurveCertificate, ConeCertificate)
}


def legacy_certificate(data: dict) -> dict:
    """A certificate as written before the kinds were classes: the fields of its kind, the nulls of the
    other kinds dropped (a non-null field of another kind stays, for ``from_dict`` to refuse)."""
    kind = data.get("kind")
    sub = _BY_KIND.get(kind) if isinstance(kind, str) else None
    if sub is None:
        return data
    own = {f.name for f in fields(sub)} | {"kind"}
    out = {k: v for k, v in data.items() if k in own or v is not None}
    if isinstance(out.get("witness"), dict):
        out["witness"] = legacy_certificate(out["witness"])
    return out
