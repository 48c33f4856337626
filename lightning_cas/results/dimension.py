"""The dimension of a neurovariety as a result: its fields, its checks, its text and its Macaulay2 form.

A :class:`DimensionResult` is what ``dim`` (and every backend) returns: the number, how it was obtained
(the contract's provenance), and at a point its certificate, bands of singular values and near-drops.
Its numbers are checked wherever it comes from (:func:`check_dimension_numbers`). :func:`dimension_text`
is what ``lightning-cas dim`` prints and ``str(result)`` gives, so the two never drift apart.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, replace

from lightning_cas.core.checks import integer_value, real_value
from lightning_cas.core.network import Network
from lightning_cas.core.primes import is_prime
from lightning_cas.core.splits import Cause, Explained  # noqa: F401  (the annotations of the defect split)
from lightning_cas.errors import ResultError
from lightning_cas.results.contract import JsonResult, Provenance, Record, optional, provenance_text
from lightning_cas.results.display import printable
from lightning_cas.results.formats import M2Context


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
        return dimension_text(self)

    def m2_lines(self, context: M2Context) -> list[str]:
        """The body of ``--format m2``: the dimension and how to recompute it (comments)."""
        return dimension_m2_lines(self, context)

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
            raise ResultError(
                f"the DimensionResult's ambient_dimension {result.ambient_dimension!r} should be "
                "null: the network is not polynomial"
            )
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
            raise ResultError(
                f"the failure bound {result.failure_bound!r} is not in [0, 1): a bound of 1 or more guarantees nothing"
            )
    if result.generic_dimension is not None:
        _count(result, "generic_dimension", 0, top)
    split = result.explained
    if split is not None and split.total != parameters - result.dimension:
        raise ResultError(
            f"the defect split of {arch} adds up to {split.total}, not parameters - dimension = "
            f"{parameters - result.dimension}"
        )
    cert = result.certificate
    if cert is not None and not 0 <= cert.lower <= cert.upper <= top:
        raise ResultError(
            f"the rank certificate's bounds {cert.lower} <= rank <= {cert.upper} are not within 0 and {top}"
        )


def proved(result: "DimensionResult", bound: str) -> "DimensionResult":
    """``result`` (a generic mod-p rank) as exact, when its rank meets the proved upper bound ``bound`` (in words).

    The mod-p rank is a proved lower bound: the Jacobian at the run's integer weights and inputs has a
    nonzero r x r minor mod p, so a nonzero integer, so the rank over QQ there, and the generic rank, is
    at least r. Meeting an upper bound that is a theorem makes the dimension proved: no failure bound."""
    run = result.runs[0] if result.runs else {}
    prime, seed = run.get("prime", result.primes[0] if result.primes else None), run.get("seed", result.seed)
    n = result.dimension
    detail = (
        f"proved: rank >= {n} by a nonzero {n} x {n} minor of the Jacobian mod {prime} at the integer weights and "
        f"inputs of seed {seed} (a nonzero integer); rank <= {n} by {bound}"
    )
    notes = tuple(note for note in result.notes if "under-count" not in note)
    return replace(result, certainty="exact", certainty_detail=detail, failure_bound=None, notes=notes)


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
            raise ValueError(
                f"a spectrum band's kind must be one of {', '.join(k.value for k in BandKind)}, got {self.kind!r}"
            ) from None
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


# ---------------------------------------------------------------- in words


BAND_DECADES = 2.0  # a gap of this many decades between consecutive singular values starts a new band


def spectrum_bands(s) -> list[tuple[int, float, float]]:
    """Groups of singular values separated by gaps of at least BAND_DECADES: (count, largest, smallest)."""
    s = [float(v) for v in s]
    bands, first = [], 0
    for k in range(1, len(s) + 1):  # zeros (and values at the float floor) are one band, not one each
        if (
            k == len(s)
            or (s[k] > 1e-300 and math.log10(max(s[k - 1], 1e-300)) - math.log10(s[k]) >= BAND_DECADES)
            or (s[k] <= 1e-300 < s[k - 1])
        ):
            bands.append((k - first, s[first], s[k - 1]))
            first = k
    return bands


def _where(result) -> str:
    parts = []
    if result.at is not None:
        parts.append(
            f"at {result.at.source or 'the given point'}"
            + (f" (sha256 {result.at.sha256[:12]})" if result.at.sha256 else "")
        )
    if result.inputs is not None:
        parts.append(
            f"on {result.inputs.count} inputs from {result.inputs.source or 'Python'}"
            + (f" (sha256 {result.inputs.sha256[:12]})" if result.inputs.sha256 else "")
        )
    return (" " + ", ".join(parts)) if parts else ""


def _quantity(result) -> str:
    """What the number is, in words, when it is not a generic dimension: on given inputs the batch functional
    dimension (a lower bound of the rank at W, which is the supremum over input sets); at W alone the rank there."""
    if result.inputs is not None:
        return (
            f"quantity: the batch functional dimension on these {result.inputs.count} inputs (the rank of the "
            "Jacobian of the outputs on them in the weights); the rank at the point, over every input, is at "
            "least this"
        )
    if result.at is not None and not result.architecture.polynomial:
        return (
            "quantity: the functional dimension at the point (the rank over every input: inputs drawn until "
            "the rank stops growing give the lower bound, kernel vectors valid on every input the upper)"
        )
    return ""


def dimension_text(result, spectrum: bool = False) -> str:
    """What ``lightning-cas dim`` prints for a DimensionResult: the number, how sure it is, near-drops,
    the singular values (``spectrum``: as ``--spectrum`` prints them), the notes and the defect split."""
    where, how, c = _where(result), provenance_text(result), result.certificate
    lines = [
        f"{result.architecture}",
        f"rank between {c.lower} and {c.upper}{where}   ({how})"
        if c is not None and not c.certified
        else f"dimension {result.dimension}{where}   ({how})",
    ]
    quantity = _quantity(result)
    if quantity:
        lines.append(quantity)
    if result.generic_dimension is not None:
        lines.append(f"generic dimension {result.generic_dimension}, drop {result.drop}")
    if c is not None:
        lines.append(
            f"certified: rank {c.lower}: >= by {c.lower_by}; <= by {c.upper_by}"
            if c.certified
            else f"not certified: rank >= {c.lower} ({c.lower_by}); rank <= {c.upper} ({c.upper_by})"
            + (f"; {c.stopped} stopped it at {c.digits} digits" if c.stopped else "")
        )
    for near in result.near_ranks:
        moved = ", ".join(
            f"block {b['block']}"
            + (f" head {b['head']}" if _has_heads(result, b["block"]) else "")
            + f" {b['share']:.0%}"
            for b in near.blocks
        )
        lines.append(
            f"near-drop: {near.directions} directions at scale {near.scale:.0e}"
            + (f" (moving {moved})" if moved else "")
            + f": within {near.within:.1e} of rank {near.rank} (relative distance, proved)"
        )
    fiber = (
        "tangent space of the fiber at the point"
        if result.generic_dimension is not None
        else "kernel of the differential at the point"
        if result.at is not None or result.inputs is not None
        else "generic fiber dimension"
    )
    ambient = (
        "no ambient space of coefficients (not polynomial)"
        if result.ambient_dimension is None
        else f"ambient dimension {result.ambient_dimension}"
    )
    lines.append(f"parameters {result.parameters}, {fiber} {result.fiber_dimension}, {ambient}")
    if result.failure_bound is not None:
        lines.append(f"failure bound {result.failure_bound:.3g} (probability that a run under-counts)")
    if result.certainty == "exact" and result.certainty_detail:
        lines.append(result.certainty_detail)
    if spectrum and result.bands:
        lines.append("singular values of the Jacobian at the point, in proved bands:")
        for b in result.bands:
            lines.append(
                f"  {b.count} exact zeros"
                if b.kind == "exact zeros"
                else f"  {b.count} at most {b.largest:.3g}, not resolved (not proved zero)"
                if b.kind == "unresolved"
                else f"  {b.count} in [{b.smallest:.3g}, {b.largest:.3g}]"
            )
    elif spectrum and result.spectrum:
        lines.append(
            "spectrum bands (float64; count: largest .. smallest): "
            + "; ".join(f"{n}: {a:.3g} .. {b:.3g}" for n, a, b in spectrum_bands(result.spectrum))
        )
    lines += [f"note: {note}" for note in result.notes]
    if getattr(result, "explained", None) is not None:
        lines += explained_lines(result.explained)
    return printable("\n".join(lines), keep_newlines=True)


def _has_heads(result, block: int) -> bool:

    blocks = result.architecture.blocks
    return 0 <= block < len(blocks) and getattr(blocks[block], "heads", 1) > 1


def explained_lines(split: Explained) -> list[str]:
    """The split in words, one line per part (the text output of dim and verify)."""
    out = [
        f"parameters - dimension = {split.total}: named group {split.named_group}"
        + "".join(f" + {c.mechanism} {c.count}" for c in split.causes)
        + f" + unexplained {split.unexplained}"
    ]
    for c in split.causes:
        where = "the whole network" if c.block is None else f"block {c.block}"
        out.append(f"  {c.mechanism} {c.count} ({where}): {c.detail}")
    if split.unexplained:
        out.append(
            f"  unexplained {split.unexplained}: kernel directions no mechanism names (they move "
            "several blocks at once and are not tangent to the named group)"
        )
    return out


def dimension_m2_lines(res: DimensionResult, context: M2Context) -> list[str]:
    """The dimension and its provenance as Macaulay2 comments, and the package's call that recomputes it
    (unless the package's coefficient Jacobian is beyond what Macaulay2 finishes)."""
    how = f"{res.method}, {res.certainty}" + (
        f", failure bound {res.failure_bound:.2g} per run" if res.failure_bound is not None else ""
    )
    at_point = res.generic_dimension is not None or res.at is not None or res.inputs is not None
    if at_point:
        lines = [f"-- the rank at the given point or inputs: {res.dimension} ({how}); not a generic dimension"]
        if res.generic_dimension is not None:
            lines += [f"-- the generic dimension: {res.generic_dimension} (neurovarietyDimension N)"]
    else:
        lines = [f"-- the dimension of the neurovariety: {res.dimension} ({how}): neurovarietyDimension N"]
    generic = res.generic_dimension if at_point else res.dimension
    fiber = "" if generic is None else f", generic fiber dimension {res.parameters - generic}"
    lines += [f'-- parameters {res.parameters} (N#"parameters"){fiber}, ambient dimension {res.ambient_dimension}']
    entries = context.jacobian_entries(res.architecture)
    if entries > context.jacobian_limit:
        lines += [
            f"-- note: the package's coefficient Jacobian of N has {entries:,} entries, beyond what Macaulay2 "
            "finishes; N is still the network (its weights, blocks and forward map)"
        ]
    elif res.method == "jacobian" and res.primes and not at_point:
        lines += [
            f"-- the same computation (its prime and seed): setRandomSeed {res.seed or 0}; "
            f"neurovarietyDimension(N, CoefficientRing => ZZ/{res.primes[0]})"
        ]
    return lines
