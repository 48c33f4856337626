"""Text from outside, shown: one escaping function, :func:`escape`, with a mode per destination.

Record fields, messages, file names, labels and Macaulay2's own strings can come from files a
stranger wrote. Printed raw, an escape sequence can retitle the terminal, hide lines or fake
output; bidirectional overrides reorder what is seen; a cell starting with ``=`` is a live
spreadsheet formula; ``<script>`` or ``|`` rewrites an HTML or Markdown page; ``\\input`` runs in
LaTeX. Every mode first escapes control and format characters (``\\x1b`` becomes the four
characters ``\\x1b``), so what is shown is what is there, then neutralises its destination's syntax:

* ``terminal``: only that (:func:`printable` is this mode);
* ``csv``: a cell starting with ``= + - @``, a tab or a carriage return gets a leading ``'``;
* ``html``: ``& < > " '`` as entities; ``markdown``: HTML-inert, ``|`` escaped and a backtick made a quote;
* ``latex``: the ten special characters as their LaTeX commands.
"""

from __future__ import annotations

import html as _html
import re
import unicodedata

_UNSAFE = ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn")
_ASCII_UNSAFE = re.compile(r"[\x00-\x1f\x7f]")
MODES = ("terminal", "csv", "html", "markdown", "latex")
CSV_FORMULA = ("=", "+", "-", "@", "\t", "\r")
_LATEX = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "^": r"\^{}",
    "_": r"\_",
    "%": r"\%",
    "~": r"\~{}",
}
_LATEX_RE = re.compile("|".join(map(re.escape, _LATEX)))


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else (f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")


def _keep(c: str, keep: str) -> bool:
    return c in keep or c == " " or unicodedata.category(c) not in _UNSAFE


def escape(text, mode: str = "terminal", keep: str = "") -> str:
    """``text`` (anything, via ``str``) made inert for ``mode`` (see the module docstring); control and
    format characters are escaped except those in ``keep`` (``"\\n"`` for multi-line output)."""
    if mode not in MODES:
        raise ValueError(f"unknown escaping mode {mode!r}")
    text = str(text)
    if text.isascii():
        if _ASCII_UNSAFE.search(text):
            text = _ASCII_UNSAFE.sub(lambda m: m.group(0) if m.group(0) in keep else _escape(m.group(0)), text)
    elif not (text.isprintable() and not keep):
        text = "".join(c if _keep(c, keep) else _escape(c) for c in text)
    if mode == "csv":
        return "'" + text if text.startswith(CSV_FORMULA) else text
    if mode == "html":
        return _html.escape(text)
    if mode == "markdown":  # HTML-inert; no table cell or code span can be closed from inside
        return _html.escape(text).replace("|", "\\|").replace("`", "'")
    if mode == "latex":
        return _LATEX_RE.sub(lambda m: _LATEX[m.group(0)], text)
    return text


def printable(text, keep_newlines: bool = False) -> str:
    """``text`` safe on a terminal (:func:`escape` in mode ``terminal``); backslashes are left alone.
    ``keep_newlines`` keeps ``\\n`` for multi-line output."""
    return escape(text, "terminal", "\n" if keep_newlines else "")


# ---------------------------------------------------------------- Jupyter: results as HTML

MAX_ITEMS = 20  # list entries shown in a cell before "... (n more)"
MAX_CHARS = 400  # characters of one value shown before "..."


def _short(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + f"... ({len(text) - MAX_CHARS} more characters)"


def html_value(value) -> str:
    """One value as HTML, every string escaped (a note or a label may come from a file a stranger wrote):
    records and dicts as small tables, lists as numbered lists (at most MAX_ITEMS entries)."""
    import dataclasses

    if value is None:
        return "&mdash;"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return escape(f"{value:.4g}", "html")
    if hasattr(value, "html_fields") and not isinstance(value, type):  # a record: a small table
        return html_table(value.html_fields())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if hasattr(value, "to_dict"):  # an architecture or a network: its text
            return f"<code>{escape(_short(str(value)), 'html')}</code>"
        return html_table([(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)])  # plain data
    if isinstance(value, dict):
        return html_table(list(value.items()))
    if isinstance(value, (list, tuple)):
        if not value:
            return "(none)"
        if (
            all(isinstance(v, (int, float, str, bool)) or v is None for v in value)
            and len(value) <= 8
            and sum(len(str(v)) for v in value) <= 80
        ):
            return "<code>" + escape(", ".join(map(str, value)), "html") + "</code>"
        items = "".join(f"<li>{html_value(v)}</li>" for v in value[:MAX_ITEMS])
        more = f"<li>... ({len(value) - MAX_ITEMS} more)</li>" if len(value) > MAX_ITEMS else ""
        return f"<ol>{items}{more}</ol>"
    return escape(_short(str(value)), "html")


def html_table(pairs) -> str:
    rows = "".join(
        f"<tr><th style='text-align:left'>{escape(k, 'html')}</th><td style='text-align:left'>{html_value(v)}</td></tr>"
        for k, v in pairs
    )
    return f"<table>{rows}</table>"


def html_document(title: str, sections, certainty: str | None = None) -> str:
    """A result as HTML: a title, how certain it is (in words), and (heading, [(name, value), ...]) sections."""
    body = "".join(
        f"<details open><summary><b>{escape(heading, 'html')}</b></summary>{html_table(pairs)}</details>"
        for heading, pairs in sections
        if pairs
    )
    sure = "" if certainty is None else f"<p>certainty: <b>{escape(certainty, 'html')}</b></p>"
    return f"<div class='lightning-cas-result'><p><b>{escape(title, 'html')}</b></p>{sure}{body}</div>"


def markdown_document(title: str, certainty: str | None, text: str) -> str:
    """A result as Markdown: a bold title, the certainty, the text in a fenced block. Every string is
    escaped, and the fence is longer than any run of backticks in the text, so nothing a file held
    becomes markup."""
    import re

    def inline(value: str) -> str:  # Markdown's own punctuation backslashed, then HTML-inert
        return re.sub(r"([\\`*_\[\]<>#|~])", r"\\\1", _html.escape(printable(value), quote=False))

    body = printable(text, keep_newlines=True)
    fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", body)), default=0))
    lines = [f"**{inline(title)}**", ""]
    if certainty is not None:
        lines += [f"certainty: **{inline(certainty)}**", ""]
    return "\n".join(lines + [f"{fence}text", body, fence])
