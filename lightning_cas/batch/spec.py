"""Sweep specs: a TOML file expanded into jobs, every malformed part refused with its line.

A spec is data a user (or a colleague) hands over: every key and value is checked before a job
exists, and the error names the line, because tomllib gives no positions.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import os
import re
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from lightning_cas.core.blocks import MAX_DEGREE
from lightning_cas.core.checks import check_seed, check_timeout
from lightning_cas.core.network import Network
from lightning_cas.core.numbers import integer_text
from lightning_cas.errors import InputError
from lightning_cas.results.contract import Record
from lightning_cas.system.files import parse_toml, read_text

METHODS = ("auto", "modp", "jacobian", "implicit", "numeric")
M2_METHODS = ("jacobian", "implicit")
SPEC_KEYS = ("widths", "attention", "heads", "tokens", "normalization", "method", "seed", "timeout")
TOP_KEYS = ("name", "timeout", "grid", "architecture", "network")
NETWORK_JOB_KEYS = ("method", "seed", "timeout")
MAX_SPEC_JOBS = 10_000  # a larger spec is refused with its count unless --max-jobs raises the limit
MAX_JOBS_CEILING = 200_000  # what --max-jobs can raise it to: the expanded jobs stay far below a GiB
MAX_SPEC_BYTES = 1024 * 1024
MAX_CSV_BYTES = 64 * 1024 * 1024  # a published table of 10^5 architectures is a few MiB
MAX_NAME = 100
_NAME = re.compile(r"[A-Za-z0-9._-]{1,%d}" % MAX_NAME, re.ASCII)


@dataclass(frozen=True)
class Job(Record):
    """One dimension computation: an architecture, a method, a seed and a time limit."""

    architecture: Network
    method: str = "auto"
    seed: int = 0
    timeout: float | None = None

    def __post_init__(self):
        if not isinstance(self.architecture, Network):
            raise ValueError(f"a job's architecture must be a Network, got {type(self.architecture).__name__}")
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        object.__setattr__(self, "seed", check_seed(self.seed))
        if self.timeout is not None:
            object.__setattr__(self, "timeout", check_timeout(self.timeout))

    @property
    def label(self) -> str:
        """File-name-safe and unique per (architecture, method, seed): the cache key."""
        return f"{self.architecture.label()}_{self.method}_s{self.seed}"


@dataclass(frozen=True)
class Sweep:
    """An expanded spec: its jobs in order, and how many grid pairs were skipped as mismatched."""

    name: str
    jobs: tuple[Job, ...]
    mismatched: int = 0
    duplicates: int = 0


class _Lines:
    """Finds the line of a key in TOML text, so spec errors can point at it (tomllib gives no positions)."""

    _header = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-]+)\s*\]\]?")
    _key = re.compile(r"^\s*([A-Za-z0-9_\-]+)\s*=")

    def __init__(self, text: str):
        self.where: dict[tuple, int] = {}
        table, counts = (), {}
        for n, line in enumerate(text.splitlines(), start=1):
            m = self._header.match(line)
            if m:
                name = m.group(2)
                if m.group(1) == "[[":
                    counts[name] = counts.get(name, -1) + 1
                    table = (name, counts[name])
                else:
                    table = (name,)
                self.where.setdefault(table, n)
                continue
            m = self._key.match(line)
            if m:
                self.where.setdefault(table + (m.group(1),), n)

    def line(self, *path) -> int | None:
        while path:
            if path in self.where:
                return self.where[path]
            path = path[:-1]
        return None


def _refuse(source: str, lines: _Lines, path: tuple, message: str):
    n = lines.line(*path)
    where = f"{source} line {n}" if n else source
    raise InputError(f"{where}: {message}")


def _section_name(path: tuple) -> str:
    if path[0] == "grid":
        return "[grid]" if len(path) == 1 or not isinstance(path[1], int) else f"[[grid]] #{path[1] + 1}"
    if path[0] == "architecture":
        return f"[[architecture]] #{path[1] + 1}"
    return "top level"


def _check_int_list(value, what: str) -> tuple[int, ...]:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",")]
    if not isinstance(value, list) or not value:
        raise ValueError(f"{what} must be a non-empty list of integers such as [3, 3, 3], got {value!r}")
    out = []
    for v in value:
        if isinstance(v, str) and integer_text(v) is not None:
            v = integer_text(v)
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise ValueError(f"{what} must contain positive integers only, got {v!r}")
        out.append(v)
    return tuple(out)


def _check_value(key: str, value):
    """Validate one single value of a spec key (raise ValueError with a clause, caller adds where)."""
    if key in ("widths", "attention", "heads"):
        return _check_int_list(value, key)
    if key == "tokens":
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"tokens must be a positive integer, got {value!r}")
        return value
    if key == "seed":
        return check_seed(value)
    if key == "method":
        if value not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {value!r}")
        return value
    if key == "normalization":
        if value not in ("none", "softmax"):
            raise ValueError(f"normalization must be none or softmax, got {value!r}")
        return value
    if key == "timeout":
        if value is None:
            raise ValueError("timeout must be a positive number of seconds, got None")
        return check_timeout(value)
    raise ValueError(f"unknown key {key!r} (expected one of {', '.join(SPEC_KEYS)})")


def _architecture(source, lines, path, widths, attention, tokens, normalization, heads=None) -> Network:
    try:
        return Network.from_paper(widths, attention, tokens, normalization, heads)
    except InputError as exc:
        _refuse(source, lines, path, f"{_section_name(path)} is not a valid architecture: {str(exc).rstrip('.')}.")


def check_name(name, source: str, lines: "_Lines | None" = None, derived: bool = False) -> str:
    """A sweep name becomes a directory under results/ and a word in make rules: a plain file
    name (ASCII letters, digits, ``.``, ``_``, ``-``; no separators, no ``..``) or refused."""
    if isinstance(name, str) and _NAME.fullmatch(name) and name not in (".", ".."):
        return name
    hint = ' (it is taken from the spec\'s file name; set name = "..." in the spec)' if derived else ""
    message = (
        f"name must be a plain file name of at most {MAX_NAME} ASCII letters, digits, '.', '_' or '-' "
        f"(no path separators or '..'), got {name!r}{hint}."
    )
    if lines is None:
        raise InputError(f"{source}: {message}")
    _refuse(source, lines, ("name",), message)


def count_jobs(grid_values: dict) -> int:
    """How many jobs a [grid] expands to (matched widths/attention/heads triples times the other lists),
    computed without expanding it: a 10^12-job grid is refused in microseconds."""
    by_len_w = Counter(len(w) for w in grid_values["widths"])
    by_len_a = Counter(len(a) for a in grid_values["attention"])
    by_len_h = Counter(len(h) for h in grid_values["heads"]) if "heads" in grid_values else None
    pairs = sum(
        n * by_len_a.get(length - 1, 0) * (1 if by_len_h is None else by_len_h.get(length - 1, 0))
        for length, n in by_len_w.items()
    )
    return pairs * _other_count(grid_values)


def _other_count(grid_values: dict) -> int:
    """Combinations of the grid's lists other than widths and attention."""
    rest = 1
    for key in ("tokens", "normalization", "method", "seed"):
        rest *= len(grid_values.get(key, [None]))
    return rest


