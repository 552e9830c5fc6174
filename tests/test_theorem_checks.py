"""The theorem checks' command steps (issue 40): its options as a TheoremChecksConfig (the flags are its fields),
its refusals, and the claims package importing no model, data or GLM code (the --figure31 scan is drawn by
experiments.theorem31)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import theorydyn.claims
from theorydyn import Setting
from theorydyn.claims.__main__ import build_parser
from theorydyn.claims.theorem_checks import CHEAP, TheoremChecksConfig
from theorydyn.cli.configs import config_from_args
from theorydyn.infra.paths import run_dir

#: the modules a claim may not import (it judges what experiments/ measures): the solvers, the experiment
#: packages, the model, the data and the GLMs
FORBIDDEN = (
    "theorydyn.core.glm",
    "theorydyn.core.model",
    "theorydyn.core.data",
    "theorydyn.simulate",
    "theorydyn.reduced",
    "theorydyn.transfer",
    "theorydyn.vision",
    "theorydyn.positional",
)


def _imports(path: Path) -> set[str]:
    """The absolute names of the modules a claims module imports (relative imports resolved)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = "theorydyn.claims" if node.level == 1 else "theorydyn" if node.level == 2 else ""
            mod = ".".join(p for p in (base, node.module or "") if p)
            out |= {mod} | {f"{mod}.{a.name}" for a in node.names}
    return out


def test_no_claims_module_imports_the_model_data_or_glm_code():
    folder = Path(theorydyn.claims.__file__).parent
    bad = {
        f"{p.name}: {m}"
        for p in sorted(folder.glob("*.py"))
        for m in _imports(p)
        if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)
    }
    assert not bad, sorted(bad)


def test_the_flags_are_the_configs_fields():
    parser = build_parser()
    cfg = config_from_args(TheoremChecksConfig, parser.parse_args(["--only", "3.2", "3.1", "3.2", "--out", "c.csv"]))
    assert cfg.only == ("3.2", "3.1", "3.2") and cfg.selected == ["3.2", "3.1"] and cfg.out == Path("c.csv")
    assert not cfg.full and cfg.figure31 is None
    cfg = config_from_args(TheoremChecksConfig, parser.parse_args(["--figure31", "--full"]))
    assert cfg.full and cfg.figure31 == "" and cfg.figure31_path == str(run_dir("figures", "theorem31_glm.svg"))
    assert TheoremChecksConfig(figure31="x.png").figure31_path == "x.png"
    assert CHEAP == TheoremChecksConfig.rule("only").choices
    with pytest.raises(ValueError, match=r"only\[0\] must be one of"):
        TheoremChecksConfig(only=("3.3",))


def test_the_checks_refuse_full_with_only_and_a_setting_that_does_not_move():
    TheoremChecksConfig(only=("3.1",)).check(Setting(D=64, C=4))
    TheoremChecksConfig().check(Setting(D=64, C=4))
    with pytest.raises(ValueError, match=r"^--full: has no effect with --only"):
        TheoremChecksConfig(only=("3.1",), full=True).check(Setting())
    with pytest.raises(ValueError, match=r"^--C: the .* checks run at D="):
        TheoremChecksConfig().check(Setting(D=100, C=10))
    TheoremChecksConfig(only=("3.2",)).check(Setting(D=100, C=10))  # the cheap checks run at the setting
