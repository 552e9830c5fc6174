"""Figures: the registry, drawing into a notebook's own axes, the plot functions on synthetic data,
and figures end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from theorydyn import Setting, figures
from theorydyn.core.model import association_rows
from theorydyn.core.stats import fit_power_law_ci
from theorydyn.figures import REGISTRY, Figure
from theorydyn.figures.__main__ import main
from theorydyn.scan import plots as scanplots


def test_importing_the_library_sets_no_backend():
    """A notebook's backend survives ``import theorydyn.figures`` (and every plotting module)."""
    code = (
        "import matplotlib; matplotlib.use('svg'); import theorydyn.figures, theorydyn.reduced, "
        "theorydyn.simulate, theorydyn.scan; print(matplotlib.get_backend())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "svg"


def test_registry_has_claims_and_readme_lists_every_command():
    for name in ("phases", "attention", "scaling", "figure4", "qscan", "semirealistic"):
        fig = REGISTRY[name]
        assert fig.claim and fig.title and callable(fig.compute) and callable(fig.draw)
        assert fig.setting(True) and fig.command(True, "pdf", None) == f"python -m theorydyn.figures {name} --quick"
        # the committed file: SVG into figures/
        assert fig.command(True) == f"python -m theorydyn.figures {name} --quick --format svg --out figures"
    text = figures.readme(Path("/nonexistent"), {})
    for fig in REGISTRY.values():
        assert fig.command(True) in text
    # a figure with one size has no --quick to pass
    assert REGISTRY["figure4_d64"].command(True, "pdf", None) == "python -m theorydyn.figures figure4_d64"


def test_fit_power_law_recovers_an_exact_exponent_with_an_interval():
    x = np.repeat([16, 32, 64, 128.0], 3)
    rng = np.random.default_rng(0)
    fit = fit_power_law_ci(x, 3.0 * x**1.7 * np.exp(0.05 * rng.standard_normal(x.size)))
    assert fit["b_low"] < 1.7 < fit["b_high"] and fit["b_high"] - fit["b_low"] < 0.2 and fit["n"] == 12
    exact = fit_power_law_ci(x, 3.0 * x**1.7)
    assert exact["b"] == pytest.approx(1.7, abs=1e-12) and exact["prefactor"] == pytest.approx(3.0, rel=1e-10)
    assert fit_power_law_ci([64, 64, 64], [1.0, 2.0, 3.0]) is None  # one distinct x: no slope
    # missing phases (NaN: never reached) are left out, not fitted as zeros
    assert fit_power_law_ci([16, 32, 64, 128], [2.0, 8.0, np.nan, 128.0])["b"] == pytest.approx(2.0)


def test_local_slopes_show_a_bend():
    x = np.array([16, 32, 64, 128.0])
    y = np.where(x < 50, x, 50 * (x / 50) ** 2)  # slope 1, then 2
    sl = scanplots.local_slopes(x, y)
    assert sl[0][2] == pytest.approx(1.0) and sl[-1][2] == pytest.approx(2.0)


def _synthetic_scan():
    rows = []
    for D in (16, 32, 64):
        for seed in (0, 1):
            j = 1 + 0.01 * seed
            rows.append(dict(D=D, seed=seed, T0=50 * j, T1=10 * D * j, T1_mass=12 * D * j, T2=D**1.5 * j))
    return pd.DataFrame(rows)


def test_scan_plots_draw_into_given_axes():
    import matplotlib.pyplot as plt

    df = _synthetic_scan()
    fig, axes = plt.subplots(1, 2)
    assert scanplots.plot_phase_times(df, "D", ax=axes[0]) is fig
    got, exps = scanplots.plot_scaling(df, ax=axes[1])
    assert got is fig and len(axes[1].lines) >= 3
    assert exps["T1"]["b"] == pytest.approx(1.0, abs=0.01) and exps["T2"]["b"] == pytest.approx(1.5, abs=0.01)
    s = np.geomspace(1e-2, 1e4, 50)
    tr = pd.DataFrame(
        dict(s=s, alpha=np.tanh(s), gamma=s / (1 + s), rho=-s / (10 + s), risk=1 / (1 + s), err_f=0.1 / (1 + s))
    )
    f2 = scanplots.plot_trajectories({"a": tr, "b": tr * 1.1}, groups={"a": "g", "b": "g"})
    assert len(f2.axes) == 5 and len(f2.axes[0].lines) == 2
    plt.close("all")


def test_association_rows_against_its_definition():
    s = Setting(D=12, C=3)
    A = np.where(s.same_set, 2.0, 0.0) + np.eye(12)
    assert association_rows(s, A).all()
    B = A.copy()
    B[4, 11] = 5.0  # row 4's top-3 now holds a patch of another set
    got = association_rows(s, B)
    assert not got[4] and got[np.arange(12) != 4].all()
    perm = np.random.default_rng(0).permutation(12)  # a permuted partition with its permuted matrix
    sp = Setting(D=12, C=3, partition=[perm[S] for S in s.sets])
    Ap = np.empty_like(A)
    Ap[np.ix_(perm, perm)] = A
    assert association_rows(sp, Ap).all()


def test_unknown_figure_exits_2(capsys):
    with pytest.raises(SystemExit) as e:
        main(["nope"])
    assert e.value.code == 2 and "unknown figure" in capsys.readouterr().err


def test_a_figure_whose_part_is_missing_is_skipped(tmp_path, monkeypatch, capsys):
    def boom(quick):
        raise AssertionError("must not run")

    monkeypatch.setitem(REGISTRY, "ghost", Figure("ghost", "t", "c", ("theorydyn.not_a_module",), boom, boom))
    assert main(["ghost", "--out", str(tmp_path)]) == 0
    assert "ghost: skipped" in capsys.readouterr().err


@pytest.mark.slow
def test_phases_figure_end_to_end_and_into_a_notebooks_axes(tmp_path):
    import matplotlib.pyplot as plt

    assert main(["phases", "--quick", "--out", str(tmp_path)]) == 0
    f = tmp_path / "phases.pdf"  # vector by default, and nothing else
    assert f.read_bytes().startswith(b"%PDF") and f.stat().st_size > 10_000
    assert sorted(p.suffix for p in tmp_path.glob("phases.*")) == [".pdf"]
    # the README text goes next to the outputs; README.md only when asked (it is a tracked file in figures/)
    assert "phases.pdf" in (tmp_path / "README.generated.md").read_text() and not (tmp_path / "README.md").exists()
    entry = json.loads((tmp_path / "manifest.json").read_text())["phases"]
    assert entry["file"] == "phases.pdf" and entry["numbers"]["T0"] > 0 and entry["setting"]["D"] == 64
    assert entry["command"] == f"python -m theorydyn.figures phases --quick --out {tmp_path}"
    assert main(["--readme-only", "--write-readme", "--out", str(tmp_path)]) == 0  # makes no figure
    assert "phases.pdf" in (tmp_path / "README.md").read_text()
    assert json.loads((tmp_path / "manifest.json").read_text())["phases"] == entry
    # a figure kept as it is gets the same fields in the same order, with nothing measured
    kept = figures.record_existing("phases", tmp_path, "kept", format="pdf")
    assert list(kept) == list(entry), (list(kept), list(entry))
    assert kept["sha256"] == entry["sha256"] and kept["numbers"] == {} and kept["cost_s"] is None
    assert kept["note"] == "kept" and not kept["regenerated_in_ci"] and kept["made_utc"] is None
    fig, axes = plt.subplots(3, 1)
    reg = REGISTRY["phases"]
    assert reg.draw(reg.compute(True), axes=axes) is fig and len(axes[0].lines) >= 1
    plt.close("all")


def test_semirealistic_figure_renders(tmp_path, monkeypatch):
    """The semi-realistic figure end to end, at two small N (the registered sizes take ~10 s)."""
    from theorydyn.figures import simulator_figs as figmod  # the module whose globals the figure reads

    real = figmod.compare_with_reduced
    monkeypatch.setattr(
        figmod, "compare_with_reduced", lambda s, **kw: real(s, **{**kw, "Ns": (256, 2048), "seeds": (0,), "steps": 40})
    )
    entry = figures.make("semirealistic", tmp_path, True, format="svg")
    path = tmp_path / "semirealistic.svg"
    assert path.read_text().lstrip().startswith("<?xml") and entry["sha256"] == figures.mf.sha256(path)
    assert entry["file"] == path.name and "--format svg" in entry["command"]
    assert set(entry["numbers"]["gap_alpha"]) == {"256", "2048"}


def test_list_gives_each_figures_cost_and_cached_inputs(tmp_path, capsys):
    """--list reads the manifest of --out: a measured cost where there is one, 'cost unknown' else,
    and whether each figure's cached inputs are present; no figure is 'ready' without a reason."""
    (tmp_path / "manifest.json").write_text(
        json.dumps({"phases": dict(cost_s=3.5, cold=True, load_avg_1m=0.5, regenerated_in_ci=True)})
    )
    assert main(["--list", "--out", str(tmp_path)]) == 0
    lines = {ln.split()[0]: ln for ln in capsys.readouterr().out.splitlines()}
    assert set(lines) == set(REGISTRY)
    assert "3.5 s cold (load 0.5), CI" in lines["phases"] and "computed from scratch" in lines["phases"]
    assert "cost unknown" in lines["qscan"]
    assert "cached inputs" in lines["transfer_target"] and "runs/transfer_checks_quick" in lines["transfer_target"]
    for flag in ("--quick", "--recompute", "--write-readme"):
        with pytest.raises(SystemExit) as e:
            main(["--list", flag])
        assert e.value.code == 2 and flag in capsys.readouterr().err


def test_the_overall_bar_counts_expected_seconds(tmp_path, monkeypatch, capsys):
    """One bar over every figure asked for, in expected seconds (the last measured costs), so its ETA
    is the remaining cost; figures write through it, one line each."""
    import matplotlib.pyplot as plt

    def draw(data, axes=None):
        fig, ax = plt.subplots()
        ax.plot(data)
        return fig

    for n in ("f1", "f2"):
        monkeypatch.setitem(REGISTRY, n, Figure(n, n, "c", (), lambda quick: [1, 2], draw))
    (tmp_path / "manifest.json").write_text(json.dumps({"f1": dict(cost_s=12.0), "f2": dict(cost_s=8.0)}))
    assert main(["f1", "f2", "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "figures" in err and "/20.0" in err and "f1.pdf" in err and "f2.pdf" in err
    assert main(["f1", "--out", str(tmp_path), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "f1.pdf" in err and "it/s" not in err and "s/s" not in err and "figures:" not in err


def test_a_vision_figure_without_its_runs_lists_what_computing_them_costs(tmp_path):
    """`figures --list` gives a vision figure's cold cost: the ledger's vision source as measured."""
    import dataclasses

    from theorydyn.claims import expected_seconds
    from theorydyn.figures import REGISTRY, inputs_text

    fig = dataclasses.replace(REGISTRY["vision_compare"], inputs=lambda quick: tmp_path / "absent")
    text = inputs_text(fig)
    assert "cached inputs absent" in text and f"{expected_seconds('vision', quick=True):.0f} s cold" in text
    (tmp_path / "absent").mkdir()
    assert inputs_text(fig) == f"cached inputs present ({tmp_path / 'absent'})"


@pytest.mark.parametrize("writer", ["compute", "draw"])
def test_make_marks_cold_by_what_it_wrote_into_a_shared_inputs_folder(tmp_path, monkeypatch, writer):
    """Two figures sharing one cache folder (the three vision figures): the second is cold when it
    trains runs of its own there (in compute, or in draw as the vision figures do), though the folder
    exists; warm when it only reads, SQLite's side files coming and going notwithstanding."""
    import dataclasses

    from matplotlib.figure import Figure as MplFigure

    shared = tmp_path / "runs"
    (shared / "other-figure-run").mkdir(parents=True)
    (shared / "other-figure-run" / "row.json").write_text("{}")

    def train_if_absent():
        run = shared / "my-run" / "row.json"
        if not run.exists():
            run.parent.mkdir(exist_ok=True)
            run.write_text("{}")
        wal = shared / "results.sqlite-wal"  # a reader's side file: there after one call, gone after the next
        wal.unlink() if wal.exists() else wal.write_text("x")

    def compute(quick, recompute=False):
        if writer == "compute":
            train_if_absent()
        return None

    def draw(data, axes=None):
        if writer == "draw":
            train_if_absent()
        fig = MplFigure()
        fig.add_subplot().plot([0, 1])
        return fig

    fake = dataclasses.replace(REGISTRY["phases"], compute=compute, draw=draw, inputs=lambda quick: shared)
    monkeypatch.setitem(REGISTRY, "phases", dataclasses.replace(fake, numbers=lambda data: {}))
    out = tmp_path / "out"
    out.mkdir()
    assert figures.make("phases", out, True)["cold"] is True  # trained its run: cold, the folder notwithstanding
    assert figures.make("phases", out, True)["cold"] is False  # read it back: warm
    assert figures.make("phases", out, True, recompute=True)["cold"] is True


def test_every_registered_claim_names_its_placeholders():
    """A claim's placeholders must be names (``{N16384[frac]}``, not ``{16384[frac]}``, which str.format reads
    as a positional field and refuses in format_map): the README text of every figure is rendered from them."""
    import re
    import string

    from theorydyn.figures import REGISTRY

    for fig in REGISTRY.values():
        for _, field, _, _ in string.Formatter().parse(fig.claim):
            if field is not None:
                head = re.split(r"[.\[]", field, maxsplit=1)[0]
                assert head and not head.isdigit(), f"{fig.name}: placeholder {{{field}}} is positional"
