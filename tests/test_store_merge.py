"""Merging results stores (theorydyn.infra.store_merge, ``theorydyn store merge``): a union by (scope, key),
conflicts kept as the target has them, the source untouched, damaged sources refused with exit 2."""

from __future__ import annotations

import json
import sqlite3

import pytest

from theorydyn.infra.store import ResultStore, StoreError
from theorydyn.infra.store_merge import merge_stores
from theorydyn.stores.__main__ import main


def _store(folder, rows, scope="s"):
    st = ResultStore(folder / f"{scope}.csv", create=True)
    for r in rows:
        st.append(r)
    return folder / "results.sqlite"


def _rows(db):
    con = sqlite3.connect(db)
    try:
        return sorted(con.execute("SELECT scope, key, data FROM rows"))
    finally:
        con.close()


def test_merge_is_the_union_and_keeps_the_targets_row_on_a_conflict(tmp_path):
    a = _store(tmp_path / "a", [{"key": "k1", "x": 1}, {"key": "k2", "x": 2}])
    b = _store(tmp_path / "b", [{"key": "k2", "x": 2}, {"key": "k3", "x": 3}, {"key": "k1", "x": 9}])
    before_b = _rows(b)
    r = merge_stores(a, b)
    assert (r.added, r.duplicate, r.conflicts, r.rejected) == (1, 1, [("s", "k1")], 0)
    keys = {(s, k) for s, k, _ in _rows(a)}
    assert keys == {("s", "k1"), ("s", "k2"), ("s", "k3")}
    assert json.loads(dict((k, d) for _, k, d in _rows(a))["k1"])["x"] == "1"  # the target's k1 stands
    assert _rows(b) == before_b  # the source is not changed
    again = merge_stores(a, b)  # merging twice adds nothing
    assert (again.added, again.duplicate) == (0, 2)


def test_a_merged_store_reads_back_every_row(tmp_path):
    a = _store(tmp_path / "a", [{"key": "k1", "x": 1}])
    b = _store(tmp_path / "b", [{"key": "k2", "x": 2.5}])
    merge_stores(a, b)
    assert ResultStore(tmp_path / "a" / "s.csv").load().keys() == {"k1", "k2"}


def test_a_damaged_or_foreign_source_is_refused(tmp_path):
    a = _store(tmp_path / "a", [{"key": "k1", "x": 1}])
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database" * 100)
    with pytest.raises(StoreError, match="junk.sqlite"):
        merge_stores(a, junk)
    with pytest.raises(StoreError, match="same database"):
        merge_stores(a, a)


def test_cli_merges_and_exits_2_on_a_bad_source(tmp_path, capsys):
    a = _store(tmp_path / "a", [{"key": "k1", "x": 1}])
    b = _store(tmp_path / "b", [{"key": "k2", "x": 2}])
    assert main(["merge", str(a), str(b)]) == 0
    assert "1 rows added" in capsys.readouterr().out
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"x" * 4096)
    assert main(["merge", str(a), str(junk)]) == 2
    err = capsys.readouterr().err
    assert "junk.sqlite" in err and "Traceback" not in err
