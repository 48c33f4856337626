"""Writing files so that a reader, a concurrent writer or a killed run sees the old file or the
new one, never half of one: a uniquely named temp file beside the target, fsync, rename."""

from __future__ import annotations

import os
import uuid
from pathlib import Path


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
