"""Critical points of training: the squared loss of a data set on the function space of a small network.

The loss sum_n |f(X_n) - Y_n|^2 sees a function only through its values z = (f(X_n))_n, a linear image
of the function space; its critical points on the function space are those of |z - Y|^2 on the closure Z
of the values (the projection of the neurovariety by the data; Z is the neurovariety itself, up to a
linear isomorphism, when the data metric is non-degenerate). Two independent computations:

* **homotopy** (Macaulay2, ``trainingRecord`` in m2/LightningCAS/Decision.m2): on a coordinate slice of
  the weights of dimension r = dim Z (the weights whose columns of dz/dW at a random rational point are
  independent stay free, the others keep their random values: a gauge fixing that meets the generic
  fibers in finitely many points; a random affine slice lost every path), the critical equations
  dL/ds = 0 are square and solved by total-degree homotopy; solutions where dz/ds has rank r are the
  critical points of the smooth locus of Z, counted once per distinct z. Real ones (z real) get the
  second-order test: the Hessian of L(s) at a critical point is a bilinear form, carried to a real basis
  of the tangent space of Z(R);
* **local search** (Python, float64): Levenberg-Marquardt from random real weights. A loss it reaches that
  no critical point of the smooth locus has is reported: training on real weights can stop where the
  parametrization is critical (the edge of the real neuromanifold), which the homotopy does not list.

``at`` is not used: the slice and the searches start from points drawn from ``seed``.

Both computations run in float64 (the homotopy's end points, the searches), where the loss's terms
have sizes s^(2D) (s the largest input entry, D the network's degree in its input) and |Y|^2: data
whose values at unit weights s^D lie outside [1e-8, 1e8], or targets beyond 1e8, leave no digit of one
term beside the other (and far out over- or underflow), so they are refused before any work
(``check_scale``); a rescaled data set is the user's to choose.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np

from lightning_cas.core.arithmetic import Float64
from lightning_cas.core.forward import evaluate, jacobian
from lightning_cas.errors import InputError, M2ParseError, TooLargeError
from lightning_cas.geometry.decision.m2 import polynomial_network
from lightning_cas.macaulay2.network import check_parameters, package_params
from lightning_cas.macaulay2.parse import json_get, json_int, json_list, json_str
from lightning_cas.options import resolve
from lightning_cas.results.critical import TrainingPoint, TrainingResult
from lightning_cas.results.dimension import Source
from lightning_cas.system.matrices import exact_array

MAX_PATHS = 20000  # total-degree homotopy paths (2 D - 1)^r; beyond, a run takes more than minutes
MAX_SAMPLES = 64
VALUE_RANGE = (Fraction(1, 10**8), Fraction(10**8))  # s^D, the values' size at unit weights
MAX_TARGET = Fraction(10**8)
SEARCHES = 12
RANK_TOL = 1e-7
CRIT_TOL = 1e-8
REAL_TOL = 1e-7


def _complex(pair) -> complex:
    return complex(float(pair[0]), float(pair[1]))


def _carray(rows, script) -> np.ndarray:
    try:
        return np.array([[_complex(v) for v in row] for row in rows], dtype=complex)
    except (TypeError, ValueError, IndexError):
        raise M2ParseError(f"expected complex numbers from Macaulay2, got {str(rows)[:100]}", script) from None


def second_order(J: np.ndarray, H: np.ndarray) -> tuple[str, tuple[float, ...]]:
    """The kind of a real critical point from dz/ds (J, complex n x r) and the Hessian of L(s) (r x r): the
    form carried to a real orthonormal basis T of the tangent space (colspan J = T (x) C)."""
    r = J.shape[1]
    U, _, _ = np.linalg.svd(np.hstack([J.real, J.imag]), full_matrices=False)
    T = U[:, :r]
    C = T.T @ J  # J = T C
    Ci = np.linalg.inv(C)
    Hr = Ci.T @ H @ Ci
    Hr = (Hr + Hr.T) / 2
    eig = np.linalg.eigvalsh(Hr.real)
    scale = max(1.0, float(np.abs(eig).max(initial=0)))
    tol = 1e-7 * scale
    if np.all(eig > tol):
        kind = "local minimum"
    elif np.all(eig < -tol):
        kind = "local maximum"
    elif np.any(np.abs(eig) <= tol):
        kind = "degenerate"
    else:
        kind = "saddle"
    return kind, tuple(float(e) for e in eig)


def _size(q: Fraction) -> str:
    """|q| as a power of ten, for a message (exact for huge or tiny rationals, which floats cannot hold)."""
    q = abs(q)
    exponent = math.log10(q.numerator) - math.log10(q.denominator)
    e = math.floor(exponent)
    m = 10 ** (exponent - e)
    if round(m, 2) >= 10:
        m, e = m / 10, e + 1
    return f"{m:.3g}e{e}"


def check_scale(net, X: np.ndarray, Y: np.ndarray) -> None:
    """Refuse, before any work, data whose loss float64 cannot hold (module docstring): all-zero inputs of
    a network without biases (every value is 0, the loss the constant |Y|^2), values at unit weights
    s^D outside VALUE_RANGE, targets beyond MAX_TARGET."""
    s = max((abs(v) for v in X.flat), default=Fraction(0))
    if s == 0 and not net.biased:
        raise InputError(
            "every input is zero: the network's values are 0 for all weights, so the loss is the "
            "constant |Y|^2 and has no critical points to find."
        )
    d = net.degree
    low, high = VALUE_RANGE
    if s and not low <= s**d <= high:
        raise InputError(
            f"the inputs' largest entry is {_size(s)}, so the network's values (degree {d} in the "
            f"input) are of size {_size(s**d)} at unit weights; this command takes sizes from "
            f"{_size(low)} to {_size(high)} (the homotopy and the local searches run in float64, "
            "where the loss's terms of size s^(2D) and |Y|^2 must share 16 digits): rescale the "
            "inputs."
        )
    t = max((abs(v) for v in Y.flat), default=Fraction(0))
    if t > MAX_TARGET:
        raise InputError(
            f"the targets' largest entry is {_size(t)}; this command takes targets up to "
            f"{_size(MAX_TARGET)} (the loss |f(X) - Y|^2 is computed in float64): rescale the targets."
        )


def _solve(A: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """A step of the normal equations, or None where float64 finds them singular (the search then damps)."""
    try:
        step = np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        return None
    return step if np.all(np.isfinite(step)) else None


def local_searches(net, X: np.ndarray, Y: np.ndarray, seed: int, runs: int = SEARCHES) -> list[dict]:
    """Levenberg-Marquardt runs from random real weights: per run the loss, the values, the gradient norm
    and whether dz/dW has the rank of the function space there (then a converged run is a critical point
    of the smooth locus, and a local minimum of it)."""
    ar = Float64()
    rng = np.random.default_rng(seed)
    target = Y.reshape(-1)
    out = []
    for _ in range(runs):
        w = rng.standard_normal(net.parameters)
        mu = 1e-2
        loss = float(np.sum((evaluate(net, ar, w, X).reshape(-1) - target) ** 2))
        for _ in range(3000):
            res = evaluate(net, ar, w, X).reshape(-1) - target
            J = jacobian(net, ar, w, X)
            g = J.T @ res
            step = _solve(J.T @ J + mu * np.eye(net.parameters), -g)
            w2 = w if step is None else w + step
            loss2 = math.inf if step is None else float(np.sum((evaluate(net, ar, w2, X).reshape(-1) - target) ** 2))
            if loss2 < loss:
                w, loss, mu = w2, loss2, max(mu / 3, 1e-12)
            else:
                mu *= 4
            if np.linalg.norm(g) < 1e-12 or mu > 1e12:
                break
        z = evaluate(net, ar, w, X).reshape(-1)
        J = jacobian(net, ar, w, X)
        sv = np.linalg.svd(J, compute_uv=False)
        out.append(
            {"loss": loss, "values": z, "gradient": float(np.linalg.norm(J.T @ (z - target))), "singular_values": sv}
        )
    return out


def read_training(arch, inputs, targets, layout: str | None = None) -> tuple:
    """The data, read and checked once before any work: (X, Y, their sources), X and Y exact arrays;
    passed on as ``data`` so the command line refuses before its progress line. ``layout``
    "tokens-features" reads the inputs as PyTorch's (N, t, d_0); otherwise they are (N, d_0, t)."""
    net = polynomial_network(arch, "training_critical_points")
    if layout == "tokens-features":
        X, x_source = exact_array(inputs, (None, net.tokens, net.input), "inputs", key="inputs")
        X = X.transpose(0, 2, 1)
    else:
        X, x_source = exact_array(inputs, (None, net.input, net.tokens), "inputs", key="inputs")
    Y, y_source = exact_array(targets, (None, net.output, net.tokens), "targets", key="targets")
    if X.shape[0] != Y.shape[0]:
        raise InputError(f"the inputs hold {X.shape[0]} sample(s), the targets {Y.shape[0]}: one target per input.")
    if X.shape[0] > MAX_SAMPLES:
        raise TooLargeError(
            f"{X.shape[0]} samples: this command takes at most {MAX_SAMPLES} (the loss is built symbolically)."
        )
    check_scale(net, X, Y)
    return X, Y, x_source, y_source


