"""Decision boundaries of polynomial networks: their ED degree and the robustness radius of an input.

A network f_W with a readout w (d_L x t) classifies X by the sign of g(X) = sum_ij w_ij f_W(X)_ij; the
decision boundary B = {g = 0} is a hypersurface of degree deg f in the d_0 t input coordinates. Its
ED degree (the Euclidean form of those coordinates) is the number of complex critical points of
|X - u|^2 on the smooth locus of B for generic u, computed twice in Macaulay2 (``boundaryEDRecord`` in
m2/LightningCAS/Decision.m2): the degree of the saturated Lagrange ideal mod a prime at a random u, and
the distinct regular solutions of the square Lagrange system by total-degree homotopy. At an input X0
the distance to B(R) (the robustness radius) is attained at a real critical point of the smooth locus
or on the singular locus: the first are alpha-certified in exact arithmetic and checked against the
exact eliminant of the squared distance (sign changes, in Python, with Fractions); the singular
locus is split over QQ and its linear components give their nearest points exactly. ``method="msolve"``
(geometry.decision.msolve) computes the same count and a certified radius interval without Macaulay2.
"""

from __future__ import annotations

import dataclasses
import time
from fractions import Fraction

import numpy as np

from lightning_cas.core.checks import count_value, derived_seed
from lightning_cas.core.network import Network
from lightning_cas.core.primes import faithful_primes
from lightning_cas.core.theory import generic_ed_degree  # callers import it here too (its home before)
from lightning_cas.core.weights import flat, random_point
from lightning_cas.errors import InputError, M2ParseError, TooLargeError
from lightning_cas.geometry.decision.m2_radius import radius_record, scaled_record, text
from lightning_cas.geometry.guards import boundary_size
from lightning_cas.geometry.planner import plan, run
from lightning_cas.macaulay2.network import check_parameters, package_params
from lightning_cas.macaulay2.parse import json_get, json_int, json_list, json_str
from lightning_cas.options import resolve
from lightning_cas.results.critical import DecisionBoundaryResult
from lightning_cas.results.dimension import Source
from lightning_cas.system.matrices import exact_array
from lightning_cas.system.points import as_point, load_weights

PRIME = 32003  # the exact count's first characteristic; faithful_primes moves below it when the data needs
# total-degree homotopy: e^(n+1) paths; beyond this a run takes more than minutes (bench_decision)


def polynomial_network(arch, verb: str) -> Network:
    """The network of ``arch`` when it is polynomial; softmax (not algebraic) refused in one line."""
    if not isinstance(arch, Network):
        raise InputError(
            f"{verb}() needs a Network (Architecture(...) or Network(...)) first, got {type(arch).__name__}."
        )
    net = arch
    if not net.polynomial:
        raise InputError(
            f"{verb}: a network with {net.not_polynomial} is not polynomial, so its decision boundaries "
            "and critical points are not algebraic; use a polynomial (lightning) network."
        )
    return net


def weight_values(arch, at, seed: int) -> tuple[list[Fraction], Source]:
    """The weights as exact rationals: a file (read as ``--at`` is), a point value, or drawn from ``seed``."""
    net = arch
    if at is None:
        if arch.paper is not None:
            values = flat(random_point(arch, seed))
        else:
            rng = np.random.default_rng(seed)
            mags, signs = rng.integers(1, 10, net.parameters), rng.choice([-1, 1], net.parameters)
            values = [Fraction(int(m * s)) for m, s in zip(mags, signs)]
        return values, Source(
            source=None, sha256=None, count=len(values), drawn=f"random integers in +-[1, 9], seed {seed}"
        )
    point = load_weights(arch, at) if isinstance(at, str) or hasattr(at, "__fspath__") else as_point(arch, at)
    return list(point.values), Source(source=point.source, sha256=point.sha256, count=len(point.values))


def readout_values(net: Network, readout, seed: int) -> tuple[np.ndarray, str | None]:
    if readout is None:
        rng = np.random.default_rng(derived_seed(seed, 7))
        w = rng.integers(1, 10, (net.output, net.tokens)) * rng.choice([-1, 1], (net.output, net.tokens))
        return np.array([[Fraction(int(v)) for v in row] for row in w], dtype=object), None
    return exact_array(readout, (net.output, net.tokens), "readout")


POINT_RANGE = (Fraction(1, 100), Fraction(100))  # max |X0| a boundary that is not a cone is searched from
UNSCALED = (Fraction(1, 16), Fraction(16))  # max |X0| a cone's radius is computed at as it is


