"""Where scan points run: a ``concurrent.futures.Executor`` of one of three kinds.

* ``workers=0``: in this process, one point after the other (:class:`InlineExecutor`);
* ``workers=n``: ``n`` local processes (``ProcessPoolExecutor``, spawn start method, each
  worker's BLAS/OpenMP pools limited to one thread so that n workers use n cores);
* ``scheduler="slurm[:key=value,…]"``: a Dask cluster of Slurm jobs started by ``dask-jobqueue``
  (:func:`slurm_options`; the ``dask`` extra), then used as below;
* ``scheduler="tcp://HOST:PORT"``: a Dask distributed cluster through
  ``Client(address).get_executor()`` (the optional ``dask`` extra). A cluster with no live worker
  never runs a task, so the scan would wait forever: it is refused when no worker joins within
  :data:`DASK_WORKER_TIMEOUT_S` seconds (``$THEORYDYN_DASK_WORKER_TIMEOUT`` sets it), and once
  running, a watchdog fails every unfinished point, naming the scheduler, when the cluster has
  had no worker for that long (:class:`WatchedExecutor`).

All three take the same task, :func:`execute_point`, so a scan's rows do not depend on
where it ran.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import re
import signal
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, InvalidStateError, ProcessPoolExecutor
from typing import Any

from .grid import ScanError

_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")

#: Seconds a local worker gets to end after SIGTERM before it is killed (a Ctrl-C or a lost pool)
STOP_GRACE_S = 2.0
#: Seconds a Dask scan waits for a live worker, at the start and whenever the last one is gone.
DASK_WORKER_TIMEOUT_S = 60.0
#: Environment variable that overrides :data:`DASK_WORKER_TIMEOUT_S` (seconds > 0).
DASK_WORKER_TIMEOUT_ENV = "THEORYDYN_DASK_WORKER_TIMEOUT"


def dask_worker_timeout() -> float:
    """:data:`DASK_WORKER_TIMEOUT_S`, or ``$THEORYDYN_DASK_WORKER_TIMEOUT`` (ScanError when not a time > 0)."""
    text = os.environ.get(DASK_WORKER_TIMEOUT_ENV)
    if not text:
        return DASK_WORKER_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ScanError(f"{DASK_WORKER_TIMEOUT_ENV} must be a number of seconds > 0, got {text!r}")
    return value


def execute_point(runner: Callable[..., dict[str, Any]], setting, options: dict[str, Any], seed: int) -> dict[str, Any]:
    """Run one point; returns the runner's dict plus ``wall_s`` (seconds in the runner). The runner travels
    to a worker process as a reference to its function (pickle names its module and name)."""
    t = time.perf_counter()
    out = dict(runner(setting, options, seed))
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


def _init_worker(parent_pid: int) -> None:
    """Worker initializer: :func:`_exit_with_parent`, and tqdm's lock a thread lock. tqdm makes a
    multiprocessing lock (a named semaphore, registered with the resource tracker) for its first bar,
    even a disabled one; a worker ended by the driver on a Ctrl-C never unregisters it, and the
    tracker then warned of "leaked semaphore objects". A worker draws no bar: a thread lock will do."""
    _exit_with_parent(parent_pid)
    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())


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


class _QuietPool(ProcessPoolExecutor):
    """A process pool whose workers never see Ctrl-C: each one starts with SIGINT ignored (a Python
    started that way installs no KeyboardInterrupt handler), so a Ctrl-C in the terminal reaches the
    driver alone, which cancels the pool and ends its workers (:meth:`ExecutorHandle.close`): no
    worker prints an import traceback, even during its start-up."""

    def _spawn_process(self) -> None:
        if threading.current_thread() is not threading.main_thread():  # signal() only works there
            super()._spawn_process()  # type: ignore[misc]
            return
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            super()._spawn_process()  # type: ignore[misc]
        finally:
            signal.signal(signal.SIGINT, previous)

    def workers(self) -> list:
        """The worker processes now (``shutdown`` forgets them: take them before it)."""
        return list((getattr(self, "_processes", None) or {}).values())

    def terminate_workers(self, processes: list | None = None, grace_s: float = STOP_GRACE_S) -> None:
        """End every worker now (SIGTERM, then SIGKILL after ``grace_s`` seconds) and reap it: the points
        they were computing are lost, the rows saved stay. ``processes``: taken before ``shutdown``, which
        drops the pool's own list (issue 42: the workers were never ended, and the scan waited for their
        points to finish, 23-30 s after a Ctrl-C)."""
        procs = self.workers() if processes is None else processes
        for p in procs:
            if p.is_alive():
                p.terminate()
        deadline = time.monotonic() + grace_s
        for p in procs:
            p.join(max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join(1.0)


class ExecutorHandle:
    """An executor plus what must be closed after it (the Dask client)."""

    def __init__(self, executor: Executor, kind: str, closer: Callable[[], None] | None = None):
        self.executor, self.kind, self._closer = executor, kind, closer

    def close(self, cancel: bool = False) -> None:
        """Shut the executor down: wait for its tasks, or with ``cancel`` drop the queued ones and end the
        local workers at once (they ignore Ctrl-C: the driver ends them, within :data:`STOP_GRACE_S` s)."""
        pool = self.executor if cancel and isinstance(self.executor, _QuietPool) else None
        # before shutdown, which forgets them: the workers, and the thread that manages them
        procs = pool.workers() if pool is not None else []
        manager = getattr(pool, "_executor_manager_thread", None)
        try:
            try:
                self.executor.shutdown(wait=not cancel, cancel_futures=cancel)
            except TypeError:  # dask's ClientExecutor.shutdown has no cancel_futures
                self.executor.shutdown(wait=not cancel)
            if pool is not None:
                pool.terminate_workers(procs)
                if manager is not None:  # it sees the workers gone and closes the pool's queues
                    manager.join(STOP_GRACE_S)
        finally:
            if self._closer is not None:
                self._closer()


class WatchedExecutor(Executor):
    """A Dask executor that cannot wait forever: when the cluster has had no live worker for
    ``timeout_s`` seconds while tasks are unfinished, each of them fails with a :class:`ScanError`
    naming the scheduler (the scan records the points as failed and exits 1; a rerun resumes).

    ``count_workers()`` returns the number of live workers (``len(client.nthreads())``); it is
    called every ``every_s`` seconds by a daemon thread.
    """

    def __init__(
        self, inner: Executor, count_workers: Callable[[], int], scheduler: str, timeout_s: float, every_s: float = 1.0
    ):
        self._inner, self._count, self._scheduler = inner, count_workers, scheduler
        self.timeout_s, self._every_s = timeout_s, every_s
        self._pending: set[Future] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.fired = False
        self._thread = threading.Thread(target=self._watch, name="dask-worker-watchdog", daemon=True)
        self._thread.start()

    def submit(self, fn, /, *args, **kwargs) -> Future:
        outer: Future = Future()
        with self._lock:
            self._pending.add(outer)
        inner = self._inner.submit(fn, *args, **kwargs)

        def relay(f: Future) -> None:
            with self._lock:
                self._pending.discard(outer)
            try:
                if f.cancelled():
                    outer.cancel()
                elif f.exception() is not None:
                    outer.set_exception(f.exception())
                else:
                    outer.set_result(f.result())
            except InvalidStateError:  # the watchdog failed it first
                pass

        inner.add_done_callback(relay)
        return outer

    def _watch(self) -> None:
        last_seen = time.monotonic()
        while not self._stop.wait(self._every_s):
            try:
                n = self._count()
            except Exception:  # noqa: BLE001 — a scheduler that does not answer has no worker we can use
                n = 0
            now = time.monotonic()
            if n > 0:
                last_seen = now
                continue
            if now - last_seen < self.timeout_s:
                continue
            with self._lock:
                victims, self._pending = list(self._pending), set()
            if not victims:
                continue
            self.fired = True
            err = ScanError(
                f"--scheduler: no live Dask worker at {self._scheduler} for {self.timeout_s:g} s "
                f"(${DASK_WORKER_TIMEOUT_ENV}); start workers and rerun to resume"
            )
            for f in victims:
                try:
                    f.set_exception(err)
                except InvalidStateError:
                    pass

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._stop.set()
        # after the watchdog fired, waiting on tasks that no worker will ever run would hang
        self._inner.shutdown(wait=wait and not cancel_futures and not self.fired)


#: ``--scheduler slurm:key=value,…``: each key, its check and what it becomes in the job script
SLURM_KEYS = {
    "queue": r"[A-Za-z0-9_.-]+",  # #SBATCH -p
    "account": r"[A-Za-z0-9_.-]+",  # #SBATCH -A
    "walltime": r"\d{1,3}:\d{2}:\d{2}",  # #SBATCH -t HH:MM:SS
    "memory": r"\d+(\.\d+)?\s?[KMGT]i?B",  # per job, e.g. 4GB
    "cores": r"[1-9]\d{0,2}",  # threads of one job's worker
    "jobs": r"[1-9]\d{0,3}",  # jobs (one worker each) the cluster asks for
}
#: the job of one Slurm worker unless ``--scheduler slurm:…`` says otherwise
SLURM_DEFAULTS = {"cores": "1", "memory": "4GB", "walltime": "01:00:00", "jobs": "2"}


def slurm_options(scheduler: str) -> dict[str, str]:
    """The options of ``--scheduler slurm[:key=value,…]`` (keys :data:`SLURM_KEYS`, defaults
    :data:`SLURM_DEFAULTS`). Each value is checked against its pattern (they are written into a
    shell script: no other character gets there); raises ScanError naming ``--scheduler``."""
    head, _, rest = scheduler.partition(":")
    if head != "slurm":
        raise ScanError(f"--scheduler: not a Slurm scheduler: {scheduler!r}")
    opts = dict(SLURM_DEFAULTS)
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, value = item.partition("=")
        if key not in SLURM_KEYS or not eq:
            raise ScanError(
                f"--scheduler: slurm options are key=value with key in {', '.join(SLURM_KEYS)}, got {item!r}"
            )
        if not re.fullmatch(SLURM_KEYS[key], value.strip()):
            raise ScanError(f"--scheduler: slurm {key}={value!r} does not look like {SLURM_KEYS[key]}")
        opts[key] = value.strip()
    return opts


def slurm_job_kwargs(opts: dict[str, str]) -> dict[str, Any]:
    """``dask_jobqueue.SLURMCluster`` / ``SLURMJob`` keywords of :func:`slurm_options`: one worker
    process per job with ``cores`` threads, its BLAS/OpenMP pools at one thread as a local worker's."""
    kw: dict[str, Any] = dict(
        cores=int(opts["cores"]),
        processes=1,
        memory=opts["memory"],
        walltime=opts["walltime"],
        job_script_prologue=[f"export {k}=1" for k in _THREAD_VARS],
    )
    for key in ("queue", "account"):
        if key in opts:
            kw[key] = opts[key]
    return kw


