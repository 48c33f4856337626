"""The public dimension verbs and the reader of any result file: architecture first, keyword-only options.

Every verb validates all its options through ``lightning_cas.options.resolve`` before any work
and bounds the whole call by ``timeout`` (``lightning_cas.system.deadline``).
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import TYPE_CHECKING

from lightning_cas.backends.blackbox import check_blackbox_prime, dimension_blackbox
from lightning_cas.backends.modp import (
    MODULUS_LIMIT,
    available_bytes,
    check_modp_prime,
    dimension_modp,
    failure_numerator,
)
from lightning_cas.core.network import Network
from lightning_cas.errors import InputError, TooLargeError, UnsupportedError
from lightning_cas.options import DIMENSION_METHODS, check_failure_bound, concrete_method, resolve, weight_numerator
from lightning_cas.results import result_class
from lightning_cas.results.contract import JsonResult
from lightning_cas.results.dimension import DimensionResult
from lightning_cas.system.files import check_path, read_json

if TYPE_CHECKING:
    from lightning_cas.results.theory import TheoryReport
    from lightning_cas.results.verify import VerifyResult

# The theory (closed forms, orbit ranks), the verdict and the defect split load only for the verbs that
# use them: a `dim` call is a rank and its printout (a sweep of `dim` calls pays each import every call).

MAX_RESULT_BYTES = 64 * 2**20
METHODS = DIMENSION_METHODS


def dimension(
    arch: Network,
    *,
    method: str = "auto",
    seed: int = 0,
    timeout: float | None = None,
    m2: str | None = None,
    prime: int | None = None,
    session=None,
    at=None,
    inputs=None,
    exact: bool = False,
    spectrum: bool = False,
    layout: str | None = None,
    full_split: bool = False,
) -> DimensionResult:
    """Dimension of the neurovariety of ``arch``, or the rank of the differential at given weights.

    ``auto`` is, for lightning networks, the faster by estimate of ``modp`` (the dense exact rank mod p) and
    ``blackbox`` (Wiedemann over GF(p^2), memory O(P)) among those that fit in memory, and says which and why in
    the notes; ``jacobian`` and ``implicit`` run
    Macaulay2; ``numeric`` is the paper's float protocol, kept as a baseline (and
    the only method for softmax, which is not polynomial).

    ``at`` (a ``WeightPoint``, the JSON form, flat weights): the rank at those weights (floats read exactly),
    next to the generic rank; ``inputs`` (token matrices (N, d_0, t)): the rank on exactly those inputs (the
    batch functional dimension), at ``at`` or at a random point; ``layout``: "tokens-features" for PyTorch's
    (N, t, d_0) (default: the shape decides, refused when t = d_0); ``exact``: over QQ instead of mod two primes
    (small sizes); a softmax network's rank at a point is certified (arb balls). ``spectrum``: the float64
    singular values there too. A network of blocks gets its defect split within the rank's own time (else
    a note says it was skipped); ``full_split``: at any price (still within ``timeout``).
    """
    opts = resolve("dimension", arch, method=method, seed=seed, timeout=timeout, m2=m2, prime=prime, session=session)
    for name, flag in (("exact", exact), ("spectrum", spectrum), ("full_split", full_split)):
        if not isinstance(flag, bool):
            raise InputError(f"{name} must be True or False, got {flag!r}.")
    point = data = None
    if at is not None or inputs is not None or layout is not None:  # the readers load only for them
        from lightning_cas.system.points import InputData, as_point, inputs_from_array

        if layout is not None and (inputs is None or isinstance(inputs, InputData)):
            raise InputError("layout says how an inputs array is laid out; give inputs as an array with it.")

        data = (
            None
            if inputs is None
            else (inputs if isinstance(inputs, InputData) else inputs_from_array(arch, inputs, "the inputs", layout))
        )
        if data is not None and data.values.shape[2] != arch.tokens:  # a token-wise network: the inputs set t
            arch = Network(arch.input, data.values.shape[2], arch.blocks)
        point = None if at is None else as_point(arch, _same_weights(at, arch), "the point")
    if point is None and data is None and not arch.analytic:
        raise UnsupportedError(given_weights_only(arch))
    with opts.deadline() as deadline:
        if point is not None or data is not None or exact or spectrum:
            return _rank_at(arch, point, data, exact, spectrum, opts)
        result = _dimension(arch, opts, deadline)
    # the split runs after the limit's own alarm is gone, so that running out of time in it keeps the dimension
    return _with_split(result, deadline, full_split)


def _same_weights(at, net: Network):
    """A weight point of the same network with another token count (whose weights do not depend on it) is this
    network's point; anything else as given."""
    from lightning_cas.system.points import WeightPoint

    if (
        isinstance(at, WeightPoint)
        and at.network != net
        and (at.network.input, at.network.blocks)
        == (
            net.input,
            net.blocks,
        )
    ):
        return dataclasses.replace(at, network=net)
    return at


