"""A network file (TOML, or JSON by its .json ending or leading brace), read through the bounded reader
and decoded by core.network (the file format is documented in docs/networks.md)."""

from __future__ import annotations

import os

from lightning_cas.core.blocks import MAX_NETWORK_BYTES
from lightning_cas.core.network import Network
from lightning_cas.errors import InputError
from lightning_cas.system.files import check_path, parse_json, parse_toml, read_text


def load_network(path: str | os.PathLike) -> Network:
    """The network a file describes; every problem is one InputError naming the file."""
    name = check_path(path, "network file")
    text = read_text(name, "network file", max_bytes=MAX_NETWORK_BYTES)
    if name.endswith(".json") or text.lstrip().startswith("{"):
        data = parse_json(text, f"network file {name!r}")
    else:
        try:
            data = parse_toml(text, f"network file {name!r}")
        except InputError:
            raise
        except Exception as exc:  # tomllib.TOMLDecodeError and friends
            raise InputError(f"{name}: not valid TOML ({exc}).") from None
    return Network.from_dict(data, source=name)
