"""A damaged SQLite store is refused, naming the file (issue 33, item 4): ``PRAGMA quick_check`` on
open, every damage error mapped to :class:`StoreDamaged` in one place; and it can be moved aside."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from theorydyn.infra.store import DB_NAME, ResultStore, StoreDamaged, StoreError, move_aside, move_aside_if_damaged


def _filled(folder: Path, n: int = 3000, name: str = "r.csv") -> Path:
    """A store of ``n`` rows (about 400 KiB: many pages), closed; returns its database."""
    st = ResultStore(folder / name, create=True)
    con = st._connect()  # one transaction (append commits each row with an fsync: seconds for 3000)
    con.execute("BEGIN")
    con.executemany(
        "INSERT INTO rows (scope, key, data, created_utc) VALUES (?, ?, ?, '2026-01-01')",
        [(st.scope, f"k{i:05d}", json.dumps({"x": repr(i / 7), "note": "padding " * 4})) for i in range(n)],
    )
    con.execute("COMMIT")
    st.export()
    assert len(st) == n
    st.close()
    return folder / DB_NAME


def test_4_kib_garbled_in_the_middle_is_refused_naming_the_file(tmp_path):
    """Issue 33 item 4: the schema page was intact, so opening passed and the first read raised
    sqlite3.DatabaseError 'database disk image is malformed' (a traceback, exit 1)."""
    db = _filled(tmp_path)
    data = bytearray(db.read_bytes())
    mid = len(data) // 2
    data[mid : mid + 4096] = random.Random(0).randbytes(4096)
    db.write_bytes(bytes(data))
    with pytest.raises(StoreDamaged) as e:
        ResultStore(tmp_path / "r.csv")
    msg = str(e.value)
    assert str(db) in msg and "damaged" in msg and "--fresh" in msg and f"mv {db}" in msg
    assert isinstance(e.value, StoreError) and isinstance(e.value, ValueError)
    assert db.read_bytes() == bytes(data)  # untouched


def test_a_half_truncated_transfer_store_is_refused(tmp_path):
    from theorydyn.transfer.experiment import open_rows

    st = open_rows(tmp_path)
    st.close()
    db = _filled(tmp_path, name="transfer_rows.csv")
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    with pytest.raises(StoreDamaged, match="damaged") as e:
        open_rows(tmp_path)
    assert str(db) in str(e.value)


def test_damage_found_after_open_is_mapped_too(tmp_path, monkeypatch):
    """A page damaged after the open-time check (another process, the disk): the read raises
    StoreDamaged, not sqlite3.DatabaseError."""
    db = _filled(tmp_path, n=50)
    st = ResultStore(tmp_path / "r.csv")
    import sqlite3

    class Broken:
        def execute(self, *a, **k):
            raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(st, "_connect", lambda: Broken())
    for call in (st.load, st.export, lambda: st.committed("k1"), lambda: st.append({"key": "new"})):
        with pytest.raises(StoreDamaged, match="damaged") as e:
            call()
        assert str(db) in str(e.value)

    class Locked:
        def execute(self, *a, **k):
            raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(st, "_connect", lambda: Locked())
    with pytest.raises(sqlite3.OperationalError):  # a lock is not damage
        st.load()


def test_move_aside_then_a_fresh_store(tmp_path):
    db = _filled(tmp_path, n=10)
    data = db.read_bytes()
    db.write_bytes(data[:1024] + os.urandom(len(data) - 1024))
    with pytest.raises(StoreDamaged):
        ResultStore(tmp_path / "r.csv")
    dest = move_aside(db)
    assert dest.name.startswith(f"{DB_NAME}.damaged-") and not db.exists()
    with pytest.warns(UserWarning, match="legacy"):  # the export of the old store is not imported
        st = ResultStore(tmp_path / "r.csv")
    assert len(st) == 0


def test_fresh_moves_a_damaged_store_aside_and_leaves_a_sound_one(tmp_path):
    """move_aside_if_damaged (verify's and transfer's --fresh): none → None; a sound store stays where it is
    (None); a damaged one (a SQLite header, then garbage) is moved aside whole and its new name returned."""
    db = tmp_path / DB_NAME
    assert move_aside_if_damaged(db) is None and not db.exists()
    st = ResultStore(tmp_path / "r.csv")
    st.close()
    assert move_aside_if_damaged(db) is None and db.is_file()
    db.unlink()
    db.write_bytes(b"SQLite format 3\x00" + b"\xa5" * 8176)
    dest = move_aside_if_damaged(db)
    assert dest is not None and dest.name.startswith(f"{DB_NAME}.damaged-") and not db.exists(), dest