def _rank_at(arch, point, data, exact: bool, spectrum: bool, opts) -> DimensionResult:
    """The rank at a point and/or on given inputs (backends.local), with the float spectrum when asked."""
    from lightning_cas.backends.certified import rank_at_point_softmax
    from lightning_cas.backends.local import float_spectrum, rank_at_point_exact, rank_at_point_modp
    from lightning_cas.backends.relu import rank_at_point_relu, relu_only

    net = arch
    if opts.method not in ("auto", "modp") or (exact and opts.method == "modp"):
        raise UnsupportedError(
            "the rank at given weights or inputs is computed by the default method (exact mod "
            f"two primes, --exact over QQ; certified for softmax), not by {opts.method}."
        )
    if net.functions and relu_only(net):
        result = rank_at_point_relu(arch, point, inputs=data, seed=opts.seed, prime=opts.prime)
    elif not net.polynomial:
        if exact:
            what = "softmax" if not net.functions else " and ".join(net.functions)
            raise UnsupportedError(
                f"{what} is not polynomial, so there is no exact QQ path: its rank at a point is "
                "certified with arb balls by default."
            )
        result = rank_at_point_softmax(arch, point, inputs=data, seed=opts.seed)
    elif exact:
        result = rank_at_point_exact(arch, point, inputs=data, seed=opts.seed)
    else:
        if opts.prime is not None and data is None:  # random inputs: the prime must make their bound small
            check_modp_prime(opts.prime)
            check_failure_bound(
                opts.prime, failure_numerator(net, random_weights=False), "modp", repetitions=2, limit=MODULUS_LIMIT
            )
        result = rank_at_point_modp(arch, point, inputs=data, seed=opts.seed, prime=opts.prime)
    if spectrum and not result.spectrum and result.certificate is None:
        result = dataclasses.replace(result, spectrum=float_spectrum(arch, point, data, opts.seed))
    return result


def given_weights_only(net: Network) -> str:
    """The one line that refuses a generic question about a network that is not analytic (relu)."""
    return (
        f"a network with {' and '.join(net.functions)} has no generic dimension (relu is piecewise linear, not "
        "analytic: its rank changes from region to region of the weights); give weights and inputs: --at FILE "
        "and --inputs FILE (at= and inputs= in Python) for its rank there."
    )


def _generic_rank_note(result: DimensionResult) -> DimensionResult:
    """A network that is analytic but not polynomial: its dimension is the generic rank of an analytic map."""
    net = result.architecture
    note = (
        f"the generic rank of an analytic map ({net.not_polynomial}): the maximum rank of its Jacobian, reached on "
        "an open dense set of weights and inputs, so random ones give it with probability 1; the evidence is the "
        "float spectra's gap above (and the high-precision spectrum where it ran), a numeric answer, not a proof"
    )
    return dataclasses.replace(result, notes=tuple(result.notes) + (note,))


def _check_prime(arch: Network, prime: int, method: str) -> None:
    """Before any work: the largest failure bound the method can state with this prime must pass
    options' one rule (each method's bound grows with the rank it finds, so no run states more)."""
    if method == "modp":
        check_modp_prime(prime)
        check_failure_bound(prime, failure_numerator(arch), method, repetitions=2, limit=MODULUS_LIMIT)
    elif method == "blackbox":
        check_blackbox_prime(prime)
    elif method == "jacobian":
        check_failure_bound(prime, weight_numerator(arch), method)


