"""A ``--simulate`` scan shows the simulator: its own summary per N beside the reduced (N = ∞)
reference, printed and in the summary CSV, its plots against N, and hints for what was not reached;
the default horizon follows D; the shipped association_N spec expands."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from theorydyn.reduced import default_horizon
from theorydyn.scan import run_scan
from theorydyn.scan.grid import ScanSpec
from theorydyn.scan.point import scan_horizon
from theorydyn.scan.summary import not_reached_hints, simulator_table, summary_frame, summary_text

ROOT = Path(__file__).resolve().parents[1]
FAKE = "scan_fake:fake_point"


@pytest.fixture(scope="module")
def sim_scan(tmp_path_factory):
    """D = 8, N = 64 and 2048, 3 seeds, 60 GD steps at η = 5: seconds per point."""
    out_dir = tmp_path_factory.mktemp("simN")
    spec = ScanSpec(
        "simN",
        base={
            "D": 8,
            "C": 2,
            "s_max": 600.0,
            "n_samples": 300,
            "n_points": 60,
            "simulate": True,
            "sim_steps": 60,
            "record_every": 10,
            # η = 10 (the CLI's) diverges at N = 64 for 2 of 3 seeds (test_a_diverged_simulator_run_…)
            "eta": 5.0,
        },
        axes={"N": [64, 2048], "seed": [0, 1, 2]},
    )
    import contextlib
    import io

    from theorydyn.scan.summary import summary_text

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):  # the library prints nothing; the command prints the summary
        out = run_scan(spec, results_dir=out_dir, workers=0, progress=False)
    assert buf.getvalue() == ""
    return spec, out, summary_text(spec, out)


@pytest.mark.slow
def test_simulate_scan_prints_the_simulators_summary_per_N(sim_scan):
    spec, out, text = sim_scan
    assert out.exit_code == 0
    df = out.frame
    assert (df["sim_status"] == "ok").all()  # the premise: every run finished (see the fixture's η)
    assert "simulator (finite N) beside its N = ∞ reference" in text
    table = simulator_table(spec, df)
    assert list(table["N"]) == [64, 2048, "∞ (reduced)"]
    for _, row in table.iterrows():  # each row of the table is printed, cell for cell
        assert str(row["final_err_f"]) in text and str(row["final_association"]) in text
    # the printed numbers are the simulator's own, per N: its mean test error over seeds
    for N in (64, 2048):
        m = df.loc[df["N"] == N, "sim_final_err_f"].mean()
        cell = table.loc[table["N"] == N, "final_err_f"].iloc[0]
        assert cell.startswith(f"{m:.4g}")
    # and they differ across N (fewer samples, larger test error), unlike the reduced flow's
    e64, e2048 = (df.loc[df["N"] == N, "sim_final_err_f"].mean() for N in (64, 2048))
    assert e64 > e2048 + 0.05
    assert (df.loc[df["N"] == 64, "T0"].to_numpy() == df.loc[df["N"] == 2048, "T0"].to_numpy()).all()
    # no interval leaves [0, 1] or goes below 0
    assert "[-" not in text and ", -" not in text


@pytest.mark.slow
def test_simulate_scan_writes_the_summary_csv_per_N(sim_scan):
    spec, out, text = sim_scan
    assert out.summary_csv is not None and out.summary_csv.exists() and f"summary: {out.summary_csv}" in text
    # beside the trajectories: the results folder keeps one *.csv per scan, its rows
    assert [p.name for p in out.results.parent.glob("*.csv")] == ["simN.csv"]
    sf = pd.read_csv(out.summary_csv)
    sim = sf[sf["solver"] == "simulator"].set_index(["N", "quantity"])
    for N in (64, 2048):
        row = sim.loc[(N, "final_err_f")]
        assert row["n"] == 3 and row["reached"] == 3 and row["diverged"] == 0
        assert row["centre"] == pytest.approx(out.frame.loc[out.frame["N"] == N, "sim_final_err_f"].mean())
        assert 0.0 <= row["low"] <= row["centre"] <= row["high"] <= 1.0
    assert sim.loc[(64, "final_err_f"), "centre"] != sim.loc[(2048, "final_err_f"), "centre"]
    red = sf[sf["solver"] == "reduced"]
    assert red["N"].isna().all() and set(red["quantity"]) >= {"T0", "T2", "final_err_f", "final_association"}
    assert (red["n"] == 3).all()  # the reduced flow once per seed, not once per N
    pd.testing.assert_frame_equal(
        sf.reset_index(drop=True), summary_frame(spec, out.frame).reset_index(drop=True), check_dtype=False
    )


@pytest.mark.slow
def test_simulate_scan_plots_the_simulator_against_N_not_the_reduced_flow_repeated(sim_scan):
    _, out, _ = sim_scan
    names = {p.name for p in out.plots}
    assert "simN_simulator_N.png" in names and "simN_phases_N.png" not in names
    for p in out.plots:
        assert p.stat().st_size > 5000


@pytest.mark.slow
def test_what_is_not_reached_says_how_to_reach_it(sim_scan):
    spec, out, text = sim_scan
    hints = not_reached_hints(spec, out.frame)
    sim_hint = [h for h in hints if "simulator's horizon η·steps = 300" in h]
    assert sim_hint and "--sim-steps" in sim_hint[0] and "N=64" in sim_hint[0]
    assert sim_hint[0] in text


def test_a_reduced_phase_not_reached_names_the_s_max_that_reaches_it(tmp_path, capsys):
    # the stand-in's T2 = 8·D^1.5·(1+q)·jitter ≈ 1.8e3 at D = 32, q = 0.25: not reached by s_max = 1e3
    spec = ScanSpec(
        "short", base={"D": 32, "C": 4, "s_max": 1e3}, axes={"q": [0.25, 0.5], "seed": [0, 1, 2]}, runner=FAKE
    )
    out = run_scan(spec, results_dir=tmp_path, workers=0, progress=False, plots=False)
    text = summary_text(spec, out)  # what the command prints (the library prints nothing)
    assert "0/3 reached" in text
    assert "not reached by the reduced flow's horizon s_max = 1e+03" in text and "--s-max 2e+03" in text
    spec2 = ScanSpec(
        "long", base={"D": 32, "C": 4, "s_max": 6e4}, axes={"q": [0.25, 0.5], "seed": [0, 1, 2]}, runner=FAKE
    )
    out2 = run_scan(spec2, results_dir=tmp_path, workers=0, progress=False, plots=False)
    assert "not reached" not in summary_text(spec2, out2)
    assert capsys.readouterr().out == ""
    assert out.exit_code == 0


def test_seed_intervals_are_log_scale_and_too_few_seeds_say_so(tmp_path, capsys):
    spec = ScanSpec("two", base={"D": 32, "C": 4, "s_max": 1e6}, axes={"q": [0.25], "seed": [0, 1]}, runner=FAKE)
    two = run_scan(spec, results_dir=tmp_path, workers=0, progress=False, plots=False)
    text = " ".join(summary_text(spec, two).split())  # the header is wrapped to the terminal's width
    assert " (n=2)" in text and "no interval below 3 seeds" in text
    spec3 = ScanSpec("three", base={"D": 32, "C": 4, "s_max": 1e6}, axes={"q": [0.25], "seed": [0, 1, 2]}, runner=FAKE)
    out = run_scan(spec3, results_dir=tmp_path, workers=0, progress=False, plots=False)
    sf = pd.read_csv(out.summary_csv)
    t2 = sf[(sf["solver"] == "reduced") & (sf["quantity"] == "T2")].iloc[0]
    x = out.frame["T2"].to_numpy(float)
    assert t2["centre"] == pytest.approx(float(np.exp(np.log(x).mean())))  # the geometric mean
    assert 0 < t2["low"] < t2["centre"] < t2["high"]


def test_the_default_horizon_follows_D():
    assert default_horizon(64) == 2e4 and default_horizon(16) == 2e4
    assert default_horizon(256) == pytest.approx(2e4 * 8)
    assert scan_horizon(64) == 5e4  # the default scan's horizon at D = 64 is unchanged
    s_max = {
        p.setting.D: p.options["s_max"] for p in ScanSpec("t", base={"C": 4}, axes={"D": [32, 64, 128, 256]}).expand()
    }
    assert s_max == {32: 5e4, 64: 5e4, 128: pytest.approx(5e4 * 2**1.5), 256: pytest.approx(4e5)}
    pts = ScanSpec("t", base={"C": 4, "s_max": 1e3}, axes={"D": [32, 256]}).expand()
    assert [p.options["s_max"] for p in pts] == [1e3, 1e3]  # an explicit horizon is kept


def test_the_association_N_spec_expands_to_a_simulate_scan():
    spec = ScanSpec.from_toml(ROOT / "scans" / "association_N.toml")
    pts = spec.expand()
    assert spec.name == "association_N" and spec.scanned_axes() == ["N"]
    assert all(p.options["simulate"] and p.setting.D == 32 for p in pts)
    assert len({p.options["N"] for p in pts}) >= 3 and len({p.seed for p in pts}) >= 2
    # the N = ∞ reference runs to the simulator's own horizon η·steps
    assert all(p.options["s_max"] == p.options["eta"] * p.options["sim_steps"] for p in pts)


def _synthetic_sim_frame() -> pd.DataFrame:
    """q × N × 3 seeds: the reduced T1_mass missed by seed 0, the simulator's T2 missed at N = 1000."""
    rows = []
    for q in (0.2, 0.3):
        for N in (1000, 4000):
            for seed in range(3):
                rows.append(
                    dict(
                        q=q,
                        N=N,
                        seed=seed,
                        D=32,
                        C=4,
                        s_max=5e4,
                        n_samples=100,
                        method="flow",
                        simulate=True,
                        T0=10 * (1 + q) + seed,
                        T1=100.0 + seed,
                        T1_mass=np.nan if seed == 0 else 200.0,
                        T2=300.0,
                        final_err_f=0.01,
                        final_association=1.0,
                        sim_status="ok",
                        sim_T0=20.0 + seed,
                        sim_T1=40.0,
                        sim_T1_mass=60.0,
                        sim_T2=np.nan if N < 2000 else 500.0,
                        sim_T_assoc=5.0,
                        sim_assoc_peak=0.9,
                        sim_final_association=N / 5000 + 0.05 * seed,
                        sim_final_err_f=100 / N,
                        sim_final_err_y=0.2,
                        sim_s_reached=1.2e4,
                        eta=10.0,
                        sim_steps=1200,
                    )
                )
    return pd.DataFrame(rows)


