"""A time is stated once: docs/benchmarks.md, section Times, with its command, machine and load.

The README, the docs home, docs/usage.md and every command's ``--help`` state no time of their own
(they link to that section), or only one that the section states too; each row of the section names
the machine (its CPU, or that it was not recorded) and the load.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from theorydyn.__main__ import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "docs" / "benchmarks.md"
#: a duration: a number and a unit of time ("7.2 s", "26 min", "1567 s"), not "5 seeds" or "min(1, q)"
TIME = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:s|ms|min|minutes?|seconds?|h|hours?)\b")
PAGES = ("README.md", "docs/index.md", "docs/usage.md")


def _times_section() -> str:
    text = BENCHMARKS.read_text(encoding="utf-8")
    m = re.search(r"^## Times\n(.*?)(?=^## )", text, flags=re.M | re.S)
    assert m, "docs/benchmarks.md has no section '## Times' (the anchor #times the other pages link to)"
    return m.group(1)


def _stated_elsewhere(text: str) -> list[str]:
    home = _times_section()
    return [t for t in TIME.findall(text) if t not in home]


def test_the_time_pattern_finds_durations_and_nothing_else():
    text = "took 7.2 s, then 26 min and 1567 s (5 seeds, min(1, C²/D), 3 sets, 10⁻⁶ s_max)"
    assert TIME.findall(text) == ["7.2 s", "26 min", "1567 s"]


@pytest.mark.parametrize("page", PAGES)
def test_a_page_states_no_time_of_its_own_and_links_to_the_times(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    extra = _stated_elsewhere(text)
    assert not extra, f"{page} states time(s) that docs/benchmarks.md's Times section does not: {extra}"
    assert re.search(r"benchmarks\.md#times", text), f"{page} does not link to docs/benchmarks.md#times"


HELPS = [(name, package, ["--help"]) for name, (package, _) in COMMANDS.items()] + [
    ("bench reduced", "theorydyn.bench", ["reduced", "--help"]),
    ("bench simulate", "theorydyn.bench", ["simulate", "--help"]),
]


@pytest.mark.parametrize("name, module, argv", HELPS, ids=[h[0] for h in HELPS])
def test_a_commands_help_states_no_time_of_its_own(name, module, argv, capsys):
    import importlib

    main = importlib.import_module(f"{module}.__main__").main
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's --help
        code = e.code
    assert code in (0, None)
    text = capsys.readouterr().out
    extra = _stated_elsewhere(text)
    assert not extra, f"`theorydyn {name} --help` states time(s) docs/benchmarks.md does not: {extra}"


def test_each_time_names_its_machine_and_load():
    rows = [r for r in _times_section().splitlines() if r.startswith("| ") and not r.startswith("| what |")]
    assert len(rows) >= 10
    for r in rows:
        machine = r.rstrip(" |").rsplit("|", 1)[1]
        assert re.search(r"Intel Xeon|AMD EPYC|CPU not recorded", machine), f"no machine named: {r}"
        assert "load" in machine, f"no load named: {r}"
