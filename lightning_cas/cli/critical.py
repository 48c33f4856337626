"""CLI commands `degree` and `ed`: how complex the function space is, and how many critical points the
squared loss has on it (registered in lightning_cas.cli). `ed` also reaches the decision boundary's ED
degree (--boundary) and the critical points of training on given data (--inputs with --targets)."""

from __future__ import annotations

import click

from lightning_cas.cli.common import clean_errors, echo, parse_architecture
from lightning_cas.cli.options import (
    LAYOUT_OPTION,
    M2_OPTION,
    MSOLVE_OPTION,
    QUIET_OPTION,
    SEED_OPTION,
    TIMEOUT_OPTION,
    Number,
    apply_options,
    network_options,
)
from lightning_cas.core.methods import DEGREE_METHODS, ED_METHODS, ED_METRICS
from lightning_cas.core.paper import NORMALIZATIONS
from lightning_cas.errors import InputError
from lightning_cas.results.display import printable

OUTPUTS = ("text", "json", "m2")


def _common(fn):
    options = [
        click.option("--widths", default=None, help="Widths d_0,...,d_L, e.g. 2,1."),
        click.option("--attention", default=None, help="Attention dims a_1,...,a_L, e.g. 1."),
        click.option("--tokens", default=None, help="Number of tokens t (default 2; a network file's own)."),
        click.option(
            "--normalization",
            default=None,
            type=click.Choice(NORMALIZATIONS),
            help="none (lightning, default); softmax is refused (not algebraic).",
        ),
        click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout (= --format json)."),
        click.option(
            "--format",
            "output_format",
            type=click.Choice(OUTPUTS),
            default="text",
            show_default=True,
            help="text; json; m2: Macaulay2 code that recomputes the number.",
        ),
        SEED_OPTION,
        TIMEOUT_OPTION,
        M2_OPTION,
        QUIET_OPTION,
    ]
    return network_options(apply_options(fn, options))


def _output(as_json: bool, output_format: str) -> str:
    if as_json and output_format not in ("text", "json"):
        raise InputError(f"--json is --format json; give --json or --format {output_format}, not both.")
    return "json" if as_json else output_format


def _run(message: str, fn, timeout, command: str = "degree", quiet: bool = False, engine: str = "Macaulay2"):
    """``fn()`` under the one progress display (cli.progress); without a terminal, one line says what runs."""
    from lightning_cas.cli.progress import progress_display

    with progress_display(f"{command} ({engine})", quiet=quiet, task=message, limit=timeout, announce=True):
        return fn()


def _emit(res, output: str) -> None:
    if output == "json":
        echo(res.to_json())
        return
    if output == "m2":
        from lightning_cas.geometry.degree.m2 import m2_text

        echo(m2_text(res), nl=False)
        return
    # the architecture, the result's own lines (text() never repeats the architecture or the notes), the
    # notes: each once; echo escapes control characters but keeps the newlines between the lines
    echo(printable(str(res.architecture)))
    text = getattr(res, "text", None)
    if callable(text):
        echo(text())
    else:  # a result of another verb without a text form: its own fields, one a line
        for key, value in res.to_dict().items():
            if key not in ("kind", "architecture", "script", "notes"):
                echo(printable(f"{key}: {value}"))
    for note in getattr(res, "notes", ()):
        echo(printable(f"note: {note}"))


@click.command("degree")
@_common
@click.option(
    "--method",
    default="auto",
    show_default=True,
    type=click.Choice(DEGREE_METHODS),
    help="implicit: the ideal's degree (exact); numerical: a pseudo-witness set and the trace test; "
    "msolve: the points of a generic linear section on a gauge slice, mod two primes (beyond the implicit "
    "guard); auto: implicit where elimination finishes, msolve beyond, numerical beyond both.",
)
@MSOLVE_OPTION
@clean_errors
def degree_command(
    network, widths, attention, tokens, normalization, as_json, output_format, seed, timeout, m2, quiet, method, msolve
):
    """Degree of the neurovariety (its projectivization's), in coordinates of the coefficient span."""
    from lightning_cas.geometry.degree.m2 import degree, plan_degree

    output = _output(as_json, output_format)
    _check_msolve(msolve, method)
    arch = parse_architecture(widths, attention, tokens, normalization, network)
    method, engine = _route(plan_degree(arch, method, msolve), output)  # refusals before the progress line
    res = _run(
        f"running {engine} (degree, {method})",
        lambda: degree(arch, method=method, seed=seed, timeout=timeout, m2=m2, msolve=msolve),
        timeout,
        "degree",
        quiet or output != "text",
        engine,
    )
    _emit(res, output)


