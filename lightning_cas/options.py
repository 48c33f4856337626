"""The one options object and its one validation, shared by every verb and every command.

Every public verb calls :func:`resolve` before any work starts, so a bad seed, time limit,
prime, method, binary, session or job count is refused the same way from Python and from the
command line: as an ``InputError`` (a ``LightningError``) with one sentence.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from fractions import Fraction

from lightning_cas.core.architecture import check_architecture
from lightning_cas.core.checks import (  # noqa: F401,E501
    MAX_TIMEOUT_S,
    SEED_LIMIT,
    check_seed,
    check_timeout,
    derived_seed,
    integer_value,
    shown,
)
from lightning_cas.core.methods import (  # noqa: F401
    DIMENSION_METHODS,
    FIBER_METHODS,
    METHOD_ALIASES,
    SINGULAR_METHOD_SPELLINGS,
    SINGULAR_METHODS,
)
from lightning_cas.core.primes import PRIME_LIMIT, check_prime, next_prime, second_primes
from lightning_cas.core.weights import MultiHead, point_from_dict
from lightning_cas.errors import InputError
from lightning_cas.macaulay2.connection import Macaulay2
from lightning_cas.system.deadline import time_limit

MAX_FAILURE_BOUND = 1e-3  # a prime whose Schwartz-Zippel bound is not below this is refused
MAX_PARALLEL_JOBS = 256

VERB_METHODS = {
    "dimension": DIMENSION_METHODS,
    "verify": DIMENSION_METHODS,
    "sweep": DIMENSION_METHODS,
    "fiber": FIBER_METHODS,
    "singular_locus": SINGULAR_METHODS,
}
DEFAULT_METHODS = {"dimension": "auto", "verify": "auto", "sweep": "auto", "fiber": "auto", "singular_locus": "strata"}


def _shown_bound(value: float) -> str:
    """The bound with as many digits as it takes to tell it from MAX_FAILURE_BOUND (never "0.001 is not
    below 0.001" unless it is exactly 0.001)."""
    for digits in range(3, 18):
        text = f"{value:.{digits}g}"
        if float(text) != MAX_FAILURE_BOUND or value == MAX_FAILURE_BOUND:
            return text
    return repr(value)


def smallest_prime_above(n: int) -> int:
    return next_prime(n)


def check_failure_bound(
    prime: int, numerator: int, method: str, *, repetitions: int = 1, limit: int = PRIME_LIMIT
) -> float:
    """The one rule for a given prime: the failure bound ``numerator / q`` of every prime q the method
    uses (``prime`` and, with ``repetitions`` > 1, the primes just below it) must be below
    MAX_FAILURE_BOUND, or the prime is refused, with the prime from which on it would pass.

    ``numerator`` is the largest the method can state on this architecture (with the largest rank),
    so a prime that passes here is never refused by the bound a run states.
    """
    primes = second_primes(prime, repetitions)
    smallest = min(primes)
    bound = numerator / smallest
    floor = math.floor(numerator / Fraction(str(MAX_FAILURE_BOUND)))  # q passes exactly when q > floor
    if smallest > floor:
        return bound
    need = floor if repetitions == 1 else smallest_prime_above(floor)
    for _ in range(repetitions - 2):
        need = smallest_prime_above(need)
    used = f"{prime}" + (f" (and {smallest}, its repetition)" if smallest != prime else "")
    advice = (
        f"use a prime above {need}"
        if need + 1 < limit
        else f"no prime the {method} method takes (below {limit}) makes it small enough here; without a prime "
        "the default one is used and the result states its bound"
    )
    raise InputError(
        f"the prime {used} is too small for the {method} method on this architecture: the failure bound "
        f"{numerator}/{smallest} = {_shown_bound(bound)} is not below {MAX_FAILURE_BOUND:g}; {advice}."
    )


def weight_numerator(arch) -> int:
    """The failure bound's numerator when only the weights are random (the Macaulay2 Jacobian, the
    tangent rank of a fiber): an r x r minor of entries of degree D_w - 1, r at most
    min(parameters, ambient dimension)."""
    return min(arch.parameters, arch.ambient_dimension or arch.parameters) * (arch.weight_degree - 1)


def check_method(method, verb: str) -> str | None:
    """The method for ``verb`` (its default for None), old spellings mapped to the current ones."""
    choices = VERB_METHODS.get(verb)
    if choices is None:
        if method is not None:
            raise InputError(f"{verb}() has no method option, got method={method!r}.")
        return None
    if method is None:
        return DEFAULT_METHODS[verb]
    if not isinstance(method, str):
        raise InputError(f"method must be one of {', '.join(choices)}, got {method!r}.")
    method = METHOD_ALIASES.get(verb, {}).get(method, method)
    if method not in choices:
        raise InputError(f"method must be one of {', '.join(choices)}, got {method!r}.")
    return method


def check_m2(m2) -> str | Macaulay2 | None:
    """None (``$LIGHTNING_CAS_M2`` or M2 on PATH), a path/name of the Macaulay2 binary, or a
    ``Macaulay2`` connection (what a verb hands to the verbs it calls)."""
    if m2 is None or isinstance(m2, Macaulay2):
        return m2
    if isinstance(m2, os.PathLike):
        m2 = os.fspath(m2)
    if not isinstance(m2, str) or not m2.strip() or "\x00" in m2:
        raise InputError(f"m2 must be the path of the Macaulay2 binary, got {m2!r}.")
    if os.sep in m2 and not os.path.isabs(m2):
        # the caller means their own directory, and means it now: Macaulay2 runs stand in a private directory
        # (where ./M2 would be looked up), and a sweep's workers may start after the caller moved on
        m2 = os.path.abspath(m2)
    return m2


def check_session(session):
    """None or an ``M2Session`` (one Macaulay2 process reused by every run of the verb)."""
    if session is None:
        return None
    from lightning_cas.macaulay2.runner import M2Session  # a session exists only when the runner was loaded

    if not isinstance(session, M2Session):
        raise InputError(f"session must be an M2Session, got {type(session).__name__}.")
    return session


def connection(m2, session) -> Macaulay2:
    """The one Macaulay2 connection of a call, from its validated ``m2`` and ``session`` options."""
    if isinstance(m2, Macaulay2):
        if session is not None and session is not m2.session:
            raise InputError("give the session inside the Macaulay2 connection, not next to it.")
        return m2
    return Macaulay2(binary=m2, session=session)


def check_jobs(jobs) -> int:
    value = integer_value(jobs)
    if value is None or not 1 <= value <= MAX_PARALLEL_JOBS:
        raise InputError(f"jobs must be an integer between 1 and {MAX_PARALLEL_JOBS}, got {jobs!r}.")
    return value


@dataclass(frozen=True)
class Options:
    """Validated options of one call; built by :func:`resolve`, never by hand.

    ``macaulay2`` is the connection every Macaulay2 run of the call goes through (the binary and
    the session the caller named); its runs are bounded by the deadline ``deadline()`` opens.
    """

    seed: int = 0
    timeout: float | None = None
    prime: int | None = None
    method: str | None = None
    macaulay2: Macaulay2 = Macaulay2()
    jobs: int = 1
    failure_bound: float | None = None  # of the given prime, where the verb states one up front

    def deadline(self):
        """A context manager bounding the whole call by ``timeout`` (see lightning_cas.system.deadline)."""
        return time_limit(self.timeout)


def concrete_method(method: str, arch) -> str:
    """The one resolution of a dimension's "auto": exact mod p for a polynomial network, the float baseline
    (numeric) otherwise."""
    if method == "auto":
        return "modp" if arch.normalization == "none" else "numeric"
    return method


PRIME_METHODS = {
    "dimension": ("modp", "blackbox", "jacobian"),
    "verify": ("modp", "blackbox", "jacobian"),
    "fiber": ("m2", "auto"),
}


def resolve(
    verb: str, arch=None, *, seed=0, timeout=None, prime=None, method=None, m2=None, session=None, jobs=1
) -> Options:
    """Validate every option of ``verb`` at once (the architecture too, when given)."""
    if arch is not None or verb not in ("sweep",):
        check_architecture(arch, verb)
    seed = check_seed(seed)
    timeout = check_timeout(timeout)
    method = check_method(method, verb)
    m2 = check_m2(m2)
    session = check_session(session)
    jobs = check_jobs(jobs)
    bound = None
    if prime is not None:
        prime = check_prime(prime)
        if verb not in PRIME_METHODS:
            raise InputError(f"{verb}() has no prime option.")
        concrete = concrete_method(method, arch) if verb in ("dimension", "verify") else method
        if concrete not in PRIME_METHODS[verb]:
            raise InputError(
                f"a prime applies to the {' and '.join(PRIME_METHODS[verb])} methods only, not to {concrete}."
            )
        if verb == "fiber":
            # the point is given, so no bound is proved: this one is that of the tangent rank at a
            # random point, and it keeps out the small primes where the fiber mod p most often differs
            bound = check_failure_bound(prime, weight_numerator(arch), "fiber")
        # dimensions: the api applies the same rule with the bound of the method that runs (the backends state it)
    return Options(
        seed=seed,
        timeout=timeout,
        prime=prime,
        method=method,
        macaulay2=connection(m2, session),
        jobs=jobs,
        failure_bound=bound,
    )


def check_point(arch, point, name: str = "point"):
    """A weight point as the verbs hold it (per layer (Q, K, V) of Fractions), from that form or the JSON form.

    Everything else (strings, floats, wrong shapes) is refused in one sentence before any work.
    """

    def rows(M):
        # entries stay as given (Fractions, numpy scalars with their dtype): core.weights.parse_entry reads
        # each exactly, with the subnormal range of its own type, and names a too large one by its size
        if not isinstance(M, (list, tuple)) and not hasattr(M, "tolist"):
            raise InputError(f"the {name}: each of Q, K, V must be a matrix (rows of entries), got {shown(M)}.")
        if hasattr(M, "tolist") and getattr(M, "ndim", 2) != 2:
            raise InputError(
                f"the {name}: each of Q, K, V must be a matrix (rows of entries), got an array of "
                f"shape {tuple(M.shape)}."
            )
        M = [list(row) for row in M] if hasattr(M, "tolist") else M
        return [list(row) if isinstance(row, (list, tuple)) else row for row in M]

    if isinstance(point, dict):
        return point_from_dict(arch, point)
    if not isinstance(point, (list, tuple)):
        raise InputError(f"the {name} must be a weight point (per layer Q, K, V), got {type(point).__name__}.")
    layers = []
    for i, layer in enumerate(point, start=1):
        if isinstance(layer, MultiHead):  # a layer with several heads, as random_point and the readers hold it
            layers.append({"heads": [{k: rows(M) for k, M in zip("QKV", head)} for head in layer]})
            continue
        if not isinstance(layer, (list, tuple)) or len(layer) != 3:
            raise InputError(f"the {name}: layer {i} must be a triple (Q, K, V).")
        layers.append({k: rows(M) for k, M in zip("QKV", layer)})
    return point_from_dict(arch, {"layers": layers})
