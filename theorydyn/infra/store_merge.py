"""Bring the rows of another results database into a local one (results computed elsewhere: a
cluster, a colleague's machine), checked row by row, without duplicates (:func:`merge_stores`).

What a merge guarantees, and what it does not:

* the source is opened read-only and checked (``PRAGMA quick_check``: a damaged source is
  :class:`~theorydyn.infra.store.StoreDamaged`, nothing merged);
* every source row must decode as a store row does on loading (a JSON object of text values, its
  key matching) and pass the caller's ``validate(scope, row)`` (for instance the scans' check that
  the key is the hash of the row's own parameters and the current numerics version); a row that
  fails is counted with its reason and not copied;
* ``UNIQUE(scope, key)`` holds: a key the destination has already keeps the destination's row
  (``duplicate`` when the data are the same text, ``conflict`` when they differ);
* one transaction: a kill or a full disk leaves the destination as it was or fully merged.

Not guaranteed: that the rows are *authentic*. A row whose key is the hash of its parameters and
whose values parse is accepted whoever computed it; merge only from stores you trust
(docs/reliability.md).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .store import DB_NAME, StoreDamaged, StoreError, _damage, _decode, connect, damaged_message

#: ``validate(scope, row) -> reason | None`` (row: text values by column, ``key`` included)
ScopedValidator = Callable[[str, dict[str, str]], "str | None"]


@dataclass
class MergeReport:
    """What :func:`merge_stores` did: rows ``added``, ``duplicate`` (same key and data already there),
    ``conflict`` (same key, other data: the destination's row kept), ``rejected`` (failed a check,
    reasons counted in ``reasons``); ``by_scope`` gives the added rows per scope."""

    added: int = 0
    duplicate: int = 0
    conflict: int = 0
    rejected: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    by_scope: Counter[str] = field(default_factory=Counter)
    #: the (scope, key) of each conflict: held by the destination with other data, kept as it was
    conflicts: list[tuple[str, str]] = field(default_factory=list)


def _db(path: str | Path) -> Path:
    """A results database path: a folder means ``folder/results.sqlite``."""
    p = Path(path)
    return p / DB_NAME if p.is_dir() else p


def _open_source(src: Path) -> sqlite3.Connection:
    if not src.is_file():
        raise StoreError(f"source results database {str(src)!r} does not exist or is not a file")
    try:
        con = sqlite3.connect(f"file:{src}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as e:
        raise StoreError(f"source results database {str(src)!r} cannot be opened: {e}") from None
    try:
        with _damage(src):
            check = [r[0] for r in con.execute("PRAGMA quick_check").fetchall()]
            if check != ["ok"]:
                raise StoreDamaged(damaged_message(src, f"PRAGMA quick_check: {str(check[0])[:120]}"))
            con.execute("SELECT scope, key, data, created_utc FROM rows LIMIT 0")
    except sqlite3.OperationalError as e:  # no rows table: not a theorydyn store
        con.close()
        raise StoreError(f"{str(src)!r} is not a theorydyn results database ({e})") from None
    except StoreError:
        con.close()
        raise
    return con


def merge_stores(dst: str | Path, src: str | Path, validate: ScopedValidator | None = None) -> MergeReport:
    """Copy the rows of the results database ``src`` into ``dst`` (each a ``results.sqlite`` or the
    folder holding one; ``dst``'s folder must exist) after checking each (module docstring).

    Raises:
        StoreError: a path is not a usable results database, or both name the same file.
        StoreDamaged: either database is damaged; nothing is merged.
        OSError: ``dst`` cannot be written (a full disk); nothing is merged.
    """
    d, s = _db(dst), _db(src)
    if not d.parent.is_dir():
        raise StoreError(f"results folder {str(d.parent)!r} does not exist")
    if d.exists() and s.exists() and os.path.samefile(d, s):
        raise StoreError(f"merge: source and destination are the same database {str(d)!r}")
    report = MergeReport()
    scon = _open_source(s)
    try:
        with _damage(s):
            found = scon.execute("SELECT scope, key, data, created_utc FROM rows ORDER BY seq").fetchall()
    finally:
        scon.close()
    dcon = connect(d)
    try:
        with _damage(d):
            dcon.execute("BEGIN IMMEDIATE")
            for scope, key, data, created in found:
                row, why = _decode(key, data)
                if row is not None and not isinstance(scope, str):
                    why = "no scope"
                if row is not None and why is None and validate is not None:
                    try:
                        why = validate(scope, row)
                    except Exception as e:  # noqa: BLE001 — a validator's bug rejects, never merges
                        why = f"invalid: {type(e).__name__}: {e}"
                if row is None or why:
                    report.rejected += 1
                    report.reasons[(why or "invalid").split(":")[0]] += 1
                    continue
                cur = dcon.execute(
                    "INSERT INTO rows (scope, key, data, created_utc) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (scope, key) DO NOTHING",
                    (scope, key, data if isinstance(data, str) else data.decode("utf-8"), str(created)),
                )
                if cur.rowcount == 1:
                    report.added += 1
                    report.by_scope[scope] += 1
                    continue
                old = dcon.execute("SELECT data FROM rows WHERE scope = ? AND key = ?", (scope, key)).fetchone()
                same = old is not None and _decode(key, old[0])[0] == row
                report.duplicate += same
                report.conflict += not same
                if not same:
                    report.conflicts.append((scope, key))
            dcon.execute("COMMIT")
    except sqlite3.OperationalError as e:  # a full disk, a lock held past the timeout
        raise OSError(f"cannot merge into {d}: {e}") from None
    finally:
        with contextlib.suppress(sqlite3.Error):
            if dcon.in_transaction:
                dcon.execute("ROLLBACK")
        dcon.close()
    return report