def _check_msolve(msolve, method: str) -> None:
    if msolve is not None and method not in ("auto", "msolve"):
        raise InputError(f"--msolve names the binary of the msolve route; --method {method} does not run it.")


def _route(plan, output: str) -> tuple[str, str]:
    """The method and engine of the progress line: auto's first route, or for --format m2, which writes
    Macaulay2 code, the first Macaulay2 one."""
    if output != "m2":
        return plan.method, plan.first.engine
    route = next((r for r in plan.routes if r.engine == "Macaulay2"), None)
    if route is None:
        raise InputError(
            "--format m2 writes Macaulay2 code, and the msolve count is not a Macaulay2 computation; use "
            "--format json or a Macaulay2 --method."
        )
    return route.method, route.engine


def _check_ed(metric, inputs, targets, boundary, readout, point, at, method, output, layout=None) -> str:
    """The option combinations of `ed`, refused in one line each; the metric that applies."""
    if layout is not None and inputs is None:
        raise InputError("--layout says how --inputs is laid out; it goes with --inputs.")
    if targets is not None and inputs is None:
        raise InputError("--targets needs --inputs (the data the targets belong to).")
    if boundary and (targets is not None or inputs is not None or metric is not None):
        raise InputError(
            "--boundary computes the ED degree of the decision boundary in the input coordinates; it "
            "takes no --metric, --inputs or --targets."
        )
    if not boundary and (readout is not None or point is not None):
        raise InputError(f"--{'readout' if readout is not None else 'point'} goes with --boundary.")
    if at is not None and not boundary:
        raise InputError(
            "--at goes with --boundary ("
            + (
                "--targets starts its gauge slice and local searches from weights drawn from --seed"
                if targets is not None
                else "the ED degree of the variety needs no weights"
            )
            + ")."
        )
    if boundary and method not in ("auto", "msolve", "lagrange", "monodromy"):
        raise InputError(
            "--boundary runs msolve (--method msolve) or Macaulay2's Lagrange ideal and homotopy (--method "
            "lagrange), the surer that fits by default (auto), or certified monodromy (--method monodromy), not "
            f"--method {method}."
        )
    if ((boundary or targets is not None) and output == "m2") or (targets is not None and method != "auto"):
        raise InputError(
            "--method and --format m2 apply to the ED degree of the neurovariety, not to --boundary or --targets."
        )
    if targets is not None:
        if metric not in (None, "data"):
            raise InputError("--targets trains on the data: its metric is the data's, not --metric " + metric + ".")
        return "data"
    if inputs is not None:
        if metric not in (None, "data"):
            raise InputError(f"--inputs gives the data metric; --metric {metric} takes no inputs.")
        return "data"
    if metric == "data":
        raise InputError("--metric data needs --inputs (token matrices, shape (N, d_0, t)).")
    return metric or "generic"


