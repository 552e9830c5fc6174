"""Test configuration: under CI (CI=true), hypothesis draws the same examples every run, so a
submission's verdict cannot change from one run to the next; locally it explores afresh."""

import os
import subprocess

import numpy as np
import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def _tqdm_locks_of_its_own() -> None:
    """In a forked child: tqdm's write locks of its own. tqdm draws every bar under one multiprocessing
    lock (a POSIX semaphore) that a process shares with the children it forks; a child killed by SIGKILL
    while drawing (the kill -9 tests) keeps it acquired for ever, and the next bar the test process draws
    waits on it for ever: the suite's hang, a futex wait in the full-disk scan test after the kill -9 test
    of test_crash.py. Only where tqdm is loaded already (nothing is imported in a child about to exec)."""
    import sys

    std = sys.modules.get("tqdm.std")
    if std is None:
        return
    import multiprocessing
    import threading

    lock = std.TqdmDefaultWriteLock
    lock.th_lock = threading.RLock()
    lock.mp_lock = multiprocessing.RLock()
    std.tqdm.set_lock(lock())


os.register_at_fork(after_in_child=_tqdm_locks_of_its_own)


def _no_tqdm_monitor() -> None:
    """No tqdm monitor thread in the test process: it wakes every 10 s and takes tqdm's write lock, and
    the crash tests fork this process at random moments; a thread that holds a lock at a fork is the
    hazard those tests must not meet (a bar's refresh rate is all the monitor would have kept)."""
    from tqdm import tqdm

    tqdm.monitor_interval = 0


_no_tqdm_monitor()

#: the real runner at a size that takes seconds: the reduced dynamics and, where a test adds
#: ``simulate``, the simulator (the scan and store tests of its columns)
TINY_REAL_SCAN = {
    "D": 8,
    "C": 2,
    "s_max": 200.0,
    "n_samples": 200,
    "n_points": 40,
    "N": 256,
    "sim_steps": 20,
    "record_every": 5,
}


def claim_module(name, checks, memory=None):
    """A toy claim module (the protocol of theorydyn.claims): ``checks(s, *, quick, progress)`` from
    ``checks`` and ``memory(s, quick)`` (default: a 1 KiB estimate)."""
    import types

    from theorydyn.infra.memory import MemoryEstimate, Term

    mod = types.ModuleType(name)
    mod.checks = checks
    mod.memory = memory or (lambda s, quick: MemoryEstimate(name, (Term("toy", 1024, {"D": s.D}),)))
    return mod


def register_claims(monkeypatch, modules):
    """Make ``modules`` ({name: module}) the whole claim registry for one test: each module is put in
    sys.modules as ``toy_claims.<name>`` and registered under ``name``; the groups are emptied.
    A value that is a string is registered as that module path as is (e.g. one that does not exist)."""
    import sys

    from theorydyn import claims

    registry = {}
    for name, mod in modules.items():
        if isinstance(mod, str):
            registry[name] = mod
            continue
        monkeypatch.setitem(sys.modules, f"toy_claims.{name}", mod)
        registry[name] = f"toy_claims.{name}"
    monkeypatch.setattr(claims, "REGISTRY", registry)
    monkeypatch.setattr(claims, "GROUPS", {})


def kill_at_random_moments(
    target, args_of, n_kills: int, duration: float, seed: int = 0, ctx=None, after=None
) -> list[int]:
    """Start ``target(*args_of(i))`` in a child process (forked, or from ``ctx``) and ``kill -9`` it after a
    random delay in [0, duration), for i = 0, 1, … until ``n_kills`` kills hit a running process (a process
    already done does not count; at most 3·n_kills tries). ``after(i, killed)``, if given, runs once the
    child of try i is gone (to check what it left before the next try). Returns the i's killed while running."""
    import multiprocessing
    import random
    import signal
    import time

    ctx = ctx or multiprocessing.get_context("fork")
    rng = random.Random(seed)
    hit: list[int] = []
    for i in range(3 * n_kills):
        p = ctx.Process(target=target, args=args_of(i))
        p.start()
        time.sleep(rng.uniform(0.0, duration))
        try:
            os.kill(p.pid, signal.SIGKILL)
        except ProcessLookupError:  # done already (and reaped by a fork server)
            pass
        p.join(30)
        killed = p.exitcode == -signal.SIGKILL
        if after is not None:
            after(i, killed)
        if killed:
            hit.append(i)
            if len(hit) == n_kills:
                break
    return hit