def point_scale(net: Network, x0: np.ndarray) -> Fraction:
    """The power of two c the radius is computed at X0 / c with. The homotopy, the alpha test (X0 rounded
    to 2^-50) and the tolerances are absolute, so far from |X0| ~ 1 they lose critical points or find
    wrong radii (1e4 gave twice the radius). When g is homogeneous B is a cone, cB = B, and everything at
    X0 is c times that at X0 / c: outside UNSCALED, 1 <= max |X0 / c| < 2, exactly. A boundary that is
    not a cone (biases, residual sums) has no such symmetry: X0 outside POINT_RANGE is refused in one line."""
    s = max((abs(v) for v in x0.flat), default=Fraction(0))
    if s == 0 or UNSCALED[0] <= s <= UNSCALED[1]:
        return Fraction(1)
    if len(net.token_degrees) == 1 and not net.biased:
        k = s.numerator.bit_length() - s.denominator.bit_length()
        c = Fraction(2) ** k
        return c if 1 <= s / c < 2 else c / 2
    low, high = POINT_RANGE
    if not low <= s <= high:
        raise InputError(
            f"the point's largest entry is {float(s):.3g}: its decision boundary is not a cone (the "
            "network has biases or sums of degrees), so the radius cannot be computed at a rescaled "
            f"point, and this command searches from points with entries up to {float(high):g} and "
            f"largest entry at least {float(low):g} (the homotopy's tolerances are absolute)."
        )
    return Fraction(1)


def boundary_ed(
    arch,
    *,
    at=None,
    readout=None,
    point=None,
    seed=0,
    timeout=None,
    m2=None,
    session=None,
    numerical_runs: int = 1,
    method: str = "auto",
    msolve=None,
):
    """The ED degree of the decision boundary by two methods and, with ``point``, every real critical point of
    the distance from it and the robustness radius. ``at``, ``readout``, ``point``: a file path or a value;
    None draws the weights and the readout from ``seed``. ``method="msolve"``: the count mod two primes and
    the real critical points in isolating boxes over QQ, the radius a certified interval (an
    ExactBoundaryResult; ``msolve`` the binary), with no Macaulay2 and no size guard but the deadline;
    ``"m2"``: Macaulay2's two counts and alpha-certified points (a DecisionBoundaryResult); ``"auto"``
    (geometry.planner): msolve where its binary is found and g's bottleneck within its guard, else m2;
    ``"monodromy"`` (named only): every critical point of a power-sum boundary certified
    (geometry.decision.certified)."""
    net = polynomial_network(arch, "boundary_ed")
    if method == "monodromy":  # the certified route for power sums is asked by name, outside the planner
        from lightning_cas.geometry.decision.certified import check_shape

        check_shape(net)
    else:
        plan("boundary", net, method, msolve)  # a wrong name, a missing binary, a size refusal: before any work
    opts = resolve("boundary_ed", arch, seed=seed, timeout=timeout, m2=m2, session=session)
    numerical_runs = count_value(numerical_runs, "numerical_runs", 1, 10)
    values, source = weight_values(arch, at, opts.seed)
    w, w_source = readout_values(net, readout, opts.seed)
    x0, x0_source = (None, None) if point is None else exact_array(point, (net.input, net.tokens), "point")
    if method == "monodromy":  # named only: never auto's choice (15 min for the cubic [16, 12, 2])
        from lightning_cas.geometry.decision.certified import certified_boundary

        return certified_boundary(arch, net, values, source, w, w_source, x0, x0_source, opts.seed, opts.timeout, m2)
    common = (arch, net, values, source, w, w_source, x0, x0_source)
    start = time.perf_counter()

    def attempt(route: str):
        # each route under the time left: not one enclosing limit, under which msolve's count running out would
        # end the run instead of printing the radius enclosed before it
        left = None if opts.timeout is None else max(opts.timeout - (time.perf_counter() - start), 1e-3)
        unbounded = method == "auto" and opts.timeout is None
        return _boundary(route, *common, dataclasses.replace(opts, timeout=left), numerical_runs, msolve, unbounded)

    return run("boundary", net, method, attempt, msolve)


# auto's msolve route without a time limit: at most this many critical points by the generic bound of B in its
# bottleneck coordinates. Measured on [n, n, 2] cubics (a translated Fermat cubic: the bound is the count):
# 765 in 5 s, 1533 in 29 s, 3069 past 80 s. Beyond, a count that may not end is not started unasked:
# --timeout keeps msolve (its best certified statement in the time), else Macaulay2's route
AUTO_MSOLVE_POINTS = 2000


def _boundary(method, arch, net, values, source, w, w_source, x0, x0_source, opts, numerical_runs, msolve, unbounded):
    if method == "msolve":
        from lightning_cas.geometry.decision.msolve import msolve_boundary

        if unbounded:
            from lightning_cas.geometry.decision.system import boundary_system

            bs = boundary_system(net, values, w)
            bound = generic_ed_degree(bs.reduced_degree, bs.r, bs.homogeneous)
            if bound > AUTO_MSOLVE_POINTS:
                raise TooLargeError(
                    f"B has up to {bound} critical points (degree {bs.reduced_degree} in {bs.r} coordinates; auto "
                    f"starts msolve unasked up to {AUTO_MSOLVE_POINTS}); give --timeout or --method msolve"
                )

        return msolve_boundary(arch, net, values, source, w, w_source, x0, x0_source, opts.seed, opts.timeout, msolve)
    boundary_size(net)
    scale = Fraction(1) if x0 is None else point_scale(net, x0)
    data = values + [v for row in w for v in row] + ([] if x0 is None else [v for row in x0 for v in row])
    with opts.deadline():
        start = time.perf_counter()
        prime = _prime(opts, net, values, w, data)
        script, rec = opts.macaulay2.run(
            "boundary_ed",
            {
                **package_params(net),
                "weights": values,
                "readout": [list(r) for r in w],
                "center": [] if x0 is None else [v / scale for row in x0 for v in row],
                "modulus": prime,
                "numericalRuns": numerical_runs,
                "seed": opts.seed,
            },
        )
        check_parameters(net, rec, script)
        _refuse_no_boundary(rec, script)
        return _result(arch, net, rec, script, start, opts.seed, source, w, w_source, x0, x0_source, scale)


