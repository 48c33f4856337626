"""Files in and out, through one door each way.

Reading: every file lightning_cas reads (sweep specs, weight files, result records, locks,
scripts) goes through :func:`read_text` (and :func:`read_json` / :func:`read_toml` on top of it).
It refuses, at once and in one sentence, what would hang or exhaust the machine: FIFOs and devices
(``/dev/zero``), directories, files above a size cap, documents nested deeper than a depth cap,
and text that is not UTF-8. It opens with ``O_NONBLOCK`` and checks the opened descriptor with
``fstat``, so a FIFO never blocks and there is no gap between the check and the read.

Writing: every file lightning_cas writes goes through :func:`write_file` (and
:func:`atomic_write_text` on top of it), so that a reader, a concurrent writer or a killed run
sees the old file or the new one, never half of one: a uniquely named temp file beside the target,
fsync, rename. An existing target that is not a regular file (a FIFO, a device such as
``/dev/full``, a directory, a symlink) is refused, never replaced: a rename onto a device node
destroys the node. A full disk (ENOSPC), a file size limit (EFBIG) or any other write error is one
sentence, and the temp file is removed, so nothing half written is left.

Private directories: :func:`private_dir` is the per-user directory (mode 0700, owned by the
user, never a symlink) that holds rendered Macaulay2 scripts, Macaulay2's HOME and the key that
signs result records. A directory that fails those checks is refused, never used.
"""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path

from lightning_cas.core.checks import shown
from lightning_cas.errors import InputError, OutputError

# the readers decode what they read with the pure parsers (re-exported: one import for callers)
from lightning_cas.results.documents import MAX_NESTING, check_depth, parse_json, parse_toml  # noqa: F401

MAX_BYTES = 8 * 1024 * 1024  # default cap: far above any spec, weight file or record we write
PRIVATE_ENV = "LIGHTNING_CAS_PRIVATE_DIR"


