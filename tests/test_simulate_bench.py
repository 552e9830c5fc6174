"""The simulator benchmark runs at a tiny size, checks its contenders agree, prints every ratio and
the machine, and writes its tables (no timing is asserted)."""

import pandas as pd
import pytest

from theorydyn.bench.__main__ import main
from theorydyn.infra.provenance import numerics_host


def _bench(flags: str, out, capsys) -> str:
    """``bench simulate FLAGS`` (as typed on the command line) at one repeat with no pause, writing ``out``:
    exits 0; its stdout."""
    assert main(["simulate", *flags.split(), "--repeats", "1", "--settle", "0", "--out", str(out)]) == 0
    return capsys.readouterr().out


def test_simulate_benchmark_prints_ratios_machine_and_csv(tmp_path, capsys):
    out = tmp_path / "sim.csv"
    text = _bench("--N 256 --D 8 --n-test 32 --sim-steps 2 --replicas 2", out, capsys)
    assert "machine:" in text and "numba" in text
    assert f"host: {numerics_host()}" in text  # the model name alone does not tell two machines apart
    for needle in (
        "x one pass (goal <= 1.3x)",
        "alternating with no pause",
        "simulate() per step",
        "replicas sharing X",
        "A-frozen control: v-only fused step",
        "a Theorem 4.2 run's step (the trained model and its A-frozen control)",
        "torch step on CPU",
        "X rounded to bfloat16",
    ):
        assert needle in text
    t = pd.read_csv(out)
    assert list(t.dtype) == ["float64", "float32"]
    assert (t.fused_ms > 0).all() and (t.one_pass_ms > 0).all() and (t.simulate_step_ms > 0).all()
    assert (t.fused_after_pass_ms > 0).all() and (t.pass_after_fused_ms > 0).all()
    assert {"cpu", "numba", "numpy", "fused_over_one_pass", "simulate_over_fused"} <= set(t.columns)
    assert (t.v_only_ms > 0).all() and (t.frozen_numpy_ms > 0).all() and (t.torch_step_ms > 0).all()
    assert (t.paired_ms > 0).all() and (t.theorem42_after_over_before > 0).all()
    # the bfloat16 contenders run on the float32 row only (its X rounded)
    assert t.paired_bf16_ms.isna().tolist() == [True, False] and t.theorem42_bf16_over_before.iloc[1] > 0


def test_simulate_benchmark_times_the_nstar_grid_by_both_routes(tmp_path, capsys, monkeypatch):
    """--nstar quick --nstar-only: the grid of the quick ledger (made tiny here) run by the route of before
    (a run per (D, N, seed), each drawing its data) and by nstar_runs; a row per D and a total."""
    from theorydyn.bench import nstar_grid
    from theorydyn.claims import nstar as claim
    from theorydyn.claims.sizes import Sizes
    from theorydyn.experiments import nstar as xns

    tiny = claim.NStarSizes(Ns=(64, 128), seeds=(0,), n_D=1, min_steps=3)
    monkeypatch.setattr(claim, "SIZES", Sizes(quick=tiny, full=tiny))
    monkeypatch.setattr(xns, "steps_for", lambda sd, preset, eta: (3, 20.0))  # T_a = 20: a few steps
    monkeypatch.setattr(xns, "curvature_along_flow", lambda sd, horizon: dict(lam=0.1, s_at=1.0, eta=10.0, edge=20.0))
    assert nstar_grid.plan_at is xns.plan_at
    out = tmp_path / "sim.csv"
    text = _bench("--nstar quick --nstar-only", out, capsys)
    assert "the quick N* grid: before" in text and "goal <= 0.5x" in text
    t = pd.read_csv(tmp_path / "sim_nstar.csv")
    assert list(t.D) == ["32", "all"] and list(t.runs) == [2, 2]
    assert (t.before_s > 0).all() and (t.after_s > 0).all() and (t.after_over_before > 0).all()
    assert t.before_diverged.iloc[0] == 0 and t.after_diverged.iloc[0] == 0


def test_simulate_benchmark_scaling_tables(tmp_path, capsys):
    out = tmp_path / "sim.csv"
    text = _bench("--scaling-only --no-memory --scaling-N 64 128 --scaling-D 8 16 --scaling-N-for-D 64", out, capsys)
    assert "log-log slope of the step time in N" in text and "log-log slope of the step time in D" in text
    tN = pd.read_csv(tmp_path / "sim_scaling_N.csv")
    tD = pd.read_csv(tmp_path / "sim_scaling_D.csv")
    assert list(tN.N) == [64, 128] and list(tD.D) == [8, 16]


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--dtypes", "float16"], "--dtypes"),
        (["--memory-N", "10", "5"], "--memory-N"),
        (["--scaling-N", "64,128"], "--scaling-N"),
        (["--D", "10"], "--D"),
        (["--nstar-only"], "--nstar-only"),
        (["--nstar", "medium"], "--nstar"),
    ],
)
def test_simulate_benchmark_bad_input_exits_2(argv, needle, capsys):
    # bench's main returns the status, as `theorydyn <command>` does (cli.dispatch.run_entry)
    code = main(["simulate", *argv])
    err = capsys.readouterr().err
    assert code == 2 and needle in err, (code, err[-300:])


def test_second_after_first_times_the_second_call_alone(monkeypatch):
    """The alternating measurement counts only the call made right after the other one (a fake clock:
    the first call takes 5 units, the second 1)."""
    import types

    from theorydyn.bench import simulate as bs
    from theorydyn.bench import timing  # the module whose clock the timing helpers read

    now = [0.0]
    monkeypatch.setattr(timing, "time", types.SimpleNamespace(perf_counter=lambda: now[0], sleep=lambda s: None))

    def advance(units):
        return lambda: now.__setitem__(0, now[0] + units)

    f = bs._second_after_first(advance(5), advance(1))
    assert f() == bs.Timed(1.0)
    assert bs._interleaved({"pair": f}, repeats=3, settle=0) == {"pair": 1.0}


def test_the_benchmark_options_are_one_frozen_config():
    """Each flag of ``bench simulate`` is a field of SimulateBench (issue 40): its default, its rule (each value of a
    list flag too) and its help; the parsed flags are the config."""
    from theorydyn.bench.config import SIMULATE_PARTS, SimulateBench
    from theorydyn.bench.simulate_cli import build_parser
    from theorydyn.cli.configs import config_from_args

    ap = build_parser()
    acts = {a.dest: a for a in ap._actions}
    assert set(SimulateBench.names()) <= set(acts)
    assert acts["D"].nargs == "+" and acts["D"].type.low == 8 and acts["D"].default == SimulateBench().D
    cfg = config_from_args(SimulateBench, ap.parse_args(["--D", "16", "32", "--dtypes", "float32"]))
    assert cfg.D == (16, 32) and cfg.dtypes == ("float32",) and cfg.N == 16384
    with pytest.raises(ValueError, match=r"^D\[1\] must be"):
        SimulateBench(D=(16, 4))
    with pytest.raises(ValueError, match="^dtypes"):
        SimulateBench(dtypes=())
    assert set(SIMULATE_PARTS.main + SIMULATE_PARTS.common + SIMULATE_PARTS.scaling) | {
        "scaling",
        "scaling_only",
    } == set(SimulateBench.names())
