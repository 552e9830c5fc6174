"""The one results store: a SQLite database (WAL mode), one committed row per finished point.

Scans (:mod:`theorydyn.scan`), the ledger's claims (:mod:`theorydyn.verify.ledger`), the transfer
experiment (:mod:`theorydyn.transfer`) and the cached vision runs keep their rows here, each through
the one keyed-store helper (:class:`theorydyn.infra.keyed.KeyedStore`: key, validation, invalidation);
the CSV file a user reads with pandas is an *export* of it, never read back.

Where: a results CSV ``<dir>/<name>.csv`` has its rows in ``<dir>/results.sqlite`` under the
scope ``<name>`` (one database per results folder, one scope per scan / experiment).

Schema (``sqlite3 results.sqlite .schema``)::

    rows(seq INTEGER PRIMARY KEY, scope TEXT, key TEXT, data TEXT, created_utc TEXT,
         UNIQUE(scope, key))                           -- one row per finished point
    rejected(id INTEGER PRIMARY KEY, scope TEXT, key TEXT, reason TEXT, data TEXT, rejected_at TEXT)
                                                       -- rows that failed their checks, or set aside
    exports(scope TEXT PRIMARY KEY, path TEXT, written_utc TEXT)  -- the last CSV export of a scope
    INDEX rows_by_key ON rows (key)                    -- a key in any scope (ResultStore.adopt)

``key`` is :func:`content_key` of the point's full parameters, salted with the numerics version
(sha256 hex: one key scheme for every row). ``data`` is a JSON object of the row's values as text
(column → the text the CSV export holds), so rows with different columns (a reduced-only point
beside a simulated one) live side by side; no header is ever rewritten.

Guarantees:

* **Atomic, durable rows.** Each :meth:`ResultStore.append` is one transaction
  (``BEGIN IMMEDIATE`` … ``COMMIT``, ``synchronous=FULL``): a ``kill -9`` or a power cut leaves the
  row committed or absent, never torn.
* **No duplicates.** ``UNIQUE(scope, key)``: a second insert of a key is ignored (the first
  committed row stands), so two processes computing the same point keep one row.
* **Several writers.** WAL mode and a busy timeout (:data:`BUSY_TIMEOUT_S`): scans on the same
  name, or a scan and a ``verify``, write concurrently without losing rows.
* **Reused by content.** Keys do not depend on the scope: :meth:`ResultStore.adopt` copies into a
  scope the rows of its keys that another scope holds (checked as on reading, in one transaction), so
  a scan reuses every point any scan of the same database computed, whatever its name.
* **Checked on reading.** :meth:`ResultStore.load` checks every row (its JSON, its declared
  ``kinds``, the caller's ``validate``: for scans, that the key is the hash of the row's own
  parameters and numerics version). A row that fails is *moved* to the ``rejected`` table (and
  listed in ``<name>.rejected.csv``) in one transaction, one :class:`RejectedRowsWarning` gives
  the counts, and the point is computed again.
* **A damaged database is refused, never half-read.** :func:`connect` runs ``PRAGMA quick_check``
  on open, and every :class:`sqlite3.DatabaseError` that is damage (not a lock or a full disk) is
  mapped in one place (:func:`_damage`) to :class:`StoreDamaged`, whose message names the file and
  says how to move it aside (:func:`move_aside`; the command layer's ``--fresh``).
* **Nothing is deleted.** :meth:`ResultStore.remove` (a command's ``--fresh``, a replaced result)
  moves rows to the ``rejected`` table with its reason, where they stay readable.
* **The CSV is an export**, written atomically (:mod:`theorydyn.infra.atomic`) by :meth:`export` after
  each run; a CSV found at the export path before the database existed (an older toolkit's
  results) is moved aside to ``<name>.legacy.csv``, never imported.

Reading with pandas::

    import sqlite3, pandas as pd
    con = sqlite3.connect("runs/scans/results.sqlite")
    df = pd.read_sql("SELECT key, data FROM rows WHERE scope = ?", con, params=["mix"])
    # or, typed like the CSV export:  ResultStore("runs/scans/mix.csv").frame()
    # or simply:                      pd.read_csv("runs/scans/mix.csv")
"""

