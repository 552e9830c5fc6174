"""Figures name their setting, label their axes and say what their intervals are (issue 31)."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from theorydyn import Setting  # noqa: E402
from theorydyn.core.glm import plot_theorem_3_1_scan  # noqa: E402
from theorydyn.reduced import integrate, plot_trajectory  # noqa: E402
from theorydyn.scan.plots import INTERVAL_LEGEND, plot_phase_times, plot_trajectories  # noqa: E402


def test_the_reduced_figure_title_names_the_setting():
    res = integrate(Setting(D=16, C=4, q=0.5), method="flow", s_max=100.0, n_samples=200)
    title = plot_trajectory(res)._suptitle.get_text()
    assert "D=16" in title and "C=4" in title and "q=0.5" in title and "status" in title


def test_trajectory_panels_have_y_labels_and_the_title_its_own_row():
    s = np.logspace(-1, 3, 20)
    tr = pd.DataFrame({"s": s, "alpha": s, "gamma": s, "rho": -s, "risk": 1 / s, "err_f": 0.5 / s})
    fig = plot_trajectories({"a": tr}, title="D=64 C=4")
    assert all(ax.get_ylabel() for ax in fig.axes)
    assert fig.get_layout_engine() is not None  # constrained: the suptitle does not overlap the panel titles


def test_phase_time_bars_say_what_they_are():
    df = pd.DataFrame({"q": [0.2, 0.2, 0.2, 0.3, 0.3, 0.3], "seed": [0, 1, 2] * 2, "T2": [1.0, 1.1, 0.9, 2, 2.1, 1.9]})
    fig = plot_phase_times(df, "q")
    legend = fig.axes[0].get_legend()
    assert legend.get_title().get_text() == INTERVAL_LEGEND and "95%" in INTERVAL_LEGEND


def test_theorem31_legend_has_one_entry_per_encoding_with_the_bound_and_the_scope_edge():
    from matplotlib.figure import Figure

    x = np.logspace(-2, 1, 5)
    curves = pd.DataFrame(
        [dict(D=D, C=C, x=v, err=v / 10, err_cond=v / 11) for D in (64, 128, 256) for C in (4, 8, 16) for v in x]
    )
    crossings = pd.DataFrame(
        [dict(D=D, C=C, x_star=0.75, x_star_cond=0.76) for D in (64, 128, 256) for C in (4, 8, 16)]
    )
    ax = Figure().subplots()
    plot_theorem_3_1_scan(ax, curves, crossings)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len(labels) == 12, labels  # 3 C + 3 D + 2 widths + bound + scope edge + 2 crossing marks, not 18 curves
    assert "the bound 1/8" in labels and any("scope edge" in t for t in labels)


def test_figure4_panels_have_y_labels():
    from theorydyn.simulate import plot_figure4, simulate

    res = simulate(Setting(D=8, C=2), N=256, eta=0.5, steps=5, n_test=128, seed=0)
    fig = plot_figure4(res)
    assert [bool(ax.get_ylabel()) for ax in fig.axes[:4]] == [True, True, True, True]
