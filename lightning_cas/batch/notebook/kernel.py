"""The Macaulay2 Jupyter kernel a notebook runs in, and the package it loads by name.

Debian's kernel starts ``M2`` in its own assets directory (so ``./`` on Macaulay2's path is not
the notebook's directory) and without ``-q``, so Macaulay2 finds packages in
``~/.Macaulay2/code/``. :func:`install_package` copies LightningCAS there; the checking kernel
gets a private ``HOME`` with its own copy (and ``TERM=dumb``: no terminal escapes in the
output), so a check never depends on, or reads, what is in the user's own Macaulay2 directory.
"""

from __future__ import annotations

import contextlib
import copy
import math
import os
import secrets
import time
from pathlib import Path

from lightning_cas.errors import InputError, NotebookKernelError
from lightning_cas.macaulay2.render import PACKAGE, template_dir
from lightning_cas.macaulay2.runner import MAX_OUTPUT_BYTES
from lightning_cas.macaulay2.runner import kernel_environment as m2_kernel_environment
from lightning_cas.results.display import printable
from lightning_cas.system.files import private_dir, read_bytes, write_file

STARTUP_S = 60
ATTEMPTS = 3  # a cell whose output came back incomplete is rerun on a fresh kernel, within the cell's limit
PACKAGE_NAME = PACKAGE.removesuffix(".m2")
# what one cell may print, the cap of a Macaulay2 script's output (macaulay2.runner): the Debian kernel
# sends a cell's whole output as one message, so a bigger message is refused by the socket unread
MAX_CELL_OUTPUT_BYTES = MAX_OUTPUT_BYTES
JSON_ALLOWANCE = 2  # a message carries its text as JSON: escapes at most double a line of Macaulay2 output


def package_files() -> list[tuple[str, Path]]:
    """(path relative to the Macaulay2 code directory, source file) of the LightningCAS package:
    its entry file and, when it has one, its directory of auxiliary files."""
    root = template_dir()
    files = [(PACKAGE, root / PACKAGE)]
    aux = root / PACKAGE_NAME
    if aux.is_dir():
        files += [(f"{PACKAGE_NAME}/{p.relative_to(aux).as_posix()}", p) for p in sorted(aux.rglob("*.m2"))]
    return files


def install_package(home: str | os.PathLike | None = None) -> Path:
    """Copy LightningCAS into ``<home>/.Macaulay2/code/`` (home: the user's), where Macaulay2 finds
    it by name; returns that directory. Files already there with the same bytes are left alone;
    a symlink or a non-regular file in the way is refused, never written through."""
    base = Path(home) if home is not None else Path.home()
    code = base / ".Macaulay2" / "code"
    for where in (base / ".Macaulay2", code, code / PACKAGE_NAME):
        if where.is_symlink() or (where.exists() and not where.is_dir()):
            raise InputError(f"{printable(where)} is not a plain directory; refusing to install the package there.")
    for relative, source in package_files():
        data = read_bytes(source, "package file")
        target = code / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            if read_bytes(target, "package file", follow_symlinks=False) == data:
                continue
        except InputError:
            pass
        write_file(target, data, "package file")
    return code


def kernel_home() -> Path:
    """The private HOME of the checking kernel, with the package installed in it."""
    home = private_dir("kernel-home")
    install_package(home)
    return home


def kernel_environment() -> dict:
    """The checking kernel's environment (the Macaulay2 layer's: plain terminal, no user kernel config,
    heap cap, quiet debugger), with the private HOME holding the package."""
    return m2_kernel_environment(kernel_home())


def kernel_spec(name: str) -> dict:
    try:
        from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    except ImportError:
        raise InputError("notebook execution needs nbclient (pip install 'lightning_cas[notebook]').") from None
    try:
        spec = KernelSpecManager().get_kernel_spec(name)
    except NoSuchKernel:
        raise NotebookKernelError(
            f"the Jupyter kernel '{printable(name)}' is not installed; `make setup` installs "
            "Debian's macaulay2-jupyter-kernel (kernelspec m2)."
        ) from None
    return {"name": name, "display_name": spec.display_name, "argv": spec.argv[:3], "resource_dir": spec.resource_dir}


class CellLimit:
    """The hard limit of one cell, shared by its attempts: each runs in what the earlier ones left."""

    def __init__(self, seconds: float):
        self.seconds, self.used = seconds, 0.0

    def left(self) -> float:
        return self.seconds - self.used

    def spent(self) -> bool:
        return self.left() < 1  # nbclient's limits are whole seconds: less than one is none


