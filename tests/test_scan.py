"""The scan machinery: grid and keys, the crash-safe store, resume after kill -9, executors.

The physics runner needs the reduced solver; most tests use the stand-in runner of
``scan_fake.py`` (milliseconds per point) so that they test the machinery alone. The last
tests run the real default runner at a tiny size.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import sqlite3
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import (
    NON_REGULAR,
    TINY_REAL_SCAN,
    join_or_kill,
    kill_at_random_moments,
    link_to_precious,
    make_non_regular,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from theorydyn import Setting
from theorydyn.infra.store import ResultStore
from theorydyn.scan import run_scan
from theorydyn.scan.__main__ import build_parser, main
from theorydyn.scan.flags import spec_from_args
from theorydyn.scan.grid import ScanError, ScanSpec, point_key
from theorydyn.scan.point import REDUCED_FIELDS
from theorydyn.scan.schema import point_options

ROOT = Path(__file__).resolve().parents[1]
FAKE = "scan_fake:fake_point"


# columns that legitimately differ between two runs of the same points: wall times and the time stamp
# of the provenance (the commit, versions and numerics version must agree)
def WALL(df):
    return [c for c in df.columns if c.endswith("wall_s") or c == "prov_created_utc"]


def _env(tmp_path, **extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), str(ROOT), env.get("PYTHONPATH", "")])
    env["SCAN_FAKE_COUNTER"] = str(tmp_path / "counter")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _cli_cmd(tmp_path, *args) -> list[str]:
    """``python -m theorydyn.scan`` with the fake runner, results under ``tmp_path/res``, no plots, quiet."""
    return [
        sys.executable,
        "-m",
        "theorydyn.scan",
        "--runner",
        FAKE,
        "--out",
        str(tmp_path / "res"),
        "--no-plots",
        "--quiet",
        *args,
    ]


def _cli(tmp_path, *args, **env):
    cmd = _cli_cmd(tmp_path, *args)
    return subprocess.run(cmd, cwd=ROOT, env=_env(tmp_path, **env), capture_output=True, text=True, timeout=120)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


# ---- grid and keys ----------------------------------------------------------------------------------
def test_grid_is_the_product_of_the_axes_in_order():
    spec = ScanSpec(
        "t", base={"D": 16, "C": 4, "s_max": 100.0}, axes={"q": [0.1, 0.2, 0.3], "tau": [1.0, 2.0], "seed": [0, 1]}
    )
    pts = spec.expand()
    assert len(pts) == 12
    assert [(p.setting.q, p.setting.tau, p.seed) for p in pts[:3]] == [(0.1, 1.0, 0), (0.1, 1.0, 1), (0.1, 2.0, 0)]
    assert all(p.setting.D == 16 and p.options["s_max"] == 100.0 for p in pts)
    assert len({p.key for p in pts}) == 12
    assert spec.scanned_axes() == ["q", "tau"]


def test_derived_q_follows_each_D_and_repeated_points_are_kept_once():
    pts = ScanSpec("t", base={"C": 4}, axes={"D": [16, 32, 64, 64]}).expand()
    assert [p.setting.q for p in pts] == [1.0, 0.5, 0.25]


def test_options_that_cannot_change_the_numbers_do_not_change_the_key():
    s = Setting(D=8, C=2)
    assert point_key(s, {"N": 10}, 0) == point_key(s, {"N": 20}, 0)  # simulate is off
    assert point_key(s, {"eta": 1.0}, 0) == point_key(s, {}, 0)  # flow does not use η
    assert point_key(s, {"simulate": True, "N": 10}, 0) != point_key(s, {"simulate": True, "N": 20}, 0)
    assert point_key(s, {"s_max": 100}, 0) == point_key(s, {"s_max": 100.0}, 0)  # int vs float


_field_changes = {
    "D": 12,
    "C": 3,
    "d": 9,
    "q": 0.3,
    "sigma2": 0.2,
    "p": 5,
    "nu": 0.3,
    "beta": 1.5,
    "tau": 2.0,
    "partition": "random",
    "partition_seed": 3,
    "feature": 1,
}
_option_changes = {
    "method": "gd",
    "s_max": 123.0,
    "n_samples": 77,
    "expectation": "exact",
    "n_points": 33,
    "simulate": True,
}


@settings(max_examples=40, deadline=None)
@given(
    field=st.sampled_from(sorted(_field_changes) + sorted(_option_changes) + ["seed"]), seed=st.integers(0, 2**31 - 1)
)
def test_the_key_changes_with_any_parameter(field, seed):
    s = Setting(D=6, C=2, q=0.4, partition_seed=1)
    base = point_key(s, {}, seed)
    if field in _field_changes:
        kw = {"D": 12} if field == "C" else {}  # C=3 needs a D it divides
        changed = point_key(s.replace(**kw, **{field: _field_changes[field]}), {}, seed)
    elif field in _option_changes:
        changed = point_key(s, {field: _option_changes[field]}, seed)
    else:
        changed = point_key(s, {}, seed + 1)
    assert changed != base
    assert point_key(s, {}, seed) == base  # and is a function of the parameters alone


def test_the_key_is_the_same_in_another_process():
    s = Setting(D=8, C=2, q=0.3, tau=2.0, partition="random", partition_seed=4)
    opts = {"s_max": 1e3, "n_samples": 100}
    code = (
        "from theorydyn import Setting; from theorydyn.scan.grid import point_key; "
        "print(point_key(Setting(D=8, C=2, q=0.3, tau=2.0, partition='random', partition_seed=4), "
        "{'s_max': 1e3, 'n_samples': 100}, 7))"
    )
    env = dict(os.environ, PYTHONHASHSEED="12345", PYTHONPATH=str(ROOT))
    other = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert other == point_key(s, opts, 7)
    assert len(other) == 64 and set(other) <= set("0123456789abcdef")


def test_invalid_values_are_all_named_before_any_work():
    with pytest.raises(ScanError) as e:
        ScanSpec("t", base={"D": 16}, axes={"C": [4, 5], "q": [0.5, 1.5]}).expand()
    msg = str(e.value)
    assert "C must divide D" in msg and "q must lie in [0, 1], got q=1.5" in msg
    with pytest.raises(ScanError, match="n_samples must be an integer >= 2"):  # FlowConfig's rule, as --n-samples
        point_options({"n_samples": 1})
    with pytest.raises(ScanError, match="unknown parameter"):
        ScanSpec("t", axes={"qq": [1]}).expand()


def test_saved_grids_expand():
    for path in sorted((ROOT / "scans").glob("*.toml")):
        spec = ScanSpec.from_toml(path)
        pts = spec.expand()
        assert pts, path
        assert spec.name == path.stem


def test_default_scan_and_its_name():
    spec = spec_from_args(build_parser().parse_args(["--D", "64", "--C", "4"]))
    assert spec.name == "D64_C4"
    assert spec.axes == {"q": [0.15, 0.2, 0.25, 0.3, 0.35], "seed": [0, 1, 2]}
    assert len(spec.expand()) == 15
    assert ScanSpec.from_toml(ROOT / "scans" / "default.toml").expand() == spec.expand()  # the saved copy
    other = spec_from_args(build_parser().parse_args(["--D", "16", "32", "--C", "4", "--s-max", "1e5"]))
    assert other.name == "D16-32_C4_smax100000" and other.axes["D"] == [16, 32] and "q" not in other.axes


def test_the_scan_options_and_flags_are_the_configs_fields():
    """Issue 40: a scanned field of FlowConfig / SimConfig is an option of a point, its rule the field's,
    and a flag of the scan (a list for an axis) checked at parse time by that rule; the default runner is
    a function, named in the keys as before."""
    from theorydyn.reduced.config import FlowConfig
    from theorydyn.scan.flags import scan_parser
    from theorydyn.scan.grid import Point, runner_name
    from theorydyn.scan.point import run_point
    from theorydyn.scan.schema import BY_NAME, OPTIONS
    from theorydyn.simulate.config import SimConfig

    actions = {a.dest: a for a in scan_parser()._actions}
    for o in OPTIONS:
        if o.config in (FlowConfig, SimConfig) and o.name not in ("sim_steps",):
            assert o.rule is o.config.rule(o.field), o.name
        if o.flag is not None:
            assert actions[o.name].option_strings == [o.flag] and actions[o.name].help == o.help
            assert (actions[o.name].nargs == "+") == o.axis, o.name
    assert BY_NAME["sim_steps"].config is SimConfig and BY_NAME["sim_steps"].field == "steps"
    with pytest.raises(SystemExit):
        scan_parser().parse_args(["--omega", "-1"])  # SimConfig's rule, at parse time
    assert ScanSpec("t").runner is run_point and runner_name(run_point) == "theorydyn.scan.point:run_point"
    assert Point.__dataclass_fields__["runner"].default is run_point


# ---- the store --------------------------------------------------------------------------------------
def _rows(n):
    return [
        {"key": f"{i:064x}", "q": 0.1 * i, "T1": None if i % 2 else 10.0 * i, "status": "ok, fine"} for i in range(n)
    ]


def test_store_round_trip_keeps_values_and_types(tmp_path):
    path = tmp_path / "r.csv"
    st_ = ResultStore(path)
    for r in _rows(4):
        assert st_.append(r)
    df = ResultStore(path).frame()
    assert list(df["q"]) == [0.0, 0.1, 0.2, 0.30000000000000004]
    assert df["T1"].isna().tolist() == [False, True, False, True]
    assert (tmp_path / "results.sqlite").is_file() and not path.exists()  # the CSV is an export, written on demand
    ResultStore(path).export()
    pd.testing.assert_frame_equal(pd.read_csv(path, dtype={"key": str}), df)


def test_store_keeps_the_first_row_of_a_key_and_rows_of_any_columns(tmp_path):
    path = tmp_path / "r.csv"
    st_ = ResultStore(path)
    for r in _rows(3):
        st_.append(r)
    assert ResultStore(path).append({**_rows(1)[0], "q": 9.9}) is False  # UNIQUE key: the first row stands
    got = ResultStore(path)
    assert len(got) == 3 and got.rows[f"{0:064x}"]["q"] == "0.0"
    st_.append({"key": "b" * 64, "x": 2, "y": 3.5})  # new columns: no header to rewrite
    df = ResultStore(path).frame()
    assert list(df.columns) == ["key", "q", "T1", "status", "x", "y"]
    assert df["y"].isna().tolist() == [True] * 3 + [False]


# ---- several writers, and kill -9 at random moments ----------------------------------------------------
_MIX = {"D": 16, "C": 4, "s_max": 1e4, "n_points": 8}
_OVERLAPPING = (
    ScanSpec("mix", base=_MIX, axes={"q": [0.1, 0.2], "seed": list(range(6))}, runner=FAKE),
    ScanSpec("mix", base=_MIX, axes={"q": [0.2, 0.3], "seed": list(range(3, 9))}, runner=FAKE),  # 3 points shared
    ScanSpec(
        "mix",
        base={**_MIX, "simulate": True, "N": 256, "sim_steps": 20},  # more columns, same name
        axes={"q": [0.2], "seed": list(range(6))},
        runner=FAKE,
    ),
)


def _scan_quietly(spec, results_dir) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_scan(spec, results_dir=results_dir, workers=0, progress=False, plots=False, summary=False)


def _values(store: ResultStore) -> dict[str, dict[str, str]]:
    """Rows by key without the columns that legitimately differ between runs (wall times, time stamp)."""
    return {
        k: {c: v for c, v in r.items() if not (c.endswith("wall_s") or c == "prov_created_utc")}
        for k, r in store.rows.items()
    }


def _reference(tmp_path, specs) -> dict[str, dict[str, str]]:
    ref: dict[str, dict[str, str]] = {}
    for i, spec in enumerate(specs):  # each spec alone, one process: a single run's values
        _scan_quietly(spec, tmp_path / f"ref{i}")
        ref.update(_values(ResultStore(tmp_path / f"ref{i}" / "mix.csv")))
    return ref


def _once_each(results_dir: Path) -> list:
    con = sqlite3.connect(results_dir / "results.sqlite")
    try:
        return con.execute("SELECT key, count(*) FROM rows GROUP BY scope, key HAVING count(*) > 1").fetchall()
    finally:
        con.close()


@pytest.mark.slow
def test_concurrent_overlapping_scans_and_a_simulate_scan_on_one_name_keep_every_key_once(tmp_path):
    """The issue's case, 20 times: two overlapping scans and a --simulate scan write one name at once."""
    ref = _reference(tmp_path, _OVERLAPPING)
    assert len(ref) == 12 + 12 - 3 + 6
    ctx = multiprocessing.get_context("fork")
    for rep in range(20):
        d = tmp_path / f"rep{rep}"
        procs = [ctx.Process(target=_scan_quietly, args=(spec, d)) for spec in _OVERLAPPING]
        for p in procs:
            p.start()
        for p in procs:
            join_or_kill(p, 60)
        assert [p.exitcode for p in procs] == [0, 0, 0], rep
        got = ResultStore(d / "mix.csv")
        assert got.rejected == 0 and _once_each(d) == []
        assert _values(got) == ref, rep  # every key exactly once, with a single run's values
        exported = pd.read_csv(got.export(), dtype={"key": str})
        assert sorted(exported["key"]) == sorted(ref) and exported["key"].is_unique
        sim = exported.dropna(subset=["sim_status"])
        assert len(sim) == 6 and len(exported) - len(sim) == 21  # no row lost its columns or gained others'