def _dimension(arch: Network, opts, deadline) -> DimensionResult:
    if opts.prime is not None:
        _check_prime(arch, opts.prime, concrete_method(opts.method, arch))
    result = _compute_dimension(arch, opts, deadline)
    if not arch.polynomial and result.method == "numeric":
        result = _generic_rank_note(result)
    if (
        result.method == "modp"
        and result.ambient_dimension is not None
        and result.dimension == result.ambient_dimension
    ):
        from lightning_cas.results.dimension import proved

        result = proved(
            result, f"the ambient dimension {result.ambient_dimension} (all maps with the network's degrees)"
        )
    return result


SPLIT_FLOOR_S = 2.0  # the split's budget is the rank's own time, but never less than this (start-up, a fork)
SPLIT_IN_PROCESS_WEIGHTS = 2000  # up to here the split's largest C call takes milliseconds


def _with_split(
    result: DimensionResult, deadline, full_split: bool = False, memory: int | None = None
) -> DimensionResult:
    """A network of blocks' dimension with its defect split (core.defects), at the first run's prime, within
    the rank's own time (``full_split``: at any price) and what is left of the limit; when the split cannot
    be had within them, or does not fit in ``memory`` (default: what is available), the dimension as it is,
    with a note saying so. The paper's network is explained by its closed forms (predict) instead."""
    net = result.architecture
    if net.paper is not None or not net.polynomial or result.method not in ("modp", "blackbox") or not result.primes:
        return result
    from lightning_cas.backends.modp import available_bytes
    from lightning_cas.core.defects import explain
    from lightning_cas.errors import TimeLimitError
    from lightning_cas.results.dimension import proved
    from lightning_cas.system.deadline import stoppable, time_limit

    left = None if deadline.end is None else deadline.end - time.monotonic()
    budget = None if full_split else max(SPLIT_FLOOR_S, result.elapsed_s)
    limit = min((t for t in (left, budget) if t is not None), default=None)
    note = None
    if limit is not None and limit <= 0:
        note = f"the defect split was not computed: the {deadline.timeout:g} s time limit ran out with the rank"
    else:
        try:
            # a small network's split is many short numpy calls, which the limit's alarm stops between two
            # of them; a large one's echelon forms are long C calls, stopped by running them in a child
            run = stoppable if net.parameters > SPLIT_IN_PROCESS_WEIGHTS else (lambda fn, *a, **k: fn(*a, **k))
            with time_limit(limit):
                split = run(
                    explain,
                    net,
                    result.dimension,
                    prime=result.primes[0],
                    seed=result.seed or 0,
                    memory=memory or available_bytes(),
                )
        except TimeLimitError:
            note = (
                f"the defect split was not computed: the {deadline.timeout:g} s time limit ran out during it"
                if budget is None or (left is not None and left <= budget)
                else f"the defect split was skipped: it takes longer than the rank itself ({budget:.3g} s); "
                "--full-split computes it at any price"
            )
        except TooLargeError as exc:
            note = f"the defect split was skipped: {str(exc).rstrip('.')}"
    if note is not None:
        return dataclasses.replace(result, notes=result.notes + (note,))
    result = dataclasses.replace(result, explained=split)
    if result.certainty != "exact":
        bound = split.proved_bound
        if split.named_group == result.parameters - result.dimension:
            bound = f"parameters - the named group's orbit = {result.parameters} - {split.named_group}"
        if bound is not None:
            result = proved(result, bound)
    return result


def _compute_dimension(arch: Network, opts, deadline) -> DimensionResult:
    method = concrete_method(opts.method, arch)
    if arch.paper is None and method == "implicit":
        raise UnsupportedError(
            "the implicit method eliminates one plain attention layer; for a network of blocks "
            "use --method modp or --method jacobian."
        )
    if method == "modp" and opts.method == "auto" and opts.prime is None:
        from lightning_cas.backends.blackbox import choose

        method, why = choose(arch, available_bytes())
        result = (
            dimension_blackbox(arch, seed=opts.seed) if method == "blackbox" else dimension_modp(arch, seed=opts.seed)
        )
        return dataclasses.replace(result, notes=result.notes + (why,))
    if method == "modp":
        return dimension_modp(arch, seed=opts.seed, prime=opts.prime)
    if method == "blackbox":
        return dimension_blackbox(arch, seed=opts.seed, prime=opts.prime)
    if method in ("jacobian", "implicit"):  # the Macaulay2 backend loads only for the runs that need it
        from lightning_cas.backends.m2 import dimension_implicit, dimension_jacobian
    if method == "jacobian":
        return dimension_jacobian(arch, opts.macaulay2, seed=opts.seed, prime=opts.prime)
    if method == "implicit":
        return dimension_implicit(arch, opts.macaulay2, seed=opts.seed)
    from lightning_cas.backends.numeric import dimension_numeric  # the float baseline loads only for its runs

    return dimension_numeric(arch, seed=opts.seed)


