"""The flag helpers have one home (theorydyn.cli.flags; issue 40): each kind of flag a configuration field does not
declare is one helper there, the former names in cli.tools are the same functions, and the shared steps of a
refused run (the folders it made removed again, the flags given in the parser's order)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from theorydyn.cli import flags, tools
from theorydyn.cli.tools import ArgumentParser


def test_the_flag_helpers_live_in_flags_only():
    for name in ("add_selection", "restate", "add_optional_path", "add_path_positional", "add_choice_list"):
        assert not hasattr(tools, name), name


def test_a_path_is_a_flag_or_positional_and_a_selection_may_name_its_metavar():
    ap = ArgumentParser(prog="p")
    flags.add_path(ap, "target", "the store")
    flags.add_path(ap, "sources", "the others", many=True)
    flags.add_path(ap, "--cache", "a folder")
    flags.add_selection(ap, "--methods", ("a", "b"), "some", metavar="METHOD")
    args = ap.parse_args(["t", "s1", "s2", "--cache", "c", "--methods", "b", "a"])
    assert (args.target, args.sources, args.cache) == (Path("t"), [Path("s1"), Path("s2")], Path("c"))
    assert args.methods == ["b", "a"] and "--methods METHOD [METHOD ...]" in ap.format_help()
    for argv in (["t", "s", "--cache", " "], ["t", "s", "--methods", "c"], [" ", "s"]):
        with pytest.raises(SystemExit):
            ap.parse_args(argv)


def test_shown_flags_and_unmade_folders(tmp_path):
    ap = ArgumentParser(prog="p")
    ap.add_argument("--n-test", dest="N_test", type=int)
    ap.add_argument("--N-test", dest="N_test", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--keep-q", action="store_true", help="keep q")
    given = tools.given_flags(ap, ["--keep-q", "--N-test", "3"])
    assert tools.shown_flags(ap, given) == {"N_test": "--n-test", "keep_q": "--keep-q"}  # the parser's order
    kept, new = tmp_path / "kept", tmp_path / "a" / "b"
    kept.mkdir()
    with pytest.raises(ValueError), tools.unmade_if_refused(new, kept / "c", None):
        new.mkdir(parents=True)
        (kept / "c").mkdir()
        raise ValueError("refused")
    assert not (tmp_path / "a").exists() and kept.is_dir() and not (kept / "c").exists()
    with tools.unmade_if_refused(new):
        new.mkdir(parents=True)
    assert new.is_dir()
