"""How every section's rows say that a worker process died, and the check that finds such rows: a bench
with a dead worker is broken (its own code raised), not slow, and must not pass as a run."""

from __future__ import annotations

WORKER_EXIT = "worker exit"  # how every section's row says its worker died (see crashed_workers)


def worker_failure(returncode: int, output: str) -> dict:
    """The row of a worker that died: its exit code and the last line it printed (the exception)."""
    return {"status": "error", "error": f"{WORKER_EXIT} {returncode}: {(output.strip().splitlines() or ['?'])[-1]}"}


def crashed_workers(results: dict) -> list[tuple[str, str]]:
    """Measurements whose worker died (an exception in the benchmark's own code, not a refusal or a time
    limit): a bench with these is broken, not slow, and must not pass as a run."""
    out = []

    def walk(x, where):
        if isinstance(x, dict):
            if x.get("status") == "error" and str(x.get("error", "")).startswith(WORKER_EXIT):
                out.append((where, x["error"]))
            for k, v in x.items():
                walk(v, f"{where}.{k}")
        elif isinstance(x, list):
            for i, v in enumerate(x):
                walk(v, f"{where}[{i}]")

    for name, rows in results.get("sections", {}).items():
        walk(rows, name)
    return out
