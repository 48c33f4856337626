"""Proved statements about the Jacobian at W in arb balls: the certified rank of a softmax network, and the
singular-value bands (near-drops) beside any rank at a point.

* **Certified rank** (softmax, GELU, tanh and LayerNorm are not polynomial, so floats can be badly wrong):
  rank ≥ r because the Gram determinant of r pivot columns is a ball that excludes 0; rank ≤ P − k because
  k independent vectors are in the kernel: the named group's tangents at W and the bottleneck, invisibility
  and block-local kernel vectors (``core.local_kernels``; with activation functions or LayerNorm the
  junctions, scalings and shifts of ``core.activation_kernels``), computed over QQ at the point, and each
  checked against the Jacobian in the same balls as the lower bound before it counts (``core.kernel_proof``:
  a vector whose image excludes 0 is dropped and the bound widens). The pivot search is not capped at the
  upper bound, so a proved minor above it is seen (the mechanisms are then not used at all). The precision
  doubles until the two meet, up to MAX_DIGITS, or, under a time limit, until the limit ends it: then the
  partial certificate (≥ r, ≤ s) is the result, with the limit named in ``certificate.stopped``.
* **Bands** (``core.spectra``): each band of singular values with proved ends, the exact zeros as one
  band, and the near-drops they imply ("within 1e-5 of rank 35"), naming the weight blocks they move.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np

from lightning_cas.backends.numeric import arb_bytes, check_numeric_memory, float_bytes
from lightning_cas.core.arithmetic import Balls, Float64
from lightning_cas.core.checks import derived_seed
from lightning_cas.core.forward import Kink, forward, jacobian
from lightning_cas.core.kernel_proof import ball_images, candidates
from lightning_cas.core.kernel_proof import bound as kernel_bound
from lightning_cas.core.network import Network
from lightning_cas.core.spectra import (
    block_shares,
    certified_bands,
    gram_minor_positive,
    largest_lower,
    pivoted_cholesky,
)
from lightning_cas.errors import InputError, TimeLimitError, UnsupportedError
from lightning_cas.results.dimension import DimensionResult, NearRank, RankCertificate, Source, SpectrumBand
from lightning_cas.system import deadline
from lightning_cas.system.points import InputData, WeightPoint

DEFAULT_DIGITS = 30
MAX_DIGITS = 480  # without a time limit; under one the precision rises until the limit
LIMITED_MAX_DIGITS = 7680
CERTIFY_MARGIN = 8  # extra rows beyond P drawn for a certified rank
PASS_GROWTH = 3.0  # a pass at twice the digits takes about this much longer (arb products: 2.2-2.8x measured)
NEAR_MAX_PARAMETERS = 160  # near-drops of a polynomial network: the arb Gram matrix is P x P (~1 s at 144)
NEAR_DIGITS = (60, 120)  # the Gram matrix squares the spread of the singular values


def gaussian_inputs(net: Network, seed: int, factor: int = 1):
    """Gaussian token matrices (floats read exactly), ``factor`` times enough rows for rank P, reproducible
    from ``seed``."""
    rng = np.random.default_rng(derived_seed(seed, 3))
    samples = factor * max(1, math.ceil((net.parameters + CERTIFY_MARGIN) / net.rows_per_sample))
    return np.array(
        [Fraction(float(v)) for v in rng.standard_normal(samples * net.input * net.tokens)], dtype=object
    ).reshape(samples, net.input, net.tokens)


def _gram(net: Network, values, X, prec: int):
    """(J, JᵀJ) in arb at ``prec`` digits, each input's rows of J scaled by a power of two (exactly) to about
    unit size: the rank and the kernel are the same, and no input dominates the singular values by the size of
    its tokens."""
    import flint

    with flint.ctx.workdps(prec):
        ar = Balls(prec)
        J = jacobian(net, ar, ar.array(values), ar.array(X))
        per = net.rows_per_sample
        rows = []
        for n in range(len(X)):
            block = J[n * per : (n + 1) * per]
            size = max((abs(float(x.mid())) for x in block.reshape(-1)), default=0.0)
            factor = flint.arb(2) ** (-math.frexp(size)[1]) if size > 0 else flint.arb(1)
            rows += [[x * factor for x in r] for r in block]
        M = flint.arb_mat(rows)
        return M, M.transpose() * M


def relu_patterns(net: Network, values, X, prec: int) -> dict | None:
    """The signs of every ReLU input on X, each proved by a ball that excludes 0 (one forward pass in balls), for
    the dead and always-active units among the kernel mechanisms; None without ReLU, or when a ball does not decide
    a sign at this precision (those mechanisms are then not offered: the Jacobian says the rest)."""
    import flint

    if "relu" not in net.functions:
        return None
    patterns: dict = {}
    with flint.ctx.workdps(prec):
        ar = Balls(prec)
        try:
            forward(net, ar, ar.array(values), ar.array(X), patterns=patterns)
        except UnsupportedError:
            return None
    return patterns


def _labels(net: Network) -> list[tuple[int, int]]:
    out = [None] * net.parameters
    for m in net.weight_matrices:
        out[m.offset : m.stop] = [(m.block, m.head)] * m.size
    return out


def _value(log10: float, up: bool = True) -> float:
    """10^log10 as a float that stays a bound: an upper bound below float range becomes the smallest normal
    float (not 0, which would claim a zero), a lower bound there becomes 0."""
    if log10 < -300:
        return 1e-300 if up else 0.0
    return 10.0**log10


class Spectrum:
    """The bands and near-drops at one precision: what ``certified_bands`` proved, in the result's records."""

    def __init__(self, net: Network, G, prec: int, limit: int):
        import flint

        with flint.ctx.workdps(prec):
            self.pivoting = pivoted_cholesky(G, limit, prec, deadline.check)
            k = len(self.pivoting.columns)
            while k and not gram_minor_positive(G, self.pivoting.columns[:k]):
                k -= 1
            self.rank, self.digits, self.G, self.net = k, prec, G, net

    def records(self, zeros: int, rank_at_w: int | None):
        """(bands, near_ranks): the proved bands, ``zeros`` exact zeros, the rest unresolved; near-drops to
        every proved band boundary below ``rank_at_w`` (default: the proved rank)."""
        import flint

        net, P = self.net, self.net.parameters
        with flint.ctx.workdps(self.digits):
            bands, bounds = certified_bands(self.G, self.pivoting, self.rank, deadline.check)
            top = largest_lower(self.G)
        out = [SpectrumBand(b.count, _value(b.log_upper), _value(b.log_lower, up=False)) for b in bands]
        rest = P - self.rank - zeros
        if rest > 0:
            out.append(
                SpectrumBand(
                    rest, _value(bounds[self.rank].log_upper) if self.rank in bounds else math.inf, 0.0, "unresolved"
                )
            )
        if zeros:
            out.append(SpectrumBand(zeros, 0.0, 0.0, "exact zeros"))
        full = self.rank if rank_at_w is None else rank_at_w
        labels = _labels(net)
        near, k = [], 0
        for b in bands:
            k += b.count
            if k >= full:
                break
            bd = bounds[k]
            shares = block_shares(bd.residual, labels)
            logs = self.pivoting.log_sigma
            nxt = logs[k] if k < len(logs) else bd.log_upper  # beyond the pivots: below the precision's noise
            near.append(
                NearRank(
                    rank=k,
                    directions=full - k,
                    scale=_value(nxt - logs[0]),
                    within=_value(bd.log_upper - top),
                    blocks=tuple({"block": blk, "head": h, "share": round(s, 3)} for (blk, h), s in shares),
                )
            )
        return tuple(out), tuple(near)


