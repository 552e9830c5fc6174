"""One registration mechanism (issue 29): claims, benchmarks and commands are frozen records in one
table each (:mod:`theorydyn.infra.registry`), figures frozen records through a decorator; every other view
(the claims' REGISTRY, COLD_SECONDS, GROUPS, the docs' lists, ``theorydyn --help``) is derived."""

from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path

import pytest

from theorydyn import claims
from theorydyn.infra.registry import Entry, listing, table

ROOT = Path(__file__).resolve().parents[1]

#: The claim tables as they were written out by hand before the records (3c5cb23): the derived views
#: must give the same names, order, module paths, seconds and groups.
BEFORE_REGISTRY = {
    n: f"theorydyn.claims.{n}"
    for n in (
        "definition21",
        "parametrization31",
        "dynamics",
        "theorem31",
        "theorem32",
        "lemma41",
        "theorem4",
        "nstar",
        "transfer",
        "figure2",
        "vision",
    )
}
BEFORE_COLD_SECONDS = {
    "definition21": (1.0, 1.0),
    "parametrization31": (1.0, 1.0),
    "dynamics": (4.0, 4.0),
    "theorem31": (18.0, 25.0),
    "theorem32": (2.0, 22.0),
    "lemma41": (17.0, 62.0),
    "theorem4": (19.0, 320.0),
    "nstar": (14.0, 633.0),
    "transfer": (29.0, 117.0),
    "figure2": (12.0, 80.0),
    "vision": (1450.0, 1450.0),
}
#: Claims registered after the records (issue 32's GPU rows), at the end of the ledger's order.
ADDED_COLD_SECONDS = {"gpu": (0.1, 0.1)}
BEFORE_GROUPS = {
    "reduced": ("dynamics",),
    "theorems": ("theorem31", "theorem32", "lemma41", "theorem4", "nstar"),
}


