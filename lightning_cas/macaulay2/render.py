"""Rendering Macaulay2 scripts from the templates in ``m2/templates/``.

The only way M2 code is made: a first line that keeps only absolute directories on Macaulay2's
``path`` (``./`` is on it, and M2 looks there for every package it loads by name), a header of
``name = value;`` lines whose values are validated integers, rationals or nested lists of them,
the line ``lcasPackage = "<path of m2/LightningCAS.m2>";`` (a path we checked, never user text),
the two fixed lines that load the package and set the seed, then one template: a single call of a
package function. Nothing a user types is ever pasted into M2 code.
"""

from __future__ import annotations

import hashlib
import re
from fractions import Fraction
from importlib import resources
from pathlib import Path

from lightning_cas.errors import InputError
from lightning_cas.system.files import atomic_write_text, read_bytes
from lightning_cas.system.processes import script_dir

PACKAGE = "LightningCAS.m2"
TEMPLATES = "templates"
LOAD_LINE = 'needsPackage("LightningCAS", FileName => lcasPackage);'
SEED_LINE = "setRandomSeed seed;"
_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9]*")
_TEMPLATE = re.compile(r"[a-zA-Z][a-zA-Z0-9_]*")
# what may stand inside an M2 string literal as is: no quote, backslash or control character
_M2_STRING_SAFE = re.compile(r'[^"\\\x00-\x1f\x7f]+')
# relative entries of `path` ("./") name the directory M2 stands in: a package planted there would run
SEARCH_PATH_LINE = 'path = select(path, d -> match("^/", d));'


def template_dir() -> Path:
    """The directory of the Macaulay2 files: ``LightningCAS.m2``, its auxiliary files in
    ``LightningCAS/`` and the script templates in ``templates/``; shipped inside the wheel, or the
    repository's ``m2/``."""
    shipped = Path(str(resources.files("lightning_cas"))) / "m2"
    if (shipped / PACKAGE).is_file():
        return shipped
    source = Path(__file__).resolve().parents[2] / "m2"
    if (source / PACKAGE).is_file():
        return source
    raise FileNotFoundError("lightning_cas cannot find its Macaulay2 package (m2/LightningCAS.m2); reinstall it.")


def package_file() -> Path:
    """The shipped LightningCAS.m2 (what ``loadPackage(..., FileName => ...)`` is given)."""
    return template_dir().resolve() / PACKAGE


def load_line() -> str:
    """The line a printed script (``--format m2``) starts with: it loads this installation's package file, so
    the script runs as printed under ``M2 --script`` in any home directory; the comment says how to install the
    package for good, after which ``needsPackage "LightningCAS"`` alone is enough."""
    path = package_file().as_posix()
    if not _M2_STRING_SAFE.fullmatch(path):
        raise ValueError(f"the path of the Macaulay2 package cannot be quoted for Macaulay2: {path!r}")
    return (
        f'needsPackage("LightningCAS", FileName => "{path}"); -- for good: lightning-cas notebook '
        '--install-package, then needsPackage "LightningCAS"'
    )


def package_line() -> str:
    """The header line naming the package file, refused if the path cannot be an M2 string as is."""
    path = package_file().as_posix()
    if not _M2_STRING_SAFE.fullmatch(path):
        raise ValueError(f"the path of the Macaulay2 package cannot be quoted for Macaulay2: {path!r}")
    return f'lcasPackage = "{path}";'


def m2_literal(value) -> str:
    """An M2 literal for a number or a nested list of numbers; anything else is refused."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Fraction):
        return str(value.numerator) if value.denominator == 1 else f"({value.numerator}/{value.denominator})"
    if isinstance(value, (list, tuple)):
        return "{" + ", ".join(m2_literal(v) for v in value) + "}"
    raise TypeError(f"only integers, fractions and lists of them go into M2 code, got {type(value).__name__}")


def render(template: str, **params) -> str:
    """The text of a runnable script: header of validated parameters (and the package path), template body."""
    root = template_dir() / TEMPLATES
    path = root / f"{template}.m2"
    if not _TEMPLATE.fullmatch(template) or not path.is_file():
        raise FileNotFoundError(f"no Macaulay2 template named {template!r} in {root}")
    header = [f"-- rendered by lightning_cas from m2/{TEMPLATES}/{path.name}", SEARCH_PATH_LINE]
    for name, value in params.items():
        if not _NAME.fullmatch(name) or name == "lcasPackage":
            raise ValueError(f"bad M2 parameter name {name!r}")
        header.append(f"{name} = {m2_literal(value)};")
    header += [package_line(), LOAD_LINE] + ([SEED_LINE] if "seed" in params else [])
    return "\n".join(header) + "\n" + path.read_text()


def write_script(template: str, **params) -> Path:
    """Render a script and make sure the file at its content-addressed path holds exactly that text.

    An existing file is reused only if its bytes hash to what this call rendered; anything else
    (a stale, truncated or planted file, a symlink, a FIFO) is replaced by a fresh write. Nothing
    found on disk is ever run unchecked.
    """
    text = render(template, **params)
    data = text.encode()
    digest = hashlib.sha256(data).hexdigest()
    path = script_dir() / f"{template}-{digest[:12]}.m2"
    try:
        ok = (
            hashlib.sha256(read_bytes(path, "script", max_bytes=len(data), follow_symlinks=False)).hexdigest() == digest
        )
    except InputError:
        ok = False
    if not ok:
        atomic_write_text(path, text, "script", replace_entries=True)
    return path
