"""The result store: one signed JSON record per job in a results directory.

Why it looks the way it does:

* One JSON file per job, written to a temp file and renamed, so a killed run never leaves half a
  file; a file that does not parse back is treated as missing and recomputed.
* A results directory is data, not instructions, and may come from a colleague: every record
  carries an HMAC-SHA256 under a per-user secret key (kept 0600 in the private directory). The
  key proves "computed by this user's sweeps", not "true": a record it did not sign is a *claim*
  (:class:`~lightning_cas.batch.records.Origin`), shown as such, never reused as a result, and
  re-checked by ``sweep --recheck`` or ``notebook --execute``.
* Entries are read by descriptor and by content: each name is opened under the directory's own
  descriptor with ``O_NOFOLLOW``, must be a regular file with no other hard link (a hard link
  to ``/etc/passwd`` planted as ``scripts/x.m2`` is refused like a symlink), and a script counts
  only when its bytes hash to the ``script_sha256`` of its signed record.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import stat
import uuid
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from lightning_cas.batch.locks import Locks
from lightning_cas.batch.records import JobResult, Origin, record_from_dict
from lightning_cas.batch.tables import CSV_COLUMNS, CSV_NAME, JSONL_NAME, job_row, to_csv
from lightning_cas.errors import InputError, LightningError
from lightning_cas.results.display import printable
from lightning_cas.system.files import atomic_write_text, parse_json, private_dir, read_bytes

MAX_RECORD_BYTES = 4 * 1024 * 1024
MAX_SCRIPT_BYTES = 16 * 1024 * 1024
KEY_NAME = "record.key"
SCRIPTS = "scripts"
_SAFE_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]*")


# ---- the per-user record key and the signature -------------------------------------------------

_KEYS: dict[str, bytes] = {}


def record_key() -> bytes:
    """The user's secret record key: 32 random bytes in the private directory (file mode 0600),
    created on first use; a key file that is a symlink, foreign, readable by others or damaged is
    refused (InputError: then nothing can be told apart, so nothing is reported as checked)."""
    path = private_dir() / KEY_NAME
    cached = _KEYS.get(str(path))
    if cached is not None:
        return cached
    if not os.path.lexists(path):
        # written in full to a temp file, then hard-linked into place: a concurrent first use
        # sees no key or the whole key, never an empty one
        tmp = path.with_name(f".{KEY_NAME}.{os.getpid()}.{uuid.uuid4().hex[:8]}")
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_hex(32) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
        finally:
            os.unlink(tmp)
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise InputError(
            f"the record key {str(path)!r} is not a private file of this user (mode "
            f"{stat.S_IMODE(info.st_mode):o}); refusing to use it."
        )
    text = read_bytes(path, "record key", max_bytes=256, follow_symlinks=False).decode("ascii", "replace").strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) < 16:
        raise InputError(
            f"the record key {str(path)!r} is damaged; delete it to make a new one "
            "(records signed with it will then show as claims)."
        )
    _KEYS[str(path)] = key
    return key


def key_id(key: bytes | None = None) -> str:
    """A public fingerprint of a record key (what a record names as its ``signer``)."""
    return hashlib.sha256(b"lightning_cas record key\x00" + (record_key() if key is None else key)).hexdigest()[:16]


def _canonical(data: dict) -> bytes:
    body = {k: v for k, v in data.items() if k not in ("checksum", "mac")}
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def record_mac(data: dict, key: bytes | None = None) -> str:
    """HMAC-SHA256 of a record's canonical JSON (without the mac itself) under the user's key:
    a hand-edited number, or a record re-signed without the key, fails it."""
    return hmac.new(record_key() if key is None else key, _canonical(data), hashlib.sha256).hexdigest()


def record_checksum(data: dict) -> str:
    """Plain sha256 of a record's canonical JSON: what version-2 records carried (kept so they
    can be recognised; it proves nothing, anyone can recompute it)."""
    return hashlib.sha256(_canonical(data)).hexdigest()


# ---- reading entries by descriptor ---------------------------------------------------------------


def _open_dir(root, name: str | None = None, parent: int | None = None) -> int:
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
    if parent is None:
        return os.open(root, flags)  # the directory the user named (a symlink to it is fine)
    return os.open(name, flags | getattr(os, "O_NOFOLLOW", 0), dir_fd=parent)


def read_entry(
    root: str | os.PathLike,
    relative: str,
    what: str = "entry",
    max_bytes: int = MAX_RECORD_BYTES,
) -> bytes:
    """The bytes of ``root/relative``: every component opened under its parent's descriptor with
    ``O_NOFOLLOW`` (no symlink at any level, none swapped in between check and read), plain names
    only (no absolute path, no ``..``), a regular file with a single link, at most ``max_bytes``.
    Anything else is one InputError naming the entry."""
    shown = printable(relative)
    if not isinstance(relative, str) or not relative or "\\" in relative or "\x00" in relative:
        raise InputError(f"the {what} path '{shown}' is not a plain relative path")
    path = PurePosixPath(relative)
    if path.is_absolute():
        raise InputError(f"the {what} path '{shown}' is absolute (outside the results directory)")
    if any(not _SAFE_PART.fullmatch(p) for p in path.parts):
        raise InputError(f"the {what} path '{shown}' leaves the results directory or has unusual names")
    try:
        fds = [_open_dir(root)]
    except OSError as exc:
        raise InputError(f"cannot open the results directory {printable(root)}: {exc.strerror}") from None
    try:
        for part in path.parts[:-1]:
            try:
                fds.append(_open_dir(root, part, fds[-1]))
            except OSError as exc:
                raise InputError(
                    f"the {what} '{shown}': {printable(part)} is not a plain directory ({exc.strerror})"
                ) from None
        try:
            fd = os.open(
                path.parts[-1],
                os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
                dir_fd=fds[-1],
            )
        except OSError as exc:
            raise InputError(
                f"the {what} '{shown}' cannot be opened without following a link ({exc.strerror})"
            ) from None
        fds.append(fd)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"the {what} '{shown}' is not a regular file")
        if info.st_nlink != 1:
            raise InputError(f"the {what} '{shown}' has {info.st_nlink} hard links (a planted link to another file?)")
        if info.st_size > max_bytes:
            raise InputError(f"the {what} '{shown}' has {info.st_size} bytes (limit {max_bytes})")
        data = os.read(fd, max_bytes + 1)
        while len(data) <= max_bytes:
            more = os.read(fd, max_bytes + 1 - len(data))
            if not more:
                break
            data += more
        if len(data) > max_bytes:
            raise InputError(f"the {what} '{shown}' is larger than {max_bytes} bytes")
        return data
    except OSError as exc:
        raise InputError(f"cannot read the {what} '{shown}': {exc.strerror}") from None
    finally:
        for fd in reversed(fds):
            os.close(fd)


def record_names(root: str | os.PathLike) -> list[str]:
    """The ``*.json`` names in a results directory (aggregates excluded), in name order."""
    try:
        fd = _open_dir(root)
    except OSError as exc:
        raise InputError(f"cannot open the results directory {printable(root)}: {exc.strerror}.") from None
    try:
        names = os.listdir(fd)
    finally:
        os.close(fd)
    return sorted(n for n in names if n.endswith(".json") and not n.startswith("."))


@dataclass(frozen=True)
class RecordCheck:
    """What :func:`verify_record` found: ``here`` (this user's key signed it), ``claim`` (a
    well-formed record this key did not sign: someone else's numbers) or ``invalid`` (not a
    record, or numbers that cannot be true). ``record`` is None only when invalid."""

    path: str
    status: str
    reason: str
    record: JobResult | None = None

    @property
    def trusted(self) -> bool:
        return self.status == Origin.HERE


def verify_record(
    path: str | os.PathLike, label: str | None = None, key: bytes | None = None, judge: bool = True
) -> RecordCheck:
    """Read one record file (by descriptor, bounded) and check its shape, its numbers and its
    signature: the one function that decides whether a record on disk is this user's result."""
    where = str(path)
    key = record_key() if key is None else key  # a damaged key is an error, not "every record unsigned"
    path = Path(path)
    try:
        data = parse_json(
            read_entry(path.parent, path.name, "result record").decode("utf-8"), f"result record {where!r}"
        )
    except (InputError, UnicodeDecodeError) as exc:
        return RecordCheck(where, "invalid", str(exc) if isinstance(exc, InputError) else "not UTF-8 text")
    try:
        rec = record_from_dict(data, judge)
    except (InputError, ValueError, TypeError, KeyError, AttributeError) as exc:
        reason = str(exc) if isinstance(exc, LightningError) else f"malformed record ({type(exc).__name__})"
        return RecordCheck(where, "invalid", reason.rstrip("."))
    if label is not None and rec.label != label:
        return RecordCheck(where, "invalid", f"it holds {rec.label}, not {label}")
    mac = data.get("mac")
    if data.get("version") == 2 or not isinstance(mac, str):
        return RecordCheck(where, Origin.CLAIM, f"record version {data.get('version')!r} carries no key signature", rec)
    try:
        good = hmac.compare_digest(mac, record_mac(data, key))
    except (TypeError, ValueError):  # e.g. non-ASCII text in the mac field
        good = False
    if not good:
        who = f" (it names signer {printable(rec.signer)})" if rec.signer else ""
        return RecordCheck(where, Origin.CLAIM, f"not signed with this user's record key{who}", rec)
    return RecordCheck(where, Origin.HERE, "signed with this user's record key", rec)