def sources(point: WeightPoint | None, inputs: InputData | None) -> tuple[Source | None, Source | None]:
    """Where the weights and the inputs of a rank at a point came from, as the result records them."""
    at = (
        None
        if point is None
        else Source(point.source, point.sha256, len(point.values), None if point.source else "given in Python")
    )
    data = None if inputs is None else Source(inputs.source, inputs.sha256, inputs.count)
    return at, data


def point_or_drawn(point: WeightPoint | None, P: int, seed: int, scale: float = 0.5) -> np.ndarray:
    """The point's weights, or P Gaussian weights times ``scale`` from the seed (floats read exactly), as
    an object array of Fractions."""
    if point is not None:
        return np.array(point.values, dtype=object)
    rng = np.random.default_rng(derived_seed(seed, 99))
    return np.array([Fraction(float(v)) for v in rng.standard_normal(P) * scale], dtype=object)


def float_rank_at(net: Network, values, X):
    """numpy's matrix_rank of the float64 Jacobian (its rule: s > s_max max(shape) eps), and its singular
    values."""
    f64 = Float64()
    Jf = jacobian(net, f64, f64.array([float(v) for v in values]), f64.array(np.vectorize(float, otypes=[float])(X)))
    s = np.linalg.svd(Jf, compute_uv=False)
    return (int((s > s[0] * max(Jf.shape) * np.finfo(float).eps).sum()) if len(s) and s[0] > 0 else 0), s


