"""The limits every Macaulay2 run starts from, apart from the runner so that a connection (and a
command that never runs Macaulay2) can name them without loading the process machinery."""

import re

from lightning_cas.core.checks import shown
from lightning_cas.errors import InputError

DEFAULT_TIMEOUT = 600.0
DEFAULT_HEAP = "8G"
_HEAP = re.compile(r"[1-9][0-9]{0,15}[KMGkmg]?")
MIN_HEAP_BYTES = 2**20  # a cap in bytes below a MiB is a slip (8 for 8G), never a heap Macaulay2 can run in


def check_heap(heap) -> str:
    """A heap cap as the Boehm collector reads GC_MAXIMUM_HEAP_SIZE: digits with an optional K, M or G.
    Anything else (``"8 GB"``, ``"0"``, ``"-1"``) the collector would ignore, silently removing the cap,
    so it is refused."""
    if not isinstance(heap, str) or not _HEAP.fullmatch(heap):
        raise InputError(f"the Macaulay2 heap cap must be a size such as 8G, 512M or 1048576K, got {shown(heap)}.")
    scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(heap[-1].upper(), 1)
    if int(heap.rstrip("KMGkmg")) * scale < MIN_HEAP_BYTES:
        raise InputError(
            f"the Macaulay2 heap cap {heap} is below {MIN_HEAP_BYTES // 2**20}M (sizes are in "
            "bytes unless K, M or G follows)."
        )
    return heap