def check_path(value, what: str) -> str:
    """A path as str: a str or an os.PathLike, not empty, without NUL bytes."""
    text = os.fspath(value) if isinstance(value, os.PathLike) else value
    if not isinstance(text, str) or not text or "\x00" in text:
        raise InputError(f"the {what} must be a path (a str or os.PathLike), got {shown(value)}.")
    return text


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bytes(
    path: str | os.PathLike, what: str = "file", *, max_bytes: int = MAX_BYTES, follow_symlinks: bool = True
) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; anything else is one InputError.

    ``follow_symlinks=False`` refuses a symlink as the last component (for files found inside a
    directory, such as records, whose names a stranger could have planted).
    """
    name = os.fspath(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(name, flags)
    except OSError as exc:
        if not follow_symlinks and os.path.islink(name):
            raise InputError(f"the {what} {name!r} is a symbolic link; refusing to follow it.") from None
        raise InputError(f"cannot read the {what} {name!r}: {exc.strerror or exc}.") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"the {what} {name!r} is {_kind(info.st_mode)}, not a regular file.")
        if info.st_size > max_bytes:
            raise InputError(f"the {what} {name!r} is {info.st_size} bytes, above the limit of {max_bytes}.")
        chunks, total = [], 0
        while True:  # read at most max_bytes + 1: a file growing while we read is caught too
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise InputError(f"the {what} {name!r} is larger than the limit of {max_bytes} bytes.")
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(f"cannot read the {what} {name!r}: {exc.strerror or exc}.") from None
    finally:
        os.close(fd)


def read_text(
    path: str | os.PathLike, what: str = "file", *, max_bytes: int = MAX_BYTES, follow_symlinks: bool = True
) -> str:
    """UTF-8 text of a bounded regular file (see :func:`read_bytes`)."""
    data = read_bytes(path, what, max_bytes=max_bytes, follow_symlinks=follow_symlinks)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"the {what} {os.fspath(path)!r} is not UTF-8 text.") from None


def read_json(
    path: str | os.PathLike,
    what: str = "JSON file",
    *,
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_NESTING,
    follow_symlinks: bool = True,
):
    """A bounded JSON file, decoded; every problem is one InputError naming the file."""
    text = read_text(path, what, max_bytes=max_bytes, follow_symlinks=follow_symlinks)
    return parse_json(text, f"{what} {os.fspath(path)!r}", max_depth)


def _refuse_target(name: str, what: str, replace_entries: bool) -> None:
    """Refuse an existing target that is not a regular file (see :func:`write_file`)."""
    try:
        info = os.lstat(name)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputError(f"cannot write the {what} {name!r}: {exc.strerror or exc}.") from None
    if stat.S_ISREG(info.st_mode) or (replace_entries and not stat.S_ISDIR(info.st_mode)):
        return
    kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else _kind(info.st_mode)
    raise InputError(f"the {what} {name!r} is {kind}, not a regular file; refusing to replace it.")


def check_output_target(path: str | os.PathLike, what: str = "output file", *, replace_entries: bool = False) -> str:
    """The name ``path`` as str, if :func:`write_file` may write there; else the same one-line
    refusal, now (so a command can refuse a bad target before any work)."""
    name = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
    if not isinstance(name, str) or not name or "\x00" in name:
        raise InputError(f"the {what} must be a file name, got {path!r}.")
    _refuse_target(name, what, replace_entries)
    return name


def write_file(
    path: str | os.PathLike, data: str | bytes, what: str = "output file", *, replace_entries: bool = False
) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` atomically: a temp file beside it, fsync, rename.

    An existing ``path`` must be a regular file; anything else is refused with one InputError
    before any byte is written. ``replace_entries=True`` is for names inside a directory
    lightning_cas keeps itself (the private scripts, a results directory): there a planted FIFO,
    device node or symlink is replaced (the rename changes the name, never what it pointed at);
    a directory is still refused. Write errors (ENOSPC, EFBIG, EACCES, ...) are one OutputError,
    and the temp file is removed, so the old file, or nothing, stays.
    """
    name = check_output_target(path, what, replace_entries=replace_entries)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    head, tail = os.path.split(name)
    if not tail:
        raise InputError(f"the {what} {name!r} names a directory, not a file.")
    tmp = os.path.join(head, f".{tail}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    created = False
    try:
        fd = os.open(tmp, flags, 0o666)
        created = True
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        _refuse_target(name, what, replace_entries)  # the target may have changed while we wrote
        os.replace(tmp, name)
        created = False
    except OSError as exc:
        raise OutputError(f"cannot write the {what} {name!r}: {exc.strerror or exc}.") from None
    finally:
        if created:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def atomic_write_text(
    path: str | os.PathLike, text: str, what: str = "output file", *, replace_entries: bool = False
) -> None:
    """Text through :func:`write_file`."""
    write_file(path, text, what, replace_entries=replace_entries)


# ---- the private per-user directory ------------------------------------------------------------


def check_private(path: Path, what: str = "private directory") -> Path:
    """``path`` must be a real directory (not a symlink), owned by this user, with no access for
    group or others; anything else is refused (it may have been planted)."""
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise InputError(f"cannot use the {what} {str(path)!r}: {exc.strerror or exc}.") from None
    if stat.S_ISLNK(info.st_mode):
        raise InputError(f"the {what} {str(path)!r} is a symbolic link; refusing to use it.")
    if not stat.S_ISDIR(info.st_mode):
        raise InputError(f"the {what} {str(path)!r} is not a directory; refusing to use it.")
    if info.st_uid != os.geteuid():
        raise InputError(f"the {what} {str(path)!r} belongs to another user (uid {info.st_uid}); refusing to use it.")
    if info.st_mode & 0o077:
        raise InputError(
            f"the {what} {str(path)!r} is accessible to other users (mode "
            f"{stat.S_IMODE(info.st_mode):o}, expected 700); refusing to use it."
        )
    return path


def make_private(path: str | os.PathLike, what: str = "private directory") -> Path:
    """Create ``path`` (mode 0700) if missing, then :func:`check_private` it; returns the path."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(path, 0o700)
        os.chmod(path, 0o700, follow_symlinks=False)  # a umask of 077+ must not leave it unusable
    except FileExistsError:
        pass
    except OSError as exc:
        raise InputError(f"cannot create the {what} {str(path)!r}: {exc.strerror or exc}.") from None
    return check_private(path, what)


def _default_private_base() -> Path:
    """$XDG_CACHE_HOME/lightning_cas or ~/.cache/lightning_cas; if the home directory cannot be
    written, a per-user directory in the temp dir (still owner- and mode-checked)."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if os.path.isabs(cache):
        home_cache = Path(cache)
        probe = home_cache if home_cache.exists() else home_cache.parent
        if os.access(probe, os.W_OK | os.X_OK):
            return home_cache / "lightning_cas"
    import tempfile  # only for the private directory's default place

    return Path(tempfile.gettempdir()) / f"lightning_cas-{os.geteuid()}"


def private_dir(sub: str | None = None) -> Path:
    """The per-user private directory (``$LIGHTNING_CAS_PRIVATE_DIR`` overrides it), or one of
    its subdirectories; created 0700 and checked on every call."""
    base = Path(os.environ.get(PRIVATE_ENV) or _default_private_base())
    root = make_private(base)
    return root if sub is None else make_private(root / sub, f"private directory {sub!r}")
