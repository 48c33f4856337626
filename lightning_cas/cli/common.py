"""What every command shares: one-line errors, the output door, the architecture parser (the shared options
are in cli.options)."""

from __future__ import annotations

import errno
import functools
import os
import sys

import click

from lightning_cas.cli.options import SHORTHAND
from lightning_cas.core.checks import as_int, parse_int_list
from lightning_cas.core.network import Network
from lightning_cas.core.numbers import allow_long_integers
from lightning_cas.errors import InputError, LightningError, UnsupportedError, bounded
from lightning_cas.results.display import escape, printable
from lightning_cas.system.deadline import exit_on_terminate, shielded
from lightning_cas.system.networks import load_network

EXIT_DISCREPANCY = 3
EXIT_BROKEN_PIPE = 128 + 13  # what a shell shows for a program stopped by SIGPIPE


def echo(message="", **kwargs) -> None:
    """The one door of command output: every line goes through the terminal escaping (file names, record
    fields and Macaulay2's strings can hold escape sequences); newlines and tabs are kept."""
    click.echo(escape(message, "terminal", "\n\t"), **kwargs)


@shielded  # the report of an error is never cut by the time limit's alarm (it fires again after)
def _fail(message: str, code: int) -> None:
    click.echo(f"lightning-cas: error: {bounded(printable(message))}", err=True)
    sys.exit(code)


class StdoutError(OSError):
    """Standard output refused our bytes (its reader went away, or the disk behind it is full)."""


class GuardedStdout:
    """``sys.stdout`` whose write errors are StdoutErrors, told apart from every other OSError.

    Everything else is the wrapped stream's (click takes it as a compatible text stream).
    """

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise StdoutError(exc.errno, exc.strerror) from None

    def flush(self):
        try:
            return self._stream.flush()
        except OSError as exc:
            raise StdoutError(exc.errno, exc.strerror) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


@shielded
def _stdout_gone(exc: StdoutError) -> None:
    """Leave quietly when the reader of stdout went away (``| head``), in one line when stdout
    cannot take the bytes (``> /dev/full``); never a traceback at interpreter exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the final flush then drops what is still buffered
        os.close(devnull)
    except (OSError, ValueError):
        pass
    if exc.errno == errno.EPIPE:
        sys.exit(EXIT_BROKEN_PIPE)
    _fail(f"cannot write to standard output: {exc.strerror or exc}.", 1)


def clean_errors(fn):
    """Turn our errors into one line; unexpected ones too (traceback only with LIGHTNING_CAS_DEBUG)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        exit_on_terminate()  # SIGTERM runs the cleanups too: no compute child or Macaulay2 is left behind
        try:
            return fn(*args, **kwargs)
        except LightningError as exc:
            _fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            _fail("interrupted.", 130)
        except MemoryError as exc:  # an allocation no size guard foresaw: the machine's limit, said as such
            if os.environ.get("LIGHTNING_CAS_DEBUG"):
                raise
            _fail(
                f"out of memory ({exc or 'MemoryError'}); this computation does not fit on this machine: choose a "
                "smaller architecture.",
                1,
            )
        except Exception as exc:  # a bug: still one line, never a silent number
            if isinstance(exc, StdoutError):
                _stdout_gone(exc)
            if os.environ.get("LIGHTNING_CAS_DEBUG"):
                raise
            _fail(f"internal error ({type(exc).__name__}: {exc}); rerun with LIGHTNING_CAS_DEBUG=1 for details.", 70)

    return wrapper


def check_m2_format(output: str, arch, verb: str) -> None:
    """``--format m2``/``latex`` of a verb before any work: m2 needs a network Macaulay2 can build
    (polynomial), latex an ideal (the dimension verbs compute none)."""
    if output == "latex":
        raise InputError(f"--format latex writes ideals, and {verb} computes none; use --format text, json or m2.")
    if output == "m2" and arch.normalization != "none":
        what = getattr(arch, "not_polynomial", "") or "softmax attention"
        raise InputError(
            "--format m2 builds the network in Macaulay2, which builds polynomial networks only; this "
            f"one has {what} (use --format text or json)."
        )


