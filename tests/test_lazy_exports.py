"""Lazy exports have one form (:mod:`theorydyn.infra._lazy`): a package names each export twice, in its
``if TYPE_CHECKING:`` imports and in a literal ``__all__``, and ends with ``lazy_exports(__name__)``; the
name → module map is read from the imports, never written as a table beside them. The packages are found
on disk, so a new one is checked without being listed here."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from theorydyn.infra._lazy import checked_exports

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "numba", "scipy", "pandas", "matplotlib", "torch")


def _lazy_packages() -> dict[str, ast.Module]:
    """Every package of theorydyn whose ``__init__`` calls ``lazy_exports``: its name → its parsed source."""
    found = {}
    for p in sorted((ROOT / "theorydyn").rglob("__init__.py")):
        tree = ast.parse(p.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.Name) and n.id == "lazy_exports" for n in ast.walk(tree)):
            found[".".join(p.parent.relative_to(ROOT).parts)] = tree
    return found


PACKAGES = _lazy_packages()


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT))  # this checkout's package, whatever the venv installed


def test_the_packages_are_found():
    assert {"theorydyn", "theorydyn.core", "theorydyn.verify", "theorydyn.transfer"} <= set(PACKAGES), PACKAGES


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_one_form_no_table(package):
    """``lazy_exports`` is called once, with the package's name alone, after a literal ``__all__``."""
    tree = PACKAGES[package]
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "lazy_exports"]
    assert len(calls) == 1 and not calls[0].keywords, package
    assert [ast.unparse(a) for a in calls[0].args] == ["__name__"], package
    listed = [n for n in tree.body if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "__all__"]
    assert len(listed) == 1 and isinstance(ast.literal_eval(listed[0].value), list), package


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_each_export_is_its_modules_object(package):
    """``__all__`` and the imports agree (checked on first use), and each name is the object its module defines."""
    mod = importlib.import_module(package)
    table = checked_exports(package)
    own = {n for n in mod.__all__ if n not in table}  # defined by the package itself (``__version__``)
    assert table and sorted(table) == sorted(set(mod.__all__) - own) and set(table) <= set(dir(mod)), package
    for name, where in table.items():
        if importlib.util.find_spec(f"{package}.{name}") is not None:
            continue  # also a submodule's name: see the test below
        assert getattr(mod, name) is getattr(importlib.import_module(where, package), name), (package, name)


def test_an_export_is_not_shadowed_by_a_submodule():
    """theorydyn.simulate is both the function export and the subpackage: once the subpackage is imported the
    import system binds the name to it; the package, called, runs the function (same numbers)."""
    code = (
        "import theorydyn.simulate.config; from theorydyn import simulate, Setting; "
        "from theorydyn.simulate.run import simulate as f; s = Setting(D=8, C=2, d=8); "
        "a = simulate(s, N=16, steps=2, n_test=16); b = f(s, N=16, steps=2, n_test=16); "
        "print(callable(simulate), bool((a.trajectory == b.trajectory).all().all()))"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env())
    assert p.stdout.strip() == "True True", (p.stdout, p.stderr[-500:])


def test_importing_the_packages_loads_nothing_heavy():
    """The point of the form: importing any of these packages imports none of their submodules' libraries."""
    code = f"import sys; {'; '.join(f'import {p}' for p in PACKAGES)}; print(sorted(set(sys.modules) & {set(HEAVY)!r}))"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env())
    assert p.returncode == 0 and p.stdout.strip() == "[]", (p.stdout, p.stderr[-500:])
