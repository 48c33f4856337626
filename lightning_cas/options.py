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

from lightning_cas.core.architecture import Architecture, as_network
from lightning_cas.core.network import Network
from lightning_cas.core.checks import MAX_TIMEOUT_S, SEED_LIMIT, check_seed, check_timeout, derived_seed, integer_value  # noqa: F401
from lightning_cas.core.deadline import time_limit
from lightning_cas.core.primes import check_prime as check_modulus
from lightning_cas.core.primes import second_primes
from lightning_cas.core.weights import MultiHead, point_from_dict
from lightning_cas.errors import InputError
from lightning_cas.macaulay2.connection import Macaulay2
from lightning_cas.macaulay2.runner import M2Session

MAX_FAILURE_BOUND = 1e-3  # a prime whose Schwartz-Zippel bound is not below this is refused
MAX_PARALLEL_JOBS = 256

# the methods each verb accepts; "jacobian" is the old spelling of the singular locus' "whole-ideal"
DIMENSION_METHODS = ("auto", "modp", "jacobian", "implicit", "numeric")
FIBER_METHODS = ("auto", "m2", "modp")
SINGULAR_METHODS = ("strata", "whole-ideal")
METHOD_ALIASES = {"singular_locus": {"jacobian": "whole-ideal"}}
VERB_METHODS = {"dimension": DIMENSION_METHODS, "verify": DIMENSION_METHODS, "sweep": DIMENSION_METHODS,
                "fiber": FIBER_METHODS, "singular_locus": SINGULAR_METHODS}
DEFAULT_METHODS = {"dimension": "auto", "verify": "auto", "sweep": "auto", "fiber": "auto",
                   "singular_locus": "strata"}


def check_prime(p, name: str = "prime") -> int:
    """A prime 3 <= p < 2^31 (python-flint and Macaulay2 abort on a composite modulus); numpy ints too.

    The primality test is the modp backend's (no sympy at start-up); each method adds its own range.
    """
    value = integer_value(p)
    if value is None:
        raise InputError(f"the {name} must be an integer, got {p!r}.")
    return check_modulus(value)


def check_failure_bound(prime: int, degree: int, method: str) -> float:
    """Refuse a prime whose Schwartz-Zippel bound degree/p is not below MAX_FAILURE_BOUND.

    modp repeats with the prime just below the given one, so that smaller prime must pass too.
    """
    smallest = min(second_primes(prime, 2)) if method == "modp" else prime
    bound = degree / smallest
    if bound >= MAX_FAILURE_BOUND:
        need = math.ceil(degree / MAX_FAILURE_BOUND)
        used = f"{prime}" + (f" (and {smallest}, its repetition)" if smallest != prime else "")
        raise InputError(f"the prime {used} is too small for the {method} method on this architecture: the failure "
                         f"bound {degree}/{smallest} is not below {MAX_FAILURE_BOUND:g}; use a prime above {need}.")
    return bound


def prime_degree(arch, method: str) -> int:
    """The numerator of the Schwartz-Zippel bound a method states, with the largest rank it could find.

    modp draws weights and tokens at random and sketches rows; the Macaulay2 jacobian draws only
    the weights (D_w - 1 per rank). The rank is at most min(parameters, ambient dimension).
    """
    net = as_network(arch)
    rank = min(net.parameters, net.ambient_dimension or net.parameters)
    if method != "modp":
        return rank * (net.weight_degree - 1)
    # modp also draws the tokens (the token degree per rank) and sketches the rows (about 2 P + 16 of them)
    return rank * (net.weight_degree - 1 + net.degree) + 2 * net.parameters + 16


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
    return m2


def check_session(session):
    """None or an ``M2Session`` (one Macaulay2 process reused by every run of the verb)."""
    if session is None:
        return None
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


def check_architecture(arch, verb: str):
    """An Architecture (the paper's network, the old flags) or a Network of blocks."""
    if not isinstance(arch, (Architecture, Network)):
        raise InputError(f"{verb}() needs an Architecture or a Network first, got {type(arch).__name__}.")
    return arch


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

    def deadline(self):
        """A context manager bounding the whole call by ``timeout`` (see lightning_cas.core.deadline)."""
        return time_limit(self.timeout)


PRIME_METHODS = {"dimension": ("modp", "jacobian"), "verify": ("modp", "jacobian"), "fiber": ("m2", "auto")}


def resolve(verb: str, arch=None, *, seed=0, timeout=None, prime=None, method=None, m2=None, session=None,
            jobs=1) -> Options:
    """Validate every option of ``verb`` at once (the architecture too, when given)."""
    if arch is not None or verb not in ("sweep",):
        check_architecture(arch, verb)
    seed = check_seed(seed)
    timeout = check_timeout(timeout)
    method = check_method(method, verb)
    m2 = check_m2(m2)
    session = check_session(session)
    jobs = check_jobs(jobs)
    if prime is not None:
        prime = check_prime(prime)
        if verb not in PRIME_METHODS:
            raise InputError(f"{verb}() has no prime option.")
        concrete = method
        if method == "auto" and verb in ("dimension", "verify"):
            concrete = "modp" if arch.normalization == "none" else "numeric"
        if concrete not in PRIME_METHODS[verb]:
            raise InputError(f"a prime applies to the {' and '.join(PRIME_METHODS[verb])} methods only, "
                             f"not to {concrete}.")
        if verb in ("dimension", "verify"):
            check_failure_bound(prime, prime_degree(arch, concrete), concrete)
        # fibers over ZZ/p state no probability (the point is given, not random): the result says
        # "probabilistic" and that the components agree with QQ except for finitely many primes
    return Options(seed=seed, timeout=timeout, prime=prime, method=method,
                   macaulay2=connection(m2, session), jobs=jobs)



def check_point(arch, point, name: str = "point"):
    """A weight point as the verbs hold it (per layer (Q, K, V) of Fractions), from that form or the JSON form.

    Everything else (strings, floats, wrong shapes) is refused in one sentence before any work.
    """
    def entry(v):
        if isinstance(v, Fraction):
            return v.numerator if v.denominator == 1 else f"{v.numerator}/{v.denominator}"
        if type(v).__module__ == "numpy" and hasattr(v, "item"):
            return v.item()
        return v

    def rows(M):
        if not isinstance(M, (list, tuple)) and not hasattr(M, "tolist"):
            raise InputError(f"the {name}: each of Q, K, V must be a matrix (rows of entries), got {M!r}.")
        M = M.tolist() if hasattr(M, "tolist") else M
        return [[entry(v) for v in row] if isinstance(row, (list, tuple)) else row for row in M]

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