def slurm_job_script(scheduler: str, address: str = "tcp://SCHEDULER:8786") -> str:
    """The job script one Slurm worker of ``--scheduler slurm:…`` runs (rendered without Slurm)."""
    try:
        from dask_jobqueue.slurm import SLURMJob
    except ImportError:
        raise ScanError(_JOBQUEUE_MISSING) from None
    return SLURMJob(scheduler=address, name="theorydyn", **slurm_job_kwargs(slurm_options(scheduler))).job_script()


_JOBQUEUE_MISSING = (
    "--scheduler slurm needs dask-jobqueue, which is not installed: pip install 'theorydyn[dask]' "
    "(or pip install dask-jobqueue)"
)


def _slurm_client(scheduler: str):
    """(client, closer) of a Dask cluster of Slurm jobs (:func:`slurm_options`)."""
    opts = slurm_options(scheduler)
    try:
        from dask_jobqueue import SLURMCluster
        from distributed import Client
    except ImportError:
        raise ScanError(_JOBQUEUE_MISSING) from None
    try:
        cluster = SLURMCluster(name="theorydyn", **slurm_job_kwargs(opts))
        cluster.scale(jobs=int(opts["jobs"]))
    except (OSError, RuntimeError, ValueError) as e:  # no sbatch here, or Slurm refused the job
        raise ScanError(f"--scheduler: cannot start Slurm jobs: {e}") from None
    client = Client(cluster)

    def close() -> None:
        client.close()
        cluster.close()

    return client, close


