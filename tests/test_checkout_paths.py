"""Modules that find the source checkout from their own file: after the base moved into core/ and
infra/, they must still name the checkout's root, not the package folder (a move of a module changes
how many parents its __file__ is below the root)."""

from __future__ import annotations

from pathlib import Path

from theorydyn.infra import paths
from theorydyn.infra import provenance as P

ROOT = Path(__file__).resolve().parent.parent


def test_committed_figures_is_the_checkouts_figures_folder():
    got = paths.committed_figures()
    assert got == ROOT / "figures", f"committed_figures() = {got}, the checkout's is {ROOT / 'figures'}"
    assert (got / "manifest.json").is_file()


def test_provenance_reads_git_at_the_checkouts_root():
    assert P._package_root() == ROOT, f"_package_root() = {P._package_root()}, the checkout is {ROOT}"
