"""One registration mechanism (issues 29, 40): commands, claims, benchmarks and the figures' topics are frozen
records declared by one decorator on a loader that imports their module (:mod:`theorydyn.infra.registry`);
every other view (the claims' REGISTRY, COLD_SECONDS, GROUPS, ``theorydyn --help``, docs/usage.md's lists)
is derived from the records, and so are this file's expectations: nothing here repeats a record."""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from theorydyn import claims
from theorydyn.infra.registry import Entry, Registry, imported_module, listing

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "theorydyn"


def test_the_claim_views_are_derived_from_the_records():
    records = claims.CLAIMS
    assert [c.name for c in records] == list(claims.REGISTRY) and len(records) == len({c.name for c in records})
    assert claims.REGISTRY == {c.name: c.module for c in records}
    assert claims.COLD_SECONDS == {c.name: c.cold for c in records}
    groups = {g for c in records for g in c.groups}
    assert claims.GROUPS == {g: tuple(c.name for c in records if g in c.groups) for g in claims.GROUPS}
    assert set(claims.GROUPS) == groups and {"reduced", "theorems"} <= groups  # verify --only's older names
    assert claims.names() == sorted({*claims.REGISTRY, *groups})
    assert all(isinstance(c, Entry) and c.summary.strip() for c in records)
    assert all(c.cold[0] is not None and c.cold[0] > 0 for c in records)  # a cold ledger's ETA weighs each
    with pytest.raises(dataclasses.FrozenInstanceError):
        records[0].name = "other"  # type: ignore[misc]


def test_each_claims_path_is_the_module_its_loader_imports():
    """REGISTRY's paths (what a worker and the store find a claim by) are read from the loaders' imports."""
    for c in claims.CLAIMS:
        assert importlib.util.find_spec(c.module) is not None, c
        mod = c.load()
        assert mod.__name__ == c.module and claims.load(c.name) is mod, c


def test_select_expands_the_groups_in_the_registry_order():
    order = list(claims.REGISTRY)
    for g, members in claims.GROUPS.items():
        assert claims.select([g]) == [n for n in order if n in members]
    both = set(claims.GROUPS["theorems"]) | set(claims.GROUPS["reduced"])
    assert claims.select(["theorems", "reduced"]) == [n for n in order if n in both]
    assert claims.select(None) == order
    with pytest.raises(ValueError, match="unknown claim 'nope'"):
        claims.select(["nope"])


def test_a_replaced_registry_is_what_select_and_names_read(monkeypatch):
    """tests/conftest.py::register_claims replaces the package's REGISTRY and GROUPS for one test."""
    monkeypatch.setattr(claims, "REGISTRY", {"toy": "toy_claims.toy"})
    monkeypatch.setattr(claims, "GROUPS", {})
    assert claims.select(None) == ["toy"] and claims.names() == ["toy"]


