"""Execute one notebook in a fresh kernel of this interpreter (the tutorial runner's worker).

A temporary kernelspec points at the running interpreter, so the notebooks see
this installation.  After each code cell, every live panel the cell displayed
is asked (through :mod:`smoothdp_nb.reports.snapshot`, in the kernel) for a
static picture, which the HTML handout shows in its place.  The kernel is shut
down as soon as its notebook finishes; the CPU time of its process tree is
measured just before.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from smoothdp_nb.reports.run_progress import RunProgress

__all__ = [
    "Interrupted",
    "execute",
    "execute_async",
    "kernel_dir",
    "kernel_log_tail",
    "short_error",
    "tree_cpu_seconds",
]

_WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
_MODEL_ID = re.compile(r"^[0-9a-zA-Z_-]{1,64}$")
#: a logger that swallows nbclient's and jupyter_client's chatter (kernel died, TCP, ...)
_QUIET = logging.getLogger("smoothdp_nb.tutorials.kernel")
_QUIET.setLevel(logging.CRITICAL)
_QUIET.propagate = False


def kernel_dir() -> tuple[Path, str]:
    """A temporary kernelspec pointing at this interpreter (so the notebooks see this install)."""
    d = Path(tempfile.mkdtemp(prefix="smoothdp-kernel-"))
    name = "smoothdp-tutorials"
    spec = d / "kernels" / name
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "smoothdp tutorials",
                "language": "python",
            }
        )
    )
    return d, name


def _client_class() -> type:
    """NotebookClient that reports progress and snapshots live panels after each cell."""
    import nbclient  # deferred: the tutorials extra, needed only to run notebooks

    class ReportClient(nbclient.NotebookClient):
        progress: RunProgress | None = None
        label: str = ""
        interrupted: list[bool] | None = None  # shared by the notebooks of one run

        async def _async_cleanup_kernel(self) -> None:
            # nbclient calls this from its SIGINT/SIGTERM handler (with a kernel manager
            # passed in, it does not call it at the end of a run): note the interruption
            # so that the run stops instead of going on with the next notebook
            if self.interrupted is not None:
                self.interrupted.append(True)
            await super()._async_cleanup_kernel()

        async def async_execute_cell(
            self, cell: Any, cell_index: int, execution_count: int | None = None, store_history: bool = True
        ) -> Any:
            if cell.cell_type != "code" or not cell.source.strip():
                return await super().async_execute_cell(cell, cell_index, execution_count, store_history)
            code = [i for i, c in enumerate(self.nb.cells) if c.cell_type == "code"]
            if self.progress is not None:
                self.progress.cell(self.label, code.index(cell_index) + 1, len(code), cell.source)
            cell = await super().async_execute_cell(cell, cell_index, execution_count, store_history)
            await self._snapshot_widgets(cell)
            if self.progress is not None:
                self.progress.advance()
            return cell

        async def _snapshot_widgets(self, cell: Any) -> None:
            """Ask the kernel for a static picture of each live panel the cell displayed."""
            for out in cell.get("outputs", []):
                view = out.get("data", {}).get(_WIDGET_MIME)
                if not view or "image/svg+xml" in out["data"]:
                    continue
                model_id = str(view.get("model_id", ""))
                if not _MODEL_ID.match(model_id):
                    continue
                expr = (
                    "__import__('smoothdp_nb.reports.snapshot', fromlist=['widget_snapshot'])"
                    f".widget_snapshot({model_id!r})"
                )
                assert self.kc is not None  # inside async_execute: the client is connected
                msg_id = self.kc.execute("", silent=True, store_history=False, user_expressions={"s": expr})
                reply = await self.async_wait_for_reply(msg_id)
                found = (reply or {}).get("content", {}).get("user_expressions", {}).get("s", {})
                snap = found.get("data", {}).get("application/json") if found.get("status") == "ok" else None
                if not snap:
                    continue
                if snap.get("svg"):
                    out["data"]["image/svg+xml"] = snap["svg"]
                out.setdefault("metadata", {})["smoothdp_snapshot"] = {
                    "title": snap.get("title"),
                    "controls": list(snap.get("controls", [])),
                }

    return ReportClient


class Interrupted(Exception):
    """The user pressed Ctrl-C (or the run got SIGTERM) while a notebook ran."""


async def execute_async(
    path: Path,
    kernel_dir: Path,
    kernel_name: str,
    *,
    timeout: int,
    env: dict,
    progress: RunProgress | None,
    stderr_log: Path | None,
    interrupted: list[bool] | None = None,
    cpu: list[float] | None = None,
) -> Any:
    """Execute one notebook in a fresh kernel, shut the kernel down, return the notebook.

    Raises ``nbclient.exceptions.CellExecutionError`` (and others) with the
    partly executed notebook in ``exc.notebook``.  ``cpu``, if given, receives
    the CPU seconds of the kernel's process tree (measured just before the
    kernel is shut down; nothing where it cannot be measured).
    """
    # deferred: the tutorials extra, needed only to run notebooks
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    nb = nbformat.read(path, as_version=4)
    ksm = KernelSpecManager(kernel_dirs=[str(kernel_dir / "kernels")], ensure_native_kernel=False, log=_QUIET)
    km = AsyncKernelManager(kernel_name=kernel_name, kernel_spec_manager=ksm, log=_QUIET)
    client = _client_class()(
        nb,
        km=km,
        kernel_name=kernel_name,
        timeout=timeout,
        log=_QUIET,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.progress, client.label, client.interrupted = progress, path.stem, interrupted
    # a local file, closed below; opening it does not hold the event loop up noticeably
    log = open(stderr_log, "wb") if stderr_log is not None else None
    try:
        sink = log if log is not None else subprocess.DEVNULL
        await client.async_execute(env={**os.environ, **env}, stderr=sink, stdout=sink)
    except Exception as exc:
        if interrupted:
            raise Interrupted from None
        exc.notebook = nb  # type: ignore[attr-defined]
        raise
    finally:
        # nbclient leaves a kernel it did not create running: stop it now, not at exit
        # (now=True: the notebook is done; a polite shutdown request costs 1-2 s per kernel)
        try:
            pid = getattr(getattr(km, "provisioner", None), "pid", None)
            used = tree_cpu_seconds(pid) if cpu is not None and isinstance(pid, int) else None
            if used is not None and cpu is not None:
                cpu.append(used)
            if client.kc is not None:
                client.kc.stop_channels()
            if km is not None and km.has_kernel:
                await km.shutdown_kernel(now=True)
        finally:
            if log is not None:
                log.close()
    code = [c for c in nb.cells if c.cell_type == "code"]
    missing = [i for i, c in enumerate(code) if c.get("execution_count") is None]
    if missing:
        stopped = RuntimeError(f"{path.name}: code cells {missing} did not run")
        stopped.notebook = nb  # type: ignore[attr-defined]
        raise stopped
    return nb


def execute(path: Path, kernel_dir: Path, kernel_name: str, timeout: int = 1800, env: dict | None = None) -> Any:
    """Execute one notebook in a fresh kernel; returns the executed notebook (raises on error).

    The kernel is shut down before this returns; its stderr is discarded.
    """
    return asyncio.run(
        execute_async(
            Path(path), kernel_dir, kernel_name, timeout=timeout, env=env or {}, progress=None, stderr_log=None
        )
    )


def tree_cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system) of a process and all its descendants, living or reaped.

    A process's own times plus its reaped children's (``children_user`` and
    ``children_system``: a notebook's finished pool workers), over the process
    and every living descendant (a pool still running, a forkserver and the
    workers it reaped).  None without psutil or once the process is gone.
    """
    try:
        import psutil  # deferred: optional (the tutorials extra); None without it
    except ImportError:
        return None
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return None
    total = 0.0
    for proc in procs:
        try:
            t = proc.cpu_times()
        except psutil.Error:  # exited meanwhile: counted by its parent once reaped
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def short_error(exc: BaseException) -> str:
    """One line for a failed notebook: the kernel's exception name and message, or the last line."""
    text = str(exc).strip()
    ename = getattr(exc, "ename", None)
    if ename:  # CellExecutionError: the kernel's exception name and message
        return f"{ename}: {getattr(exc, 'evalue', '')}".strip()
    last = text.splitlines()[-1] if text else ""
    return f"{type(exc).__name__}: {last}" if last else type(exc).__name__


def kernel_log_tail(log: Path, lines: int = 15) -> str:
    """The last ``lines`` lines of a kernel's stderr log, without ZeroMQ's TCP warning ("" if unreadable)."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    kept = [ln for ln in text.splitlines() if ln.strip() and "running over TCP without encryption" not in ln]
    return "\n".join(kept[-lines:])