def test_the_claim_views_are_derived_from_the_records_and_unchanged():
    registry = BEFORE_REGISTRY | {n: f"theorydyn.claims.{n}" for n in ADDED_COLD_SECONDS}
    assert claims.REGISTRY == registry and list(claims.REGISTRY) == list(registry)
    assert claims.COLD_SECONDS == BEFORE_COLD_SECONDS | ADDED_COLD_SECONDS
    assert claims.GROUPS == BEFORE_GROUPS
    assert [c.name for c in claims.CLAIMS] == list(claims.REGISTRY)
    assert claims.names() == sorted({*registry, *BEFORE_GROUPS})
    assert all(isinstance(c, Entry) and c.summary.strip() for c in claims.CLAIMS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        claims.CLAIMS[0].name = "other"  # type: ignore[misc]


def test_select_expands_the_groups_in_the_registry_order():
    assert claims.select(["reduced"]) == list(BEFORE_GROUPS["reduced"])
    both = {*BEFORE_GROUPS["theorems"], *BEFORE_GROUPS["reduced"]}
    assert claims.select(["theorems", "reduced"]) == [n for n in BEFORE_REGISTRY if n in both]
    assert claims.select(None) == list(claims.REGISTRY)
    with pytest.raises(ValueError, match="unknown claim 'nope'"):
        claims.select(["nope"])


def test_claim_modules_stay_lazy():
    """Registering a claim imports nothing of it: ``import theorydyn.claims`` loads no claim module."""
    import subprocess
    import sys

    code = "import sys, theorydyn.claims; print(sorted(m for m in sys.modules if m.startswith('theorydyn.claims.')))"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "[]", (p.stdout, p.stderr[-500:])


def _named(text: str) -> set[str]:
    return set(re.findall(r"``(\w+)``", text))


def test_the_docs_name_every_registered_claim():
    """The list made from the records names every claim, and the hand-written lists (the verify docstring)
    name every claim of it: a claim added without its line there fails here."""
    import theorydyn.verify

    derived = claims.listing()
    assert [line.split("``")[1] for line in derived.splitlines()] == list(claims.REGISTRY)
    assert derived in (claims.__doc__ or "")  # the package's docstring carries the derived list
    missing = [c for c in claims.REGISTRY if c not in _named(theorydyn.verify.__doc__ or "")]
    assert not missing, f"theorydyn/verify/__init__.py's docstring does not name {missing}"
    guide = (ROOT / "docs" / "adding_a_claim.md").read_text(encoding="utf-8")
    assert "CLAIMS" in guide and "Claim" in guide  # the guide describes the record, not a dict line


def test_the_docs_check_can_fail(monkeypatch):
    """A planted claim that no docstring names is caught by the same comparison."""
    import theorydyn.verify

    planted = (*claims.CLAIMS, claims.Claim("lemma99", "toy.lemma99", "Lemma 9.9"))
    names = [line.split("``")[1] for line in claims.listing(planted).splitlines()]
    assert [c for c in names if c not in _named(theorydyn.verify.__doc__ or "")] == ["lemma99"]


def test_verify_only_help_is_derived_from_the_groups():
    from theorydyn.verify.__main__ import build_parser

    only = next(a for a in build_parser()._actions if a.dest == "only")
    assert set(only.choices) == set(claims.names())
    assert "theorems (= theorem31 theorem32 lemma41 theorem4 nstar)" in (only.help or "")


def test_a_name_registered_twice_is_refused():
    with pytest.raises(ValueError, match="'a' is registered twice"):
        table([Entry("a", "x", "one"), Entry("a", "y", "two")])
    assert listing([Entry("ab", "x", "one"), Entry("c", "y", "two")]) == "  ab  one\n  c   two"


def test_every_command_record_names_a_main():
    from theorydyn.__main__ import COMMAND_ENTRIES, COMMANDS, usage

    assert list(COMMANDS) == [e.name for e in COMMAND_ENTRIES]
    text = usage()
    for e in COMMAND_ENTRIES:
        assert importlib.util.find_spec(f"{e.module}.__main__") is not None, e
        assert f"  {e.name} " in text and e.summary in text


def test_every_benchmark_record_names_a_command():
    """A bench record names the benchmark's command module (a runner Command, light to import), and the
    measurement beside it takes options and returns tables (``measure(options, report=None)``)."""
    import inspect

    from theorydyn.bench.__main__ import BENCHMARK_ENTRIES, BENCHMARKS, usage
    from theorydyn.cli.runner import Command

    assert BENCHMARKS == tuple(e.name for e in BENCHMARK_ENTRIES)
    for e in BENCHMARK_ENTRIES:
        cli = e.load()
        assert isinstance(cli.COMMAND, Command) and callable(cli.main), e
        assert e.summary in usage()
        measure = importlib.import_module(e.module.removesuffix("_cli")).measure
        assert list(inspect.signature(measure).parameters) == ["args", "report"], e


def test_the_dispatcher_runs_a_commands_main(capsys):
    """``theorydyn theorems --help`` runs theorydyn.theorems' own main (no runpy): its parser's help, exit 0."""
    from theorydyn.__main__ import main

    assert main(["theorems", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the help wraps at the terminal's width
    assert out.startswith("usage: python -m theorydyn.theorems") and "verify --only theorems" in out
    assert main(["nope"]) == 2 and "unknown 'nope'" in capsys.readouterr().err


def test_theorems_is_the_ledgers_run():
    """``theorydyn theorems`` runs the ledger's own run function, nothing of its own but --only fixed."""
    import theorydyn.theorems.__main__ as theorems
    import theorydyn.verify.__main__ as verify

    assert theorems.ledger_run is verify.run


def test_a_command_declares_flags_beside_its_parser(capsys):
    """The runner's hook for flags declared elsewhere (a configuration's fields): ``Command.arguments``
    adds them to the parser, ``--help`` shows them, the run reads them."""
    from theorydyn.cli.runner import Command
    from theorydyn.cli.tools import ArgumentParser

    seen: dict = {}

    def add_eta(ap):
        ap.add_argument("--eta", type=float, default=0.5, help="GD step (a field's help text)")

    def run(inv):
        seen.update(vars(inv.args))
        return 0

    command = Command("toy", lambda: ArgumentParser(prog="toy"), run, arguments=(add_eta,))
    assert command.main(["--eta", "2"]) == 0 and seen["eta"] == 2.0
    with pytest.raises(SystemExit):
        command.main(["--help"])
    assert "GD step (a field's help text)" in capsys.readouterr().out
    assert "--eta" not in Command("toy", lambda: ArgumentParser(prog="toy"), run).parser().format_help()
