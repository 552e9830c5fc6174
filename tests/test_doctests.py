"""Every docstring example of the package runs (doctest), so that what a notebook user copies works."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import theorydyn


def _modules_with_examples() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(theorydyn.__path__, "theorydyn."):
        spec = importlib.util.find_spec(info.name)
        origin = spec.origin if spec is not None else None
        if origin and origin.endswith(".py") and ">>>" in open(origin, encoding="utf-8").read():
            names.append(info.name)
    return names


MODULES = _modules_with_examples()


def test_the_notebook_names_have_examples():
    for mod in ("theorydyn.core.setting", "theorydyn.reduced.solve", "theorydyn.core.result", "theorydyn.verify.api"):
        assert mod in MODULES, f"{mod} has no docstring example"


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example that writes, writes here
    failed, tried = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert tried > 0
    assert failed == 0, f"{failed} of {tried} examples of {name} failed (doctest output above)"
