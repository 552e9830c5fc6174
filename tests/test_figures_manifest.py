"""The committed figures are current: ``figures/manifest.json`` against the SVGs and the code.

* every SVG in ``figures/`` has a manifest entry and every entry an SVG, whose SHA-256 is the one
  recorded (a figure regenerated without its manifest, or the other way round, fails); no other
  image is committed there (a PNG or PDF would be a second, unchecked copy);
* every entry states its setting, and the setting is the one the registry computes for it;
* every figure marked ``regenerated_in_ci`` (cold cost ≤ ``CI_MAX_SECONDS`` on the machine that wrote
  the manifest) is recomputed here through the same code path, in an empty folder (no scan row, no
  transfer run is read back), and its key numbers must equal the manifest's to ``RTOL`` = 1e-9
  relative: the figures are seeded, so the same code gives the same numbers bit for bit; the
  tolerance leaves room for another BLAS's summation order only; on another host than the entry's
  (``host``: CPU family, model and flags, BLAS kernels, library versions, as
  ``provenance.numerics_host`` gives them; the CPU's model name alone is not enough, see
  ``test_provenance.py::test_two_hosts_of_one_model_name_are_told_apart``), to ``RTOL_OTHER_CPU`` = 1e-6 (the adaptive
  flow solver's steps follow the rounding). A torch-trained figure (Figure 2) repeats bit for bit only
  on the CPU that made it (torch's kernels dispatch per instruction set: an AMD EPYC and an Intel Xeon
  end 1000 Adam steps at test errors 0.0282 and 0.0267); on another host its claim is checked instead
  at its own thresholds (``Figure.holds``). Where matplotlib is the version that drew the committed
  SVG and the host is the entry's, the redrawn SVG must also be the committed one byte for byte.
"""

from __future__ import annotations

import copy
from pathlib import Path

import matplotlib
import pytest

from theorydyn.core.plotting import save
from theorydyn.figures import REGISTRY, claim_text
from theorydyn.figures import manifest as mf
from theorydyn.infra.provenance import numerics_host

FIGURES = Path(__file__).resolve().parent.parent / "figures"
ENTRIES = mf.load(FIGURES / mf.NAME)
CHEAP = sorted(n for n, e in ENTRIES.items() if e["regenerated_in_ci"])
KEYS = {"file", "sha256", "command", "quick", "setting", "numbers", "cost_s", "cold", "load_avg_1m"}
KEYS |= {"regenerated_in_ci", "git_commit", "matplotlib", "made_utc"}


def test_every_committed_svg_has_an_entry_and_every_entry_its_svg():
    assert ENTRIES, "figures/manifest.json is missing or empty"
    assert {p.name for p in FIGURES.glob("*.svg")} == {e["file"] for e in ENTRIES.values()}
    assert not [p.name for p in FIGURES.glob("*.png")], "figures/ holds PNGs beside the committed SVGs"


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_the_svg_is_the_one_the_manifest_records(name):
    e = ENTRIES[name]
    assert mf.sha256(FIGURES / e["file"]) == e["sha256"], f"{e['file']} changed without its manifest entry"


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_each_entry_states_its_setting_command_and_cost(name):
    e = ENTRIES[name]
    assert KEYS <= set(e), f"{name}: missing {sorted(KEYS - set(e))}"
    fig = REGISTRY[name]
    assert e["file"] == fig.filename() and e["command"] == fig.command(e["quick"])
    assert e["setting"] == mf.jsonable(fig.setting(e["quick"])) and e["setting"]
    # the CI mark is decided by the measured cold cost, not by anything else
    assert e["regenerated_in_ci"] == (e["cold"] and e["cost_s"] <= mf.CI_MAX_SECONDS)
    if e["cost_s"] is None:  # kept, not remade (its inputs were absent): the entry must say why
        assert not e["regenerated_in_ci"] and "Not remade" in e["note"]


@pytest.mark.slow
@pytest.mark.parametrize("name", CHEAP)
def test_a_cheap_figure_recomputes_to_the_manifest(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # scans/results and runs/ land here: nothing cached is read back
    e, fig = ENTRIES[name], REGISTRY[name]
    data = fig.compute(e["quick"], recompute=True)
    got = mf.jsonable(fig.numbers(data))
    same_host = e.get("host") == numerics_host()
    if not same_host and fig.holds is not None:
        bad = fig.holds(got)
        assert not bad, f"{name}: recomputed on {numerics_host()}, its claim fails: " + "; ".join(bad)
        return
    diffs = mf.numbers_differ(e["numbers"], got, mf.RTOL if same_host else mf.RTOL_OTHER_CPU)
    assert not diffs, f"{name}: the committed figure is stale:\n" + "\n".join(diffs)
    if e["matplotlib"] == matplotlib.__version__ and same_host:  # another host: other pixels
        svg = save(fig.draw(data), tmp_path / e["file"])
        assert mf.sha256(svg) == e["sha256"], f"{name}: the drawing code changed since {e['file']} was made"


def test_numbers_differ_catches_a_changed_number_and_nothing_else():
    e = ENTRIES.get("phases") or next(iter(ENTRIES.values()))
    assert mf.numbers_differ(e["numbers"], copy.deepcopy(e["numbers"])) == []
    first = next(k for k, v in e["numbers"].items() if isinstance(v, float) and v)
    bad = copy.deepcopy(e["numbers"])
    bad[first] *= 1 + 1e-6
    assert mf.numbers_differ(e["numbers"], bad) == [
        f".{first}: manifest {e['numbers'][first]!r}, recomputed {bad[first]!r}"
    ]
    assert mf.numbers_differ({"a": [1.0, None]}, {"a": [1.0, 0.0]}) and mf.numbers_differ({"a": 1}, {"b": 1})
    assert mf.numbers_differ({"x": 0.0}, {"x": 1e-300})  # 0 only equals 0
    assert not mf.numbers_differ({"x": 1.0}, {"x": 1.0 + 1e-12})


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_each_claim_is_filled_from_the_numbers_the_figure_shows(name):
    """The README's claims quote the manifest's numbers (placeholders), so a claim cannot drift from
    its figure: every placeholder must be filled by the entry's numbers."""
    e, fig = ENTRIES[name], REGISTRY[name]
    text = claim_text(fig, e["numbers"])
    assert "{" not in text and "}" not in text
    readme = (FIGURES / "README.md").read_text()
    assert text in readme, f"figures/README.md does not state {name}'s claim with its manifest numbers"


def test_figure2_claim_check_fails_where_the_claim_fails():
    ok = {
        "positional": {"mean_final_err": 0.03, "mean_association": 0.3, "mean_contrast": 1.5},
        "T": {"mean_final_err": 0.02, "mean_association": 0.4, "mean_contrast": 0.8},
    }
    holds = REGISTRY["figure2"].holds
    assert holds is not None and holds(ok) == []
    for model, key, value in [
        ("positional", "mean_final_err", 0.06),
        ("T", "mean_final_err", 0.2),
        ("positional", "mean_association", 0.0),
        ("positional", "mean_contrast", -0.1),
    ]:
        bad = copy.deepcopy(ok)
        bad[model][key] = value
        assert len(holds(bad)) == 1, (model, key)
