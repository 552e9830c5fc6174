"""The experiments layer (theorydyn/experiments): its lazy exports, and its runs against the solver calls
they are made of (the seeds and the draw order the claims' numbers depend on)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from theorydyn.core.setting import Setting

# the experiments' keyed stores (seed runs, N*(D) passes, step-size rules) in a run directory of each test's own
pytestmark = pytest.mark.usefixtures("run_home")

_ROOT = str(Path(__file__).resolve().parents[1])


def test_package_exports_every_public_name_lazily():
    """Importing the package loads no solver; each name of __all__ is its module's object."""
    from theorydyn.infra._lazy import declared_exports

    code = (
        "import sys, theorydyn.experiments as X; "
        "assert not [m for m in ('theorydyn.simulate', 'theorydyn.reduced', 'torch', 'numba') if m in sys.modules]"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ, PYTHONPATH=_ROOT))
    X = importlib.import_module("theorydyn.experiments")
    table = declared_exports(X.__name__)  # the package's TYPE_CHECKING imports: its only name → module map
    assert "run_seeds" in table and sorted(table) == sorted(X.__all__) and set(table) <= set(dir(X))
    for name, mod in table.items():
        assert getattr(X, name) is getattr(importlib.import_module(mod, X.__name__), name), name


def test_theorem4_run_seeds_are_the_paired_runs_of_each_seed():
    """run_seeds(control=True): seed k is train_paired with seed 1000 k + 42, measured on the fresh samples of
    seed + 7919 (the trained run and its control on the same samples); the same bits as the direct calls."""
    from theorydyn.core.model import association
    from theorydyn.experiments import theorem4 as xt4
    from theorydyn.experiments.measure import fresh_errors

    s = Setting(D=16, C=4, q=0.5)
    from theorydyn.simulate.config import SimConfig

    run = SimConfig(N=128, steps=3, seed=5, n_test=256, dtype="float32")
    runs = xt4.run_seeds(s, run, (0, 1), control=True)
    assert (runs.run, runs.control, len(runs.runs)) == (run, True, 2)
    for k, r in enumerate(runs.runs):
        sd = 5 + 1000 * k + 42
        res, ctl = xt4.train_paired(s, run.replace(seed=sd, record_every=1))
        e = fresh_errors(s, res.A, res.v, 256, sd + 7919)
        assert (r.err_f, r.amb_f) == (e["err_f"], e["amb_f"]), (k, r.err_f, e["err_f"])
        assert r.control_err == fresh_errors(s, ctl.A, ctl.v, 256, sd + 7919)["err_f"]
        assert r.assoc == association(s, res.A) and r.cos == float(res.v @ s.w_star / np.linalg.norm(res.v))
        assert r.cos_rise == r.cos - float(res.trajectory["cos_v"].iloc[0])
        pd.testing.assert_frame_equal(r.trajectory, res.trajectory)
    assert runs.values("control_err") == [r.control_err for r in runs.runs]
    alone = xt4.run_seeds(s, run, (0,))
    assert alone.runs[0].control_err is None and not alone.control


def test_theorem4_train_paired_without_control_is_train_upstream_to_the_bit():
    """train_paired(control=False), the route run_seeds takes without a control, is train_upstream's run: the
    same single-replica pass, the same trajectory and final parameters to the bit."""
    from theorydyn.experiments import theorem4 as xt4
    from theorydyn.simulate.config import SimConfig

    s = Setting(D=16, C=4, q=0.5)
    run = SimConfig(N=128, steps=3, seed=5, n_test=256, dtype="float32", record_every=1)
    res, ctl = xt4.train_paired(s, run, control=False)
    ref = xt4.train_upstream(s, run)
    assert ctl is None and res.options == ref.options
    assert np.array_equal(res.A, ref.A) and np.array_equal(res.v, ref.v)
    pd.testing.assert_frame_equal(res.trajectory, ref.trajectory)


def test_theorem4_seed_runs_are_read_back_from_their_store(monkeypatch):
    """A rerun of run_seeds reads each seed from its keyed store (nothing trains), and the rows it gives are the
    rows of the first run to the last bit; another option (steps) is another key, computed again."""
    from theorydyn.claims import theorem4 as t4
    from theorydyn.experiments import theorem4 as xt4
    from theorydyn.simulate.config import SimConfig

    s = Setting(D=16, C=4, q=0.5)
    run = SimConfig(N=128, steps=6, seed=5, n_test=256, dtype="float32")
    first = xt4.run_seeds(s, run, (0, 1), control=True, record_every=1)

    def no_training(*a, **k):
        raise AssertionError("a stored seed run was trained again")

    monkeypatch.setattr(xt4, "train_paired", no_training)
    again = xt4.run_seeds(s, run, (0, 1), control=True, record_every=1)
    rows = lambda r: [c.row() for c in t4.theorem_4_rows(r, T_a=3.0, ks=(1.5, 3.0))]  # noqa: E731
    assert rows(again) == rows(first)
    with pytest.raises(AssertionError, match="trained again"):
        xt4.run_seeds(s, run.replace(steps=7), (0,), control=True, record_every=1)


def test_closeness_runs_are_compare_with_reduced_per_seed():
    """closeness_runs: one compare_with_reduced per seed k (simulator seed 1000 k + 77) against one reduced
    trajectory, the table's seed column k."""
    from theorydyn.experiments import semirealistic as xsr

    s = Setting(D=8, C=2, q=0.5)
    seen: list[str] = []
    runs = xsr.closeness_runs(s, Ns=(64, 128), steps=4, seeds=(0, 1), eta=2.0, progress=seen.append)
    assert len(seen) == 3 and list(runs.table["seed"]) == [0, 0, 1, 1]
    for k in range(2):
        t, _ = xsr.compare_with_reduced(
            s,
            Ns=(64, 128),
            eta=2.0,
            steps=4,
            seeds=(1000 * k + 77,),
            dtype="float32",
            record_every=1,
            n_test=512,
            reduced_traj=runs.reduced,
        )
        got = runs.table[runs.table["seed"] == k].drop(columns=["seed", "seconds"]).reset_index(drop=True)
        pd.testing.assert_frame_equal(got, t.drop(columns=["seed", "seconds"]))


def test_lazy_exports_refuse_an_all_that_disagrees_with_the_imports(tmp_path, monkeypatch):
    """A package's ``__all__`` and its ``if TYPE_CHECKING:`` imports are checked against each other on first use."""
    pkg = tmp_path / "lazy_toy"
    pkg.mkdir()
    (pkg / "a.py").write_text("x = 1\ny = 2\n")
    (pkg / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n\nfrom theorydyn.infra._lazy import lazy_exports\n\n"
        "if TYPE_CHECKING:\n    from .a import x, y\n\n__all__ = ['x']\n"
        "__getattr__, __dir__ = lazy_exports(__name__)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "lazy_toy", raising=False)
    toy = importlib.import_module("lazy_toy")
    with pytest.raises(ImportError, match=r"disagree on \['y'\]"):
        assert toy.x == 1
