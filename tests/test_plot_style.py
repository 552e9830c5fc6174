"""Figures fit for a paper (issue 41): one style, the formats of every command that draws, censored
phases drawn at their horizon, titles that state the setting, legends off the data."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from theorydyn.core import plotting  # noqa: E402
from theorydyn.scan import plots as scanplots  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: every command that writes a figure, and its default format
DRAWING = {
    "theorydyn.scan.__main__": "png",
    "theorydyn.figures.__main__": "pdf",
    "theorydyn.reduced.__main__": "png",
    "theorydyn.simulate.__main__": "png",
    "theorydyn.transfer.__main__": "png",
    "theorydyn.vision.__main__": "png",
}


@pytest.mark.parametrize("module", sorted(DRAWING))
def test_every_command_that_draws_takes_format_from_the_runner(module):
    """``--format`` is declared once (the runner, from ``Command.draws``), with the style's formats."""
    command = importlib.import_module(module).COMMAND
    assert command.draws == DRAWING[module]
    (action,) = [a for a in command.parser()._actions if "--format" in a.option_strings]
    assert tuple(action.choices) == plotting.FORMATS and action.default == DRAWING[module]


def _figure():
    fig, ax = plotting.figure()
    ax.plot([1, 2, 3], [3, 1, 2], label="a line")
    plotting.legend_outside(ax)
    ax.set_title("a title")
    return fig


@pytest.mark.parametrize("fmt", plotting.FORMATS)
def test_save_writes_each_format_and_the_same_figure_gives_the_same_bytes(tmp_path, fmt):
    """No time stamp in the file: a figure saved twice is byte-identical (the committed figures are
    checked by hash)."""
    magic = {"png": b"\x89PNG", "pdf": b"%PDF", "svg": b"<?xml"}[fmt]
    a = plotting.save(_figure(), tmp_path / "a.png", fmt)
    b = plotting.save(_figure(), tmp_path / "b", fmt)
    assert a.suffix == b.suffix == f".{fmt}"
    assert a.read_bytes().startswith(magic) and a.read_bytes() == b.read_bytes()
    with pytest.raises(ValueError, match="format must be one of"):
        plotting.save(_figure(), tmp_path / "c", "jpg")


def _scan_rows(horizon: float = 1e3) -> pd.DataFrame:
    """Three seeds at two q; at q = 0.5 one seed does not reach T2 within its horizon."""
    rows = []
    for q in (0.3, 0.5):
        for seed in (0, 1, 2):
            T2 = np.nan if (q == 0.5 and seed == 1) else 400.0 * (1 + q) * (1 + 0.02 * seed)
            rows.append(
                dict(q=q, seed=seed, T0=20.0 + seed, T1=100.0, T1_mass=200.0, T2=T2, s_max=horizon, status="ok")
            )
    return pd.DataFrame(rows)


def _triangles(ax) -> np.ndarray:
    """(x, y) of the open upward triangles in ``ax``, in data coordinates (their offsets)."""
    found = []
    for col in ax.collections:
        marker = plotting.CENSORED_MARKER
        paths = col.get_paths()
        if paths and len(col.get_offsets()) and np.allclose(col.get_facecolor()[:, 3], 0):
            ref = matplotlib.markers.MarkerStyle(marker).get_path()
            if len(paths[0].vertices) == len(ref.vertices):
                found.append(np.asarray(col.get_offsets()))
    return np.vstack(found) if found else np.empty((0, 2))


def test_a_phase_not_reached_is_a_triangle_at_its_horizon_with_a_legend_entry():
    fig = scanplots.plot_phase_times(_scan_rows(), "q")
    ax = fig.axes[0]
    tri = _triangles(ax)
    assert tri.tolist() == [[0.5, 1000.0]], tri  # the one seed, at its horizon s_max
    assert ax.get_ylim()[1] >= 1000.0  # inside the axes, not clipped
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("not reached" in t and "horizon" in t for t in labels), labels
    # a diverged run is not censored: it stopped, it did not run out of horizon
    df = _scan_rows().assign(status=lambda d: np.where(d["T2"].isna(), "diverged", "ok"))
    assert _triangles(scanplots.plot_phase_times(df, "q").axes[0]).size == 0


def test_legends_speak_the_papers_language_and_sit_off_the_data():
    fig = scanplots.plot_phase_times(_scan_rows(), "q")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert plotting.LABELS["T1"] in labels and not any("depends on s_max" in t for t in labels)
    fig.canvas.draw()
    leg, box = ax.get_legend().get_window_extent(), ax.get_window_extent()
    assert leg.x0 >= box.x1 - 1, (
        f"the legend [{leg.x0:.0f}, {leg.x1:.0f}] px overlaps the axes [{box.x0:.0f}, {box.x1:.0f}]"
    )


