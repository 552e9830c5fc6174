"""theorydyn.infra.atomic: the old file or the new one, never a torn one; no writes through links."""

from __future__ import annotations

import errno
from pathlib import Path

import numpy as np
import pytest

from theorydyn.infra import atomic


def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    p = tmp_path / "ledger.csv"
    atomic.write_text(p, "old\n")

    def full_disk(t: Path) -> None:
        t.write_text("partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError):
        atomic.write_with(p, full_disk)
    assert p.read_text() == "old\n"
    assert [q.name for q in tmp_path.iterdir()] == ["ledger.csv"]


def test_writers_that_infer_the_format_from_the_suffix(tmp_path: Path) -> None:
    p = tmp_path / "cache.npz"
    atomic.write_with(p, lambda t: np.savez(t, a=np.arange(3)))
    assert np.load(p)["a"].tolist() == [0, 1, 2]
    atomic.write_json(tmp_path / "s.json", {"x": 1})
    assert (tmp_path / "s.json").read_text() == '{\n  "x": 1\n}\n'


def test_symlinks_and_non_regular_targets_are_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep")
    link = tmp_path / "out.txt"
    link.symlink_to(target)
    with pytest.raises(ValueError, match="symbolic link"):
        atomic.write_text(link, "new")
    assert target.read_text() == "keep"
    with pytest.raises(ValueError, match="not a regular file"):
        atomic.write_text(tmp_path, "new")
    with pytest.raises(ValueError, match="NaN|Out of range"):
        atomic.write_json(tmp_path / "n.json", {"x": float("nan")})


def test_temporaries_have_unique_names_and_are_fsynced_before_the_rename(tmp_path: Path, monkeypatch) -> None:
    """Issue 33 item 2: the checkpoint's temporary had a fixed name and was not fsynced."""
    import os

    names = {atomic.temporary_name(tmp_path / "checkpoint.pt") for _ in range(100)}
    assert len(names) == 100 and all(n.suffix == ".pt" and n.name.startswith(".checkpoint.") for n in names)
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1])
    atomic.write_bytes(tmp_path / "x.bin", b"data")
    assert events[:2] == ["fsync", "replace"]


def test_bench_tables_refuse_a_link(tmp_path: Path) -> None:
    import pandas as pd

    from theorydyn.bench import write_tables

    target = tmp_path / "precious.csv"
    target.write_text("keep")
    (tmp_path / "bench.csv").symlink_to(target)
    with pytest.raises(ValueError, match="symbolic link"):
        write_tables([("main", pd.DataFrame({"a": [1]}))], tmp_path / "bench.csv", {"cpu": "x"})
    assert target.read_text() == "keep"