def near_drops(net: Network, values, rank: int, seed: int):
    """(bands, near_ranks, notes) beside an exact rank at W of a polynomial network (None above the size)."""
    if net.parameters > NEAR_MAX_PARAMETERS:
        return (
            (),
            (),
            [f"near-drops are computed up to {NEAR_MAX_PARAMETERS} weights (this network has {net.parameters})"],
        )
    # inputs whose float Jacobian reaches the rank at W: P rows are not always enough (few inputs can see
    # less than the differential), so the inputs double while float64 sees less (at most twice)
    for factor in (1, 2, 4):
        X = gaussian_inputs(net, derived_seed(seed, 7), factor)
        if float_rank_at(net, values, X)[0] >= rank:
            break
    check_numeric_memory(arb_bytes(net, len(X)), net, "the certified bands at the point")
    spec = None
    for prec in NEAR_DIGITS:
        deadline.check()
        spec = Spectrum(net, _gram(net, values, X, prec)[1], prec, rank)
        if spec.rank >= rank:
            break
    bands, near = spec.records(net.parameters - rank, rank)
    notes = []
    if spec.rank < rank:
        notes.append(
            f"the bands resolve {spec.rank} of the {rank} nonzero singular values at {spec.digits} "
            "digits; the rest are below that precision"
        )
    return bands, near, notes


