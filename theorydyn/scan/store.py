"""A crash-safe, append-only CSV of scan results, one row per point, keyed by the point's hash.

Guarantees (what a ``kill -9`` or a power cut at any moment can and cannot do):

* A row is appended as **one** ``os.write`` of one complete ``\\n``-terminated line to a file
  opened with ``O_APPEND``, followed by ``fsync``. A killed process therefore leaves either the
  whole line or, at worst (power loss mid-write), a torn last line with no ``\\n``.
* Loading ignores a torn last line (no terminating ``\\n``) and any line whose field count does
  not match the header, and keeps one row per key (the last written). When it had to drop
  anything, it rewrites the file (temporary file, ``fsync``, ``os.replace``: atomic), so the
  file on disk never holds a corrupt or duplicated row for long and never loses a good one.
* A row with a column the header lacks makes the file be rewritten the same atomic way with
  the union of the columns.

Only one process writes a given store at a time (the scan's driver); workers return their
rows to it. Values must not contain newlines (they are replaced by spaces).
"""

from __future__ import annotations

import csv
import io
import math
import os
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

KEY = "key"


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return "" if math.isnan(v) else repr(v)
    return str(v).replace("\r", " ").replace("\n", " ")


def _line(values: Iterable[Any]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow([_cell(v) for v in values])
    return buf.getvalue()


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # e.g. platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never a mix."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", newline="") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


class ResultStore:
    """The results of one scan: ``path`` is its CSV file (created on first append)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.columns: list[str] = []
        self.rows: dict[str, dict[str, str]] = {}  # key → row (as text), insertion-ordered
        self.dropped = 0  # lines dropped by the last load (torn, malformed or duplicate)
        self.load()

    # ---- reading ----------------------------------------------------------------------
    def load(self) -> "ResultStore":
        """Read the file, drop what a crash may have left, rewrite it if anything was dropped."""
        self.columns, self.rows, self.dropped = [], {}, 0
        if not self.path.exists():
            return self
        data = self.path.read_bytes()
        complete, _, torn = data.rpartition(b"\n")
        self.dropped += bool(torn)
        text = complete.decode("utf-8", errors="replace")
        lines = text.split("\n") if complete else []
        if not lines:
            self.dropped = bool(torn)
            if torn:
                self.path.unlink()
            return self
        reader = csv.reader(lines)
        try:
            header = next(reader)
        except (StopIteration, csv.Error):
            header = []
        if KEY not in header:
            raise ValueError(f"{self.path} is not a theorydyn results file (no '{KEY}' column)")
        self.columns = header
        n_lines = 0
        for line in lines[1:]:
            n_lines += 1
            try:
                fields = next(csv.reader([line]))
            except (StopIteration, csv.Error):
                self.dropped += 1
                continue
            if len(fields) != len(header):
                self.dropped += 1
                continue
            row = dict(zip(header, fields))
            if row[KEY] in self.rows:
                self.dropped += 1
                del self.rows[row[KEY]]  # the last written wins, and moves to the end
            self.rows[row[KEY]] = row
        if self.dropped:
            self._rewrite()
        return self

    def keys(self) -> set[str]:
        return set(self.rows)

    def __contains__(self, key: str) -> bool:
        return key in self.rows

    def __len__(self) -> int:
        return len(self.rows)

    def frame(self, keys: Iterable[str] | None = None) -> pd.DataFrame:
        """The rows (optionally only ``keys``, in that order) as a DataFrame with parsed types."""
        if not self.path.exists():
            return pd.DataFrame(columns=self.columns)
        df = pd.read_csv(self.path, dtype={KEY: str}, keep_default_na=True)
        df = df.drop_duplicates(KEY, keep="last")
        if keys is not None:
            keys = [k for k in keys if k in self.rows]
            df = df.set_index(KEY).loc[keys].reset_index()
        return df.reset_index(drop=True)

    # ---- writing ----------------------------------------------------------------------
    def append(self, row: dict[str, Any]) -> None:
        """Append one row durably (module docstring). ``row`` must hold ``key``."""
        if KEY not in row:
            raise ValueError(f"a result row needs a '{KEY}'")
        text_row = {k: _cell(v) for k, v in row.items()}
        new_cols = [k for k in row if k not in self.columns]
        if not self.path.exists() or new_cols:
            if not self.columns:
                self.columns = [KEY] + [k for k in row if k != KEY]
            else:
                self.columns = self.columns + new_cols
            self.rows.pop(text_row[KEY], None)
            self.rows[text_row[KEY]] = text_row
            self._rewrite()
            return
        line = _line(text_row.get(c, "") for c in self.columns).encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            view = memoryview(line)
            while view:  # a regular file takes it in one write; loop for the letter of POSIX
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
        finally:
            os.close(fd)
        if text_row[KEY] in self.rows:  # a duplicate on disk until the next load compacts it
            del self.rows[text_row[KEY]]
        self.rows[text_row[KEY]] = text_row

    def remove(self, keys: Iterable[str]) -> int:
        """Forget the rows of ``keys`` (``--force``); atomic rewrite. Returns how many went."""
        gone = [k for k in keys if k in self.rows]
        for k in gone:
            del self.rows[k]
        if gone:
            self._rewrite()
        return len(gone)

    def _rewrite(self) -> None:
        text = _line(self.columns) + "".join(_line(r.get(c, "") for c in self.columns) for r in self.rows.values())
        atomic_write_text(self.path, text)
        self.dropped = 0