def parse_spec(text: str, source: str = "<spec>", max_jobs: int = MAX_SPEC_JOBS) -> Sweep:
    """Expand a sweep spec (TOML text) into jobs; any malformed part is refused with its line,
    and a spec of more than ``max_jobs`` jobs (at most MAX_JOBS_CEILING) is refused with its count
    before any is built."""
    if isinstance(max_jobs, bool) or not isinstance(max_jobs, int) or not 1 <= max_jobs <= MAX_JOBS_CEILING:
        raise InputError(f"the job limit must be an integer between 1 and {MAX_JOBS_CEILING}, got {max_jobs!r}.")
    try:
        data = parse_toml(text, f"sweep spec {source}")
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        what = re.sub(r"\s*\(at (line|end of document).*\)", "", str(exc)).rstrip(".")
        where = f"{source} line {m.group(1)} column {m.group(2)}" if m else source
        if not m and "end of document" in str(exc):
            where = f"{source} line {max(1, len(text.splitlines()))} (end of file)"
        raise InputError(f"{where}: not valid TOML: {what[:1].lower() + what[1:]}.") from None
    lines = _Lines(text)
    for key in data:
        if key not in TOP_KEYS:
            _refuse(source, lines, (key,), f"unknown top-level key {key!r} (expected {', '.join(TOP_KEYS)}).")
    derived = "spec" if source == "<spec>" else Path(source).stem
    name = check_name(data.get("name", derived), source, lines, derived="name" not in data)
    default_timeout = None
    if "timeout" in data:
        try:
            default_timeout = _check_value("timeout", data["timeout"])
        except ValueError as exc:
            _refuse(source, lines, ("timeout",), f"{str(exc).rstrip('.')}.")
    grids = data.get("grid", [])
    if isinstance(grids, dict):
        grids = [((("grid",)), grids)]
    elif isinstance(grids, list):
        grids = [(("grid", i), g) for i, g in enumerate(grids)]
    else:
        _refuse(source, lines, ("grid",), "grid must be a table [grid] or tables [[grid]].")
    entries = data.get("architecture", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        _refuse(source, lines, ("architecture",), "architecture must be given as [[architecture]] tables.")
    networks = data.get("network", [])
    if not isinstance(networks, list) or not all(isinstance(e, dict) for e in networks):
        _refuse(source, lines, ("network",), "network must be given as [[network]] tables.")
    if not grids and not entries and not networks:
        raise InputError(
            f"{source} has neither a [grid] table nor [[architecture]] or [[network]] entries, "
            "so there is nothing to run."
        )

    jobs: list[Job] = []
    mismatched = 0
    checked = []
    for path, grid in grids:
        if not isinstance(grid, dict):
            _refuse(source, lines, path, f"{_section_name(path)} must be a table.")
        values = {}
        for key, raw in grid.items():
            if key not in SPEC_KEYS:
                _refuse(
                    source,
                    lines,
                    path + (key,),
                    f"{_section_name(path)} has unknown key {key!r} (expected {', '.join(SPEC_KEYS)}).",
                )
            if key == "timeout":
                items = [raw]
            elif not isinstance(raw, list) or not raw:
                _refuse(
                    source,
                    lines,
                    path + (key,),
                    f"{_section_name(path)} {key} must be a non-empty list of values, got {raw!r}.",
                )
            else:
                items = raw
            try:
                values[key] = [_check_value(key, v) for v in items]
            except ValueError as exc:
                _refuse(source, lines, path + (key,), f"{_section_name(path)} {str(exc).rstrip('.')}.")
        for key in ("widths", "attention"):
            if key not in values:
                _refuse(source, lines, path, f"{_section_name(path)} is missing {key}.")
        checked.append((path, values))
    total = sum(count_jobs(values) for _, values in checked) + len(entries) + len(networks)
    if total > max_jobs:
        advice = (
            f"pass --max-jobs {total} to run it anyway"
            if total <= MAX_JOBS_CEILING
            else f"that is above the ceiling of {MAX_JOBS_CEILING} that --max-jobs can raise it to; split the spec"
        )
        raise InputError(f"{source} expands to {total} jobs, above the limit of {max_jobs}; {advice}.")
    for path, values in checked:
        timeout = values.get("timeout", [default_timeout])[0]
        rest = _other_count(values)
        by_length: dict[int, list] = {}
        for attention in values["attention"]:
            by_length.setdefault(len(attention), []).append(attention)
        heads_by_length: dict[int, list] = {}
        for heads in values.get("heads", []):
            heads_by_length.setdefault(len(heads), []).append(heads)
        mismatched += len(values["widths"]) * len(values["attention"]) * len(
            values.get("heads", [None])
        ) * rest - count_jobs(values)
        for widths in values["widths"]:  # only matching pairs are visited (no all-pairs loop)
            depth = len(widths) - 1
            for attention, heads, tokens, norm, method, seed in itertools.product(
                by_length.get(depth, []),
                heads_by_length.get(depth, []) if "heads" in values else [None],
                values.get("tokens", [2]),
                values.get("normalization", ["none"]),
                values.get("method", ["auto"]),
                values.get("seed", [0]),
            ):
                arch = _architecture(source, lines, path, widths, attention, tokens, norm, heads)
                jobs.append(Job(arch, method, seed, timeout))
    for i, entry in enumerate(entries):
        path = ("architecture", i)
        vals = {}
        for key, raw in entry.items():
            try:
                vals[key] = _check_value(key, raw)
            except ValueError as exc:
                _refuse(source, lines, path + (key,), f"{_section_name(path)} {str(exc).rstrip('.')}.")
        for key in ("widths", "attention"):
            if key not in vals:
                _refuse(source, lines, path, f"{_section_name(path)} is missing {key}.")
        arch = _architecture(
            source,
            lines,
            path,
            vals["widths"],
            vals["attention"],
            vals.get("tokens", 2),
            vals.get("normalization", "none"),
            vals.get("heads"),
        )
        jobs.append(Job(arch, vals.get("method", "auto"), vals.get("seed", 0), vals.get("timeout", default_timeout)))
    for i, entry in enumerate(networks):
        path = ("network", i)
        where = f"{source} [[network]] #{i + 1}"
        job_values = {}
        for key in NETWORK_JOB_KEYS:
            if key in entry:
                try:
                    job_values[key] = _check_value(key, entry[key])
                except ValueError as exc:
                    _refuse(source, lines, path + (key,), f"{where} {str(exc).rstrip('.')}.")
        described = {k: v for k, v in entry.items() if k not in NETWORK_JOB_KEYS}
        line = lines.line(*path)
        net = Network.from_dict(described, source=f"{where}" + (f" (line {line})" if line else ""))
        jobs.append(
            Job(
                net,
                job_values.get("method", "auto"),
                job_values.get("seed", 0),
                job_values.get("timeout", default_timeout),
            )
        )
    unique: dict[str, Job] = {}
    for job in jobs:
        unique.setdefault(job.label, job)
    return Sweep(name, tuple(unique.values()), mismatched, len(jobs) - len(unique))


def load_spec(path: str | os.PathLike, max_jobs: int = MAX_SPEC_JOBS) -> Sweep:
    """Read a spec through the bounded reader (a FIFO, a device or a huge file is refused at once): a CSV
    list of polynomial networks (``parse_csv_spec``) when its name ends in .csv, else TOML."""
    csv_file = str(path).lower().endswith(".csv")
    text = read_text(path, "sweep spec", max_bytes=MAX_CSV_BYTES if csv_file else MAX_SPEC_BYTES)
    return (parse_csv_spec if csv_file else parse_spec)(text, str(path), max_jobs)


def parse_csv_spec(text: str, source: str = "<spec>", max_jobs: int = MAX_SPEC_JOBS) -> Sweep:
    """Polynomial networks as their users keep them: a CSV with a column ``architecture`` (the widths d_0,
    ..., d_L, as "[2, 3, 1]" or "2,3,1") and optionally ``exponent`` (r, default 2), ``method``, ``seed``,
    ``timeout``; other columns (a published table's own results) are ignored. Every malformed row is
    refused with its line; the name is the file's."""
    if isinstance(max_jobs, bool) or not isinstance(max_jobs, int) or not 1 <= max_jobs <= MAX_JOBS_CEILING:
        raise InputError(f"the job limit must be an integer between 1 and {MAX_JOBS_CEILING}, got {max_jobs!r}.")
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or "architecture" not in [c.strip() for c in rows[0]]:
        raise InputError(f"{source} line 1: a CSV spec needs a header with a column 'architecture' (the widths).")
    header = [c.strip() for c in rows[0]]
    body = [(n, row) for n, row in enumerate(rows[1:], start=2) if any(c.strip() for c in row)]
    if len(body) > max_jobs:
        advice = (
            f"pass --max-jobs {len(body)} to run it anyway"
            if len(body) <= MAX_JOBS_CEILING
            else f"that is above the ceiling of {MAX_JOBS_CEILING} that --max-jobs can raise it to; split the spec"
        )
        raise InputError(f"{source} expands to {len(body)} jobs, above the limit of {max_jobs}; {advice}.")
    derived = "spec" if source == "<spec>" else Path(source).stem
    name = check_name(derived, source, derived=True)
    jobs = []
    for n, row in body:
        if len(row) != len(header):
            raise InputError(f"{source} line {n}: {len(row)} fields, the header has {len(header)}.")
        entry = {k: v.strip() for k, v in zip(header, row)}
        try:
            widths = _check_int_list(entry["architecture"].strip("[]() "), "architecture")
            exponent = _check_int_list(entry.get("exponent") or "2", "exponent")
            if len(exponent) != 1 or not 1 <= exponent[0] <= MAX_DEGREE:
                raise ValueError(f"exponent must be one integer from 1 to {MAX_DEGREE}, got {entry['exponent']!r}")
            job = {}
            for key in NETWORK_JOB_KEYS:
                if entry.get(key):
                    raw = entry[key]
                    value = raw if key == "method" else (float(raw) if key == "timeout" else integer_text(raw))
                    job[key] = _check_value(key, raw if value is None else value)
            net = Network.polynomial_network(widths, exponent[0])
        except (ValueError, InputError) as exc:
            raise InputError(f"{source} line {n}: {str(exc).rstrip('.')}.") from None
        jobs.append(Job(net, job.get("method", "auto"), job.get("seed", 0), job.get("timeout")))
    unique: dict[str, Job] = {}
    for job in jobs:
        unique.setdefault(job.label, job)
    return Sweep(name, tuple(unique.values()), 0, len(jobs) - len(unique))


def spec_toml(name: str, jobs) -> str:
    """A sweep spec with one ``[[architecture]]`` per job, which :func:`parse_spec` expands to the
    same jobs (the inverse of parsing, for the record of a run)."""
    out = [f"name = {json.dumps(name)}"]
    for job in jobs:
        arch = job.architecture
        if arch.paper is None:
            out += [
                "",
                "[[network]]",
                f"input = {arch.input}",
                f"tokens = {arch.tokens}",
                f"method = {json.dumps(job.method)}",
                f"seed = {job.seed}",
            ]
            if job.timeout is not None:
                out.append(f"timeout = {json.dumps(job.timeout)}")
            for block in arch.to_dict()["blocks"]:
                out += ["[[network.block]]"] + [f"{k} = {json.dumps(v)}" for k, v in block.items() if v is not None]
            continue
        entry = {**arch.to_dict(), "method": job.method, "seed": job.seed, "timeout": job.timeout}
        out += ["", "[[architecture]]"]
        out += [f"{k} = {json.dumps(v)}" for k, v in entry.items() if v is not None]
    return "\n".join(out)