def parse_architecture(widths, attention, tokens, normalization, network: dict | None = None) -> Network:
    """The network a command names: --widths/--attention (the paper's network), --arch FILE or the
    transformer shorthand (``network``, from network_options); exactly one of the three."""
    given = network or {}
    shorthand = {k: given.get(k) for k in SHORTHAND if given.get(k) is not None}
    flags = widths is not None or attention is not None or given.get("heads") is not None
    ways = [
        name
        for name, used in (
            ("--widths/--attention", flags),
            ("--arch", given.get("arch") is not None),
            ("the transformer shorthand (--d-model ...)", bool(shorthand)),
        )
        if used
    ]
    if len(ways) > 1:
        raise InputError(f"give the architecture one way, not {' and '.join(ways)}.")
    if not ways:
        raise InputError(
            "give --widths and --attention, or --arch FILE, or the transformer shorthand "
            "(--d-model, --n-heads, --d-head, --n-layers)."
        )
    if given.get("arch") is not None:
        if normalization is not None:
            raise InputError(
                "--normalization goes with --widths; in a network file each attention block has its own normalization."
            )
        decided = [f"--{'' if given[k] else 'no-'}{k}" for k in ("causal", "residual") if given.get(k) is not None]
        if decided:
            raise InputError(
                f"{' and '.join(decided)} go with the transformer shorthand; in a network file each "
                "block sets its own causal and residual keys."
            )
        net = load_network(given["arch"])
        if tokens is not None:
            net = Network(net.input, as_int(tokens, "--tokens"), net.blocks)
        return net
    if shorthand:
        missing = [f"--{k.replace('_', '-')}" for k in SHORTHAND[:4] if k not in shorthand]
        if missing:
            raise InputError(f"the transformer shorthand needs {', '.join(missing)} too.")
        return Network.transformer(
            *(as_int(shorthand[k], f"--{k.replace('_', '-')}") for k in ("d_model", "n_heads", "d_head", "n_layers")),
            d_mlp=None if "d_mlp" not in shorthand else as_int(shorthand["d_mlp"], "--d-mlp"),
            causal=True if given.get("causal") is None else given["causal"],
            residual=True if given.get("residual") is None else given["residual"],
            tokens=3 if tokens is None else as_int(tokens, "--tokens"),
            normalization=normalization or "none",
        )
    if given.get("causal") is not None or given.get("residual") is not None:
        raise InputError(
            "--causal and --residual go with the transformer shorthand or a network file; the "
            "--widths/--attention network has neither."
        )
    if widths is None or attention is None:
        raise InputError(
            f"--{'attention' if widths is not None else 'widths'} is missing (give --widths and --attention together)."
        )
    heads = given.get("heads")
    return Network.from_paper(
        parse_int_list(widths, "--widths"),
        parse_int_list(attention, "--attention"),
        as_int(2 if tokens is None else tokens, "--tokens"),
        normalization or "none",
        None if heads is None else parse_int_list(heads, "--heads"),
    )


def plain_architecture(arch, what: str) -> Network:
    """The paper's network (widths/attention) of a command that studies only it; a network file that is
    the same plain stack is accepted, anything else refused in one line."""
    if arch.paper is None:
        raise UnsupportedError(
            f"{what} study the paper's network (plain attention blocks); this network has "
            "causal, residual, factored, mlp, linear or power blocks: use dim, predict, verify "
            "or fiber."
        )
    return arch


class OneLineErrors(click.Group):
    """Click's own refusals (a non-integer --seed, a missing --widths) as one line, like ours."""

    def main(self, *args, **kwargs):
        kwargs["standalone_mode"] = False
        allow_long_integers()  # the numbers of the largest architectures, printed as text
        stdout = sys.stdout
        sys.stdout = GuardedStdout(stdout)
        try:
            result = super().main(*args, **kwargs)
            sys.stdout.flush()
        except click.exceptions.Abort:
            _fail("interrupted.", 130)
        except click.exceptions.NoArgsIsHelpError as exc:  # bare `lightning-cas`: the usage, as lines
            exc.show()
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            _fail(f"{exc.format_message()} (see --help)", exc.exit_code)
        except StdoutError as exc:  # --help or --version into a closed pipe or a full disk
            _stdout_gone(exc)
        except LightningError as exc:  # a time limit whose alarm landed while a bug was being reported
            _fail(str(exc), exc.exit_code)
        finally:
            sys.stdout = stdout
        sys.exit(result if isinstance(result, int) else 0)