def test_hints_and_tables_with_two_scanned_axes():
    df = _synthetic_sim_frame()
    spec = ScanSpec("x", axes={"q": [0.2, 0.3], "N": [1000, 4000], "seed": [0, 1, 2]})
    hints = not_reached_hints(spec, df)
    assert len(hints) == 2
    assert "s_max = 5e+04" in hints[0] and "q=0.2: T1_mass 2/3; q=0.3: T1_mass 2/3" in hints[0]
    assert "--s-max 1e+05" in hints[0]
    assert "q=0.2 N=1000: T2 0/3; q=0.3 N=1000: T2 0/3." in hints[1] and "N=4000" not in hints[1]
    table = simulator_table(spec, df)
    assert list(zip(table["q"], table["N"], strict=True)) == [
        (0.2, 1000),
        (0.2, 4000),
        (0.2, "∞ (reduced)"),
        (0.3, 1000),
        (0.3, 4000),
        (0.3, "∞ (reduced)"),
    ]
    assert table["final_err_f"].iloc[0].startswith("0.1 ") and table["final_err_f"].iloc[1].startswith("0.025 ")
    sf = summary_frame(spec, df)
    red = sf[(sf["solver"] == "reduced") & (sf["quantity"] == "T0")]
    assert list(red["q"]) == [0.2, 0.3] and (red["n"] == 3).all()  # one reduced run per seed, not per N


