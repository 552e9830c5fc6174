"""The scan machinery: grid and keys, the crash-safe store, resume after kill -9, executors.

The physics runner needs the reduced solver; most tests use the stand-in runner of
``scan_fake.py`` (milliseconds per point) so that they test the machinery alone. The last
tests run the real default runner at a tiny size.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theorydyn import Setting
from theorydyn.scan import run_scan
from theorydyn.scan.__main__ import build_parser, main, spec_from_args
from theorydyn.scan.grid import ScanError, ScanSpec, normalize_options, point_key
from theorydyn.scan.store import ResultStore

ROOT = Path(__file__).resolve().parents[1]
FAKE = "scan_fake:fake_point"
# columns that legitimately differ between two runs of the same points: wall times and the time stamp
# of the provenance (the commit, versions and numerics version must agree)
WALL = lambda df: [c for c in df.columns if c.endswith("wall_s") or c == "prov_created_utc"]  # noqa: E731


def _env(tmp_path, **extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), str(ROOT), env.get("PYTHONPATH", "")])
    env["SCAN_FAKE_COUNTER"] = str(tmp_path / "counter")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _cli(tmp_path, *args, **env):
    cmd = [sys.executable, "-m", "theorydyn.scan", "--runner", FAKE, "--results-dir", str(tmp_path / "res"),
           "--no-plots", "--quiet", *args]
    return subprocess.run(cmd, cwd=ROOT, env=_env(tmp_path, **env), capture_output=True, text=True, timeout=120)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


# ---- grid and keys ----------------------------------------------------------------------------------
def test_grid_is_the_product_of_the_axes_in_order():
    spec = ScanSpec("t", base={"D": 16, "C": 4, "s_max": 100.0},
                    axes={"q": [0.1, 0.2, 0.3], "tau": [1.0, 2.0], "seed": [0, 1]})
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
    "D": 12, "C": 3, "d": 9, "q": 0.3, "sigma2": 0.2, "p": 5, "nu": 0.3, "beta": 1.5, "tau": 2.0,
    "partition": "random", "partition_seed": 3, "feature": 1,
}
_option_changes = {"method": "gd", "s_max": 123.0, "n_samples": 77, "expectation": "exact", "n_points": 33,
                   "simulate": True}


@settings(max_examples=40, deadline=None)
@given(field=st.sampled_from(sorted(_field_changes) + sorted(_option_changes) + ["seed"]),
       seed=st.integers(0, 2**31 - 1))
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
    code = ("from theorydyn import Setting; from theorydyn.scan.grid import point_key; "
            "print(point_key(Setting(D=8, C=2, q=0.3, tau=2.0, partition='random', partition_seed=4), "
            "{'s_max': 1e3, 'n_samples': 100}, 7))")
    env = dict(os.environ, PYTHONHASHSEED="12345", PYTHONPATH=str(ROOT))
    other = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                           check=True).stdout.strip()
    assert other == point_key(s, opts, 7)
    assert len(other) == 64 and set(other) <= set("0123456789abcdef")


def test_invalid_values_are_all_named_before_any_work():
    with pytest.raises(ScanError) as e:
        ScanSpec("t", base={"D": 16}, axes={"C": [4, 5], "q": [0.5, 1.5]}).expand()
    msg = str(e.value)
    assert "C must divide D" in msg and "q must lie in [0, 1], got q=1.5" in msg
    with pytest.raises(ScanError, match="n_samples must be >= 1"):
        normalize_options({"n_samples": 0})
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


# ---- the store --------------------------------------------------------------------------------------
def _rows(n):
    return [{"key": f"{i:064x}", "q": 0.1 * i, "T1": None if i % 2 else 10.0 * i, "status": "ok, fine"}
            for i in range(n)]


def test_store_round_trip_and_torn_last_line(tmp_path):
    path = tmp_path / "r.csv"
    st_ = ResultStore(path)
    for r in _rows(4):
        st_.append(r)
    full = path.read_bytes()
    path.write_bytes(full[:-7])  # a torn last line, as a power cut mid-write would leave
    again = ResultStore(path)
    assert len(again) == 3 and again.dropped == 0  # repaired on disk
    assert path.read_bytes() == full[: full.rfind(b"\n", 0, len(full) - 1) + 1]
    again.append(_rows(4)[3])
    assert path.read_bytes() == full
    df = ResultStore(path).frame()
    assert list(df["q"]) == [0.0, 0.1, 0.2, 0.30000000000000004]
    assert df["T1"].isna().tolist() == [False, True, False, True]


@settings(max_examples=30, deadline=None)
@given(cut=st.integers(0, 10_000))
def test_store_cut_anywhere_keeps_a_prefix_of_whole_rows(tmp_path_factory, cut):
    path = tmp_path_factory.mktemp("cut") / "r.csv"
    st_ = ResultStore(path)
    rows = _rows(6)
    for r in rows:
        st_.append(r)
    data = path.read_bytes()
    path.write_bytes(data[: cut % (len(data) + 1)])
    got = ResultStore(path)
    keys = list(got.rows)
    assert keys == [r["key"] for r in rows[: len(keys)]]
    for r in rows[: len(keys)]:
        assert got.rows[r["key"]]["status"] == "ok, fine"


def test_store_dedupes_keeping_the_last_and_drops_malformed_lines(tmp_path):
    path = tmp_path / "r.csv"
    st_ = ResultStore(path)
    for r in _rows(3):
        st_.append(r)
    with open(path, "a") as fh:
        fh.write(f"{0:064x},9.9,,late\n")  # the same key again: the later row wins
        fh.write("garbage,with,too,many,fields\n")
    got = ResultStore(path)
    assert len(got) == 3 and got.rows[f"{0:064x}"]["q"] == "9.9"
    assert len(_lines(path)) == 4  # header + 3 rows, rewritten
    assert sorted(got.frame()["key"]) == sorted(r["key"] for r in _rows(3))


def test_store_new_column_rewrites_with_the_union(tmp_path):
    path = tmp_path / "r.csv"
    st_ = ResultStore(path)
    st_.append({"key": "a", "x": 1})
    st_.append({"key": "b", "x": 2, "y": 3.5})
    df = ResultStore(path).frame()
    assert list(df.columns) == ["key", "x", "y"] and df["y"].isna().tolist() == [True, False]


# ---- runs -------------------------------------------------------------------------------------------
def test_kill_minus_9_mid_scan_then_resume(tmp_path):
    """The whole scan process is killed at its 3rd point; the rerun finishes the rest."""
    args = ["--D", "16", "--C", "4", "--q", "0.1", "0.2", "0.3", "--seeds", "0", "1", "--workers", "0"]
    first = _cli(tmp_path, *args, SCAN_FAKE_KILL_AT=3, SCAN_FAKE_MARKER=tmp_path / "killed")
    assert first.returncode == -9, first.stderr
    res = tmp_path / "res" / "D16_C4_q0.1-0.2-0.3_seed0-1.csv"
    assert len(_lines(res)) == 1 + 2  # the two finished points, nothing of the third
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
    res = next((tmp_path / "res").glob("*.csv"))
    n_first = len(_lines(res)) - 1
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
    cmd = [sys.executable, "-m", "theorydyn.scan", "--runner", FAKE, "--results-dir", str(tmp_path / "res"),
           "--no-plots", "--quiet", "--D", "16", "--C", "4", "--q", "0.1", "0.2", "0.3", "--workers", "2"]
    driver = subprocess.Popen(cmd, cwd=ROOT, env=_env(tmp_path, SCAN_FAKE_SLEEP=3, SCAN_FAKE_PIDS=pids),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
    assert "q must lie in [0, 1], got q=1.5" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "res").exists() and not (tmp_path / "counter").exists()
    r = _cli(tmp_path, "--D", "16", "--C", "5")
    assert r.returncode == 2 and "C must divide D" in r.stderr


def test_a_failing_point_is_reported_not_stored_and_retried(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SCAN_FAKE_FAIL_Q", "0.2")
    argv = ["--runner", FAKE, "--results-dir", str(tmp_path), "--workers", "0", "--quiet", "--no-plots",
            "--D", "16", "--C", "4", "--q", "0.1", "0.2", "--seeds", "0"]
    assert main(argv) == 1
    assert "fake failure at q=0.2" in capsys.readouterr().out
    monkeypatch.delenv("SCAN_FAKE_FAIL_Q")
    assert main(argv) == 0
    assert len(ResultStore(tmp_path / "D16_C4_q0.1-0.2_seed0.csv")) == 2


@pytest.mark.slow
def test_same_seeds_same_rows_and_force_recomputes(tmp_path):
    spec = lambda: ScanSpec("det", base={"D": 16, "C": 4, "s_max": 1e4}, axes={"q": [0.1, 0.3], "seed": [0, 1]},  # noqa: E731
                            runner=FAKE)
    a = run_scan(spec(), results_dir=tmp_path / "a", workers=0, progress=False, plots=False, summary=False).frame
    b = run_scan(spec(), results_dir=tmp_path / "b", workers=2, progress=False, plots=False, summary=False).frame
    pd.testing.assert_frame_equal(a.drop(columns=WALL(a)), b.drop(columns=WALL(b)))
    again = run_scan(spec(), results_dir=tmp_path / "a", workers=0, progress=False, plots=False, summary=False)
    assert again.computed == 0 and again.skipped == 4
    forced = run_scan(spec(), results_dir=tmp_path / "a", workers=0, force=True, progress=False, plots=False,
                      summary=False)
    assert forced.computed == 4 and len(_lines(tmp_path / "a" / "det.csv")) == 5
    traj = pd.read_csv(tmp_path / "a" / "det" / f"{a['key'][0]}.csv")
    assert {"s", "alpha", "gamma", "rho"} <= set(traj.columns)


def test_dask_executor_on_a_local_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")  # the optional `dask` extra, installed in CI
    spec = lambda: ScanSpec("dask", base={"D": 16, "C": 4, "s_max": 1e4}, axes={"q": [0.1, 0.3], "seed": [0, 1]},  # noqa: E731
                            runner=FAKE)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        d = run_scan(spec(), results_dir=tmp_path / "d", scheduler=cluster.scheduler_address,
                     progress=False, plots=False, summary=False)
    local = run_scan(spec(), results_dir=tmp_path / "l", workers=0, progress=False, plots=False, summary=False)
    assert d.computed == 4 and d.exit_code == 0
    pd.testing.assert_frame_equal(d.frame.drop(columns=WALL(d.frame)), local.frame.drop(columns=WALL(local.frame)))


def test_scheduler_that_cannot_be_reached_exits_2(tmp_path):
    r = _cli(tmp_path, "--D", "16", "--C", "4", "--scheduler", "tcp://127.0.0.1:9")
    assert r.returncode == 2 and "--scheduler" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.slow
def test_plots_and_summary_with_a_D_axis(tmp_path, capsys):
    out = run_scan(ScanSpec("scal", base={"C": 4, "s_max": 1e6}, axes={"D": [16, 32, 64], "seed": [0, 1]}, runner=FAKE),
                   results_dir=tmp_path, workers=0, progress=False)
    text = capsys.readouterr().out
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
    spec = lambda: ScanSpec("tiny", base={"D": 8, "C": 2, "s_max": 2e3, "n_samples": 300, "n_points": 60},  # noqa: E731
                            axes={"q": [0.3, 0.5], "seed": [0, 1]})
    a = run_scan(spec(), results_dir=tmp_path / "a", workers=0, progress=False, plots=False, summary=False)
    b = run_scan(spec(), results_dir=tmp_path / "b", workers=2, progress=False, plots=False, summary=False)
    assert a.exit_code == 0 and a.computed == 4
    fa, fb = a.frame, b.frame
    pd.testing.assert_frame_equal(fa.drop(columns=WALL(fa)), fb.drop(columns=WALL(fb)))
    for col in ("T0", "T1", "T1_mass", "T2", "plateau_alpha", "plateau_risk", "plateau_err", "final_risk",
                "final_err_y", "final_err_f", "lemma43_ratio", "gamma_ge_rho", "status", "wall_s", "seed", "q"):
        assert col in fa.columns, col
    assert (fa["status"] == "ok").all()
    # each row restates its saved trajectory
    for _, row in fa.iterrows():
        traj = pd.read_csv(tmp_path / "a" / "tiny" / f"{row['key']}.csv")
        assert traj["risk"].iloc[-1] == pytest.approx(row["final_risk"], rel=1e-12)
        later = traj["s"] > 0
        assert row["min_gap_after_start"] == pytest.approx((traj["gamma"] - traj["rho"])[later].min(), rel=1e-12,
                                                           abs=1e-300)


def test_flags_override_a_saved_grid_and_name_it():
    spec = spec_from_args(build_parser().parse_args(["--spec", str(ROOT / "scans" / "default.toml"), "--q", "0.25",
                                                     "--s-max", "1e4"]))
    assert spec.name == "default_q0.25_smax10000"
    assert "q" not in spec.axes and spec.base["q"] == 0.25 and spec.base["s_max"] == 1e4
    assert [p.seed for p in spec.expand()] == [0, 1, 2]


def test_flags_that_cannot_act_are_refused(capsys):
    for argv, msg in ((["--eta", "1", "5"], "--eta: has no effect"), (["--N", "100"], "--N: is the simulator"),
                      (["--seeds", "-1"], "seed must be an integer >= 0")):
        with pytest.raises(SystemExit) as e:
            main(argv + ["--quiet", "--no-plots"])
        assert e.value.code == 2 and msg in capsys.readouterr().err
        with pytest.raises(ScanError, match=msg.split(":")[0]):  # the library raises; only the CLI exits
            run_scan(spec_from_args(build_parser().parse_args(argv)), progress=False, plots=False)


@pytest.mark.slow
def test_simulate_option_adds_the_finite_sample_columns(tmp_path):
    spec = ScanSpec("sim", base={"D": 8, "C": 2, "s_max": 200.0, "n_samples": 200, "n_points": 40, "simulate": True,
                                 "N": 256, "sim_steps": 20, "record_every": 5, "eta": 10.0}, axes={"seed": [0]})
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
