"""Merge results stores: the rows of one ``results.sqlite`` into another (e.g. the halves of a scan run on
two machines, each into its own folder).

A row is identified by ``(scope, key)`` (:mod:`theorydyn.store`: the key is the content hash of
everything the row depends on), so merging is a union: a row of the source whose ``(scope, key)``
the target lacks is copied with its ``data`` and ``created_utc`` as they are; one the target holds
with the same ``data`` is already there; one the target holds with *other* data is a conflict,
reported and never overwritten (the target's committed row stands, as for two writers of one
store). Rows that do not decode (:func:`theorydyn.store._decode`: not a JSON object of text, a key
mismatch) are skipped and counted. The copy is one transaction on the target: a kill leaves the
target as it was or with every new row. The source is opened read-only and never changed.

Rows are copied, not re-validated against their parameters: the scan re-checks each row's key
when it reads the merged store (``ResultStore.load``), and moves a row that fails aside.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from .store import StoreError, _decode, connect


@dataclass
class MergeReport:
    """What :func:`merge_stores` did: rows ``added`` to the target, rows already ``present`` (same data),
    ``conflicts`` ((scope, key) held by the target with other data; kept as they were) and ``invalid``
    rows of the source (skipped)."""

    added: int = 0
    present: int = 0
    conflicts: list[tuple[str, str]] = field(default_factory=list)
    invalid: int = 0


def _open_source(path: Path) -> sqlite3.Connection:
    """The source store, read-only; StoreError when it is not a theorydyn results database."""
    if path.is_symlink() or not path.is_file():
        raise StoreError(f"source store {str(path)!r} is not a regular file (a link, a folder or missing)")
    try:
        con = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True, isolation_level=None)
        check = con.execute("PRAGMA quick_check").fetchone()[0]
        cols = {r[1] for r in con.execute("PRAGMA table_info(rows)")}
    except sqlite3.DatabaseError as e:
        raise StoreError(f"source store {str(path)!r} cannot be read ({e}): not a theorydyn results database") from None
    if check != "ok":
        con.close()
        raise StoreError(f"source store {str(path)!r} is damaged (quick_check: {check})")
    if not {"scope", "key", "data", "created_utc"} <= cols:
        con.close()
        raise StoreError(f"source store {str(path)!r} has no theorydyn rows table")
    return con


def merge_stores(target: str | Path, source: str | Path) -> MergeReport:
    """Copy the rows of the store ``source`` into the store ``target`` (created if missing), in one
    transaction (module docstring).

    Raises:
        StoreError: either path is not a usable results database, or both name the same file.
        sqlite3.DatabaseError: the target fails during the copy (nothing of this merge is kept).
    """
    target, source = Path(target), Path(source)
    if source.exists() and target.exists() and source.resolve() == target.resolve():
        raise StoreError(f"source and target are the same store {str(target)!r}")
    src = _open_source(source)
    try:
        rows = src.execute("SELECT scope, key, data, created_utc FROM rows ORDER BY seq").fetchall()
    finally:
        src.close()
    report = MergeReport()
    con = connect(target)
    try:
        con.execute("BEGIN IMMEDIATE")
        try:
            for scope, key, data, created in rows:
                row, _ = _decode(key, data)
                if row is None or not isinstance(scope, str) or not isinstance(created, str):
                    report.invalid += 1
                    continue
                have = con.execute("SELECT data FROM rows WHERE scope = ? AND key = ?", (scope, key)).fetchone()
                if have is None:
                    con.execute(
                        "INSERT INTO rows (scope, key, data, created_utc) VALUES (?, ?, ?, ?)",
                        (scope, key, data, created),
                    )
                    report.added += 1
                elif have[0] == data:
                    report.present += 1
                else:
                    report.conflicts.append((scope, key))
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    finally:
        con.close()
    return report