def rank_at_point_softmax(
    arch: Network,
    point: WeightPoint | None,
    *,
    inputs: InputData | None = None,
    seed: int = 0,
    digits: int = DEFAULT_DIGITS,
    max_digits: int | None = None,
) -> DimensionResult:
    """The certified rank at W of a softmax network (module docstring); a partial certificate when the
    command's time limit ends it."""
    net = arch
    start = time.perf_counter()
    P = net.parameters
    values = point_or_drawn(point, P, seed)
    X = inputs.values if inputs is not None else gaussian_inputs(net, seed)
    check_numeric_memory(float_bytes(net, 4 * len(X)), net, "the float spectrum at the point")
    check_numeric_memory(arb_bytes(net, len(X)), net, "the certified rank at the point")
    limited = deadline.current().end is not None
    cap = max_digits if max_digits is not None else (LIMITED_MAX_DIGITS if limited else MAX_DIGITS)
    rows = len(X) * net.rows_per_sample
    upper, spec, stopped, proof, contradiction = min(P, rows), None, None, None, False
    float_note = None
    try:
        cands = candidates(net, values)
        offered = kernel_bound(P, cands, [True] * len(cands.vectors)).count  # what the mechanisms claim
        float_rank, s = float_rank_at(net, values, X)
        # drawn inputs: P rows are not always enough (a few inputs can see less than the differential), so
        # they double while float64 sees less than the claimed upper bound (at most twice; float64 can also
        # miss genuine tiny singular values, which more inputs do not bring)
        for factor in (2, 4) if inputs is None else ():
            if float_rank >= P - offered:
                break
            more = gaussian_inputs(net, seed, factor)
            check_numeric_memory(arb_bytes(net, len(more)), net, "the certified rank at the point")
            rank_more, s_more = float_rank_at(net, values, more)
            if rank_more <= float_rank:
                break
            X, float_rank, s = more, rank_more, s_more
        rows = len(X) * net.rows_per_sample
        # dead and always-active units hold on these inputs only: for given inputs (the rank on them), never for
        # drawn ones (the rank at W over all inputs, which a unit dead on the draws does not bound)
        patterns = relu_patterns(net, values, X, digits) if inputs is not None else None
        cands = cands if patterns is None else candidates(net, values, patterns)
        float_note = f"float64: numpy's matrix_rank gives {float_rank}; singular values from {s[0]:.3g} to {s[-1]:.3g}"
        prec = digits
        while True:
            deadline.check()
            began = time.perf_counter()
            J, G = _gram(net, values, X, prec)
            # every offered vector is checked against J at this precision before it may bound the rank
            proof = kernel_bound(P, cands, ball_images(J, [v for _, v in cands.vectors], prec))
            upper = min(P, rows) if contradiction else min(P - proof.count, rows)  # once beaten, never again
            spec = Spectrum(net, G, prec, min(P, rows))  # not capped at the upper bound: a clash is seen
            if spec.rank > upper:  # a proved minor beats the kernel vectors: they cannot all be right
                contradiction, upper = True, min(P, rows)
            if spec.rank >= upper or prec * 2 > cap:
                break
            left = deadline.current().left()
            if left is not None and left < PASS_GROWTH * (time.perf_counter() - began):
                raise TimeLimitError("the next precision would not finish in time")  # stop now, on time
            prec *= 2
    except TimeLimitError:
        stopped = f"the {deadline.current().timeout:g} s time limit"
    except Kink as kink:  # a ReLU after an analytic block, its input exactly 0 on these inputs
        raise InputError(f"{kink}; drop or move that input (a rank needs a derivative at every input).") from None
    lower = spec.rank if spec is not None else 0
    lower_by = (
        f"the Gram determinant of {lower} pivot columns of the Jacobian is a ball excluding 0 at {spec.digits} digits"
        if lower
        else "none"
    )
    upper_by = (
        proof.upper_by()
        if proof is not None and proof.count and not contradiction
        else "the rows and columns of the Jacobian"
    )
    cert = RankCertificate(
        lower=lower,
        upper=upper,
        lower_by=lower_by,
        upper_by=upper_by,
        digits=spec.digits if spec is not None else 0,
        stopped=stopped,
    )
    notes = [float_note] if float_note else []
    if contradiction:
        notes.append(
            f"a proved minor of rank {spec.rank} exceeds the {proof.count} kernel vectors' bound: their "
            "mechanisms do not hold here, so none of them is used"
        )
    bands, near = (), ()
    if spec is not None and not stopped:
        try:
            bands, near = spec.records(P - upper, None)
        except TimeLimitError:
            notes.append("the time limit ended the singular-value bands; the certificate stands")
    skipped = proof.skipped if proof is not None else ()
    notes += [f"no exact local kernel for {', '.join(skipped)} (too large to compute exactly)"] if skipped else []
    if stopped:
        notes.append(
            f"{stopped} ended the certificate at {cert.digits} digits: the rank is at least {lower} and at most {upper}"
        )
    elif lower < upper:
        notes.append(f"not certified within {cap} digits: the rank is at least {lower} and at most {upper}")
    at, data = sources(point, inputs)
    spectrum = tuple(10.0**v for v in spec.pivoting.log_sigma[:lower]) if spec is not None else ()
    return DimensionResult(
        architecture=arch,
        dimension=lower,
        parameters=P,
        ambient_dimension=arch.ambient_dimension,
        method="arb",
        certainty="exact" if lower == upper else "numeric",
        seed=seed,
        elapsed_s=time.perf_counter() - start,
        samples=len(X),
        consistent=lower == upper,
        notes=tuple(notes),
        at=at,
        inputs=data,
        certificate=cert,
        spectrum=spectrum,
        bands=bands,
        near_ranks=near,
        method_detail=(
            "arb balls: a Gram minor proved nonzero; kernel vectors from the named group, "
            "bottlenecks, invisible directions and the blocks' own kernels, each checked against the "
            "Jacobian in the same balls"
        ),
        certainty_detail=(
            "certified: the lower and upper bounds meet"
            if lower == upper
            else "a certified lower bound only (the dimension field); see certificate.upper"
        ),
    )