@pytest.mark.slow
def test_the_issues_repro_two_scan_processes_on_one_name(tmp_path):
    """Two ``python -m theorydyn.scan`` on the same --name at once (one --simulate), then a rerun: every row once."""
    flags = ["--D", "16", "--C", "4", "--n-points", "8", "--name", "mix", "--workers", "1"]
    env = _env(tmp_path)
    cmd = _cli_cmd(tmp_path, *flags)
    a = subprocess.Popen(
        cmd + ["--seeds", "40"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    b = subprocess.Popen(
        cmd + ["--q", "0.3", "--seeds", "10", "--simulate", "--N", "256", "--sim-steps", "20"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    outs = [p.communicate(timeout=300) for p in (a, b)]
    assert (a.returncode, b.returncode) == (0, 0), outs
    third = subprocess.run(cmd + ["--seeds", "40"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    # the default q's at D = 16, C = 4 are 0.6, 0.8 and 1 (the larger factors are capped at q = 1)
    assert third.returncode == 0 and "[0 computed, 120 already done]" in third.stdout, third.stderr
    df = pd.read_csv(tmp_path / "res" / "mix.csv")
    assert len(df) == 3 * 40 + 10 and df["key"].is_unique and _once_each(tmp_path / "res") == []
    assert "warning" not in third.stderr


@pytest.mark.slow
def test_kill_9_at_20_random_moments_then_a_rerun_gives_an_uninterrupted_runs_rows(tmp_path, monkeypatch):
    spec = ScanSpec("crash", base=_MIX, axes={"q": [0.1, 0.2], "seed": list(range(6))}, runner=FAKE)
    monkeypatch.setenv("SCAN_FAKE_SLEEP", "0.005")
    _scan_quietly(spec, tmp_path / "ref")
    ref = _values(ResultStore(tmp_path / "ref" / "crash.csv"))
    t0 = time.perf_counter()
    _scan_quietly(spec, tmp_path / "timing")
    full = time.perf_counter() - t0
    hits = kill_at_random_moments(_scan_quietly, lambda i: (spec, tmp_path / f"k{i}"), 20, duration=full)
    assert len(hits) == 20, hits  # 20 kills landed while the scan was running
    for i in hits:
        d = tmp_path / f"k{i}"
        if (d / "results.sqlite").exists():
            partial = ResultStore(d / "crash.csv")
            assert partial.rejected == 0 and _once_each(d) == []  # whatever was committed is whole
            assert all(ref[k] == v for k, v in _values(partial).items())
            for k in partial.rows:  # a point's trajectory is written (atomically) before its row
                assert len(pd.read_csv(d / "crash" / f"{k}.csv")) == 8
        _scan_quietly(spec, d)  # the rerun
        got = ResultStore(d / "crash.csv")
        assert _values(got) == ref and got.rejected == 0, i
        assert sorted(pd.read_csv(d / "crash.csv", dtype={"key": str})["key"]) == sorted(ref)


# ---- runs -------------------------------------------------------------------------------------------
def test_kill_minus_9_mid_scan_then_resume(tmp_path):
    """The whole scan process is killed at its 3rd point; the rerun finishes the rest."""
    args = ["--D", "16", "--C", "4", "--q", "0.1", "0.2", "0.3", "--seeds", "2", "--workers", "0"]
    first = _cli(tmp_path, *args, SCAN_FAKE_KILL_AT=3, SCAN_FAKE_MARKER=tmp_path / "killed")
    assert first.returncode == -9, first.stderr
    res = tmp_path / "res" / "D16_C4_q0.1-0.2-0.3_seed0-1.csv"
    assert len(ResultStore(res)) == 2  # the two finished points are committed, nothing of the third
    second = _cli(tmp_path, *args)
    assert second.returncode == 0, second.stderr
    assert "[4 computed, 2 already done]" in second.stdout
    lines = _lines(res)
    keys = [ln.split(",")[0] for ln in lines[1:]]
    assert len(lines) == 7 and len(set(keys)) == 6
    assert (tmp_path / "counter").stat().st_size == 3 + 4  # 3 calls, then only the 4 missing ones


@pytest.mark.slow
def test_worker_process_killed_loses_only_points_in_flight(tmp_path):
    args = ["--D", "16", "--C", "4", "--q", "0.1", "0.2", "0.3", "0.4", "--workers", "2"]
    first = _cli(tmp_path, *args, SCAN_FAKE_KILL_AT=4, SCAN_FAKE_MARKER=tmp_path / "killed")
    assert first.returncode == 1
    assert "worker process died" in first.stderr and "Rerun" in first.stderr
    res = tmp_path / "res" / "D16_C4_q0.1-0.2-0.3-0.4.csv"
    n_first = len(ResultStore(res))
    assert 1 <= n_first <= 11
    second = _cli(tmp_path, *args)
    assert second.returncode == 0, second.stderr
    keys = [ln.split(",")[0] for ln in _lines(res)[1:]]
    assert len(keys) == 12 and len(set(keys)) == 12  # 4 q × the 3 default seeds, each once


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited
    except FileNotFoundError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc (Linux)")
def test_workers_exit_when_the_driver_is_killed(tmp_path):
    """kill -9 of the driver must not leave its worker processes running (or waiting) forever."""
    import signal
    import time

    pids = tmp_path / "pids"
    pids.mkdir()
    cmd = _cli_cmd(tmp_path, "--D", "16", "--C", "4", "--q", "0.1", "0.2", "0.3", "--workers", "2")
    driver = subprocess.Popen(
        cmd,
        cwd=ROOT,
        env=_env(tmp_path, SCAN_FAKE_SLEEP=3, SCAN_FAKE_PIDS=pids),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while len(list(pids.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    workers = [int(p.name) for p in pids.iterdir()]
    assert len(workers) == 2
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    deadline = time.monotonic() + 15
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_alive(w) for w in workers)


def test_invalid_axis_value_exits_2_naming_it_before_any_work(tmp_path):
    r = _cli(tmp_path, "--D", "16", "--C", "4", "--q", "0.2", "1.5")
    assert r.returncode == 2
    assert "--q: q must lie in [0, 1], got 1.5" in r.stderr and "Traceback" not in r.stderr  # at parse time
    assert not (tmp_path / "res").exists() and not (tmp_path / "counter").exists()
    r = _cli(tmp_path, "--D", "16", "--C", "5")
    assert r.returncode == 2 and "C must divide D" in r.stderr


def test_a_failing_point_is_reported_not_stored_and_retried(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SCAN_FAKE_FAIL_Q", "0.2")
    argv = [
        "--runner",
        FAKE,
        "--out",
        str(tmp_path),
        "--workers",
        "0",
        "--quiet",
        "--no-plots",
        "--D",
        "16",
        "--C",
        "4",
        "--q",
        "0.1",
        "0.2",
        "--seeds",
        "1",
    ]
    assert main(argv) == 1
    assert "fake failure at q=0.2" in capsys.readouterr().out
    monkeypatch.delenv("SCAN_FAKE_FAIL_Q")
    assert main(argv) == 0
    assert len(ResultStore(tmp_path / "D16_C4_q0.1-0.2_seed0.csv")) == 2


def _four_fake_points(name: str) -> ScanSpec:
    """A fresh spec of 2 q × 2 seeds of the fake runner at D = 16, C = 4."""
    return ScanSpec(name, base={"D": 16, "C": 4, "s_max": 1e4}, axes={"q": [0.1, 0.3], "seed": [0, 1]}, runner=FAKE)


@pytest.mark.slow
def test_same_seeds_same_rows_and_force_recomputes(tmp_path):
    spec = functools.partial(_four_fake_points, "det")

    a = run_scan(spec(), results_dir=tmp_path / "a", workers=0, progress=False, plots=False, summary=False).frame
    b = run_scan(spec(), results_dir=tmp_path / "b", workers=2, progress=False, plots=False, summary=False).frame
    pd.testing.assert_frame_equal(a.drop(columns=WALL(a)), b.drop(columns=WALL(b)))
    again = run_scan(spec(), results_dir=tmp_path / "a", workers=0, progress=False, plots=False, summary=False)
    assert again.computed == 0 and again.skipped == 4
    forced = run_scan(
        spec(), results_dir=tmp_path / "a", workers=0, force=True, progress=False, plots=False, summary=False
    )
    assert forced.computed == 4 and len(_lines(tmp_path / "a" / "det.csv")) == 5
    traj = pd.read_csv(tmp_path / "a" / "det" / f"{a['key'][0]}.csv")
    assert {"s", "alpha", "gamma", "rho"} <= set(traj.columns)


def test_dask_executor_on_a_local_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")  # the optional `dask` extra, installed in CI

    spec = functools.partial(_four_fake_points, "dask")

    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        d = run_scan(
            spec(),
            results_dir=tmp_path / "d",
            scheduler=cluster.scheduler_address,
            progress=False,
            plots=False,
            summary=False,
        )
    local = run_scan(spec(), results_dir=tmp_path / "l", workers=0, progress=False, plots=False, summary=False)
    assert d.computed == 4 and d.exit_code == 0
    pd.testing.assert_frame_equal(d.frame.drop(columns=WALL(d.frame)), local.frame.drop(columns=WALL(local.frame)))


def test_scheduler_that_cannot_be_reached_exits_2(tmp_path):
    r = _cli(tmp_path, "--D", "16", "--C", "4", "--scheduler", "tcp://127.0.0.1:9")
    assert r.returncode == 2 and "--scheduler" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.slow
def test_plots_and_summary_with_a_D_axis(tmp_path, capsys):
    from theorydyn.scan.summary import summary_text

    spec = ScanSpec("scal", base={"C": 4, "s_max": 1e6}, axes={"D": [16, 32, 64], "seed": [0, 1]}, runner=FAKE)
    out = run_scan(spec, results_dir=tmp_path, workers=0, progress=False)
    assert capsys.readouterr().out == ""  # the library prints nothing: the command prints summary_text
    text = " ".join(summary_text(spec, out).split())  # headers wrap at the terminal's width
    assert "fitted exponent: T1" in text and "fitted exponent: T2" in text
    # the stand-in has T2 = 8 D^1.5 (1 + C²/D) up to a seeded jitter: the fit must see ≈ 1.5 − a bit
    fit = out.exponents["T2"]
    assert 1.0 < fit["b"] < 1.5 and fit["b_low"] < fit["b"] < fit["b_high"]
    assert "95% interval over seeds: phase times on the log scale" in text
    assert "T1 depends on the horizon" in text and "fitted exponent: T1_mass" in text
    for p in out.plots:
        assert p.exists() and p.stat().st_size > 5000
    assert {p.name for p in out.plots} == {"scal_phases_D.png", "scal_scaling_D.png", "scal_trajectories.png"}


# ---- the real runner at a tiny size -----------------------------------------------------------------
@pytest.mark.slow
def test_real_runner_rows_are_reproducible_and_complete(tmp_path):
    def spec():
        return ScanSpec(
            "tiny",
            base={"D": 8, "C": 2, "s_max": 2e3, "n_samples": 300, "n_points": 60},
            axes={"q": [0.3, 0.5], "seed": [0, 1]},
        )

    a = run_scan(spec(), results_dir=tmp_path / "a", workers=0, progress=False, plots=False, summary=False)
    b = run_scan(spec(), results_dir=tmp_path / "b", workers=2, progress=False, plots=False, summary=False)
    assert a.exit_code == 0 and a.computed == 4
    fa, fb = a.frame, b.frame
    pd.testing.assert_frame_equal(fa.drop(columns=WALL(fa)), fb.drop(columns=WALL(fb)))
    for col in (*REDUCED_FIELDS, "status", "wall_s", "seed", "q"):  # every phase column the row declares
        assert col in fa.columns, col
    assert (fa["status"] == "ok").all()
    # each row restates its saved trajectory
    for _, row in fa.iterrows():
        traj = pd.read_csv(tmp_path / "a" / "tiny" / f"{row['key']}.csv")
        assert traj["risk"].iloc[-1] == pytest.approx(row["final_risk"], rel=1e-12)
        later = traj["s"] > 0
        assert row["min_gap_after_start"] == pytest.approx(
            (traj["gamma"] - traj["rho"])[later].min(), rel=1e-12, abs=1e-300
        )


def test_flags_override_a_saved_grid_and_name_it():
    spec = spec_from_args(
        build_parser().parse_args(["--spec", str(ROOT / "scans" / "default.toml"), "--q", "0.25", "--s-max", "1e4"])
    )
    assert spec.name == "default_q0.25_smax10000"
    assert "q" not in spec.axes and spec.base["q"] == 0.25 and spec.base["s_max"] == 1e4
    assert [p.seed for p in spec.expand()] == [0, 1, 2]


def test_seeds_is_a_count_and_first_seed_shifts_it(capsys):
    """``--seeds K`` is seeds 0 … K-1 in every CLI (issue 20); ``--first-seed F`` shifts them to F … F+K-1;
    a spec's own seed list stays unless --seeds is given."""

    def seeds(*argv):
        spec = spec_from_args(build_parser().parse_args(["--D", "16", "--C", "4", "--q", "0.25", *argv]))
        return [p.seed for p in spec.expand()], spec.name

    assert seeds() == ([0, 1, 2], "D16_C4_q0.25")
    assert seeds("--seeds", "2") == ([0, 1], "D16_C4_q0.25_seed0-1")
    assert seeds("--seeds", "2", "--first-seed", "3") == ([3, 4], "D16_C4_q0.25_seed3-4")
    spec = ROOT / "scans" / "association_N.toml"  # lists seed = [0, 1]
    assert [p.seed for p in spec_from_args(build_parser().parse_args(["--spec", str(spec)])).expand()][:2] == [0, 1]
    for bad in ("0", "-1", "1.5", "0,1"):
        with pytest.raises(SystemExit) as e:
            main(["--seeds", bad, "--quiet", "--no-plots"])
        assert e.value.code == 2 and "--seeds" in capsys.readouterr().err


def test_flags_that_cannot_act_are_refused(capsys):
    for argv, msg in (
        (["--eta", "1", "5"], "--eta: has no effect"),
        (["--N", "100"], "--N: is the simulator"),
    ):
        with pytest.raises(SystemExit) as e:
            main(argv + ["--quiet", "--no-plots"])
        assert e.value.code == 2 and msg in capsys.readouterr().err
        with pytest.raises(ScanError, match=msg.split(":")[0]):  # the library raises; only the CLI exits
            run_scan(spec_from_args(build_parser().parse_args(argv)), progress=False, plots=False)


@pytest.mark.slow
def test_simulate_option_adds_the_finite_sample_columns(tmp_path):
    spec = ScanSpec(
        "sim",
        base={**TINY_REAL_SCAN, "simulate": True, "eta": 10.0},
        axes={"seed": [0]},
    )
    out = run_scan(spec, results_dir=tmp_path, workers=0, progress=False, plots=False, summary=False)
    row = out.frame.iloc[0]
    assert out.exit_code == 0
    for col in ("sim_final_association", "sim_final_err_f", "sim_status", "sim_wall_s", "T2", "sim_T1", "sim_T0"):
        assert col in out.frame.columns, col
    assert 0.0 <= row["sim_final_association"] <= 1.0
    A = np.load(tmp_path / "sim" / f"{row['key']}_A.npy")
    assert A.shape == (8, 8)
    sim = pd.read_csv(tmp_path / "sim" / f"{row['key']}_sim.csv")
    assert sim["step"].iloc[-1] == 20


# ---- issue 18: ranges that rule out hangs, names that stay inside the results folder, Dask without workers ----
@pytest.mark.parametrize(
    "options, word",
    [
        ({"s_max": 1e-300}, "s_max"),
        ({"s_max": 5e-324}, "s_max"),
        ({"s_max": 1e300}, "s_max"),
        ({"n_points": 2**63 - 1}, "n_points"),
        ({"method": "gd", "steps": 10**10}, "steps"),
        ({"method": "gd", "s_max": 1e12, "eta": 1e-3}, "steps"),
        ({"simulate": True, "sim_steps": 2**63}, "sim_steps"),
    ],
)
def test_options_that_would_never_end_are_refused(options, word):
    with pytest.raises(ScanError, match=word):
        point_options(options)


def test_a_tiny_tau_is_refused_before_it_divides_by_zero():
    with pytest.raises(ScanError, match="tau"):
        ScanSpec("t", base={"D": 16, "C": 4, "tau": 5e-324}).expand()


def test_a_grid_over_the_size_limit_is_refused_before_expansion():
    import tracemalloc

    from theorydyn.infra.limits import GRID_POINTS_MAX

    spec = ScanSpec("big", base={"D": 16, "C": 4}, axes={"q": [0.1] * 10, "seed": list(range(10**6))})
    tracemalloc.start()
    try:
        with pytest.raises(ScanError, match="10,000,000 points") as e:
            spec.expand()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # refused before expansion: 10^7 points would take gigabytes, the refusal a few kilobytes
    assert f"{GRID_POINTS_MAX:,}" in str(e.value) and peak < 1 << 20, peak


def test_a_name_outside_the_results_folder_is_refused():
    for name in ("..", "../x", "a/b", ".hidden"):
        with pytest.raises(ScanError, match="name"):
            ScanSpec(name, base={"D": 16, "C": 4}).expand()


def test_names_are_sanitised_without_collapsing_and_stay_inside():
    from theorydyn.scan.flags import scan_name as _safe_name

    names = ["..", ".", "é", "ü", "日本", "a b", "a-b", "../../etc", "x" * 100, "x" * 99 + "y"]
    safe = [_safe_name(n) for n in names]
    assert len(set(safe)) == len(names)  # distinct names, distinct files
    for s in safe:
        assert s and not s.startswith(".") and "/" not in s and len(s) <= 90
    for kept in ("D64_C4_q0.2-0.3", "a-b", "ok.v2"):  # a name that was already safe is unchanged (old results found)
        assert _safe_name(kept) == kept


def test_cli_name_dotdot_writes_inside_the_results_folder(tmp_path):
    r = _cli(tmp_path, "--D", "16", "--C", "4", "--q", "0.25", "--seeds", "1", "--workers", "0", "--name", "..")
    assert r.returncode == 0, r.stderr
    res = tmp_path / "res"
    assert {p.name for p in tmp_path.iterdir()} <= {"counter", "res"}  # nothing beside the results folder
    assert [p.name for p in res.glob("*.csv")] and all(p.resolve().parent == res.resolve() for p in res.glob("*.csv"))
    r2 = _cli(tmp_path, "--D", "16", "--C", "4", "--q", "0.25", "--seeds", "1", "--workers", "0", "--name", "é")
    r3 = _cli(tmp_path, "--D", "16", "--C", "4", "--q", "0.25", "--seeds", "1", "--workers", "0", "--name", "ü")
    assert r2.returncode == 0 and r3.returncode == 0
    assert len(list(res.glob("*.csv"))) == 3  # '..', 'é' and 'ü': three files, not one 'scan.csv'


def test_a_symlinked_rejected_file_is_not_written_through(tmp_path):
    res = tmp_path / "res"
    target = link_to_precious(res / "ln.rejected.csv", tmp_path / "precious.txt")
    (res / "ln.csv").write_text("key,garbage\nnot-a-row,1\n")
    r = _cli(tmp_path, "--D", "16", "--C", "4", "--q", "0.25", "--seeds", "1", "--workers", "0", "--name", "ln")
    assert r.returncode == 2 and "symbolic link" in r.stderr and "Traceback" not in r.stderr
    assert target.read_text() == "keep me\n"


@pytest.mark.parametrize("kind", NON_REGULAR)
def test_a_results_csv_that_is_not_a_regular_file_is_refused(tmp_path, kind):
    make_non_regular(tmp_path / "res" / "nr.csv", kind)
    r = _cli(tmp_path, "--D", "16", "--C", "4", "--q", "0.25", "--seeds", "1", "--workers", "0", "--name", "nr")
    assert r.returncode == 2 and "--out" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_dask_without_a_live_worker_fails_naming_the_scheduler(tmp_path):
    pytest.importorskip("distributed")
    script = (
        "import sys, distributed\n"
        "from theorydyn.scan.__main__ import main\n"
        "with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None) as c:\n"
        "    print(c.scheduler_address, file=sys.stderr)\n"
        f"    code = main(['--runner', {FAKE!r}, '--out', {str(tmp_path / 'res')!r}, '--no-plots',\n"
        "                 '--quiet', '--D', '16', '--C', '4', '--q', '0.25', '--seeds', '1',\n"
        "                 '--scheduler', c.scheduler_address])\n"
        "sys.exit(code)\n"
    )
    # the watchdog (THEORYDYN_DASK_WORKER_TIMEOUT = 2 s) ends the run; the timeout only stops a hang
    r = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=_env(tmp_path, THEORYDYN_DASK_WORKER_TIMEOUT=2),
        capture_output=True,
        text=True,
        timeout=600,
    )
    address = r.stderr.splitlines()[0].strip()
    assert r.returncode == 2 and "no live Dask worker" in r.stderr and address in r.stderr.splitlines()[-1], r.stderr
    assert "Traceback" not in r.stderr


def test_watchdog_fails_unfinished_points_when_the_last_worker_is_gone():
    from concurrent.futures import Future

    from theorydyn.scan.executor import WatchedExecutor

    class Stuck:  # a cluster whose tasks never finish (its workers died)
        def __init__(self):
            self.futures, self.shut = [], None

        def submit(self, fn, *a, **k):
            f = Future()
            self.futures.append(f)
            return f

        def shutdown(self, wait=True):
            self.shut = wait

    inner = Stuck()
    workers = [1]
    ex = WatchedExecutor(inner, lambda: workers[0], "tcp://sched:8786", timeout_s=0.3, every_s=0.05)
    fut = ex.submit(print)
    done = ex.submit(print)
    inner.futures[1].set_result(7)
    assert done.result(timeout=1) == 7
    workers[0] = 0  # the last worker is gone
    with pytest.raises(ScanError, match="tcp://sched:8786"):
        fut.result(timeout=10)
    ex.shutdown(wait=True)
    assert inner.shut is False  # it does not wait on tasks no worker will run


def test_with_quiet_the_reason_a_point_failed_is_still_printed(tmp_path):
    r = _cli(
        tmp_path, "--D", "16", "--C", "4", "--q", "0.25", "--seeds", "1", "--workers", "0", SCAN_FAKE_FAIL_Q="0.25"
    )
    assert r.returncode == 1 and "fake failure at q=0.25" in r.stderr, (r.stdout, r.stderr)


@pytest.mark.slow
def test_a_torn_trajectory_is_left_out_of_the_figure(tmp_path, capsys):
    """Issue 33 item 10: a trajectory cut mid-file is not drawn; a warning names it."""
    from theorydyn.scan.run import make_plots

    spec = ScanSpec("torn", base={"C": 4, "s_max": 1e6}, axes={"D": [16, 32], "seed": [0]}, runner=FAKE)
    run_scan(spec, results_dir=tmp_path, workers=0, progress=False)
    df = ResultStore(tmp_path / "torn.csv").load().frame()
    files = [tmp_path / "torn" / f"{k}.csv" for k in df["key"]]
    assert len(files) == 2 and all(f.is_file() for f in files)
    files[0].write_bytes(files[0].read_bytes()[:-7])  # cut inside its last line
    with pytest.warns(UserWarning, match=files[0].name) as seen:
        make_plots(spec, df, tmp_path)
    assert sum("not plotted" in str(w.message) for w in seen) == 1


def test_run_scan_prints_nothing_and_reports_through_its_callback(tmp_path, capsys):
    """Issue 29: the library never prints. Its messages go to ``report`` (the command prints them on
    stderr); ``report=None`` is silent, and ``summary=True`` sends the summary text there too."""
    from theorydyn.scan.summary import summary_text

    spec = ScanSpec("quiet", base={"D": 16, "C": 4, "s_max": 1e4}, axes={"q": [0.1, 0.3]}, runner=FAKE)
    first = run_scan(spec, results_dir=tmp_path, workers=0, plots=False)
    assert first.computed == 2 and capsys.readouterr() == ("", "")  # the defaults: silent, no bar
    said: list[str] = []
    again = run_scan(
        spec, results_dir=tmp_path, workers=0, plots=False, progress=True, summary=True, report=said.append
    )
    assert capsys.readouterr().out == ""  # the bar (progress=True) is on stderr; nothing on stdout
    assert again.skipped == 2 and said[0].startswith("[quiet] 2 of 2 points already in")
    assert said[-1] == summary_text(spec, again) and "2 point(s) [0 computed, 2 already done]" in said[-1]


def test_two_scans_under_different_names_compute_only_their_new_points(tmp_path):
    """Issue 41: a point's key is its content, not the scan's name. After ``--q 0.3 0.5 0.7`` (6 points),
    ``--q 0.3 0.4 0.5`` under another name computes the 2 points of q = 0.4 only, reuses the other 4 (rows
    identical to the first scan's, trajectories beside them) and says so; the command's own name too."""
    common = ("--D", "16", "--C", "4", "--s-max", "1e4", "--seeds", "2", "--workers", "0")
    first = _cli(tmp_path, *common, "--q", "0.3", "0.5", "0.7", "--name", "first")
    assert first.returncode == 0, first.stderr
    calls = (tmp_path / "counter").read_bytes().count(b".")
    assert calls == 6, f"the first scan ran the runner {calls} times for 6 points"
    second = _cli(tmp_path, *common, "--q", "0.3", "0.4", "0.5")  # the derived name, not 'first'
    assert second.returncode == 0, second.stderr
    calls = (tmp_path / "counter").read_bytes().count(b".") - 6
    assert calls == 2, f"the second scan ran the runner {calls} times; 2 of its 6 points are new"
    assert "6 point(s) [2 computed, 4 reused (4 from scan first), 0 already done]" in second.stdout, second.stdout
    res = tmp_path / "res"
    a = ResultStore(res / "first.csv").frame()
    (derived,) = [p for p in res.glob("*.csv") if p.name != "first.csv"]
    b = ResultStore(derived).frame()
    shared = sorted(set(a["key"]) & set(b["key"]))
    assert len(shared) == 4 and len(b) == 6
    pd.testing.assert_frame_equal(  # the reused rows are the stored rows, provenance included
        a.set_index("key").loc[shared, b.columns.drop("key")], b.set_index("key").loc[shared]
    )
    # --fresh (start over) computes its own points again rather than reusing another scan's
    again = _cli(tmp_path, *common, "--q", "0.3", "0.4", "0.5", "--fresh")
    assert "[6 computed, 0 already done]" in again.stdout, again.stdout


def test_reuse_copies_a_points_files_and_only_rows_that_pass_their_checks(tmp_path):
    """The library route: run_scan reuses rows of other names with their trajectories (the figure draws
    them); a row of another name that fails the checks (its key not the hash of its parameters) is not
    reused but computed, and stays where it was."""
    spec = functools.partial(_four_fake_points)
    a = run_scan(spec("a"), results_dir=tmp_path, workers=0, plots=False)
    assert a.computed == 4 and a.reused == {}
    b = run_scan(spec("b"), results_dir=tmp_path, workers=0, plots=False)
    assert b.computed == 0 and sorted(b.reused) == sorted(a.frame["key"]) and set(b.reused.values()) == {"a"}
    for key in a.frame["key"]:
        assert (tmp_path / "b" / f"{key}.csv").read_bytes() == (tmp_path / "a" / f"{key}.csv").read_bytes()
    # garble one stored point in 'a' and 'b' (a changed parameter, its key kept): scan 'c' computes it
    key = a.frame["key"][0]
    con = sqlite3.connect(tmp_path / "results.sqlite")
    (data,) = con.execute("SELECT data FROM rows WHERE scope = 'a' AND key = ?", (key,)).fetchone()
    assert '"C": "4"' in data
    with con:
        con.execute("UPDATE rows SET data = ? WHERE key = ?", (data.replace('"C": "4"', '"C": "5"'), key))
    con.close()
    c = run_scan(spec("c"), results_dir=tmp_path, workers=0, plots=False)
    assert c.computed == 1 and len(c.reused) == 3 and key not in c.reused
    assert sqlite3.connect(tmp_path / "results.sqlite").execute(
        "SELECT count(*) FROM rows WHERE scope = 'a' AND key = ?", (key,)
    ).fetchone() == (1,)


def test_a_store_written_before_the_key_index_opens_and_reuses(tmp_path):
    """A results database of an older toolkit (no index on the key) opens unchanged in its rows, gains the
    index, and its rows are reused by a scan of another name."""
    old = ResultStore(tmp_path / "old.csv")
    old.append({"key": "k1", "T2": 1.5})
    old.close()
    con = sqlite3.connect(tmp_path / "results.sqlite")
    con.execute("DROP INDEX rows_by_key")
    con.close()
    new = ResultStore(tmp_path / "new.csv")
    assert new.adopt(["k1", "k2"]) == {"k1": "old"} and new.rows["k1"]["T2"] == "1.5"
    assert sqlite3.connect(tmp_path / "results.sqlite").execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'rows_by_key'"
    ).fetchone() == ("rows_by_key",)
    assert len(ResultStore(tmp_path / "old.csv")) == 1
