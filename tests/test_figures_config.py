"""The figures command's library steps (issue 40): its options as a FiguresConfig (the flags are its fields),
the refusals of --list and --readme-only, the manifest a run reads, and making several figures with the
manifest kept after each one."""

from __future__ import annotations

import dataclasses
import json

import pytest

from theorydyn.cli.configs import config_flags, config_from_args
from theorydyn.figures import REGISTRY, Figure
from theorydyn.figures import manifest as mf
from theorydyn.figures.__main__ import build_parser
from theorydyn.figures.config import LIST_REFUSES, FiguresConfig
from theorydyn.figures.core import listing, make_many
from theorydyn.infra.paths import committed_figures


def test_the_flags_are_the_configs_fields():
    parser = build_parser()
    dests = {a.dest for a in parser._actions}
    assert set(config_flags(FiguresConfig).values()) == {"names", "--out", "--recompute", "--write-readme",
                                                        "--readme-only", "--list"}  # fmt: skip
    assert {"names", "out", "recompute", "write_readme", "readme_only", "list", "quick", "quiet"} <= dests
    assert parser.get_default("names") == ("all",) and FiguresConfig().figures == ("all",)
    cfg = config_from_args(FiguresConfig, parser.parse_args(["phases", "theorem31", "--quick", "--list"]))
    assert cfg.figures == ("phases", "theorem31") and cfg.quick and cfg.listing and cfg.format == "pdf"
    assert cfg.folder == parser.get_default("out")


def test_the_selection_is_the_registrys_order_for_all_and_as_named_else():
    known = list(REGISTRY)
    assert FiguresConfig().selected(known) == known
    assert FiguresConfig(figures=("theorem31", "phases", "theorem31")).selected(known) == ["theorem31", "phases"]
    assert FiguresConfig(figures=("phases", "all")).selected(known) == known
    assert FiguresConfig(readme_only=True).selected(known) == []
    with pytest.raises(ValueError, match=r"^names: unknown figure\(s\) \['nope'\]; known: all, "):
        FiguresConfig(figures=("phases", "nope")).selected(known)


def test_list_refuses_each_flag_that_would_do_nothing_in_its_order():
    FiguresConfig().check_list(set(LIST_REFUSES))  # without --list: nothing to refuse
    cfg = FiguresConfig(listing=True)
    cfg.check_list(set())
    with pytest.raises(ValueError, match=r"^--quick: has no effect with --list"):
        cfg.check_list({"format", "quick"})
    with pytest.raises(ValueError, match=r"^--write-readme: has no effect with --list"):
        cfg.check_list({"quiet", "write_readme"})
    with pytest.raises(ValueError, match=r"^names: have no effect with --list"):
        dataclasses.replace(cfg, figures=("phases",)).check_list(set())


def test_readme_only_and_the_committed_folder_are_checked_against_the_output(tmp_path):
    FiguresConfig(readme_only=True).check_out(tmp_path)
    for bad in (dict(figures=("phases",)), dict(quick=True), dict(recompute=True)):
        with pytest.raises(ValueError, match=r"^--readme-only: makes no figure"):
            FiguresConfig(readme_only=True, **bad).check_out(tmp_path)
    FiguresConfig(format="png").check_out(tmp_path)
    shipped = committed_figures()
    if shipped is not None:  # the checkout's figures: SVG only (nothing is written here)
        FiguresConfig(format="svg").check_out(shipped)
        FiguresConfig(format="png", readme_only=True).check_out(shipped)
        with pytest.raises(ValueError, match=r"^--format: the committed figures are SVG"):
            FiguresConfig(out=shipped, format="pdf").check_out(shipped)
    with pytest.raises(ValueError, match="format must be one of"):
        FiguresConfig(format="jpg")


def test_the_manifest_of_a_new_folder_is_the_committed_one_and_a_bad_one_names_out(tmp_path):
    shipped = committed_figures()
    expected = mf.load(shipped / mf.NAME) if shipped is not None else {}
    assert FiguresConfig().manifest(tmp_path) == expected
    (tmp_path / mf.NAME).write_text(json.dumps({"phases": {"cost_s": 1.0}}))
    assert FiguresConfig().manifest(tmp_path) == {"phases": {"cost_s": 1.0}}
    (tmp_path / mf.NAME).write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"^--out: .*not a figures manifest"):
        FiguresConfig().manifest(tmp_path)


def test_a_warm_run_keeps_the_measured_cold_cost():
    old = dict(cost_s=9.0, cold=True, load_avg_1m=0.5, regenerated_in_ci=True)
    warm = dict(cost_s=0.5, cold=False, load_avg_1m=2.0, regenerated_in_ci=False, file="x.pdf")
    assert mf.keep_cold_cost(old, dict(warm)) == dict(warm, cost_s=9.0, cold=True, load_avg_1m=0.5,
                                                      regenerated_in_ci=True)  # fmt: skip
    assert mf.keep_cold_cost(None, dict(warm)) == warm
    assert mf.keep_cold_cost(dict(old, cold=False), dict(warm)) == warm  # an earlier warm cost says nothing
    cold = dict(warm, cold=True)
    assert mf.keep_cold_cost(old, dict(cold)) == cold


def test_make_many_skips_reports_and_goes_on_keeping_the_manifest(tmp_path, monkeypatch, capsys):
    from matplotlib.figure import Figure as MplFigure

    def draw(data, axes=None):
        fig = MplFigure()
        fig.add_subplot().plot(data)
        return fig

    def broken(quick):
        raise RuntimeError("boom")

    written = []

    def write(path, writer):
        written.append(path.name)
        writer(path)

    monkeypatch.setitem(REGISTRY, "ok", Figure("ok", "ok", "c", (), lambda quick: [1, 2], draw))
    monkeypatch.setitem(REGISTRY, "bad", Figure("bad", "bad", "c", (), broken, draw))
    monkeypatch.setitem(REGISTRY, "ghost", Figure("ghost", "t", "c", ("theorydyn.not_a_module",), broken, draw))
    entries: dict = {}
    cfg = FiguresConfig(format="svg", write_readme=True)
    failed = make_many(["ghost", "bad", "ok"], tmp_path, entries, cfg, write=write, progress=False)
    err = capsys.readouterr().err
    assert failed == ["bad"] and list(entries) == ["ok"] and entries["ok"]["file"] == "ok.svg"
    assert "ghost: skipped, needs theorydyn.not_a_module" in err and "bad: FAILED: RuntimeError: boom" in err
    assert written == ["manifest.json", "README.generated.md", "README.md"]
    assert json.loads((tmp_path / mf.NAME).read_text())["ok"]["sha256"] == mf.sha256(tmp_path / "ok.svg")
    assert "ok.svg" in (tmp_path / "README.md").read_text()
    lines = {ln.split()[0]: ln for ln in listing(entries)}
    assert "can be made" in lines["ok"] and "cannot be made: needs theorydyn.not_a_module" in lines["ghost"]
