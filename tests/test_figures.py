"""Figures: the registry, the plot functions (Agg) on synthetic data, and one figure end to end."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from theorydyn import Setting, figures, scanplots
from theorydyn.figures import REGISTRY, Figure, main
from theorydyn.model import association_rows


@pytest.mark.slow
def test_registry_covers_the_required_figures_with_claims():
    for name in ("phases", "attention", "scaling", "figure4", "transfer", "vision"):
        fig = REGISTRY[name]
        assert fig.claim and fig.title
    text = figures.readme(__import__("pathlib").Path("/nonexistent"))
    for name in REGISTRY:
        assert f"python -m theorydyn.figures {name} --quick" in text


def test_fit_power_law_recovers_an_exact_exponent():
    x = np.array([16, 32, 64, 128.0])
    b, c = scanplots.fit_power_law(x, 3.0 * x**1.7)
    assert b == pytest.approx(1.7, abs=1e-12) and c == pytest.approx(3.0, rel=1e-10)
    assert scanplots.fit_power_law([64, 64], [1.0, 2.0]) is None  # one distinct x: no slope
    # missing phases (NaN: never reached) are left out, not fitted as zeros
    b2, _ = scanplots.fit_power_law([16, 32, 64, 128], [2.0, 8.0, np.nan, 128.0])
    assert b2 == pytest.approx(2.0)


def _synthetic_scan():
    rows = []
    for D in (16, 32, 64):
        for seed in (0, 1):
            j = 1 + 0.01 * seed
            rows.append(dict(D=D, seed=seed, T0=50 * j, T1=10 * D * j, T1_mass=12 * D * j, T2=D**1.5 * j))
    return pd.DataFrame(rows)


@pytest.mark.slow
def test_scan_plots_render_to_nonempty_files(tmp_path):
    df = _synthetic_scan()
    (p,) = scanplots.plot_phase_times(df, "D", tmp_path / "t.png")
    paths, exps = scanplots.plot_scaling(df, tmp_path / "s.pdf")
    assert exps["T1"] == pytest.approx(1.0, abs=0.01) and exps["T2"] == pytest.approx(1.5, abs=0.01)
    s = np.geomspace(1e-2, 1e4, 50)
    tr = pd.DataFrame(dict(s=s, alpha=np.tanh(s), gamma=s / (1 + s), rho=-s / (10 + s), risk=1 / (1 + s),
                           err_f=0.1 / (1 + s)))
    (q,) = scanplots.plot_trajectories({"a": tr, "b": tr * 1.1}, tmp_path / "tr.png", groups={"a": "g", "b": "g"})
    for path in (p, *paths, q):
        assert path.exists() and path.stat().st_size > 3000
    assert paths[0].read_bytes()[:4] == b"%PDF"


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
    def boom(out, quick):
        raise AssertionError("must not run")

    monkeypatch.setitem(REGISTRY, "ghost", Figure("ghost", "t", "c", ("theorydyn.not_a_module",), boom))
    assert main(["ghost", "--out", str(tmp_path)]) == 0
    assert "ghost: skipped" in capsys.readouterr().err


@pytest.mark.slow
def test_phases_figure_end_to_end(tmp_path):
    assert main(["phases", "--quick", "--out", str(tmp_path)]) == 0
    for ext in ("png", "pdf"):
        f = tmp_path / f"phases.{ext}"
        assert f.exists() and f.stat().st_size > 10_000
    assert "phases.png" in (tmp_path / "README.md").read_text()


def test_semirealistic_figure_renders(tmp_path, monkeypatch):
    """The semi-realistic figure end to end, at two small N (the registered sizes take ~10 s)."""
    from theorydyn import simcompare

    real = simcompare.compare_with_reduced
    monkeypatch.setattr(simcompare, "compare_with_reduced",
                        lambda s, **kw: real(s, **{**kw, "Ns": (256, 2048), "seeds": (0,), "steps": 40}))
    paths = REGISTRY["semirealistic"].make(tmp_path, True)
    assert [p.suffix for p in paths] == [".png", ".pdf"]
    assert all(p.stat().st_size > 5000 for p in paths)