def test_claim_modules_stay_lazy():
    """Importing the package imports no claim module, nor the registry; reading the registry imports no
    claim either; and no claim module's stored key names the registry (it would name every claim)."""
    code = (
        "import sys, theorydyn.claims as c; a = sorted(m for m in sys.modules if m.startswith('theorydyn.claims.'));"
        " c.REGISTRY, c.names(); b = sorted(m for m in sys.modules if m.startswith('theorydyn.claims.')); print(a, b)"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "[] ['theorydyn.claims.registry']", (p.stdout, p.stderr[-500:])
    from theorydyn.verify.ledger import code_sources

    for c in claims.CLAIMS:
        assert "theorydyn.claims.registry" not in (code_sources(c.module) or {}), c


def _listed(text: str, marker: str) -> str:
    """The fenced block after ``<!-- registry: MARKER -->`` in a page."""
    m = re.search(rf"<!-- registry: {marker} -->\n```text\n(.*?)\n```", text, re.S)
    assert m, f"docs/usage.md has no list marked {marker!r}"
    return m.group(1)


def test_docs_usage_lists_are_the_records():
    from theorydyn.__main__ import command
    from theorydyn.bench.__main__ import benchmark

    usage = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    assert _listed(usage, "commands") == listing(command)
    assert _listed(usage, "benchmarks") == listing(benchmark)


def test_the_docs_check_can_fail():
    """A command declared but not in docs/usage.md's list (or listed but gone) is caught by the same comparison."""
    from theorydyn.__main__ import command

    planted: Registry[Entry] = Registry(Entry)
    for e in command:
        planted(e.name, e.summary)(e.loader)
    planted("lemma99", "a planted command")(command["verify"].loader)
    usage = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    assert _listed(usage, "commands") != listing(planted)


def test_adding_a_claim_is_one_record():
    """docs/adding_a_claim.md: a claim is its module, its experiment, its registry line and its test; no
    other source lists every claim by hand (the lists are made from the records)."""
    guide = (ROOT / "docs" / "adding_a_claim.md").read_text(encoding="utf-8")
    assert "@claim(" in guide and "at most four files" in guide
    every = [
        p.relative_to(ROOT).as_posix()
        for p in [*PACKAGE.rglob("*.py"), ROOT / "docs" / "usage.md", ROOT / "docs" / "architecture.md"]
        if all(re.search(rf"\b{c.name}\b", p.read_text(encoding="utf-8")) for c in claims.CLAIMS)
    ]
    assert every == ["theorydyn/claims/registry.py"], every


def test_verify_only_help_is_derived_from_the_groups():
    from theorydyn.verify.__main__ import build_parser

    only = next(a for a in build_parser()._actions if a.dest == "only")
    assert set(only.choices) == set(claims.names())
    assert claims.groups_text() in " ".join((only.help or "").split())
    for g, members in claims.GROUPS.items():
        assert f"{g} (= {' '.join(members)})" in claims.groups_text()


def test_a_name_registered_twice_is_refused():
    reg: Registry[Entry] = Registry(Entry)

    @reg("a", "one")
    def _a() -> ModuleType:
        from theorydyn import claims

        return claims

    with pytest.raises(ValueError, match="'a' is registered twice"):
        reg("a", "two")(_a)
    reg("bc", "two")(_a)
    assert listing(reg) == "  a   one\n  bc  two" and reg.names() == ("a", "bc") and "a" in reg


def test_the_path_is_read_from_the_loaders_import():
    def absolute() -> ModuleType:
        from theorydyn.claims import dynamics

        return dynamics

    def no_import() -> ModuleType:
        return sys

    assert imported_module(absolute) == "theorydyn.claims.dynamics"
    assert imported_module(claims.CLAIMS[0].loader) == f"theorydyn.claims.{claims.CLAIMS[0].name}"
    with pytest.raises(TypeError, match="from PACKAGE import MODULE"):
        imported_module(no_import)


def _calls_and_paths(path: Path) -> tuple[int, list[str]]:
    """(import_module calls, string constants that are an absolute theorydyn import path) in a source file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    calls = sum(
        isinstance(n, ast.Call) and (getattr(n.func, "attr", None) or getattr(n.func, "id", None)) == "import_module"
        for n in ast.walk(tree)
    )
    paths = [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and re.fullmatch(r"theorydyn(\.\w+)+", n.value)
    ]
    return calls, paths


def test_modules_are_named_by_imports_not_strings():
    """import_module in two places (the lazy exports, the claims' loading by path for the ledger's workers),
    and no registry names a module by a string."""
    calls = {p.relative_to(PACKAGE).as_posix(): n for p in PACKAGE.rglob("*.py") if (n := _calls_and_paths(p)[0])}
    # a user's --runner text ("module:function") is resolved by pkgutil.resolve_name, not a registry
    assert set(calls) == {"infra/_lazy.py", "claims/registry.py"}, calls
    assert all(n == 1 for n in calls.values()), calls
    registries = [PACKAGE / "__main__.py", PACKAGE / "bench" / "__main__.py", PACKAGE / "claims" / "registry.py"]
    for path in [*registries, *PACKAGE.glob("figures/*.py")]:
        assert _calls_and_paths(path)[1] == [], path


def test_every_command_record_names_a_main():
    from theorydyn.__main__ import COMMANDS, command
    from theorydyn.cli.dispatch import usage

    assert list(COMMANDS) == list(command.names())
    text = usage(command)
    assert listing(command) in text
    for e in command:
        assert e.module.endswith(".__main__") and importlib.util.find_spec(e.module) is not None, e
        assert COMMANDS[e.name] == (e.module.removesuffix(".__main__"), e.summary)


def test_every_benchmark_record_names_a_command():
    """A bench record names the benchmark's command module (a runner Command, light to import), and the
    measurement beside it takes options and returns tables (``measure(options, report=None)``)."""
    import inspect

    from theorydyn.bench.__main__ import BENCHMARKS, benchmark, usage
    from theorydyn.cli.runner import Command

    assert BENCHMARKS == benchmark.names()
    for e in benchmark:
        cli = e.load()
        assert cli.__name__ == e.module and isinstance(cli.COMMAND, Command) and callable(cli.main), e
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


def test_theorydyn_help_imports_nothing_heavy():
    """``theorydyn --help`` imports no command: the registry declares loaders, it does not run them."""
    p = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "theorydyn", "--help"], capture_output=True, text=True, cwd=ROOT
    )
    loaded = {line.rsplit("|", 1)[-1].strip() for line in p.stderr.splitlines() if "|" in line}
    assert p.returncode == 0 and not loaded & {"numpy", "scipy", "torch", "pandas", "numba", "matplotlib"}, loaded
    assert not [m for m in loaded if m.endswith(".__main__") and m.startswith("theorydyn.")]


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
