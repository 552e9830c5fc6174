"""Where scan points run: a ``concurrent.futures.Executor`` of one of three kinds.

* ``workers=0``: in this process, one point after the other (:class:`InlineExecutor`);
* ``workers=n``: ``n`` local processes (``ProcessPoolExecutor``, spawn start method, each
  worker's BLAS/OpenMP pools limited to one thread so that n workers use n cores);
* ``scheduler="tcp://HOST:PORT"``: a Dask distributed cluster through
  ``Client(address).get_executor()`` (the optional ``dask`` extra).

All three take the same task, :func:`execute_point`, so a scan's rows do not depend on
where it ran.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import socket
import threading
import time
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import Any, Callable

from .grid import ScanError

_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


def load_runner(path: str) -> Callable[..., dict[str, Any]]:
    """Import ``"module:function"``; raises ImportError/AttributeError with the path in it."""
    mod_name, _, fn_name = path.partition(":")
    if not mod_name or not fn_name:
        raise ImportError(f"runner must look like 'module:function', got {path!r}")
    fn = importlib.import_module(mod_name)
    for part in fn_name.split("."):
        fn = getattr(fn, part)
    return fn


def execute_point(runner: str, setting, options: dict[str, Any], seed: int) -> dict[str, Any]:
    """Run one point; returns the runner's dict plus ``wall_s`` (seconds in the runner)."""
    fn = load_runner(runner)
    t = time.perf_counter()
    out = dict(fn(setting, options, seed))
    out["wall_s"] = time.perf_counter() - t
    return out


def _exit_with_parent(parent_pid: int, every_s: float = 0.5) -> None:
    """Worker initializer: leave as soon as the scan's driver is gone.

    A driver killed with SIGKILL cannot tell its pool to stop; its workers would finish their
    point (whose row the dead driver can no longer save) and then wait forever on the queue.
    A daemon thread notices the re-parenting and ends the worker instead.
    """

    def watch() -> None:
        while True:
            if os.getppid() != parent_pid:
                os._exit(1)
            time.sleep(every_s)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


class InlineExecutor(Executor):
    """Runs each task in the calling process at submit time (``--workers 0``)."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        fut: Future = Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as e:  # noqa: BLE001 — delivered through the future, like a pool
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            fut.set_exception(e)
        return fut


class ExecutorHandle:
    """An executor plus what must be closed after it (the Dask client)."""

    def __init__(self, executor: Executor, kind: str, closer: Callable[[], None] | None = None):
        self.executor, self.kind, self._closer = executor, kind, closer

    def close(self, cancel: bool = False) -> None:
        try:
            try:
                self.executor.shutdown(wait=not cancel, cancel_futures=cancel)
            except TypeError:  # dask's ClientExecutor.shutdown has no cancel_futures
                self.executor.shutdown(wait=not cancel)
        finally:
            if self._closer is not None:
                self._closer()


def make_executor(workers: int = 2, scheduler: str | None = None) -> ExecutorHandle:
    """The executor of a scan (module docstring); raises ScanError for a scheduler it cannot use."""
    if scheduler:
        try:
            from distributed import Client
        except ImportError:
            raise ScanError("--scheduler needs dask.distributed, which is not installed: pip install 'theorydyn[dask]' "
                 "(or pip install distributed)")
        if scheduler.startswith("tcp://"):
            # A refused or unroutable address fails here at once, not after Client's timeout.
            host, _, port = scheduler[len("tcp://"):].rpartition(":")
            try:
                socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
            except (OSError, ValueError) as e:
                raise ScanError(f"--scheduler: cannot connect to {scheduler!r}: {e}")
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError, ValueError) as e:
            raise ScanError(f"--scheduler: cannot connect to {scheduler!r}: {e}")
        return ExecutorHandle(client.get_executor(), f"dask {scheduler}", client.close)
    if workers == 0:
        return ExecutorHandle(InlineExecutor(), "in-process")
    # One thread per worker: n workers on n cores, not n × (BLAS threads). Spawned children
    # read these at start-up; the parent's own pools are not affected.
    saved = {k: os.environ.get(k) for k in _THREAD_VARS}
    for k in _THREAD_VARS:
        os.environ.setdefault(k, "1")
    ex = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_exit_with_parent, initargs=(os.getpid(),))

    def restore() -> None:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    return ExecutorHandle(ex, f"{workers} local process{'es' if workers > 1 else ''}", restore)