from __future__ import annotations

import contextlib
import csv
import functools
import io
import json
import math
import os
import re
import sqlite3
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from .atomic import write_text
from .keys import canonical_json, content_key  # noqa: F401  (re-exported: the one key scheme)

KEY = "key"
DB_NAME = "results.sqlite"
REJECTED_SUFFIX = ".rejected.csv"
LEGACY_SUFFIX = ".legacy.csv"
REJECTED_COLUMNS = ("rejected_at", "reason", "key", "line")
KINDS = ("num", "bool", "str")
#: How long a writer waits for another's transaction before giving up (seconds).
BUSY_TIMEOUT_S = 120.0
#: Keys looked up per query by :meth:`ResultStore.adopt` (below SQLite's limit on bound parameters).
_CHUNK = 500

#: How ``_cell`` writes numbers: int ``str`` and float ``repr`` (``inf``, ``-inf``; NaN is empty).
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf")

Validator = Callable[[dict[str, str]], "str | None"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rows (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    data TEXT NOT NULL,
    created_utc TEXT NOT NULL,
    UNIQUE (scope, key)
);
CREATE TABLE IF NOT EXISTS exports (
    scope TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    written_utc TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rejected (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    scope TEXT NOT NULL,
    key TEXT,
    reason TEXT NOT NULL,
    data TEXT,
    rejected_at TEXT NOT NULL
);
"""
#: Added to stores of every age on open (a store written before it gains it; one that cannot be written,
#: read-only, works without it): :meth:`ResultStore.adopt` finds a key in every scope at once.
_INDEXES = "CREATE INDEX IF NOT EXISTS rows_by_key ON rows (key)"


class StoreError(ValueError):
    """The path cannot hold a results store (a directory, a link, not a SQLite database, unwritable)."""


class StoreDamaged(StoreError):
    """The results database is damaged (``quick_check`` fails, or SQLite reports a malformed image):
    nothing is read from it; move it aside (:func:`move_aside`) and the rows are computed again."""


def damaged_message(db: str | Path, why: object) -> str:
    """The one message of a damaged store: the file, what SQLite said, and how to go on."""
    return (
        f"results database {str(db)!r} is damaged or not a theorydyn results database ({why}); nothing "
        f"was read from it. Move it aside "
        f"(rerun with --fresh, which does it, or: mv {db} {db}.damaged) and rerun: its rows are computed again"
    )


@contextlib.contextmanager
def _damage(db: str | Path):
    """Map SQLite's damage errors (a :class:`sqlite3.DatabaseError` that is not an
    :class:`sqlite3.OperationalError`, i.e. not a lock, a full disk or a read-only file) to
    :class:`StoreDamaged` naming ``db``; every access of the store goes through here."""
    try:
        yield
    except sqlite3.OperationalError:
        raise
    except sqlite3.DatabaseError as e:
        raise StoreDamaged(damaged_message(db, e)) from None


def _mapped(method):
    """A :class:`ResultStore` method whose SQLite damage errors become :class:`StoreDamaged` (:func:`_damage`)."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with _damage(self.db):
            return method(self, *args, **kwargs)

    return wrapper


def move_aside(db: str | Path) -> Path:
    """Rename a (damaged) results database and its ``-wal`` / ``-shm`` files to
    ``<name>.damaged-<UTC time>[-n]``; return the new name of the database. The next open creates
    an empty store, whose rows are computed again."""
    db = Path(db)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    n, dest = 1, db.with_name(f"{db.name}.damaged-{stamp}")
    while dest.exists():
        n += 1
        dest = db.with_name(f"{db.name}.damaged-{stamp}-{n}")
    db.replace(dest)
    for tail in ("-wal", "-shm"):
        side = db.with_name(db.name + tail)
        if side.exists():
            side.replace(dest.with_name(dest.name + tail))
    return dest


def move_aside_if_damaged(db: str | Path) -> Path | None:
    """``--fresh`` on a folder's results database: a damaged one (it does not open, :func:`connect`) is moved
    aside (:func:`move_aside`) and its new name returned; a sound one, or none, is left as it is (None)."""
    if not Path(db).is_file():
        return None
    try:
        connect(db).close()
    except StoreDamaged:
        return move_aside(db)
    return None


def scope_counts(db: str | Path) -> dict[str, int]:
    """Scope → number of committed rows in the results database ``db`` (e.g. the scans a results
    folder holds, for a message naming what exists).

    Raises:
        StoreError, StoreDamaged: as :func:`connect`.
    """
    con = connect(db)
    try:
        with _damage(db):
            return dict(con.execute("SELECT scope, COUNT(*) FROM rows GROUP BY scope ORDER BY scope").fetchall())
    finally:
        con.close()


class RejectedRowsWarning(UserWarning):
    """Rows of a store failed their checks and were moved to its ``rejected`` table (the message gives the counts)."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


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


def kind_problem(kind: str, value: str) -> str | None:
    """Why the text ``value`` is not of ``kind`` (``"num"``, ``"bool"``, ``"str"``), or None. Empty is missing: fine."""
    if value == "" or kind == "str":
        return None
    if kind == "num":
        return None if _NUMBER.fullmatch(value) else "is not a number"
    if kind == "bool":
        return None if value in ("True", "False") else "is not True/False"
    raise ValueError(f"kinds: unknown kind {kind!r}; use one of {KINDS}")


def _decode(key: Any, data: Any) -> tuple[dict[str, str] | None, str | None]:
    """A stored row as text by column, or (None, reason)."""
    if not isinstance(key, str) or not key.strip():
        return None, "empty key"
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            return None, "not UTF-8"
    if not isinstance(data, str):
        return None, "not a JSON object"
    try:
        obj = json.loads(data)
    except ValueError:
        return None, "not a JSON object"
    if not isinstance(obj, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in obj.items()):
        return None, "not a JSON object (of text values)"
    if obj.get(KEY, key) != key:
        return None, "key mismatch: the data names another key"
    if any("\x00" in v for v in obj.values()):
        return None, "NUL byte"
    return {KEY: key, **{k: v for k, v in obj.items() if k != KEY}}, None


def connect(db: str | Path) -> sqlite3.Connection:
    """A connection to the store database ``db`` (created with its schema), WAL mode, busy timeout.

    Raises:
        StoreError: ``db`` is a link, not a regular file, or not a SQLite database.
        StoreDamaged: ``PRAGMA quick_check`` finds the database damaged.
    """
    db = Path(db)
    for f in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):  # SQLite writes all three
        if f.is_symlink():
            raise StoreError(
                f"results database file {str(f)!r} is a symbolic link; theorydyn does not write through links"
            )
        if f.exists() and not f.is_file():
            raise StoreError(f"results database file {str(f)!r} exists and is not a regular file")
    try:
        db.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(str(db), timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except (OSError, sqlite3.Error) as e:
        raise StoreError(f"results database {str(db)!r} cannot be opened: {e}") from None
    try:
        con.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        if con.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            con.execute("PRAGMA journal_mode = WAL")
        con.execute("PRAGMA synchronous = FULL")
        con.executescript(_SCHEMA)
        with contextlib.suppress(sqlite3.OperationalError):  # read-only: lookups by key scan the table instead
            con.execute(_INDEXES)
        check = [r[0] for r in con.execute("PRAGMA quick_check").fetchall()]
    except sqlite3.OperationalError as e:
        con.close()
        raise StoreError(
            f"{str(db)!r} is not a theorydyn results database ({e}); move it away or choose another results directory"
        ) from None
    except sqlite3.DatabaseError as e:  # "file is not a database", "database disk image is malformed"
        con.close()
        raise StoreDamaged(damaged_message(db, e)) from None
    if check != ["ok"]:
        con.close()
        lines = [ln for r in check for ln in str(r).splitlines() if ln.strip() and not ln.startswith("***")]
        more = f" and {len(lines) - 1} more" if len(lines) > 1 else ""
        raise StoreDamaged(damaged_message(db, f"PRAGMA quick_check: {lines[0][:120] if lines else check}{more}"))
    return con


class ResultStore:
    """The rows of one scope of a results database, exported to the CSV ``path``.

    Args:
        path: the CSV export, ``<dir>/<name>.csv``; the rows live in ``<dir>/results.sqlite``
            (``db``) under the scope ``<name>`` (``scope``).
        validate: ``validate(row) -> reason | None`` on each row (text values by column);
            a row with a reason is rejected (module docstring). Also applied to appended rows.
        kinds: column → ``"num"`` / ``"bool"`` / ``"str"``; columns not named are not checked.
        warn: emit a :class:`RejectedRowsWarning` when a load rejects rows.
        create: make the folder of the export and of the database when missing; without it a folder
            that does not exist is refused (a mistyped path is an error, not a new empty store).

    Raises:
        StoreError: the export path or the database cannot be used, or its folder does not exist
            and ``create`` is False.
        StoreDamaged: the database is damaged (:func:`connect`).
    """

    def __init__(
        self,
        path: str | Path,
        validate: Validator | None = None,
        kinds: Mapping[str, str] | None = None,
        warn: bool = True,
        *,
        db: str | Path | None = None,
        scope: str | None = None,
        create: bool = False,
    ):
        self.path = Path(path)
        self.validate = validate
        self.kinds = dict(kinds or {})
        for c, k in self.kinds.items():
            if k not in KINDS:
                raise ValueError(f"kinds: column {c!r} has unknown kind {k!r}; use one of {KINDS}")
        self.warn = warn
        if self.path.is_dir():
            raise StoreError(f"results file {str(self.path)!r} is a directory")
        stem = self.path.name[:-4] if self.path.name.endswith(".csv") else self.path.name
        self.scope = scope if scope is not None else stem
        self.db = Path(db) if db is not None else self.path.with_name(DB_NAME)
        for folder in dict.fromkeys((self.path.parent, self.db.parent)):
            if not folder.is_dir():
                if not create:
                    raise StoreError(
                        f"results folder {str(folder)!r} does not exist; pass create=True to start a new store there"
                    )
                folder.mkdir(parents=True, exist_ok=True)
        self._con: sqlite3.Connection | None = None
        self._pid = os.getpid()
        self.columns: list[str] = []
        self.rows: dict[str, dict[str, str]] = {}  # key → row (as text), in commit order
        self.rejected = 0  # rows the last load moved to the rejected table
        self.rejected_reasons: Counter[str] = Counter()
        self._keep_legacy_csv()
        self.load()

    @property
    def rejected_path(self) -> Path:
        """``<name>.rejected.csv`` next to the export: the rejected rows of this scope, as a table."""
        return self.path.with_name(self.scope + REJECTED_SUFFIX)

    def _connect(self) -> sqlite3.Connection:
        """This process's connection (kept open: closing the last one checkpoints the WAL, 5 ms each time;
        a forked child opens its own, as SQLite requires)."""
        if self._con is None or self._pid != os.getpid():
            self._con, self._pid = connect(self.db), os.getpid()
        return self._con

    def close(self) -> None:
        """Close this process's connection (it reopens on the next use)."""
        if self._con is not None and self._pid == os.getpid():
            self._con.close()
        self._con = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 — interpreter shutdown
            pass

    @_mapped
    def _keep_legacy_csv(self) -> None:
        """A CSV at the export path that this store never exported is moved aside
        (``<name>.legacy.csv``), not imported: the database is the only source of what is computed."""
        if not self.path.is_file() or self.path.is_symlink():
            return
        known = self._connect().execute("SELECT 1 FROM exports WHERE scope = ?", (self.scope,)).fetchone()
        if known is None:
            dest = self.path.with_name(self.scope + LEGACY_SUFFIX)
            n = 1
            while dest.exists():
                n += 1
                dest = self.path.with_name(f"{self.scope}.legacy{n}.csv")
            self.path.replace(dest)
            warnings.warn(
                f"{self.path}: a results CSV without rows in {self.db} (an older toolkit's file, or a "
                f"hand edit) was moved to {dest}; its rows are computed again",
                RejectedRowsWarning,
                stacklevel=3,
            )

    # ---- reading ----------------------------------------------------------------------
    def _row_problem(self, row: dict[str, str]) -> str | None:
        if self.validate is not None:  # first: a stale row is reported as stale, whatever else it holds
            try:
                why = self.validate(row)
            except Exception as e:  # noqa: BLE001 — a validator's bug must not make loading raise
                why = f"invalid: {type(e).__name__}: {e}"
            if why:
                return why
        for c, kind in self.kinds.items():
            if c in row:
                why = kind_problem(kind, row[c])
                if why:
                    return f"unparsable: {c}={row[c][:40]!r} {why}"
        return None

    @_mapped
    def load(self) -> ResultStore:
        """Read every committed row of the scope (another process's too); move the ones that fail their
        checks to the ``rejected`` table. Returns self."""
        con = self._connect()
        found = con.execute("SELECT seq, key, data FROM rows WHERE scope = ? ORDER BY seq", (self.scope,)).fetchall()
        rows: dict[str, dict[str, str]] = {}
        bad: list[tuple[int, Any, Any, str]] = []
        for seq, key, data in found:
            row, why = _decode(key, data)
            if row is not None:
                why = self._row_problem(row)
            if why or row is None:
                bad.append((seq, key, data, why or "invalid"))
                continue
            rows[key] = row
        self.rows = rows
        self.rejected, self.rejected_reasons = 0, Counter()
        if bad:
            self._reject(con, bad)
        self.columns = self._columns()
        return self

    def _columns(self) -> list[str]:
        cols: dict[str, None] = {}
        if self.rows:
            cols[KEY] = None
        for r in self.rows.values():
            for c in r:
                cols.setdefault(c, None)
        return list(cols)

    def _reject(self, con: sqlite3.Connection, bad: list[tuple[int, Any, Any, str]], warn: bool = True) -> None:
        """Move ``bad`` rows (seq, key, data, reason) to the rejected table in one transaction, then warn once
        (``warn``: rows that failed their checks; not for rows set aside on purpose, :meth:`remove`)."""
        now = _now()
        try:
            con.execute("BEGIN IMMEDIATE")
            for seq, key, data, why in bad:
                text = data.decode("utf-8", "backslashreplace") if isinstance(data, bytes) else str(data)
                gone = con.execute("DELETE FROM rows WHERE seq = ?", (seq,)).rowcount
                if gone:  # another process may have moved it already
                    con.execute(
                        "INSERT INTO rejected (scope, key, reason, data, rejected_at) VALUES (?, ?, ?, ?, ?)",
                        (self.scope, str(key), why, text, now),
                    )
            con.execute("COMMIT")
        except sqlite3.Error as e:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise StoreError(
                f"{len(bad)} row(s) of {str(self.db)!r} cannot be trusted and cannot be moved aside: {e}"
            ) from None
        self._export_rejected(con)
        if not warn:
            return
        self.rejected = len(bad)
        self.rejected_reasons = Counter(why.split(":")[0].split(" (")[0] for *_, why in bad)
        if self.warn:
            counts = ", ".join(f"{n} {why}" for why, n in self.rejected_reasons.most_common())
            warnings.warn(
                f"{self.path}: {len(bad)} row(s) of {self.db} moved to its rejected table and "
                f"{self.rejected_path} ({counts}); they are computed again",
                RejectedRowsWarning,
                stacklevel=3,
            )

    def _export_rejected(self, con: sqlite3.Connection) -> None:
        rej = con.execute(
            "SELECT rejected_at, reason, key, data FROM rejected WHERE scope = ? ORDER BY id", (self.scope,)
        ).fetchall()
        try:
            write_text(self.rejected_path, _line(REJECTED_COLUMNS) + "".join(_line(r) for r in rej))
        except (OSError, ValueError) as e:  # the table holds them; the CSV listing is a convenience
            warnings.warn(f"cannot write {self.rejected_path}: {e}", RejectedRowsWarning, stacklevel=4)

    def keys(self) -> set[str]:
        return set(self.rows)

    def __contains__(self, key: object) -> bool:
        return key in self.rows

    def __len__(self) -> int:
        return len(self.rows)

    @_mapped
    def committed(self, key: str) -> bool:
        """Whether a row of ``key`` is committed now (by any process); cheaper than :meth:`load`."""
        con = self._connect()
        return con.execute("SELECT 1 FROM rows WHERE scope = ? AND key = ?", (self.scope, key)).fetchone() is not None

    def text(self, keys: Iterable[str] | None = None) -> str:
        """The accepted rows (optionally only ``keys``) as canonical CSV text (header first)."""
        rows = self.rows.values() if keys is None else [self.rows[k] for k in keys if k in self.rows]
        return _line(self.columns) + "".join(_line(r.get(c, "") for c in self.columns) for r in rows)

    def frame(self, keys: Iterable[str] | None = None) -> pd.DataFrame:
        """The rows (optionally only ``keys``, in that order) as a DataFrame with parsed types.

        Built from the validated rows in memory, so a ``num`` column is numeric whatever was stored.
        """
        if not self.columns:
            return pd.DataFrame(columns=[KEY])
        df = pd.read_csv(io.StringIO(self.text()), dtype={KEY: str}, keep_default_na=True)
        if keys is not None:
            keys = [k for k in keys if k in self.rows]
            df = df.set_index(KEY).loc[keys].reset_index()
        return df.reset_index(drop=True)

    # ---- writing ----------------------------------------------------------------------
    @_mapped
    def append(self, row: dict[str, Any]) -> bool:
        """Commit one row (one transaction). ``row`` must hold ``key``. Returns False when a row of
        that key was committed already (by this or another process): the first one stands.

        Raises:
            ValueError: no key, or a row that loading would reject (the reason given).
            OSError: the database cannot be written (a full disk: ``ENOSPC``); nothing is committed.
        """
        if KEY not in row or not _cell(row[KEY]).strip():
            raise ValueError(f"a result row needs a non-empty '{KEY}'")
        text_row = {k: _cell(v) for k, v in row.items()}
        why = self._row_problem(text_row)
        if why:
            raise ValueError(f"row {text_row[KEY][:16]} would be rejected on reading: {why}")
        key = text_row[KEY]
        data = json.dumps({k: v for k, v in text_row.items() if k != KEY}, ensure_ascii=False)
        con = self._connect()
        try:
            cur = con.execute(
                "INSERT INTO rows (scope, key, data, created_utc) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (scope, key) DO NOTHING",
                (self.scope, key, data, _now()),
            )
            inserted = cur.rowcount == 1
            if not inserted:
                old = con.execute("SELECT data FROM rows WHERE scope = ? AND key = ?", (self.scope, key)).fetchone()
                stored, _ = _decode(key, old[0]) if old else (None, None)
        except sqlite3.OperationalError as e:
            raise OSError(f"cannot commit a row to {self.db}: {e}") from None
        if inserted:
            self._remember(key, text_row)
        elif stored is not None and self._row_problem(stored) is None:
            self._remember(key, stored)
        return inserted

    def _remember(self, key: str, row: dict[str, str]) -> None:
        """Hold a committed, checked row in memory (:attr:`rows`, :attr:`columns`) as :meth:`load` would."""
        self.rows[key] = row
        for c in row:
            if c not in self.columns:
                self.columns = self.columns or [KEY]
                if c not in self.columns:
                    self.columns.append(c)

    @_mapped
    def adopt(self, keys: Iterable[str]) -> dict[str, str]:
        """Copy into this scope the rows of ``keys`` that another scope of the same database holds, so that
        a result is computed once whatever scope (scan name) asked for it first. Returns ``{key: the scope it
        was copied from}`` for every key copied.

        A key is copied only when this scope lacks it and a row of it elsewhere passes this store's checks
        (its JSON, ``kinds``, ``validate``: for scans, that the key is the hash of the row's own parameters
        and numerics version); rows that fail are left where they are, for their own scope to move aside.
        The row is copied as it was committed, values and provenance alike. All copies are one
        transaction (``BEGIN IMMEDIATE`` … ``COMMIT``): a kill leaves every copy or none; a key another
        process committed meanwhile keeps its first row (``UNIQUE(scope, key)``).

        Raises:
            OSError: the database cannot be written (a full disk); nothing is copied.
        """
        wanted = [k for k in dict.fromkeys(keys) if k not in self.rows]
        if not wanted:
            return {}
        con = self._connect()
        found: dict[str, tuple[str, str, dict[str, str]]] = {}  # key -> (scope, data, row), the first good one
        for i in range(0, len(wanted), _CHUNK):
            part = wanted[i : i + _CHUNK]
            marks = ",".join("?" * len(part))
            cur = con.execute(
                f"SELECT key, scope, data FROM rows WHERE scope != ? AND key IN ({marks}) ORDER BY seq",  # noqa: S608
                (self.scope, *part),
            )
            for key, scope, data in cur.fetchall():
                if key in found:
                    continue
                row, why = _decode(key, data)
                if row is not None and self._row_problem(row) is None:
                    found[key] = (scope, data, row)
        if not found:
            return {}
        copied: dict[str, str] = {}
        try:
            con.execute("BEGIN IMMEDIATE")
            for key, (scope, data, _) in found.items():
                cur = con.execute(
                    "INSERT INTO rows (scope, key, data, created_utc) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (scope, key) DO NOTHING",
                    (self.scope, key, data, _now()),
                )
                if cur.rowcount == 1:
                    copied[key] = scope
            con.execute("COMMIT")
        except sqlite3.OperationalError as e:
            raise OSError(f"cannot copy rows within {self.db}: {e}") from None
        finally:
            if con.in_transaction:
                con.execute("ROLLBACK")
        for key in copied:
            self._remember(key, found[key][2])
        return copied

    @_mapped
    def remove(self, keys: Iterable[str], reason: str = "set aside to be computed again (--fresh)") -> int:
        """Move the rows of ``keys`` to the ``rejected`` table with ``reason`` (a command's ``--fresh``, a
        replaced result), one transaction: nothing stored is ever deleted, the rows stay readable there
        and in ``<name>.rejected.csv``. Returns how many went."""
        keys = list(dict.fromkeys(keys))
        con = self._connect()
        found = []
        for k in keys:
            found += con.execute(
                "SELECT seq, key, data FROM rows WHERE scope = ? AND key = ?", (self.scope, k)
            ).fetchall()
        if found:
            self._reject(con, [(seq, key, data, reason) for seq, key, data in found], warn=False)
        self.load()
        return len(found)

    @_mapped
    def export(self) -> Path:
        """Write every accepted row of the scope (re-read from the database, so another process's rows
        too) to the CSV export, atomically (:mod:`theorydyn.infra.atomic`). Returns its path.

        Raises:
            OSError: the CSV cannot be written, or the database cannot record it (a full disk); the
                rows stay committed in the database.
            ValueError: the export path is a symbolic link or not a regular file.
        """
        self.load()
        try:
            self._connect().execute(
                "INSERT INTO exports (scope, path, written_utc) VALUES (?, ?, ?) ON CONFLICT (scope) "
                "DO UPDATE SET path = excluded.path, written_utc = excluded.written_utc",
                (self.scope, str(self.path), _now()),
            )
        except sqlite3.OperationalError as e:  # a full disk ("database or disk is full"), like append's
            raise OSError(f"cannot record the export in {self.db}: {e}") from None
        write_text(self.path, self.text() if self.rows else _line([KEY]))
        return self.path
