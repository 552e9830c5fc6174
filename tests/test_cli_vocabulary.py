"""One flag vocabulary across every CLI (issue 20).

Every ``build_parser()`` under ``theorydyn`` is found by walking the package (a CLI added later is
covered without touching this file) and checked against the shared meanings of
:mod:`theorydyn.cli.tools`:

* ``--out``: the output location (a folder, or the one file a CLI writes: the help says which),
  read by :func:`theorydyn.cli.tools.path_arg` (a Path; a blank value refused); no ``--results-dir``;
* ``--seeds K``: a count, an integer >= 1 (seeds 0 … K-1); ``--seed S`` / ``--first-seed F``: one
  integer >= 0;
* ``--quiet``: store_true, "no progress bar on stderr", in every CLI that runs something with a
  progress display (the benchmarks print tables only);
* ``--force``: only the memory override; ``--fresh``: start over, moving the earlier outputs aside (in
  every CLI that stores as it goes: the same command, rerun, resumes; issue 42), ``--recompute`` its
  old spelling where it was one;
* lists: ``nargs="+"`` (space-separated), never a converter that splits commas;
* every option's help shows its default (the parser's formatter is theorydyn.cli.tools.HelpFormatter);
  none shows it twice or shows ``(default: None)``.

:func:`vocabulary_problems` returns the broken rules of one parser, so that a deliberately bad toy
parser proves the checks can fail.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import theorydyn
from theorydyn.__main__ import COMMANDS
from theorydyn.cli import tools as cli

ROOT = Path(__file__).resolve().parents[1]

#: CLIs that print tables and show no progress bar: --quiet would do nothing there
NO_PROGRESS = {
    "theorydyn.bench.reduced_cli",
    "theorydyn.bench.simulate_cli",
    "theorydyn.vision.bench",
    "theorydyn.stores.__main__",
}
#: CLIs whose output is a positional argument (the store merged into), not --out
NO_OUT = {"theorydyn.stores.__main__"}
#: CLIs that keep results in a store or cache and therefore take --fresh (issue 42)
STORES = {
    "theorydyn.scan.__main__",
    "theorydyn.verify.__main__",
    "theorydyn.transfer.__main__",
    "theorydyn.vision.__main__",
}
#: __main__ modules that only dispatch to other CLIs (no flags of their own)
DISPATCHERS = {"theorydyn.__main__", "theorydyn.bench.__main__"}
#: single-valued options whose value is written with commas (a partition '0,1;2,3' is one value)
ONE_VALUE_WITH_COMMAS = {"--partition"}


def _modules() -> list[str]:
    names = ["theorydyn.__main__"]
    for m in pkgutil.walk_packages(theorydyn.__path__, "theorydyn."):
        names.append(m.name)
    return sorted(set(names))


def _defines_build_parser(name: str) -> bool:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return False
    return re.search(r"^def build_parser\(", Path(spec.origin).read_text(encoding="utf-8"), re.M) is not None


ALL_MODULES = _modules()
CLI_MODULES = [n for n in ALL_MODULES if _defines_build_parser(n)]


def _parser(name: str) -> argparse.ArgumentParser:
    try:
        mod = importlib.import_module(name)
    except ImportError as e:  # an optional extra (torch) that is not installed
        pytest.skip(f"{name}: {e}")
    command = getattr(mod, "COMMAND", None)
    if command is not None and command.build_parser is mod.build_parser:
        return command.parser()  # what the command parses: with the runner's flags (--format, --version …)
    return mod.build_parser()


def _action_help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    f = parser._get_formatter()
    f.add_argument(action)
    return " ".join(f.format_help().split())


def vocabulary_problems(
    parser: argparse.ArgumentParser, *, progress: bool = True, store: bool = False, writes: bool = True
) -> list[str]:
    """The rules of the module docstring that ``parser`` breaks (empty: it speaks the vocabulary).

    ``progress``: the CLI shows a progress display (so it must take --quiet); ``store``: it keeps
    results that --recompute would recompute; ``writes``: it writes files (so it must take --out)."""
    bad: list[str] = []
    if not isinstance(parser, cli.ArgumentParser):
        bad.append("not built with theorydyn.cli.tools.ArgumentParser")
    if not issubclass(parser.formatter_class, cli.HelpFormatter):
        bad.append(f"formatter {parser.formatter_class.__name__} is not theorydyn.cli.tools.HelpFormatter")
    opts = {s: a for a in parser._actions for s in a.option_strings}
    for s in opts:
        if "results-dir" in s or s == "--force-memory":
            bad.append(f"{s}: the output folder is --out, the memory override --force")
    out = opts.get("--out")
    if writes and out is None:
        bad.append("--out missing")
    if out is not None:
        if out.dest != "out" or not (out.type is Path or getattr(out.type, "path", False)):
            bad.append("--out: must be a Path (theorydyn.cli.tools.path_arg: a blank value refused) in dest 'out'")
        if not re.search(r"\b(folder|file)\b", out.help or ""):
            bad.append("--out: the help must say whether it is a folder or a file")
    for flag, low in (("--seeds", 1), ("--seed", 0), ("--first-seed", 0)):
        a = opts.get(flag)
        if a is None:
            continue
        t = a.type
        if getattr(t, "kind", None) is not int or getattr(t, "low", None) != low or a.nargs is not None:
            bad.append(f"{flag}: must be one integer >= {low} (a checked number(int, low={low}))")
        if flag == "--seeds" and not (isinstance(a.default, int) or a.default is None):
            bad.append("--seeds: the default must be a count")
    q = opts.get("--quiet")
    if progress and q is None:
        bad.append("--quiet missing")
    if q is not None and not (isinstance(q, argparse._StoreTrueAction) and (q.help or "").startswith(cli.QUIET_HELP)):
        bad.append(f"--quiet: must be store_true, its help {cli.QUIET_HELP!r}")
    f = opts.get("--force")
    if f is not None and not (isinstance(f, argparse._StoreTrueAction) and "memory" in (f.help or "")):
        bad.append("--force: must be the memory override (store_true, its help naming memory)")
    if f is not None and "recompute" in (f.help or "").lower():
        bad.append("--force: recomputing is --recompute")
    r = opts.get("--recompute")
    if r is not None and not (isinstance(r, argparse._StoreTrueAction) and "memory" not in (r.help or "")):
        bad.append("--recompute: must be store_true, recomputing what a store holds (not the memory override)")
    fr = opts.get("--fresh")
    if store and fr is None:
        bad.append("--fresh missing")
    if fr is not None and not (isinstance(fr, argparse._StoreTrueAction) and (fr.help or "").startswith("start over")):
        bad.append("--fresh: must be store_true, its help 'start over: …' (theorydyn.cli.tools.FRESH_HELP)")
    if r is not None and fr is not None and r.dest != fr.dest:
        bad.append("--recompute: beside --fresh it is its old spelling (the same dest)")
    text = parser.format_help()
    if "(default: None)" in text:
        bad.append("a help shows '(default: None)'")
    for a in parser._actions:
        if not a.option_strings or a.help == argparse.SUPPRESS:
            continue
        flag = a.option_strings[-1]
        h = _action_help(parser, a)
        if a.nargs not in (None, 0, "+", "?"):
            bad.append(f"{flag}: lists are nargs='+', got nargs={a.nargs!r}")
        if isinstance(a.default, (list, tuple)) and a.nargs != "+":
            bad.append(f"{flag}: a list default needs nargs='+'")
        if "comma-separated" in h or "comma separated" in h:
            bad.append(f"{flag}: a comma-separated list; lists are space-separated (nargs='+')")
        if callable(a.type) and flag not in ONE_VALUE_WITH_COMMAS:
            try:
                v = a.type("1,2")
            except (argparse.ArgumentTypeError, ValueError, TypeError):
                v = None
            if isinstance(v, (list, tuple)):
                bad.append(f"{flag}: its converter splits commas; lists are space-separated (nargs='+')")
        shown = a.default is not None and a.default is not False and a.default is not argparse.SUPPRESS
        if shown and "default" not in h.lower():
            bad.append(f"{flag}: the help does not show its default {a.default!r}")
        if h.lower().count("(default") > 1:
            bad.append(f"{flag}: the default is shown twice: {h!r}")
    return bad


# ---- every parser of the project --------------------------------------------------------------------
def test_the_walk_finds_every_cli():
    """Every CLI named by ``theorydyn <command>`` and the benchmarks is found (not a vacuous pass),
    and every ``__main__`` either builds a parser or only dispatches."""
    for mod, _ in COMMANDS.values():
        main = mod if mod.endswith("__main__") else mod + ".__main__"
        assert main in CLI_MODULES or main in DISPATCHERS, main
    assert {"theorydyn.bench.reduced_cli", "theorydyn.bench.simulate_cli"} <= set(CLI_MODULES)
    mains = [n for n in ALL_MODULES if n.endswith("__main__")]
    assert set(mains) - set(CLI_MODULES) <= DISPATCHERS, set(mains) - set(CLI_MODULES)
    assert len(CLI_MODULES) >= 11


def test_no_parser_is_built_outside_theorydyn_cli():
    """``argparse.ArgumentParser(`` appears only in theorydyn/cli/tools.py: every CLI gets the shared formatter."""
    hits = []
    for p in Path(theorydyn.__file__).parent.rglob("*.py"):
        if p.name != "cli.py" and re.search(r"argparse\.ArgumentParser\(", p.read_text(encoding="utf-8")):
            hits.append(str(p.relative_to(ROOT)))
    assert not hits, hits


@pytest.mark.parametrize("name", CLI_MODULES)
def test_every_parser_speaks_the_vocabulary(name):
    parser = _parser(name)
    problems = vocabulary_problems(
        parser, progress=name not in NO_PROGRESS, store=name in STORES, writes=name not in NO_OUT
    )
    assert not problems, f"{name}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("name", CLI_MODULES)
def test_every_help_renders(name):
    text = _parser(name).format_help()
    assert text.startswith("usage:") and "--help" in text


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_help_renders_through_the_entry_point(command):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    argv = [sys.executable, "-m", "theorydyn", command, "--help"]
    r = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "usage:" in r.stdout and "Traceback" not in r.stderr, r.stderr


# ---- the checks can fail ----------------------------------------------------------------------------
def test_a_parser_that_breaks_each_rule_is_caught():
    bad = argparse.ArgumentParser(formatter_class=argparse.HelpFormatter)
    bad.add_argument("--results-dir", default="scans/results", help="where results go")
    bad.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="seeds")
    bad.add_argument("--seed", type=int, default=0, help="seed")
    bad.add_argument("--force", action="store_true", help="recompute points already in the results")
    bad.add_argument("--Ds", type=lambda t: tuple(int(x) for x in t.split(",")), help="comma-separated D values")
    bad.add_argument("--eps", type=float, default=0.05, help="tolerance")
    bad.add_argument("--Ns", type=int, nargs="*", help="sizes")
    bad.add_argument("--Ms", type=int, default=[1, 2], help="sizes")
    problems = "\n".join(vocabulary_problems(bad, store=True))
    for rule in (
        "theorydyn.cli.tools.ArgumentParser",
        "formatter",
        "--results-dir: the output folder is --out",
        "--out missing",
        "--seeds: must be one integer >= 1",
        "--seed: must be one integer >= 0",
        "--quiet missing",
        "--force: must be the memory override",
        "--force: recomputing is --recompute",
        "--fresh missing",
        "--Ds: a comma-separated list",
        "--Ds: its converter splits commas",
        "--eps: the help does not show its default",
        "--Ns: lists are nargs='+'",
        "--seeds: the default must be a count",
        "--Ms: a list default needs nargs='+'",
    ):
        assert rule in problems, (rule, problems)


def test_a_default_shown_twice_or_as_none_is_caught():
    p = cli.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)  # the old vision formatter
    p.add_argument("--eps", type=cli.number(float, "--eps"), default=0.05, help="tolerance (default 0.05)")
    p.add_argument("--lr", type=cli.positive(float, "--lr"), default=None, help="learning rate")
    problems = "\n".join(vocabulary_problems(p, progress=False, writes=False))
    assert "formatter" in problems and "(default: None)" in problems
    p.formatter_class = cli.HelpFormatter
    assert vocabulary_problems(p, progress=False, writes=False) == []
    p.add_argument("--mu", type=cli.number(float, "--mu"), default=1.0, help="rate (default 1.0) (default: 1.0)")
    assert "--mu: the default is shown twice" in "\n".join(vocabulary_problems(p, progress=False, writes=False))


def test_a_parser_built_with_the_shared_helpers_passes():
    p = cli.ArgumentParser()
    p.add_argument("--Ds", type=cli.number(int, "--Ds", low=1), nargs="+", default=[16, 32], help="D values")
    p.add_argument("--eps", type=cli.number(float, "--eps"), default=0.05, help="tolerance")
    cli.add_common_arguments(p, seed=0, seeds=3, first_seed=True, out="runs/x", force="machine", fresh="the store")
    assert vocabulary_problems(p, store=True) == []
    help_text = " ".join(p.format_help().split())
    assert "tolerance (default: 0.05)" in help_text and "D values (default: [16, 32])" in help_text
    args = p.parse_args(["--Ds", "16", "64", "--seeds", "2", "--out", "o"])
    assert args.Ds == [16, 64] and args.seeds == 2 and args.out == Path("o")
    for argv in (["--seeds", "0"], ["--seed", "-1"], ["--out", ""], ["--Ds", "16,32"]):
        with pytest.raises(SystemExit):
            p.parse_args(argv)


# ---- outputs named by what made them ------------------------------------------------------------------
def test_reduced_runs_differing_only_in_q_write_two_files(tmp_path, capsys):
    """Issue 20: ``--q 0.3`` overwrote the default run."""
    from theorydyn.reduced.__main__ import main

    base = ["--D", "8", "--C", "2", "--expectation", "exact", "--s-max", "30", "--n-points", "10"]
    base += ["--quiet", "--no-plot", "--out", str(tmp_path)]
    assert main(base) == 0
    assert main(base + ["--q", "0.3"]) == 0
    assert main(base + ["--q", "0.5"]) == 0  # C²/D = 0.5 is the default q: the same run, the same file
    csvs = sorted(p.name for p in tmp_path.glob("*.csv"))
    assert len(csvs) == 2 and any("_q0.3_" in c for c in csvs), csvs
    a, b = (p.read_bytes() for p in sorted(tmp_path.glob("*.csv")))
    assert a != b
    js = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("*.json"))]
    assert sorted(j["setting"]["q"] for j in js) == [0.3, 0.5]
    capsys.readouterr()


def test_simulate_runs_differing_only_in_q_write_two_files(tmp_path, capsys):
    from theorydyn.simulate.__main__ import main

    base = ["--D", "8", "--C", "2", "--N", "64", "--n-test", "64", "--steps", "2", "--quiet", "--out", str(tmp_path)]
    assert main(base) == 0
    assert main(base + ["--q", "0.3"]) == 0
    stems = sorted(p.stem for p in tmp_path.glob("*.csv"))
    assert stems == ["simulate_D8_C2_N64_steps2_n-test64", "simulate_D8_C2_q0.3_N64_steps2_n-test64"], stems
    for stem in stems:
        assert {p.suffix for p in tmp_path.glob(f"{stem}.*")} == {".csv", ".json", ".png"}
    capsys.readouterr()


def test_run_stem_hashes_what_is_not_a_safe_name():
    assert cli.run_stem("r", {"q": 0.3, "seed": 0}, {"q": 0.25, "seed": 0}) == "r_q0.3"
    a = cli.run_stem("r", {"partition": ((0, 1), (2, 3))}, {"partition": "blocks"})
    b = cli.run_stem("r", {"partition": ((0, 2), (1, 3))}, {"partition": "blocks"})
    assert re.fullmatch(r"r_h[0-9a-f]{10}", a) and a != b
    long = cli.run_stem("r", {f"k{i}": i for i in range(40)}, {})
    assert len(long) < 20 and long.startswith("r_h")


# ---- the units of printed times; the library's and the CLI's defaults -----------------------------------
def test_format_time_prints_an_instant_crossing_as_the_start():
    """The reduced flow's T_assoc (association holds as soon as γ > ρ) was printed as 1.128e-19."""
    assert cli.format_time(1.128e-19, 2e4).startswith("≈ 0 (at the start")
    assert cli.format_time(None, 2e4) == "not reached" and cli.format_time(0.0, 2e4) == "0"
    assert cli.format_time(47.24, 2e4) == "47.24"


def test_simulate_prints_phase_times_in_s_like_its_summary(tmp_path, capsys):
    from theorydyn.simulate.__main__ import main

    argv = ["--D", "8", "--C", "2", "--N", "256", "--n-test", "64", "--eta", "5", "--steps", "40", "--quiet"]
    assert main(argv + ["--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "phases (times in s = eta*t" in out
    summary = json.loads(next(tmp_path.glob("*.json")).read_text())
    t0 = summary["phases"]["T0"]
    assert t0 is not None  # α reaches its plateau within 40 steps at η = 5
    assert re.search(rf"T0\s+{re.escape(cli.format_time(t0, 5 * 40))} \(step {t0 / 5:.4g}\)", out), out


def test_the_simulate_dtype_help_says_why_the_cli_default_differs_from_the_library():
    from theorydyn.simulate.__main__ import build_parser
    from theorydyn.simulate.config import SIM_DEFAULTS

    lib = SIM_DEFAULTS.dtype  # the library's default: simulate's options are SimConfig's fields
    a = next(a for a in build_parser()._actions if a.dest == "dtype")
    assert a.default != lib and f"simulate() and the scans default to {lib}" in " ".join(a.help.split())


# ---- the commands the README and the docs show still parse ------------------------------------------------
def _documented_commands() -> list[tuple[str, str]]:
    """(file, command) for every ``python -m theorydyn…`` in README.md, docs/*.md and scans/*.toml, up to
    a comment, a table cell or a parenthesis; commands with a placeholder (``<dataset>``) are left out, and
    docs/adding_a_claim.md's hypothetical claim ``lemma99``."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "scans").glob("*.toml"))]:
        text = path.read_text(encoding="utf-8")
        # the lists made from the registry's records (docs/usage.md; tests/test_registry.py) are summaries,
        # which may name a module ("… (python -m theorydyn.stores)"), not commands
        text = re.sub(r"<!-- registry: \w+ -->\n```text\n.*?\n```", "", text, flags=re.S)
        for m in re.finditer(r"python -m (theorydyn[^`#|()\n]*)", text):
            cmd = m.group(1).strip()
            if "<" not in cmd and "lemma99" not in cmd:
                found.append((path.name, cmd))
    return found


def _module_and_argv(cmd: str) -> tuple[str, list[str]]:
    head, *argv = cmd.split()
    if head == "theorydyn":  # the entry point: theorydyn <command> …
        head, argv = COMMANDS[argv[0]][0], argv[1:]
    if head == "theorydyn.bench":  # the benchmark dispatcher: theorydyn.bench <name> …
        head, argv = f"theorydyn.bench.{argv[0]}_cli", argv[1:]
    return (head if _defines_build_parser(head) else head + ".__main__"), argv


DOCUMENTED = _documented_commands()


def test_the_documented_commands_were_found():
    assert len(DOCUMENTED) > 40 and any("scan --spec" in c for _, c in DOCUMENTED)


@pytest.mark.parametrize("where, cmd", DOCUMENTED)
def test_every_documented_command_parses(where, cmd, capsys):
    """A README or docs command whose flags were renamed (``--results-dir``, ``--seeds 0 1``, ``--Ds 16,32``)
    would exit 2 here."""
    name, argv = _module_and_argv(cmd)
    try:
        _parser(name).parse_args(argv)
    except SystemExit as e:
        pytest.fail(f"{where}: `python -m {cmd}` does not parse: {capsys.readouterr().err.strip()} (exit {e.code})")


def test_the_q_help_states_the_settings_own_default_and_the_cli_applies_it():
    """docs/theory.md gives q = min(1, C²/D); the help said C²/D, which exceeds 1 when C² > D."""
    p = argparse.ArgumentParser()
    cli.add_setting_arguments(p)
    (q,) = [a for a in p._actions if "--q" in a.option_strings]
    assert "min(1, C²/D)" in q.help
    s = cli.setting_from_args(p.parse_args(["--D", "8", "--C", "4"]))  # C²/D = 2
    assert s.q == 1.0
    assert cli.setting_from_args(p.parse_args(["--D", "64", "--C", "4"])).q == 16 / 64