def _refuse_no_boundary(rec: dict, script: str) -> None:
    if json_get(rec, "zero", script):
        raise InputError(
            "the readout and the weights make <w, f_W(X)> the zero polynomial: there is no decision "
            "boundary (every input is on it)."
        )
    if rec.get("constant"):
        raise InputError(
            "the readout and the weights make <w, f_W(X)> a nonzero constant: there is no decision "
            "boundary (every input is classified the same)."
        )


def _prime(opts, net: Network, values, w, data) -> int:
    """The exact count's prime, chosen after g is known: mod p it reduces the squarefree part of g, whose
    coefficients are sums of products of the data, so a prime dividing a data entry, a denominator or one
    of those coefficients would count another polynomial's critical points (or find no residue)."""
    script, rec = opts.macaulay2.run(
        "boundary_polynomial", {**package_params(net), "weights": values, "readout": [list(r) for r in w]}
    )
    check_parameters(net, rec, script)
    _refuse_no_boundary(rec, script)
    try:
        coefficients = [Fraction(c) for c in json_list(rec, "coefficients", script)]
    except (TypeError, ValueError):
        raise M2ParseError("expected rational coefficients from Macaulay2", script) from None
    return faithful_primes(data + coefficients, PRIME, 1, "the weights, readout, point and g's coefficients")[0]


def _result(
    arch, net, rec, script, start, seed, source, w, w_source, x0, x0_source, scale: Fraction = Fraction(1)
) -> DecisionBoundaryResult:
    n = json_int(rec, "variables", script)
    if n != net.input * net.tokens:
        raise M2ParseError(f"Macaulay2 reports {n} input coordinates, expected {net.input * net.tokens}", script)
    exact = json_int(rec, "ed_degree_exact", script)
    numeric = tuple(int(c) for c in json_list(rec, "ed_degree_numeric", script))
    reduced = json_int(rec, "reduced_degree", script)
    notes = []
    prime = json_int(rec, "prime", script)
    agreed = exact if all(c == exact for c in numeric) else None
    if prime != PRIME:
        notes.append(
            f"{PRIME} divides an entry or a denominator of the weights, the readout or the point, or a "
            f"coefficient of g, so the exact count runs mod {prime}"
        )
    if agreed is None:
        notes.append(
            f"the methods DISAGREE: exact mod {prime} {exact}, homotopy {list(numeric)} (a homotopy count "
            "is a lower bound; an exact count mod p at a random point can only drop)"
        )
    if not json_get(rec, "squarefree", script):
        notes.append("<w, f_W(X)> is not squarefree: B is taken reduced (its squarefree part)")
    extra = radius_record(rec, x0, script) if x0 is not None else {}
    if scale != 1 and not extra.get("on_boundary"):
        extra = scaled_record(extra, scale, reduced)
    notes += extra.pop("notes", [])
    return DecisionBoundaryResult(
        architecture=arch,
        weights=source,
        readout=tuple(tuple(text(v) for v in row) for row in w),
        polynomial=json_str(rec, "polynomial", script),
        variables=n,
        degree=json_int(rec, "degree", script),
        reduced_degree=reduced,
        factors=json_int(rec, "factors", script),
        ed_degree=agreed,
        ed_degree_exact=exact,
        prime=prime,
        ed_degree_numeric=numeric,
        homogeneous=bool(json_get(rec, "homogeneous", script)),
        generic_ed_degree=generic_ed_degree(reduced, n, bool(json_get(rec, "homogeneous", script))),
        point=None if x0 is None else tuple(text(v) for row in x0 for v in row),
        point_source=x0_source,
        readout_source=w_source,
        **extra,
        method="m2-modp+homotopy" + ("+alpha" if x0 is not None else ""),
        method_detail=(
            "the saturated Lagrange ideal mod a prime at a random point (its degree), and the square "
            "Lagrange system by total-degree homotopy (distinct regular solutions)"
            + (
                "; at X0: homotopy solutions alpha-certified in exact arithmetic, the exact distance "
                "eliminant, the singular locus by components over QQ"
                if x0 is not None
                else ""
            )
        ),
        certainty="numeric" if x0 is not None else "probabilistic",
        certainty_detail=(
            "the ED degree is probabilistic (exact mod a prime at a random point, confirmed by the "
            "homotopy count)"
            + ("; critical points and radius are numeric, certified ones flagged" if x0 is not None else "")
        ),
        seed=seed,
        elapsed_s=time.perf_counter() - start,
        m2_version=json_str(rec, "m2_version", script),
        script=script,
        notes=tuple(notes),
    )
