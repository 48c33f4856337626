"""The rank at given weights of a network with ReLU (and otherwise polynomial blocks), exactly.

Off its kinks a ReLU network is, near W, the polynomial network whose ReLUs are replaced by their 0/1
patterns on the inputs; a float is the binary rational it is, so the Jacobian is an exact rational matrix:

* the **patterns** come from one exact pass over QQ (python-flint fmpq): the sign of every ReLU input on
  every input and token. An input whose ReLU input is exactly 0 sits on a kink, where the map has no
  derivative: it is reported (input, block, row, token), never guessed;
* **rank >= r**: the Jacobian with those patterns mod two large primes (the BLAS engine); a minor nonzero
  mod p is nonzero over QQ, so the rank mod p is a proved lower bound;
* **rank <= P - k**: k independent exact kernel vectors (``core.activation_kernels``: ReLU scalings, dead
  units, junctions, bias shifts), each checked to be in the kernel mod both primes.

When the two meet the rank is exact; otherwise the result says both bounds (the certificate), and the
two primes' agreement beside them.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np

from lightning_cas.backends.certified import point_or_drawn, sources
from lightning_cas.backends.local import _primes_for
from lightning_cas.backends.numeric import check_numeric_memory
from lightning_cas.core import rank_modp
from lightning_cas.core.arithmetic import ModP, Rationals
from lightning_cas.core.checks import derived_seed
from lightning_cas.core.exact_qq import _integer_rows
from lightning_cas.core.forward import Kink, forward, jacobian
from lightning_cas.core.gfp import MODULUS_LIMIT
from lightning_cas.core.kernel_proof import bound as kernel_bound
from lightning_cas.core.kernel_proof import candidates, denominator, exact_images, primes_needed, size_bounds
from lightning_cas.core.network import Network
from lightning_cas.errors import InputError
from lightning_cas.results.dimension import DimensionResult, RankCertificate
from lightning_cas.system import deadline
from lightning_cas.system.points import InputData, WeightPoint

CERTIFY_MARGIN = 8  # extra rows beyond P drawn for the rank of the differential
EXACT_KERNEL_BUDGET = 150_000  # entries of a Jacobian whose null space is solved over QQ when the bounds stay apart
EXACT_CHECK_BUDGET = 100_000  # entries of the Jacobian over QQ that proves the kernel vectors; above, residues
PROOF_PRIME_TOP = MODULUS_LIMIT  # the residues' primes: as large as the fast GF(p) forward allows
REDRAWS = 5  # drawn inputs on a kink are drawn again (probability zero for Gaussian floats)
SCALES = (1, 3, 9)  # the input scales of successive rounds of drawn inputs (more activation regions reached)
MAX_ROUNDS = 6  # rounds of drawn inputs at most, each of P + 8 rows


def relu_only(net: Network) -> bool:
    """ReLU is the only piece that is not polynomial: the exact path applies."""
    return set(net.functions) == {"relu"} and all(b.polynomial or b.named_function() == "relu" for b in net.blocks)


def _gaussian(rng, shape) -> np.ndarray:
    return np.array([Fraction(float(v)) for v in rng.standard_normal(int(np.prod(shape)))], dtype=object).reshape(shape)


def _patterns(net: Network, values, X) -> tuple[dict, list]:
    """The signs of every ReLU input on X and every block's input, from one exact pass over QQ (``Kink`` on
    an exact 0)."""
    ar = Rationals()
    patterns: dict = {}
    streams: list = []
    forward(net, ar, ar.array(values), ar.array(X), patterns=patterns, streams=streams)
    return patterns, streams


def _drawn(net: Network, values, seed: int, samples: int, round_: int):
    """(X, patterns, streams) for round ``round_`` of drawn inputs: Gaussian token matrices times the round's
    scale, drawn again (a few times) while one lands on a kink; None if every draw does."""
    scale = SCALES[round_ % len(SCALES)]
    for attempt in range(REDRAWS):
        rng = np.random.default_rng(derived_seed(seed, 3 + attempt + REDRAWS * round_))
        X = _gaussian(rng, (samples, net.input, net.tokens)) * scale
        try:
            return (X, *deadline.stoppable(_patterns, net, values, X))
        except Kink:
            continue
    return None


def _grown(net: Network, values, seed: int, samples: int, X, patterns: dict, prime: int | None, cands):
    """Without given inputs the quantity is the functional dimension at W, the largest rank over input sets: a
    ReLU network's rank grows with the activation regions the inputs reach. So rounds of inputs at the next
    scale (1, 3, 9, ...) are added while a round raises the rank mod p and the mechanisms' claimed upper bound
    is not reached, at most MAX_ROUNDS; (X, patterns, rounds) of the last round that raised it."""
    q = _primes_for(values, prime, count=1, inputs=X)[0]
    ar = ModP(q)
    target = net.parameters - kernel_bound(net.parameters, cands, [True] * len(cands.vectors)).count

    def rank(X, patterns):
        with rank_modp.blas_threads():
            return rank_modp.rank(jacobian(net, ar, ar.array(values), ar.array(X), None, patterns), q)

    current, rounds = deadline.stoppable(rank, X, patterns), 1
    while current < target and rounds < MAX_ROUNDS:
        deadline.check()
        more = _drawn(net, values, seed, samples, rounds)
        rounds += 1
        if more is None:
            continue
        X2 = np.concatenate([X, more[0]])
        patterns2 = {k: np.concatenate([patterns[k], more[1][k]]) for k in patterns}
        grown = deadline.stoppable(rank, X2, patterns2)
        if grown <= current:
            break
        X, patterns, current = X2, patterns2, grown
    return X, patterns, rounds


def rank_at_point_relu(
    arch: Network,
    point: WeightPoint | None,
    *,
    inputs: InputData | None = None,
    seed: int = 0,
    prime: int | None = None,
) -> DimensionResult:
    """The rank at W of a ReLU network on the given inputs (the batch functional dimension) or, without them, on
    inputs drawn until the rank stops growing (the functional dimension at W), proved from both sides (module
    docstring)."""
    net = arch
    start = time.perf_counter()
    P = net.parameters
    values = point_or_drawn(point, P, seed, scale=1.0)
    if inputs is not None:
        X = inputs.values
        check_numeric_memory(8 * len(X) * net.rows_per_sample * P, net, "the ReLU Jacobian on these inputs")
        try:
            patterns, streams = deadline.stoppable(_patterns, net, values, X)
        except Kink as kink:
            raise InputError(f"{kink}; drop or move that input (a rank needs a derivative at every input).") from None
    else:
        samples = max(1, math.ceil((P + CERTIFY_MARGIN) / net.rows_per_sample))
        check_numeric_memory(8 * MAX_ROUNDS * samples * net.rows_per_sample * P, net, "the ReLU Jacobian at the point")
        first = _drawn(net, values, seed, samples, 0)
        if first is None:
            raise InputError(
                "the weights put every drawn input on a kink of a ReLU (an input to it is 0 "
                "whatever the tokens); give inputs with --inputs."
            )
        X, patterns, streams = first
        cands = candidates(net, values)  # identities that hold at every input
        X, patterns, rounds = _grown(net, values, seed, samples, X, patterns, prime, cands)
    primes = _primes_for(values, prime, inputs=X)
    given = inputs is not None  # input-dependent kernel vectors only for the given inputs
    if given:
        cands = candidates(net, values, patterns, streams)
    vectors = [v for _, v in cands.vectors]
    runs, passed = [], [True] * len(vectors)
    for k, q in enumerate(primes):
        deadline.check()
        ar = ModP(q)
        with rank_modp.blas_threads():
            J = deadline.stoppable(jacobian, net, ar, ar.array(values), ar.array(X), None, patterns)
            rank = rank_modp.rank(J, q)
            if vectors:  # a vector whose image is not 0 mod q is not 0 over QQ: wrong, whatever proves the rest
                K = ar.array(np.array([[int(x) for x in r] for r in _integer_rows(vectors)], dtype=object))
                images = ar.residues(ar.matmul(J, K.T))
                passed = [ok and not np.any(images[:, i]) for i, ok in enumerate(passed)]
        runs.append({"prime": q, "seed": derived_seed(seed, k), "rank": rank, "rows": J.shape[0]})
    lower = max(r["rank"] for r in runs)
    rows = runs[0]["rows"]
    notes = []
    exact_J = None
    solve = given and lower < rows and rows * P <= EXACT_KERNEL_BUDGET
    survivors = [i for i, ok in enumerate(passed) if ok]
    if rows * P <= EXACT_CHECK_BUDGET and (survivors or solve):  # the vectors that passed mod p, proved exactly
        exact_J = deadline.stoppable(_exact_jacobian, net, values, X, patterns)
        proved = exact_images(exact_J, [vectors[i] for i in survivors])
    elif survivors:  # too large for J over QQ: from residues modulo enough primes
        proved, note = _proved_by_residues(net, values, X, patterns, [vectors[i] for i in survivors], primes)
        notes += [note] if note else []
    for i, ok in zip(survivors, proved if survivors else []):
        passed[i] = ok
    proof = kernel_bound(P, cands, passed)
    upper = min(P - proof.count, rows)
    upper_by = proof.upper_by() if proof.count else "the rows and columns of the Jacobian"
    if lower < upper and solve and exact_J is not None:
        # on given inputs the quantity is the rank of this Jacobian: its own null space over QQ bounds it
        solved = deadline.stoppable(_null_space_size, exact_J)
        if P - solved < upper:
            upper = P - solved
            upper_by = f"{solved} exact kernel vectors of the Jacobian on these inputs (its null space over QQ)"
    if upper == rows and rows < P - proof.count:
        upper_by = f"the {rows} rows of the Jacobian (fewer than the weights less the kernel vectors)"
    cert = RankCertificate(
        lower=lower,
        upper=upper,
        lower_by=f"a nonzero minor of the Jacobian mod {runs[0]['prime']} (a minor nonzero mod p is nonzero over QQ)",
        upper_by=upper_by,
        digits=0,
    )
    if len({r["rank"] for r in runs}) > 1:
        notes.append(f"the primes disagree: ranks {[r['rank'] for r in runs]}; the largest is proved")
    if lower < upper:
        agree = len({r["rank"] for r in runs}) == 1
        notes.append(
            f"the bounds do not meet: the rank is at least {lower} and at most {upper}"
            + (f"; both primes give {lower}" if agree else "")
        )
    active = _activity(net, patterns)
    if active:
        notes.append(active)
    at, data = sources(point, inputs)
    exact = lower == upper
    where = (
        "the given inputs (the quantity: the rank on exactly these inputs, the batch functional dimension)"
        if given
        else f"{len(X)} drawn Gaussian inputs (the quantity: the functional dimension at W, the rank "
        "over all inputs; the rank on the drawn ones bounds it below; drawn in rounds of "
        f"{samples} at scales {', '.join(map(str, SCALES))} in turn until a round raised the rank "
        f"no more: {rounds} of at most {MAX_ROUNDS})"
    )
    return DimensionResult(
        architecture=arch,
        dimension=lower,
        parameters=P,
        ambient_dimension=None,
        method="exact",
        certainty="exact" if exact else "probabilistic",
        seed=seed,
        elapsed_s=time.perf_counter() - start,
        primes=tuple(primes),
        samples=len(X),
        runs=tuple(runs),
        consistent=exact,
        notes=tuple(notes),
        at=at,
        inputs=data,
        certificate=cert,
        method_detail=(
            f"ReLU patterns on {where} from an exact pass over QQ; the rank of the Jacobian with those "
            "patterns mod " + " and ".join(map(str, primes)) + " below, exact kernel vectors above"
        ),
        certainty_detail=(
            "exact: the proved bounds meet"
            if exact
            else "a proved lower bound (the dimension field); see certificate.upper"
        ),
    )


def _proved_by_residues(net: Network, values, X, patterns: dict, vectors, primes: list[int]):
    """(per vector: J v = 0 proved exactly, a note or None): D (J v) is an integer vector no larger than D B
    (``core.kernel_proof``); the vectors here vanish mod ``primes`` already, and each further prime whose
    image is not 0 rules a vector out; past a product of 2 D B the rest are 0 over QQ."""
    ints = [[int(x) for x in r] for r in _integer_rows(vectors)]
    bounds = size_bounds(net, values, X, patterns, ints)
    if bounds is None:
        return [False] * len(vectors), (
            "the kernel vectors are not used: the weights and inputs span too many "
            "orders of magnitude for the size bound that proves them from residues"
        )
    more = primes_needed(denominator(net, values, X), bounds, primes, values, X, PROOF_PRIME_TOP)
    alive = [True] * len(vectors)
    for q in more:
        deadline.check()
        ar = ModP(q)
        with rank_modp.blas_threads():
            J = deadline.stoppable(jacobian, net, ar, ar.array(values), ar.array(X), None, patterns)
            images = ar.residues(ar.matmul(J, ar.array(np.array(ints, dtype=object)).T))
        alive = [ok and not np.any(images[:, i]) for i, ok in enumerate(alive)]
    return alive, None


def _exact_jacobian(net: Network, values, X, patterns: dict):
    """The Jacobian with these ReLU patterns over QQ, as an fmpq_mat."""
    import flint

    ar = Rationals()
    J = jacobian(net, ar, ar.array(values), ar.array(X), None, dict(patterns))
    return flint.fmpq_mat(J.shape[0], J.shape[1], list(J.reshape(-1)))


def _null_space_size(J) -> int:
    """The number of exact kernel vectors of J over QQ (each checked against every row)."""
    from lightning_cas.core.exact_qq import nullspace

    return len(nullspace([[J[i, j] for j in range(J.ncols())] for i in range(J.nrows())], J.ncols()))


def _activity(net: Network, patterns: dict) -> str:
    """How many ReLU units are dead (never active) or always active on the inputs: a sentence, or ''."""
    parts = []
    for i, signs in sorted(patterns.items()):
        s = np.asarray(signs)
        dead = int((s < 0).all(axis=(0, 2)).sum())
        live = int((s > 0).all(axis=(0, 2)).sum())
        if dead or live:
            parts.append(f"block {i}: {dead} of {s.shape[1]} ReLU units never active, {live} always active")
    return "; ".join(parts) + " on these inputs" if parts else ""
