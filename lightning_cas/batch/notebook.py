"""Export a run's Macaulay2 scripts to a Jupyter notebook for the Macaulay2 kernel (M2JK).

Why: the scripts are self-contained (network library inlined), so a user can re-run and extend
them interactively, e.g. with a newer Macaulay2 than the one the sweep used.
"""

from __future__ import annotations

import os
from pathlib import Path

from lightning_cas.batch.store import JobResult, ResultStore, load_record
from lightning_cas.errors import InputError
from lightning_cas.core.files import atomic_write_text

KERNELSPEC = {"name": "m2", "display_name": "M2", "language": "text/x-macaulay2"}


def _records(path: Path) -> list[JobResult]:
    if path.is_dir():
        return ResultStore(path).records()
    rec = load_record(path)
    if rec is None:
        raise InputError(f"{path} is not a lightning-cas job result.")
    return [rec]


def _script_text(rec: JobResult, base: Path) -> str | None:
    if not rec.script:
        return None
    script = Path(rec.script)
    if not script.is_absolute():
        script = base / script
    try:
        return script.read_text(encoding="utf-8")
    except OSError:
        return None


def build_notebook(path: str | os.PathLike):
    """The notebook node (nbformat v4) with one markdown + one code cell per script."""
    try:
        import nbformat
        from nbformat import v4
    except ImportError:
        raise InputError("notebook export needs nbformat (pip install 'lightning_cas[notebook]').") from None
    path = Path(path)
    base = path if path.is_dir() else path.parent
    nb = v4.new_notebook()
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = {"name": "Macaulay2", "codemirror_mode": "macaulay2", "file_extension": ".m2"}
    nb.cells.append(v4.new_markdown_cell(
        f"# Macaulay2 scripts of the lightning-cas run in `{base}`\n\n"
        "Each script is self-contained: it sets the architecture, defines the network library and "
        "prints `@@LCAS@@ key value` records."))
    count = 0
    for rec in sorted(_records(path), key=lambda r: r.label):
        text = _script_text(rec, base)
        if text is None:
            continue
        outcome = (f"dimension **{rec.result.dimension}** ({rec.result.method}, {rec.result.certainty})"
                   if rec.result else f"status **{rec.status}**: {rec.message}")
        pred = "no prediction" if rec.predicted is None else f"predicted {rec.predicted} ({rec.prediction_status})"
        nb.cells.append(v4.new_markdown_cell(f"## `{rec.label}`\n\n{outcome}; {pred}."))
        nb.cells.append(v4.new_code_cell(text.rstrip("\n")))
        count += 1
    nbformat.validate(nb)
    return nb, count


def write_notebook(path: str | os.PathLike, output: str | os.PathLike) -> int:
    """Write the notebook; returns how many scripts it holds."""
    import nbformat

    nb, count = build_notebook(path)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(output, nbformat.writes(nb))
    return count
