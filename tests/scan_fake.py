"""A stand-in scan runner for the scan tests: cheap, deterministic, controllable.

It is not the physics: a smooth toy trajectory whose phase times grow like D (T1) and D^1.5
(T2) and depend on q and the seed, so that the scan machinery (grid, keys, store, executors,
plots) can be tested in milliseconds. Environment variables steer crash tests:

    SCAN_FAKE_KILL_AT=k       the k-th call (counted in SCAN_FAKE_COUNTER) kills its own process
    SCAN_FAKE_MARKER=path     …only while this file does not exist (it is created just before)
    SCAN_FAKE_SLEEP=seconds   sleep in every call
    SCAN_FAKE_FAIL_Q=q        raise ValueError for that q
    SCAN_FAKE_PIDS=dir        write this process's id into dir (one file per process)
    SCAN_FAKE_INTERRUPT_AT=k  the k-th call raises KeyboardInterrupt (a Ctrl-C in the middle of a point)
"""

from __future__ import annotations

import os
import time

import numpy as np
import pandas as pd


def _bump_counter() -> int:
    path = os.environ.get("SCAN_FAKE_COUNTER")
    if not path:
        return 0
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, b".")
    os.close(fd)
    return os.path.getsize(path)


def fake_point(s, options, seed):
    n = _bump_counter()
    if os.environ.get("SCAN_FAKE_PIDS"):
        open(os.path.join(os.environ["SCAN_FAKE_PIDS"], str(os.getpid())), "w").close()
    if n and n == int(os.environ.get("SCAN_FAKE_INTERRUPT_AT", "0") or 0):
        raise KeyboardInterrupt
    kill_at = int(os.environ.get("SCAN_FAKE_KILL_AT", "0") or 0)
    marker = os.environ.get("SCAN_FAKE_MARKER")
    if kill_at and n == kill_at and marker and not os.path.exists(marker):
        open(marker, "w").close()
        os.kill(os.getpid(), 9)
    if os.environ.get("SCAN_FAKE_FAIL_Q") and abs(s.q - float(os.environ["SCAN_FAKE_FAIL_Q"])) < 1e-12:
        raise ValueError(f"fake failure at q={s.q}")
    time.sleep(float(os.environ.get("SCAN_FAKE_SLEEP", "0") or 0))
    rng = np.random.default_rng([seed, s.D, s.C, int(round(s.q * 1e6))])
    jitter = 1.0 + 0.05 * rng.standard_normal()
    T0 = 50.0 * jitter
    T1 = 30.0 * s.D * (1 + s.q) * jitter
    T2 = 8.0 * s.D**1.5 * (1 + s.q) * jitter
    sgrid = np.geomspace(1.0, options["s_max"], options["n_points"])
    alpha = 0.1 + 3.0 * (1 - np.exp(-sgrid / T0))
    gamma = 2.0 * sgrid / (sgrid + T1)
    rho = -0.05 * sgrid / (sgrid + T1)
    risk = 0.7 / (1 + sgrid / T2)
    err = 0.5 / (1 + (sgrid / T2) ** 2)
    traj = pd.DataFrame({"s": sgrid, "alpha": alpha, "gamma": gamma, "rho": rho, "risk": risk, "err_f": err})
    reached = lambda T: float(T) if T <= options["s_max"] else None  # noqa: E731
    out = {
        "T0": reached(T0),
        "T1": reached(T1),
        "T1_mass": reached(1.3 * T1),
        "T2": reached(T2),
        "plateau_err": 0.12,
        "final_risk": float(risk[-1]),
        "final_err_f": float(err[-1]),
        "lemma43_ratio": float(s.D * jitter),
        "gamma_ge_rho": True,
        "status": "ok",
        "trajectories": {"": traj},
    }
    if options.get("simulate"):  # the simulator's extra columns, as the real runner adds them
        out.update(sim_final_association=float(0.5 + 0.1 * jitter), sim_final_err_f=float(err[-1] / 2), sim_status="ok")
    return out