def training_critical_points(
    arch, *, inputs=None, targets=None, at=None, seed=0, timeout=None, m2=None, session=None, data: tuple | None = None
) -> TrainingResult:
    """The real critical points of the squared loss on the function space, their losses and kinds
    (``data``: what read_training returned, instead of ``inputs`` and ``targets``)."""
    net = polynomial_network(arch, "training_critical_points")
    opts = resolve("training_critical_points", arch, seed=seed, timeout=timeout, m2=m2, session=session)
    X, Y, x_source, y_source = data if data is not None else read_training(arch, inputs, targets)
    bound = min(net.parameters, X.shape[0] * net.output * net.tokens, net.ambient_dimension)
    paths = (2 * net.weight_degree - 1) ** bound
    with opts.deadline():
        start = time.perf_counter()
        script, rec = opts.macaulay2.run(
            "training_critical",
            {
                **package_params(net),
                "inputs": [[list(r) for r in x] for x in X],
                "targets": [[list(r) for r in y] for y in Y],
                "maxPaths": MAX_PATHS,
                "seed": opts.seed,
            },
        )
        check_parameters(net, rec, script)
        if json_int(rec, "rank", script) == 0:  # what check_scale cannot see from the inputs alone
            raise InputError(
                "the network's values on these inputs are the same for all weights (dz/dW has rank "
                "0), so the loss is constant and has no critical points to find."
            )
        if json_get(rec, "too_large", script):
            raise TooLargeError(
                f"the critical equations on the gauge slice have {json_int(rec, 'paths', script)} "
                f"homotopy paths (dimension {json_int(rec, 'rank', script)}, weight degree "
                f"{net.weight_degree}); this command stops at {MAX_PATHS}."
            )
        Xf, Yf = X.astype(float), Y.astype(float)
        searched = local_searches(net, Xf, Yf, opts.seed)
        return _result(arch, net, rec, script, start, opts.seed, X, Y, x_source, y_source, searched, paths)