def load_record(path: str | os.PathLike, label: str | None = None) -> JobResult | None:
    """This user's record at ``path``, or None (absent, invalid or a claim)."""
    check = verify_record(path, label)
    return check.record if check.trusted else None


class ResultStore:
    """A results directory: ``<label>.json`` per job, ``scripts/<label>.m2`` for Macaulay2 jobs,
    ``<label>.lock`` while a sweep computes it (:class:`~lightning_cas.batch.locks.Locks`)."""

    def __init__(self, root: str | os.PathLike, create: bool = True):
        self.root = Path(root)
        self.locks = Locks(self.root)
        if not create:
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            os.mkdir(self.root / SCRIPTS)
        except FileExistsError:
            pass
        except OSError as exc:
            raise InputError(
                f"cannot create the results directory {printable(self.root)}: {exc.strerror or exc}."
            ) from None
        self._scripts_dir()

    def _scripts_dir(self) -> Path:
        """``scripts/``, refused when it is not a real directory: a planted symlink would make a
        sweep write its scripts wherever it points."""
        where = self.root / SCRIPTS
        try:
            info = os.lstat(where)
        except OSError as exc:
            raise InputError(f"the results directory's {printable(where)} is missing ({exc.strerror}).") from None
        if not stat.S_ISDIR(info.st_mode):
            kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a directory"
            raise InputError(f"{printable(where)} is {kind}; refusing to write scripts through it.")
        return where

    def path(self, label: str) -> Path:
        return self.root / f"{label}.json"

    def check(self, label: str) -> RecordCheck:
        return verify_record(self.path(label), label)

    def load(self, label: str) -> JobResult | None:
        """This user's stored result, or None when absent, invalid or a claim."""
        check = self.check(label)
        return check.record if check.trusted else None

    def save(self, record: JobResult) -> JobResult:
        """Store a record (and its script), signed with this user's key; returns it as stored."""
        script, digest = record.script, record.script_sha256
        if record.script_text is not None:
            dest = self._scripts_dir() / f"{record.label}.m2"
            atomic_write_text(dest, record.script_text, "script", replace_entries=True)
            script = f"{SCRIPTS}/{dest.name}"
            digest = hashlib.sha256(record.script_text.encode()).hexdigest()
        stored = replace(record, script=script, script_text=None, script_sha256=digest, signer=key_id())
        data = stored.to_dict()
        atomic_write_text(
            self.path(record.label),
            json.dumps({**data, "mac": record_mac(data)}, indent=1) + "\n",
            "record",
            replace_entries=True,
        )
        return stored

    def script_text(self, record: JobResult) -> str | None:
        """The text of a record's stored script, only if it is ``scripts/<label>.m2`` read by
        descriptor (see :func:`read_entry`) and hashes to the ``script_sha256`` the record carries."""
        try:
            return self.script_check(record)[0]
        except InputError:
            return None

    def script_check(self, record: JobResult) -> tuple[str | None, str]:
        """(text or None, what was found): the stored script if it is genuine, else why not."""
        if not record.script:
            return None, "no script was stored"
        if record.script != f"{SCRIPTS}/{record.label}.m2" or not record.script_sha256:
            return None, f"the record names the script '{printable(record.script)}', not its own"
        try:
            data = read_entry(self.root, record.script, "script", MAX_SCRIPT_BYTES)
        except InputError as exc:
            return None, str(exc)
        if not hmac.compare_digest(hashlib.sha256(data).hexdigest(), str(record.script_sha256)):
            return None, "the stored script does not match the sha256 its record carries (changed since)"
        try:
            return data.decode("utf-8"), "matches the sha256 of its record"
        except UnicodeDecodeError:
            return None, "the stored script is not UTF-8 text"

    def checks(self, judge: bool = True) -> list[RecordCheck]:
        """What :func:`verify_record` says of every ``*.json`` in the directory, in name order."""
        return [verify_record(self.root / name, name[:-5], judge=judge) for name in record_names(self.root)]

    def records(self) -> list[JobResult]:
        """Every record in the directory computed here (signed with this user's key)."""
        return [c.record for c in self.checks() if c.trusted]

    def write_aggregates(self, checks: list[RecordCheck] | None = None) -> tuple[Path, Path]:
        """results.csv (every record, claims marked as such) and results.jsonl (the records
        computed here), written atomically."""
        checks = self.checks() if checks is None else checks
        rows = [(c.record, Origin(c.status)) for c in checks if c.record is not None]
        jsonl = "".join(json.dumps(r.to_dict()) + "\n" for r, source in rows if source is Origin.HERE)
        csv_path, jsonl_path = self.root / CSV_NAME, self.root / JSONL_NAME
        atomic_write_text(jsonl_path, jsonl, "results table", replace_entries=True)
        atomic_write_text(
            csv_path,
            to_csv([job_row(r, source) for r, source in rows], CSV_COLUMNS),
            "results table",
            replace_entries=True,
        )
        return csv_path, jsonl_path
