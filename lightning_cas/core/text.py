"""Results as the text a person reads: what the CLI prints, and what ``str(result)`` gives in Python.

One renderer per result type of the dimension layer (``dim``, ``verify``, ``predict``); the CLI
prints exactly these lines and a result's ``__str__`` returns them, so the two never drift apart.
The geometry results have theirs in ``geometry.text``. :func:`certainty_text` is the one sentence
that every HTML and Markdown view puts first: certified, exact, probabilistic with its bound, or
numeric.
"""

from __future__ import annotations

import math

from lightning_cas.core.display import printable

BAND_DECADES = 2.0  # a gap of this many decades between consecutive singular values starts a new band


def spectrum_bands(s) -> list[tuple[int, float, float]]:
    """Groups of singular values separated by gaps of at least BAND_DECADES: (count, largest, smallest)."""
    s = [float(v) for v in s]
    bands, first = [], 0
    for k in range(1, len(s) + 1):  # zeros (and values at the float floor) are one band, not one each
        if k == len(s) or (s[k] > 1e-300 and math.log10(max(s[k - 1], 1e-300)) - math.log10(s[k]) >= BAND_DECADES) \
                or (s[k] <= 1e-300 < s[k - 1]):
            bands.append((k - first, s[first], s[k - 1]))
            first = k
    return bands


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
            return (f"certified: rank = {cert.lower} (rank >= {cert.lower} by {cert.lower_by}; rank <= {cert.upper} "
                    f"by {cert.upper_by})")
        return (f"{result.certainty}, NOT certified: {cert.lower} <= rank <= {cert.upper} proved, the value between "
                "them is a float estimate")
    if result.certainty == "exact":
        return "exact" + detail
    if result.certainty == "probabilistic":
        bound = getattr(result, "failure_bound", None)
        if bound is not None:
            return f"probabilistic: wrong with probability at most {bound:.2g} per run{detail}"
        return "probabilistic: exact arithmetic at random points" + (detail or " (no numeric bound recorded)")
    return "numeric: floating point with a tolerance or gap, not certified" + detail


def _where(result) -> str:
    parts = []
    if result.at is not None:
        parts.append(f"at {result.at.source or 'the given point'}"
                     + (f" (sha256 {result.at.sha256[:12]})" if result.at.sha256 else ""))
    if result.inputs is not None:
        parts.append(f"on {result.inputs.count} inputs from {result.inputs.source or 'Python'}"
                     + (f" (sha256 {result.inputs.sha256[:12]})" if result.inputs.sha256 else ""))
    return (" " + ", ".join(parts)) if parts else ""


def dimension_text(result, spectrum: bool = False) -> str:
    """What ``lightning-cas dim`` prints for a DimensionResult: the number, how sure it is, near-drops,
    the singular values (``spectrum``: as ``--spectrum`` prints them), the notes and the defect split."""
    where, how, c = _where(result), provenance_text(result), result.certificate
    lines = [f"{result.architecture}",
             f"rank between {c.lower} and {c.upper}{where}   ({how})" if c is not None and not c.certified
             else f"dimension {result.dimension}{where}   ({how})"]
    if result.generic_dimension is not None:
        lines.append(f"generic dimension {result.generic_dimension}, drop {result.drop}")
    if c is not None:
        lines.append(f"certified: rank {c.lower}: >= by {c.lower_by}; <= by {c.upper_by}" if c.certified else
                     f"not certified: rank >= {c.lower} ({c.lower_by}); rank <= {c.upper} ({c.upper_by})"
                     + (f"; {c.stopped} stopped it at {c.digits} digits" if c.stopped else ""))
    for near in result.near_ranks:
        moved = ", ".join(f"block {b['block']}" + (f" head {b['head']}" if _has_heads(result, b['block']) else "")
                          + f" {b['share']:.0%}" for b in near.blocks)
        lines.append(f"near-drop: {near.directions} directions at scale {near.scale:.0e}"
                     + (f" (moving {moved})" if moved else "")
                     + f": within {near.within:.1e} of rank {near.rank} (relative distance, proved)")
    fiber = ("tangent space of the fiber at the point" if result.generic_dimension is not None
             else "kernel of the differential at the point" if result.at is not None or result.inputs is not None
             else "generic fiber dimension")
    ambient = ("no ambient space of coefficients (not polynomial)" if result.ambient_dimension is None
               else f"ambient dimension {result.ambient_dimension}")
    lines.append(f"parameters {result.parameters}, {fiber} {result.fiber_dimension}, {ambient}")
    if result.failure_bound is not None:
        lines.append(f"failure bound {result.failure_bound:.3g} (probability that a run under-counts)")
    if spectrum and result.bands:
        lines.append("singular values of the Jacobian at the point, in proved bands:")
        for b in result.bands:
            lines.append(f"  {b.count} exact zeros" if b.kind == "exact zeros" else
                         f"  {b.count} at most {b.largest:.3g}, not resolved (not proved zero)"
                         if b.kind == "unresolved" else f"  {b.count} in [{b.smallest:.3g}, {b.largest:.3g}]")
    elif spectrum and result.spectrum:
        lines.append("spectrum bands (float64; count: largest .. smallest): " + "; ".join(
            f"{n}: {a:.3g} .. {b:.3g}" for n, a, b in spectrum_bands(result.spectrum)))
    lines += [f"note: {note}" for note in result.notes]
    if getattr(result, "explained", None) is not None:
        lines += result.explained.lines()
    return printable("\n".join(lines), keep_newlines=True)


def _has_heads(result, block: int) -> bool:

    blocks = result.architecture.blocks
    return 0 <= block < len(blocks) and getattr(blocks[block], "heads", 1) > 1


def verify_text(result) -> str:
    """What ``lightning-cas verify`` prints: the verdict and why, and the defect split."""
    lines = [f"{result.verdict}: {result.message}"]
    if getattr(result, "explained", None) is not None:
        lines += result.explained.lines()
    return printable("\n".join(lines), keep_newlines=True)
def theory_text(report) -> str:
    """What ``lightning-cas predict`` prints: each prediction with its formula, regime and status."""
    lines = [f"{report.architecture}"]
    for pred in (report.dimension, report.parameters, report.symmetry_group_dimension, report.fiber_dimension):
        if pred.value is None:
            lines.append(f"{pred.quantity}: no prediction ({pred.reason})")
        elif pred.kind != "value":
            lines.append(f"{pred.quantity}: {pred.kind} {pred.value}   [{pred.formula}; {pred.regime}; {pred.status}]")
            for name, value, why in pred.bounds:
                lines.append(f"    {name}: {value}   ({why})")
            if pred.refined is not None:
                lines.append(f"    head-mixing bound: {pred.refined}   (sharper, proved; with head mixing, see "
                             "docs/multihead.md)")
        else:
            lines.append(f"{pred.quantity}: {pred.value}   [{pred.formula}; {pred.regime}; {pred.status}]")
    lines.append(f"ambient_dimension: {report.ambient_dimension}")
    return printable("\n".join(lines), keep_newlines=True)