def _result(arch, net, rec, script, start, seed, X, Y, x_source, y_source, searched, bound) -> TrainingResult:
    r = json_int(rec, "rank", script)
    target = Y.astype(float).reshape(-1)
    seen: list[np.ndarray] = []
    real_points, spurious, inaccurate = [], 0, 0
    for p in json_list(rec, "points", script):
        z = np.array([_complex(v) for v in p["values"]])
        J, H = _carray(p["jacobian"], script).T, _carray(p["hessian"], script)  # Macaulay2's jacobian is r x n
        sv = np.linalg.svd(J, compute_uv=False)
        if r and sv[-1] <= RANK_TOL * max(1.0, sv[0]):
            spurious += 1  # a critical point of the slice parametrization, not of the loss on Z
            continue
        if np.linalg.norm(J.T @ (z - target)) > CRIT_TOL * np.linalg.norm(J) * (1 + np.linalg.norm(z - target)):
            inaccurate += 1  # not a critical point to working precision (an ill-conditioned end point)
            continue
        if any(np.linalg.norm(z - q) <= 1e-6 * (1 + np.linalg.norm(z)) for q in seen):
            continue
        seen.append(z)
        if np.abs(z.imag).max(initial=0) > REAL_TOL * (1 + np.abs(z).max(initial=0)):
            continue
        kind, eig = second_order(J, H)
        w = np.array([_complex(v) for v in p["weights"]])
        real_points.append(
            (
                float(np.sum((z.real - target) ** 2)),
                z.real,
                kind,
                eig,
                tuple(float(v) for v in w.real) if np.abs(w.imag).max(initial=0) < 1e-9 else (),
                ("homotopy",),
            )
        )
    dim = json_int(rec, "dimension", script)
    # converged local searches where dz/dW has full rank: critical points of the smooth locus (local minima)
    found = []
    for run in searched:
        sv = run["singular_values"]
        if run["gradient"] <= 1e-7 * (1 + run["loss"]) and len(sv) >= r and sv[r - 1] > 1e-6 * sv[0]:
            found.append(run)
    extra = 0
    for run in found:
        hit = [q for q in real_points if abs(q[0] - run["loss"]) <= 1e-6 * (1 + run["loss"])]
        if not hit and not any(
            abs(q[0] - run["loss"]) <= 1e-6 * (1 + run["loss"]) for q in real_points if q[5] == ("local search",)
        ):
            real_points.append((run["loss"], run["values"], "local minimum", (), (), ("local search",)))
            extra += 1
    real_points = [q if len(q) == 6 else q + (("homotopy",),) for q in real_points]
    real_points.sort(key=lambda q: q[0])
    points = []
    for loss, z, kind, eig, w, by in real_points:
        hit = by == ("homotopy",) and any(abs(s["loss"] - loss) <= 1e-6 * (1 + loss) for s in found)
        points.append(
            TrainingPoint(
                loss=loss,
                values=tuple(float(v) for v in z),
                kind=kind,
                hessian_eigenvalues=eig,
                weights=w,
                found_by=by + (("local search",) if hit else ()),
            )
        )
    notes = [f"{spurious} slice solution(s) where the parametrization drops rank were set aside"] if spurious else []
    if inaccurate:
        notes.append(f"{inaccurate} homotopy end point(s) that are not critical to working precision were set aside")
    if extra:
        notes.append(
            f"the homotopy MISSED {extra} real critical point(s) that converged local searches found (listed "
            "as found by local search; the homotopy count is a lower bound)"
        )
    best = min(s["loss"] for s in searched) if searched else None
    unconverged = len(searched) - len(found)
    if unconverged:
        notes.append(
            f"{unconverged} local search(es) stopped where dz/dW drops rank or did not converge (training "
            "on real weights can stop where the parametrization is critical)"
        )
    if r < dim:
        notes.append(
            f"the data metric is degenerate (rank {r} < {dim}): these are the critical points of the "
            "projection of the function space by the data, and each has a positive-dimensional fiber of "
            "functions with the same values"
        )
    return TrainingResult(
        architecture=arch,
        samples=int(X.shape[0]),
        inputs=Source(source=x_source, sha256=None, count=int(X.shape[0])),
        targets=Source(source=y_source, sha256=None, count=int(Y.shape[0])),
        function_dimension=dim,
        evaluation_rank=r,
        complex_critical_points=len(seen),
        critical_points=tuple(points),
        minimum_loss=points[0].loss if points else None,
        local_search_minimum=best,
        local_searches=len(searched),
        method="m2-homotopy+local-search",
        method_detail=(
            "critical equations on a random rational gauge slice of the weights, total-degree homotopy "
            f"(Macaulay2 solveSystem, {json_int(rec, 'paths', script)} paths); second-order test on the "
            f"tangent space; {len(searched)} Levenberg-Marquardt searches from random real weights"
        ),
        certainty="numeric",
        certainty_detail="homotopy solutions and float64 searches; the count is a lower bound",
        seed=seed,
        elapsed_s=time.perf_counter() - start,
        m2_version=json_str(rec, "m2_version", script),
        script=script,
        notes=tuple(notes),
    )
