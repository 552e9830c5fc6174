"""Test configuration: under CI (CI=true), hypothesis draws the same examples every run, so a
submission's verdict cannot change from one run to the next; locally it explores afresh."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def claim_module(name, checks, memory=None):
    """A toy claim module (the protocol of theorydyn.claims): ``checks(s, *, quick, progress)`` from
    ``checks`` and ``memory(s, quick)`` (default: a 1 KiB estimate)."""
    import types

    from theorydyn.resources import MemoryEstimate, Term

    mod = types.ModuleType(name)
    mod.checks = checks
    mod.memory = memory or (lambda s, quick: MemoryEstimate(name, (Term("toy", 1024, {"D": s.D}),)))
    return mod


def register_claims(monkeypatch, modules):
    """Make ``modules`` ({name: module}) the whole claim registry for one test: each module is put in
    sys.modules as ``toy_claims.<name>`` and registered under ``name``; the groups are emptied.
    A value that is a string is registered as that module path as is (e.g. one that does not exist)."""
    import sys

    from theorydyn import claims

    registry = {}
    for name, mod in modules.items():
        if isinstance(mod, str):
            registry[name] = mod
            continue
        monkeypatch.setitem(sys.modules, f"toy_claims.{name}", mod)
        registry[name] = f"toy_claims.{name}"
    monkeypatch.setattr(claims, "REGISTRY", registry)
    monkeypatch.setattr(claims, "GROUPS", {})