def join_or_kill(p, timeout: float) -> None:
    """``p.join(timeout)``, then SIGKILL and reap ``p`` if it is still running: a forked child that hangs
    (a lock held by one of the parent's threads at the fork) fails its test instead of being left behind
    for multiprocessing's exit handler, which would join it forever."""
    p.join(timeout)
    if p.is_alive():
        p.kill()
        p.join()


@pytest.fixture()
def tmpfs(tmp_path):
    """``mount(size)``: a fresh tmpfs of ``size`` (e.g. "256k") under ``tmp_path``, unmounted after the
    test; the test is skipped where mounting is refused (it needs root), so a real full disk is tried
    wherever it can be, and the injected full disks of the same files run everywhere."""
    mounted = []

    def mount(size: str):
        mnt = tmp_path / f"tmpfs{len(mounted)}"
        mnt.mkdir()
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], capture_output=True)
        if r.returncode != 0:
            pytest.skip("cannot mount a tmpfs here (needs root)")
        mounted.append(mnt)
        return mnt

    yield mount
    for mnt in mounted:
        # lazy (-l): a file the test's writer still holds open must not leave the mount behind ("busy")
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


NON_REGULAR = ("fifo", "devzero", "dir")


def make_non_regular(path, kind: str) -> None:
    """Put at ``path`` a thing that is not a regular file: a FIFO (a read blocks forever), a link to
    /dev/zero (a read never ends) or a folder — what a results file or an archive must refuse. The
    folder of ``path`` is created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "devzero":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()


def link_to_precious(link, target, text: str = "keep me\n"):
    """Plant at ``link`` (its folder created) a symbolic link to ``target``, a file holding ``text``: what
    a run must refuse to write through (the test then checks that ``target`` still holds ``text``).
    Returns ``target``."""
    target.write_text(text)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return target


def model_risk_central_differences(s, A, v, X, y, weights=None, h=1e-6):
    """∂risk/∂A (off the diagonal; the diagonal stays 0, fixed at β) and ∇_v risk of model (T) by central
    differences of :func:`theorydyn.core.model.risk` with step ``h``: the independent route the analytic and
    fused gradients are checked against. Shapes: ``A`` (D, D), ``v`` (d,); returns ((D, D), (d,))."""
    from theorydyn.core import model

    num_A = np.zeros_like(A)
    for i in range(s.D):
        for k in range(s.D):
            if i == k:
                continue
            Ap, Am = A.copy(), A.copy()
            Ap[i, k] += h
            Am[i, k] -= h
            num_A[i, k] = (model.risk(s, Ap, v, X, y, weights) - model.risk(s, Am, v, X, y, weights)) / (2 * h)
    num_v = np.array(
        [
            (model.risk(s, A, v + h * e, X, y, weights) - model.risk(s, A, v - h * e, X, y, weights)) / (2 * h)
            for e in np.eye(s.d)
        ]
    )
    return num_A, num_v


@pytest.fixture
def run_home(tmp_path, monkeypatch):
    """A run directory of the test's own ($THEORYDYN_HOME): the keyed stores of the experiments (Theorem 4.2's
    seed runs, N*(D)'s passes, the step-size rules) start empty and land outside the checkout."""
    home = tmp_path / "theorydyn_home"
    monkeypatch.setenv("THEORYDYN_HOME", str(home))
    return home