def test_scan_plots_use_the_palette():
    """Every line and marker of a scan's phase plot is a palette colour (or a grey of the references)."""
    fig = scanplots.plot_phase_times(_scan_rows(), "q")
    allowed = {mcolors.to_hex(c) for c in plotting.PALETTE} | {mcolors.to_hex(plotting.GREY)}
    used = {mcolors.to_hex(line.get_color()) for line in fig.axes[0].get_lines()}
    assert used and used <= allowed, used - allowed


def test_scan_figures_state_the_setting_not_the_file_name_and_follow_the_format(tmp_path, monkeypatch):
    """``scan --format svg`` writes SVG; each title states the setting (D, C, horizon, seeds), never the
    scan's name (the fake runner: ``tests/scan_fake.py``)."""
    from theorydyn.scan import ScanSpec, run_scan
    from theorydyn.scan import run as scanrun

    titles: list[str] = []
    real_save = scanrun.save

    def spy(fig, path, format=None, close=True):
        titles.append(fig._suptitle.get_text())
        return real_save(fig, path, format, close)

    monkeypatch.syspath_prepend(str(ROOT / "tests"))
    monkeypatch.setattr(scanrun, "save", spy)
    spec = ScanSpec(
        "D16_C4_q0.1-0.3_seed0-2", base={"D": 16, "C": 4, "s_max": 1e3}, axes={"q": [0.1, 0.3], "seed": [0, 1, 2]},
        runner="scan_fake:fake_point",
    )  # fmt: skip
    out = run_scan(spec, results_dir=tmp_path, workers=0, plot_format="svg")
    assert out.plots and all(p.suffix == ".svg" and p.read_text().lstrip().startswith("<?xml") for p in out.plots)
    assert len(titles) == len(out.plots)
    for t in titles:
        assert spec.name not in t and "D=16" in t and "C=4" in t and "3 seed(s)" in t, t


def test_the_scan_command_writes_vector_files(tmp_path):
    env = dict(PYTHONPATH=f"{ROOT / 'tests'}:{ROOT}", PATH="/usr/bin:/bin")
    cmd = [sys.executable, "-m", "theorydyn.scan", "--runner", "scan_fake:fake_point", "--out", str(tmp_path)]
    cmd += [
        "--D",
        "16",
        "--C",
        "4",
        "--q",
        "0.1",
        "0.3",
        "--seeds",
        "1",
        "--workers",
        "0",
        "--quiet",
        "--format",
        "svg",
    ]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    drawn = sorted(p.suffix for p in tmp_path.iterdir() if p.suffix in (".png", ".pdf", ".svg"))
    assert drawn == [".svg", ".svg"], drawn  # phases against q and the trajectories


def test_the_committed_figures_are_remade_only_as_svg(capsys):
    """``figures --out figures`` with another format is refused before any work (exit 2), so figures/ and
    its manifest keep one format."""
    from theorydyn.figures.__main__ import main

    before = {p.name: p.stat().st_mtime_ns for p in (ROOT / "figures").iterdir()}
    with pytest.raises(SystemExit) as e:
        main(["phases", "--quick", "--out", str(ROOT / "figures"), "--format", "pdf"])
    assert e.value.code == 2 and "--format" in capsys.readouterr().err
    assert {p.name: p.stat().st_mtime_ns for p in (ROOT / "figures").iterdir()} == before


def test_plot_functions_draw_under_the_style_and_leave_rcparams_alone():
    """A plot function takes the style's sizes (here the legend's) and restores the caller's rcParams."""
    before = dict(matplotlib.rcParams)
    fig = scanplots.plot_phase_times(_scan_rows(), "q")
    assert fig.axes[0].get_legend().get_texts()[0].get_fontsize() == plotting.STYLE["legend.fontsize"]
    assert dict(matplotlib.rcParams) == before


def test_the_palette_is_okabe_ito_and_each_phase_has_its_quantitys_colour():
    assert len(set(plotting.PALETTE)) == 8 and set(plotting.PALETTE) == set(plotting.OKABE_ITO.values())
    c = plotting.COLORS
    assert (c["T0"], c["T1"], c["T1_mass"], c["T2"]) == (c["alpha"], c["gamma"], c["in_mass"], c["err_f"])