@click.command("ed")
@_common
@click.option(
    "--metric",
    default=None,
    type=click.Choice(ED_METRICS),
    help="generic (default): a generic quadratic form, an invariant; standard: the Euclidean form in the "
    "coordinates y_i; data: sum_n |f(X_n)|^2 of --inputs.",
)
@click.option(
    "--inputs",
    default=None,
    metavar="PATH",
    help="Token matrices (N, d_0, t), or integer token ids (N, t) as one-hot vectors: .npy, .npz or JSON.",
)
@LAYOUT_OPTION
@click.option(
    "--method",
    default="auto",
    show_default=True,
    type=click.Choice(ED_METHODS),
    help="lagrange: the critical ideal mod p; monodromy: a gauge-fixed parametrization (a lower bound); "
    "msolve: the critical ideal of a gauge slice saturated by its degenerate points, mod two primes "
    "(every metric; beyond the lagrange guard; with --boundary: the Lagrange system mod two primes and the "
    "certified radius over QQ); auto: msolve where it is found and fits, lagrange within its size guard, "
    "monodromy beyond (with --boundary: msolve, else Macaulay2); the result's note says which answered and why. "
    "With --boundary, monodromy: every critical point of a power-sum boundary certified (Krawczyk), the radius a "
    "point value.",
)
@click.option(
    "--repeats",
    default=10,
    show_default=True,
    type=Number(low=1, high=1000),
    help="Monodromy: stop after this many loops without a new solution.",
)
@click.option("--boundary", is_flag=True, help="The ED degree of the decision boundary {X : <w, f(X)> = 0}.")
@click.option("--readout", default=None, metavar="PATH", help="With --boundary: the readout w (d_L x t array).")
@click.option(
    "--point",
    default=None,
    metavar="PATH",
    help="With --boundary: an input X0 (d_0 x t): its real critical points on the boundary and its robustness radius.",
)
@click.option(
    "--at", "at", default=None, metavar="PATH", help="With --boundary: the weights (default: random, from --seed)."
)
@click.option(
    "--targets",
    default=None,
    metavar="PATH",
    help="With --inputs: targets; the real critical points of the squared loss on the function space.",
)
@MSOLVE_OPTION
@clean_errors
def ed_command(
    network,
    widths,
    attention,
    tokens,
    normalization,
    as_json,
    output_format,
    seed,
    timeout,
    m2,
    quiet,
    metric,
    inputs,
    method,
    repeats,
    boundary,
    readout,
    point,
    at,
    targets,
    layout,
    msolve,
):
    """ED degree of the neurovariety: critical points of the squared distance (training's squared loss)."""
    output = _output(as_json, output_format)
    metric = _check_ed(metric, inputs, targets, boundary, readout, point, at, method, output, layout)
    arch = parse_architecture(widths, attention, tokens, normalization, network)
    from lightning_cas.geometry.degree.m2 import refuse_softmax

    refuse_softmax(arch, "ed")  # before any work, the decision helpers' too
    _check_msolve(msolve, method)
    if boundary:
        from lightning_cas.geometry.decision.m2 import boundary_ed
        from lightning_cas.geometry.planner import plan

        method = "m2" if method == "lagrange" else method
        if method == "monodromy":  # asked by name, outside the planner: its refusal before the progress line
            from lightning_cas.geometry.decision.certified import check_shape
            from lightning_cas.geometry.decision.m2 import polynomial_network

            check_shape(polynomial_network(arch, "ed"))
            engine = "Macaulay2"
        else:
            engine = plan("boundary", arch, method, msolve).first.engine  # refusals before the progress line
        res = _run(
            f"running {engine} (decision boundary ED degree)",
            lambda: boundary_ed(
                arch,
                at=at,
                readout=readout,
                point=point,
                seed=seed,
                timeout=timeout,
                m2=m2,
                method=method,
                msolve=msolve,
            ),
            timeout,
            "ed",
            quiet or output != "text",
            engine,
        )
    elif targets is not None:
        from lightning_cas.geometry.training.critical import read_training, training_critical_points

        data = read_training(arch, inputs, targets, layout)  # read and checked before the progress line
        res = _run(
            "running Macaulay2 (critical points of training)",
            lambda: training_critical_points(arch, data=data, at=at, seed=seed, timeout=timeout, m2=m2),
            timeout,
            "ed",
            quiet or output != "text",
        )
    else:
        from lightning_cas.geometry.degree.m2 import ed_degree, plan_ed

        method, engine = _route(plan_ed(arch, method, metric, msolve), output)
        if inputs is not None:  # read and checked (shape, numbers, count, not all zero) before the progress line
            from lightning_cas.geometry.degree.m2 import read_inputs

            inputs = read_inputs(arch, inputs, layout)
        res = _run(
            f"running {engine} (ED degree, {metric} metric, {method})",
            lambda: ed_degree(
                arch,
                metric=metric,
                inputs=inputs,
                method=method,
                seed=seed,
                timeout=timeout,
                m2=m2,
                repeats=repeats,
                msolve=msolve,
            ),
            timeout,
            "ed",
            quiet or output != "text",
            engine,
        )
    _emit(res, output)