def predict(arch: Network, *, timeout: float | None = None) -> TheoryReport:
    """Closed-form predictions with their regimes, and the proved bounds (orbit ranks mod p: no dimension is
    computed); ``timeout`` bounds the call."""
    from lightning_cas.results.theory import theory_report

    opts = resolve("predict", arch, timeout=timeout)
    _check_theory_memory(arch)
    with opts.deadline():
        return theory_report(arch)


def _check_theory_memory(arch) -> None:
    """A network of blocks, and the paper's network with several heads, is predicted from the rank of its
    symmetry group's action mod p: refused before any allocation when that rank would not fit in the memory
    this process may use (64 heads of width 256 drew their random weights, then asked numpy for 6 TiB)."""
    from lightning_cas.backends.modp import available_bytes
    from lightning_cas.core.symmetry import orbit_bytes

    plain = arch.paper
    if plain is not None and all(h == 1 for h in plain.heads):
        return  # the paper's network with one head per layer: closed forms only
    need, free = orbit_bytes(arch), available_bytes()
    if need > free:
        raise TooLargeError(
            f"the bounds of predict (the symmetry group's orbit rank mod p) would need about "
            f"{need / 2**30:.1f} GiB for this network ({arch.parameters} weights) and "
            f"{free / 2**30:.1f} GiB are available; try smaller widths."
        )


def verify(
    arch: Network,
    *,
    method: str = "auto",
    seed: int = 0,
    timeout: float | None = None,
    m2: str | None = None,
    prime: int | None = None,
    session=None,
    compare: bool = False,
    full_split: bool = False,
) -> VerifyResult:
    """Compute the dimension and compare it with the theory's prediction.

    ``compare=True`` also computes the other normalization (lightning exactly mod p, softmax
    numerically) and explains where the two differ beyond the scaling terms (e.g. token collapse).
    """
    from lightning_cas.core.verdict import judge
    from lightning_cas.results.theory import theory_report
    from lightning_cas.results.verify import VerifyResult, verdict_sentence

    opts = resolve("verify", arch, method=method, seed=seed, timeout=timeout, m2=m2, prime=prime, session=session)
    for name, flag in (("compare", compare), ("full_split", full_split)):
        if not isinstance(flag, bool):
            raise InputError(f"{name} must be True or False, got {flag!r}.")
    _check_theory_memory(arch)
    with opts.deadline() as deadline:
        computed = _dimension(arch, opts, deadline)
        details = {}
        if compare:
            comparison = compare_normalizations(arch, seed=opts.seed)
            comparison.pop("results", None)  # the full results are recomputable; keep the summary
            details["normalizations"] = comparison
        pred = theory_report(arch).dimension  # the orbit ranks of the bounds count against the limit too
    computed = _with_split(computed, deadline, full_split)
    judgement = judge(pred, computed.dimension)
    verdict = judgement.verdict
    message = verdict_sentence(pred, judgement, f"{computed.method}, {computed.certainty}")
    if not computed.consistent:
        message += "; WARNING: " + "; ".join(computed.notes)
    if compare:
        message += "; lightning vs softmax: " + details["normalizations"]["explanation"]
    split = computed.explained
    if split is not None:
        computed = dataclasses.replace(computed, explained=None)  # carried once, at the top
    return VerifyResult(
        arch,
        computed,
        pred.value,
        pred.status,
        pred.regime,
        pred.reason,
        verdict,
        message,
        details,
        explained=split,
        method=computed.method,
        certainty=computed.certainty,
        seed=computed.seed,
        elapsed_s=computed.elapsed_s,
        m2_version=computed.m2_version,
        method_detail="the dimension by " + computed.method + ", compared with the closed forms",
    )


# ---------------------------------------------------------------- softmax vs lightning


def _against_theory(name: str, pred, computed: int, with_status: bool = False) -> str | None:
    """How a computed dimension stands against its prediction (the one verdict, in its one sentence); None
    when they agree."""
    from lightning_cas.core.verdict import judge
    from lightning_cas.results.verify import verdict_sentence

    return verdict_sentence(pred, judge(pred, computed), subject=name, with_status=with_status)


