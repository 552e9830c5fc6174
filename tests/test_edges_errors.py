"""Errors that point the right way (issue 41 item 6): a missing file is FileNotFoundError naming the
path, a wrong file says what it is, a missing scan lists the scans that exist, and an output folder
that cannot be written names where its path came from (``THEORYDYN_HOME`` or ``--out``)."""

from __future__ import annotations

import errno
import pickle
import subprocess

import numpy as np
import pytest
from test_cli_fuzz import _python_m

from theorydyn.core.result import Result
from theorydyn.infra.store import ResultStore, StoreError
from theorydyn.scan.grid import load_scan


def test_result_load_of_a_missing_path_is_file_not_found_naming_it(tmp_path):
    missing = tmp_path / "missing.npz"
    with pytest.raises(FileNotFoundError) as e:
        Result.load(missing)
    assert e.value.errno == errno.ENOENT and e.value.filename == str(missing) and str(missing) in str(e.value)
    with pytest.raises(IsADirectoryError, match="a folder"):
        Result.load(tmp_path)


@pytest.mark.parametrize(
    "write, what",
    [
        (lambda p: p.write_text("import numpy\nprint(1)\n"), "a text file, first line 'import numpy'"),
        (lambda p: p.write_bytes(pickle.dumps({"a": 1})), "a Python pickle (refused: loading one can run code)"),
        (lambda p: np.save(open(p, "wb"), np.arange(3)), "a NumPy array (.npy)"),
        (lambda p: p.write_bytes(b""), "an empty file"),
        (lambda p: p.write_bytes(bytes(range(200, 256))), "a binary file"),
    ],
)
def test_result_load_of_another_file_says_what_the_file_is(tmp_path, write, what):
    path = tmp_path / "thing.npz"
    write(path)
    with pytest.raises(ValueError) as e:
        Result.load(path)
    msg = str(e.value)
    assert str(path) in msg and what in msg and "pickled (object) data" not in msg, msg


def test_result_load_of_a_store_says_it_is_one(tmp_path):
    store = ResultStore(tmp_path / "s.csv", create=True)
    store.append({"key": "k", "x": 1})
    store.close()
    with pytest.raises(ValueError, match="a SQLite database"):
        Result.load(tmp_path / "results.sqlite")


def test_load_scan_of_a_missing_scan_lists_the_scans_that_exist(tmp_path):
    for name, n in (("D32_C4_q0.3", 2), ("D64_C4", 1)):
        s = ResultStore(tmp_path / f"{name}.csv", create=True)
        for i in range(n):
            s.append({"key": f"{name}-{i}", "x": i})
        s.close()
    with pytest.raises(StoreError) as e:
        load_scan("D32_C4", tmp_path)
    msg = str(e.value)
    assert "no scan 'D32_C4'" in msg and "the scans there: D32_C4_q0.3 (2 rows), D64_C4 (1 row)" in msg, msg


@pytest.mark.parametrize("name, argv", [("reduced", []), ("scan", ["--D", "16", "--C", "4"]), ("vision", ["digits"])])
def test_an_unwritable_theorydyn_home_is_named_as_the_source_of_the_path(tmp_path, name, argv):
    """In a fresh process: a command module reads its default folders from $THEORYDYN_HOME when imported."""
    blocked = tmp_path / "file"
    blocked.write_text("")
    home = {"THEORYDYN_HOME": str(blocked / "home")}  # a folder cannot be made under a file
    r = _python_m(tmp_path, f"theorydyn.{name}", *argv, "--quiet", **home)
    assert r.returncode == 2 and "THEORYDYN_HOME: cannot write" in r.stderr and "--out:" not in r.stderr, r.stderr
    assert "set it to a writable folder, or give --out" in r.stderr and "Traceback" not in r.stderr
    r = _python_m(tmp_path, f"theorydyn.{name}", *argv, "--quiet", "--out", str(blocked / "out"), **home)
    assert r.returncode == 2 and "--out: cannot write" in r.stderr and "THEORYDYN_HOME" not in r.stderr, r.stderr


def test_a_read_only_theorydyn_home_is_named(tmp_path):
    base, ro = tmp_path / "base", tmp_path / "ro"
    base.mkdir()
    ro.mkdir()
    r = subprocess.run(["mount", "--bind", str(base), str(ro)], capture_output=True)
    if r.returncode != 0:
        pytest.skip("cannot mount here (needs root)")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(ro)], check=True, capture_output=True)
        r = _python_m(tmp_path, "theorydyn.reduced", "--quiet", THEORYDYN_HOME=str(ro))
        assert r.returncode == 2 and "THEORYDYN_HOME: cannot write" in r.stderr, r.stderr
        assert "Read-only file system" in r.stderr and "Traceback" not in r.stderr
    finally:
        subprocess.run(["umount", "-l", str(ro)], capture_output=True)