class Kernel:
    """One kernel for a notebook, replaced by a fresh one (new client, new kernel, setup cell rerun)
    after any failed cell, so a cell cut off early never leaves output or state for the next.

    ``prelude`` is prepended to the setup cell while it runs (the checking switch) and taken out
    again, so the notebook keeps the setup cell a reader runs."""

    def __init__(
        self, nb, kernel: str, work: str, startup_timeout: float, setup_limit_s: float, setup, prelude: str, check_setup
    ):
        self.nb, self.kernel, self.work = nb, kernel, work
        self.startup_timeout, self.setup_limit_s = startup_timeout, setup_limit_s
        self.setup = setup  # (index, cell) of the setup cell
        self.prelude, self.check_setup = prelude, check_setup
        self.stack = contextlib.ExitStack()
        self.client = None
        self.starts = 0

    def start(self) -> dict:
        """Start a kernel and run the setup cell; returns what is known about the kernel.

        The setup cell has one limit like every cell: its attempts (each on a fresh kernel) share it,
        and none starts once it is spent (a hung kernel once cost three full limits and their grace)."""
        problem, limits = "", CellLimit(self.setup_limit_s)
        for _ in range(ATTEMPTS):
            info = self._start_once()
            index, original = self.setup
            cell = original if self.starts == 1 else copy.deepcopy(original)
            source = cell.source
            cell.source = self.prelude + source
            try:
                failure = self.run(cell, index, limits)
            finally:
                cell.source = source
            if self.starts > 1:  # nbclient stores the executed cell at its index: keep the first run's
                self.nb.cells[index] = original
            found = self.check_setup(cell)
            if not failure and found.get("m2_version"):
                return {**info, "m2_version": found["m2_version"]}
            problem = failure or found.get("problem") or "no output"
            if limits.spent():
                break
        raise NotebookKernelError(
            f"the '{printable(self.kernel)}' kernel did not run the setup cell ({printable(problem)[:300]})."
        )

    def _start_once(self) -> dict:
        self.stack.close()
        self.stack = contextlib.ExitStack()
        self.starts += 1
        self.client = capped_client(MAX_CELL_OUTPUT_BYTES)(
            self.nb,
            kernel_name=self.kernel,
            timeout=STARTUP_S,
            startup_timeout=self.startup_timeout,
            allow_errors=True,
            record_timing=True,
            shutdown_kernel="immediate",
            resources={"metadata": {"path": self.work}},
        )
        log = self.stack.enter_context(open(Path(self.work) / "kernel.log", "ab"))
        try:
            self.stack.enter_context(self.client.setup_kernel(env=kernel_environment(), stdout=log, stderr=log))
        except InputError:
            raise
        except Exception as exc:
            raise NotebookKernelError(
                f"the Jupyter kernel '{printable(self.kernel)}' did not start "
                f"({printable(type(exc).__name__)}: {printable(str(exc))[:200]}); its log ends: "
                f"{printable(self.log_tail())}."
            ) from None
        self.client.watch_output()
        self.stack.callback(self.client.close_monitor)
        try:
            content = self.client.wait_for_reply(self.client.kc.kernel_info()).get("content", {})
        except Exception:  # the reply is informative only
            content = {}
        return {k: content.get(k) for k in ("implementation", "implementation_version")}

    def log_tail(self, size: int = 400) -> str:
        try:
            return (Path(self.work) / "kernel.log").read_bytes()[-size:].decode("utf-8", "replace").strip()
        except OSError:
            return ""

    def run(self, cell, index: int, limits: CellLimit) -> str | None:
        """Execute one cell within what is left of its limit; the failure (time limit, dead kernel), or None."""
        from nbclient.exceptions import CellTimeoutError, DeadKernelError

        self.client.timeout = max(1, math.ceil(limits.left()))  # nbclient counts whole seconds
        self.client.printed = 0
        began = time.monotonic()
        try:
            self.client.execute_cell(cell, index)
        except CellTimeoutError:
            return self.client.over_cap(cell) or f"the cell exceeded the {limits.seconds:g} s limit and was stopped"
        except DeadKernelError:
            return "the kernel died during the cell"
        finally:
            limits.used += time.monotonic() - began
        return self.client.over_cap(cell)

    def close(self) -> None:
        self.stack.close()


def capped_client(cap: int):
    """nbclient's NotebookClient with a cap on what one cell may print, as a Macaulay2 script has: the
    sockets refuse, unread, any message longer than the cap allows (the kernel sends a cell's output
    whole), and the outputs kept stop at the cap; either way the cell fails, in one line."""
    import zmq
    from jupyter_client import AsyncKernelManager
    from nbclient import NotebookClient

    largest = JSON_ALLOWANCE * cap + 2**16  # a message's JSON and its headers

    class CappedManager(AsyncKernelManager):
        def client(self, **kwargs):
            kc = super().client(**kwargs)
            kc.context.setsockopt(zmq.MAXMSGSIZE, largest)  # for the sockets the client opens next
            return kc

    class CappedClient(NotebookClient):
        printed = 0
        monitor = None

        def watch_output(self) -> None:
            """Hear when the output socket drops a message over the size limit (it disconnects then)."""
            sock = self.kc.iopub_channel.socket
            address = f"inproc://lcas-iopub-{secrets.token_hex(8)}"  # one per client: never a stale one's
            sock.monitor(address, zmq.EVENT_DISCONNECTED)
            self.monitor = zmq.Context.shadow(sock.context.underlying).socket(zmq.PAIR)
            self.monitor.linger = 0
            self.monitor.connect(address)

        def output(self, outs, msg, display_id, cell_index):
            content = msg.get("content", {})
            self.printed += len(str(content.get("text", ""))) + sum(
                len(str(v)) for v in content.get("data", {}).values()
            )
            if self.printed > cap:
                outs.clear()  # nothing of it is kept: the cell fails
                return None
            return super().output(outs, msg, display_id, cell_index)

        def over_cap(self, cell) -> str | None:
            dropped = False
            while self.monitor is not None and self.monitor.poll(0):
                self.monitor.recv_multipart()
                dropped = True
            if not dropped and self.printed <= cap:
                return None
            cell.outputs = []
            return f"the cell printed more than {cap / 2**20:g} MiB (the output cap) and was stopped"

        def close_monitor(self) -> None:
            if self.monitor is not None:
                self.monitor.close()
                self.monitor = None

    return lambda *args, **kwargs: CappedClient(*args, kernel_manager_class=CappedManager, **kwargs)