def make_executor(workers: int = 2, scheduler: str | None = None) -> ExecutorHandle:
    """The executor of a scan (module docstring); raises ScanError for a scheduler it cannot use."""
    if scheduler and scheduler.partition(":")[0] == "slurm":
        client, close = _slurm_client(scheduler)
        timeout_s = dask_worker_timeout()
        try:
            client.wait_for_workers(1, timeout=timeout_s)
        except (OSError, TimeoutError) as e:
            close()
            raise ScanError(
                f"--scheduler: no Slurm job started a Dask worker within {timeout_s:g} s "
                f"(${DASK_WORKER_TIMEOUT_ENV}); check squeue, then rerun"
            ) from e
        watched = WatchedExecutor(client.get_executor(), lambda: len(client.nthreads()), scheduler, timeout_s)
        return ExecutorHandle(watched, f"dask on Slurm ({scheduler})", close)
    if scheduler:
        try:
            from distributed import Client
        except ImportError:
            raise ScanError(
                "--scheduler needs dask.distributed, which is not installed: pip install 'theorydyn[dask]' "
                "(or pip install distributed)"
            ) from None
        if scheduler.startswith("tcp://"):
            # A refused or unroutable address fails here at once, not after Client's timeout.
            host, _, port = scheduler[len("tcp://") :].rpartition(":")
            try:
                socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
            except (OSError, ValueError) as e:
                raise ScanError(f"--scheduler: cannot connect to {scheduler!r}: {e}") from None
        timeout_s = dask_worker_timeout()
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError, ValueError) as e:
            raise ScanError(f"--scheduler: cannot connect to {scheduler!r}: {e}") from None
        try:
            client.wait_for_workers(1, timeout=timeout_s)
        except (OSError, TimeoutError) as e:
            client.close()
            raise ScanError(
                f"--scheduler: no live Dask worker at {scheduler} within {timeout_s:g} s "
                f"(${DASK_WORKER_TIMEOUT_ENV}); start workers, then rerun"
            ) from e
        watched = WatchedExecutor(client.get_executor(), lambda: len(client.nthreads()), scheduler, timeout_s)
        return ExecutorHandle(watched, f"dask {scheduler}", client.close)
    if workers == 0:
        return ExecutorHandle(InlineExecutor(), "in-process")
    # One thread per worker: n workers on n cores, not n × (BLAS threads). Spawned children
    # read these at start-up; the parent's own pools are not affected.
    saved = {k: os.environ.get(k) for k in _THREAD_VARS}
    for k in _THREAD_VARS:
        os.environ.setdefault(k, "1")
    ex = _QuietPool(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_init_worker,
        initargs=(os.getpid(),),
    )

    def restore() -> None:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    return ExecutorHandle(ex, f"{workers} local process{'es' if workers > 1 else ''}", restore)