def test_a_diverged_simulator_run_is_reported_as_diverged_not_as_not_reached():
    """Seen in the README walk (D = 32, q = 0.5, N = 16384, η = 10): all three runs diverged near step
    400 and the table said "0/3 reached" with the hint to raise --sim-steps."""
    df = _synthetic_sim_frame()
    bad = (df["q"] == 0.3) & (df["N"] == 4000)
    phase_cols = [c for c in df.columns if c.startswith("sim_T")]
    df.loc[bad, phase_cols] = np.nan
    df.loc[bad, "sim_status"] = "diverged"
    df.loc[bad, "sim_s_reached"] = [3500.0, 4000.0, 3500.0]
    df["sim_message"] = None
    df.loc[bad, "sim_message"] = [f"diverged (non-finite risk or gradient) at step {k}" for k in (375, 413, 377)]
    one = (df["q"] == 0.2) & (df["N"] == 4000) & (df["seed"] == 1)
    df.loc[one, phase_cols] = np.nan
    df.loc[one, ["sim_status", "sim_message"]] = ["diverged", "diverged (non-finite risk or gradient) at step 456"]
    spec = ScanSpec("x", axes={"q": [0.2, 0.3], "N": [1000, 4000], "seed": [0, 1, 2]})
    table = simulator_table(spec, df).set_index(["q", "N"])
    assert table.loc[(0.3, 4000), "T0"] == "diverged" and table.loc[(0.3, 4000), "final_err_f"] == "diverged"
    assert table.loc[(0.3, 4000), "diverged"] == "3/3 at steps 375–413"
    assert table.loc[(0.2, 4000), "diverged"] == "1/3 at step 456"
    assert "n=2" in table.loc[(0.2, 4000), "T0"]  # the two runs that finished, not three
    assert table.loc[(0.2, 1000), "diverged"] == "0" and table.loc[(0.2, "∞ (reduced)"), "diverged"] == "—"
    hints = not_reached_hints(spec, df)
    div = [h for h in hints if h.startswith("diverged")]
    assert div == [
        "diverged (non-finite risk or gradient; the run stops there, its phase times are left out, not counted "
        "as not reached): q=0.2 N=4000: 1/3 seeds at step 456; q=0.3 N=4000: 3/3 seeds at steps 375–413. "
        "A smaller GD step --eta (here 10) may keep them finite."
    ]
    horizon = [h for h in hints if "simulator's horizon" in h]
    assert all("N=4000" not in h for h in horizon)  # no hint to raise --sim-steps for runs that diverged
    assert [h for h in hints if "η·steps = 4e+03" in h] == []
    sf = summary_frame(spec, df)
    sim = sf[(sf["solver"] == "simulator") & (sf["quantity"] == "T0")].set_index(["q", "N"])
    assert sim.loc[(0.3, 4000), "diverged"] == 3 and sim.loc[(0.3, 4000), "n"] == 0
    assert sim.loc[(0.2, 4000), "diverged"] == 1 and sim.loc[(0.2, 4000), "n"] == 2
