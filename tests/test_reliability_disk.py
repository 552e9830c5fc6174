"""A full disk for transfer (issue 33, item 6): the cached attention, the tables and the store raise
``OSError(ENOSPC)`` naming the file, and leave no temporary file (vision: tests/test_reliability_vision.py)."""

from __future__ import annotations

import errno
import os

import numpy as np
import pandas as pd
import pytest


def _full_disk(monkeypatch) -> None:
    def fsync(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", fsync)


def test_a_transfer_cache_on_a_full_disk_names_the_file_and_leaves_nothing(tmp_path, monkeypatch):
    from theorydyn.transfer.cache import read_cache, write_cache

    path = tmp_path / "flow_x.npz"
    params = {"kind": "test"}
    write_cache(path, {"gamma": np.array(1.5)}, params)
    before = path.read_bytes()
    _full_disk(monkeypatch)
    with pytest.raises(OSError, match="No space left") as e:
        write_cache(path, {"gamma": np.array(2.5)}, params)
    assert e.value.errno == errno.ENOSPC and str(path) in str(e.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flow_x.npz"]  # no temporary left
    assert path.read_bytes() == before
    monkeypatch.undo()
    arrays, _ = read_cache(path, params, lambda a: None)
    assert float(arrays["gamma"]) == 1.5


def test_a_transfer_table_on_a_full_disk_names_the_file(tmp_path, monkeypatch):
    from theorydyn.transfer.analysis import write_table

    _full_disk(monkeypatch)
    path = tmp_path / "transfer_levels.csv"
    with pytest.raises(OSError, match="transfer_levels.csv") as e:
        write_table(pd.DataFrame({"a": [1]}), path)
    assert e.value.errno == errno.ENOSPC
    assert list(tmp_path.iterdir()) == []


def test_the_writer_raising_enospc_is_reported_with_the_target(tmp_path):
    """The atomic writer itself: whatever the writer raises is re-raised naming the target, not the temporary."""
    from theorydyn.infra.atomic import write_with

    def writer(t):
        t.write_bytes(b"x" * 1000)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(t))

    with pytest.raises(OSError) as e:
        write_with(tmp_path / "table.csv", writer)
    assert e.value.errno == errno.ENOSPC
    assert str(tmp_path / "table.csv") in str(e.value) and ".tmp" not in str(e.value)
    assert list(tmp_path.iterdir()) == []
