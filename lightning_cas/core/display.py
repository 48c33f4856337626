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
