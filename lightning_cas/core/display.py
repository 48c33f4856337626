"""Text shown to a person: one helper that makes any string safe to print on a terminal.

Record fields, messages, file names and labels can come from files a stranger wrote. Printed
raw, an escape sequence can retitle the terminal, hide lines or fake output, and bidirectional
overrides can reorder what is seen. :func:`printable` escapes every control and format
character (``\\x1b`` becomes the four characters ``\\x1b``), so what is printed is what is there.
"""

from __future__ import annotations

import unicodedata

_UNSAFE = ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn")


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else (f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")


def printable(text, keep_newlines: bool = False) -> str:
    """``text`` (anything, via ``str``) with control/format characters escaped; backslashes are
    left alone. ``keep_newlines`` keeps ``\\n`` for multi-line output."""
    text = str(text)
    if text.isprintable() and "\x1b" not in text:
        return text
    return "".join(c if (c == "\n" and keep_newlines) or unicodedata.category(c) not in _UNSAFE or c == " "
                   else _escape(c) for c in text)


# ---------------------------------------------------------------- Jupyter: results as HTML

MAX_ITEMS = 20  # list entries shown in a cell before "... (n more)"
MAX_CHARS = 400  # characters of one value shown before "..."


def _short(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + f"... ({len(text) - MAX_CHARS} more characters)"


def html_value(value) -> str:
    """One value as HTML, every string escaped (a note or a label may come from a file a stranger wrote):
    records and dicts as small tables, lists as numbered lists (at most MAX_ITEMS entries)."""
    import dataclasses
    import html

    if value is None:
        return "&mdash;"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return html.escape(f"{value:.4g}")
    if hasattr(value, "html_fields") and not isinstance(value, type):  # a record: a small table
        return html_table(value.html_fields())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # an architecture or a network: its text
        return f"<code>{html.escape(_short(str(value)))}</code>"
    if isinstance(value, dict):
        return html_table(list(value.items()))
    if isinstance(value, (list, tuple)):
        if not value:
            return "(none)"
        if all(isinstance(v, (int, float, str, bool)) or v is None for v in value) and len(value) <= 8 \
                and sum(len(str(v)) for v in value) <= 80:
            return "<code>" + html.escape(", ".join(map(str, value))) + "</code>"
        items = "".join(f"<li>{html_value(v)}</li>" for v in value[:MAX_ITEMS])
        more = f"<li>... ({len(value) - MAX_ITEMS} more)</li>" if len(value) > MAX_ITEMS else ""
        return f"<ol>{items}{more}</ol>"
    return html.escape(_short(str(value)))


def html_table(pairs) -> str:
    import html

    rows = "".join(f"<tr><th style='text-align:left'>{html.escape(str(k))}</th>"
                   f"<td style='text-align:left'>{html_value(v)}</td></tr>" for k, v in pairs)
    return f"<table>{rows}</table>"


def html_document(title: str, sections, certainty: str | None = None) -> str:
    """A result as HTML: a title, how certain it is (in words), and (heading, [(name, value), ...]) sections."""
    import html

    body = "".join(f"<details open><summary><b>{html.escape(heading)}</b></summary>{html_table(pairs)}</details>"
                   for heading, pairs in sections if pairs)
    sure = "" if certainty is None else f"<p>certainty: <b>{html.escape(printable(certainty))}</b></p>"
    return f"<div class='lightning-cas-result'><p><b>{html.escape(printable(title))}</b></p>{sure}{body}</div>"


def markdown_document(title: str, certainty: str | None, text: str) -> str:
    """A result as Markdown: a bold title, the certainty, the text in a fenced block. Every string is
    escaped, and the fence is longer than any run of backticks in the text, so nothing a file held
    becomes markup."""
    import html
    import re

    def inline(value: str) -> str:
        return re.sub(r"([\\`*_\[\]<>#|~])", r"\\\1", html.escape(printable(value), quote=False))

    body = printable(text, keep_newlines=True)
    fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", body)), default=0))
    lines = [f"**{inline(title)}**", ""]
    if certainty is not None:
        lines += [f"certainty: **{inline(certainty)}**", ""]
    return "\n".join(lines + [f"{fence}text", body, fence])