def compare_normalizations(arch: Network, seed: int = 0) -> dict:
    """Dimension of the same widths/attention with lightning (exact mod p) and softmax (numeric),
    each next to the theory, with an explanation of the difference.

    The difference is the scaling torus (one per layer) when both formulas apply; beyond that,
    it is where lightning leaves the formula's regime and softmax does not (a_i = 1 before the
    last layer collapses lightning's tokens onto a line; softmax's output is a convex
    combination of V z_i and stays spread out).
    """
    light = Network.from_paper(arch.widths, arch.attention, arch.tokens, "none", arch.heads)
    soft = Network.from_paper(arch.widths, arch.attention, arch.tokens, "softmax", arch.heads)
    from lightning_cas.backends.numeric import dimension_numeric
    from lightning_cas.core.theory import predict_dimension

    rl, rs = dimension_modp(light, seed=seed), dimension_numeric(soft, seed=seed)
    pl, ps = predict_dimension(light), predict_dimension(soft)
    diff = rs.dimension - rl.dimension
    L = arch.depth
    scalings = sum(arch.heads)  # one scaling per head (= L with one head per layer)
    explanation = []
    if diff == scalings:
        what = "L" if not arch.multihead else "the number of heads"
        explanation.append(
            f"softmax - lightning = {diff} = {what}: exactly the scaling symmetry "
            "(A, V) -> (lambda A, V / lambda) of each head, which softmax breaks"
        )
    else:
        what = f"L = {L}" if not arch.multihead else f"the {scalings} per-head scalings"
        explanation.append(
            f"softmax - lightning = {diff}, not {what}: the normalizations differ beyond the scaling symmetry"
        )
    if arch.tokens == 1:
        r = min(arch.widths)
        linear = r * (arch.widths[0] + arch.widths[-1] - r)
        explanation.append(
            f"with one token softmax is identically 1, so the softmax network is the linear map "
            f"x -> V_L...V_1 x: d_L x d_0 matrices of rank <= {r}, dimension {linear} "
            f"(computed {rs.dimension}); lightning stays cubic and is not comparable"
        )
    lightning_vs_theory = _against_theory("lightning", pl, rl.dimension)
    if lightning_vs_theory:
        explanation.append(lightning_vs_theory)
    softmax_vs_theory = _against_theory("softmax", ps, rs.dimension, with_status=True)
    if softmax_vs_theory:
        explanation.append(softmax_vs_theory)
    elif pl.value is None:
        explanation.append(
            f"softmax matches its formula {ps.formula} = {ps.value} ({ps.status}), so the extra "
            f"{diff - L} dimensions are lightning's loss in its obstructed regime"
        )
    return {
        "architecture": {k: v for k, v in arch.to_dict().items() if k != "normalization"},
        "lightning": {
            "dimension": rl.dimension,
            "method": rl.method,
            "certainty": rl.certainty,
            "predicted": pl.value,
            "status": pl.status,
            "reason": pl.reason,
        },
        "softmax": {
            "dimension": rs.dimension,
            "method": rs.method,
            "certainty": rs.certainty,
            "predicted": ps.value,
            "status": ps.status,
            "reason": ps.reason,
            "consistent": rs.consistent,
        },
        "difference": diff,
        "depth": L,
        "explanation": "; ".join(explanation),
        "results": {"lightning": rl, "softmax": rs},
    }


# ---------------------------------------------------------------- reading any result back
# (the kind a file names is looked up in the registry the result modules fill: lightning_cas.results)


def result_from_dict(data) -> JsonResult:
    """Any result from its ``to_dict`` form, as the class its ``kind`` names."""
    if not isinstance(data, dict):
        raise InputError("a result must be a JSON object.")
    return result_class(data.get("kind")).from_dict(data)


def load_result(path: str | os.PathLike) -> JsonResult:
    """Read a result written with ``--json`` (or ``to_json``) back as its class, through the bounded
    reader (a FIFO, a device or a huge file is refused at once); its numbers are checked by its class."""
    path = check_path(path, "result")
    return result_from_dict(read_json(path, "result", max_bytes=MAX_RESULT_BYTES))
