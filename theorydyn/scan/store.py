"""A crash-safe, append-only CSV of scan results, one row per point, keyed by the point's hash.

Guarantees (what a ``kill -9`` or a power cut at any moment can and cannot do):

* A row is appended as **one** ``os.write`` of one complete ``\\n``-terminated line to a file
  opened with ``O_APPEND``, followed by ``fsync``. A killed process therefore leaves either the
  whole line or, at worst (power loss mid-write), a torn last line with no ``\\n``.
* A row with a column the header lacks makes the file be rewritten (temporary file, ``fsync``,
  ``os.replace``: atomic) with the union of the columns.

What loading accepts (and what it does with the rest). Every line after the header is checked,
and a line is *rejected* when

* it is torn (the last line, without ``\\n``), not UTF-8, holds a NUL byte or a carriage
  return, is not one CSV record (an unterminated quote, text after a closing quote), has a
  field count different from the header's, or an empty key;
* a column of a declared kind does not parse (``kinds``: ``"num"`` a number or empty,
  ``"bool"`` ``True``/``False`` or empty) — so a summary can never meet text in a number column;
* the caller's ``validate(row)`` returns a reason (the scan's validator checks that the key is
  the hash of the row's own parameters and that the row was written by the current numerics:
  :func:`theorydyn.scan.grid.row_problem`).

Rejected lines are appended to ``<name>.rejected.csv`` (columns ``rejected_at, reason, line``;
the raw line, undecodable bytes as ``\\xNN``) *before* the results file is rewritten without
them (a crash between the two can leave a line in both files, never in neither), so no line is
ever lost, and the load emits **one** :class:`RejectedRowsWarning` with the
count per reason (also in ``store.rejected`` / ``store.rejected_reasons``). A rejected line is
checked before de-duplication, so it can never replace a valid row of the same key; of two
*valid* rows with the same key the later one stands (a recomputation). No content of the file
can make loading raise; only a file that cannot be a results file at all (a directory, an
unreadable file, a first line that is not a header with a ``key`` column) raises
:class:`StoreError`, a ``ValueError`` naming the path, before anything is touched; so does a
rejected file that cannot be written (the results file is then left as it was).

Only one process writes a given store at a time (the scan's driver); workers return their
rows to it. Values must not contain newlines (they are replaced by spaces).
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
import warnings
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import pandas as pd

KEY = "key"
REJECTED_SUFFIX = ".rejected.csv"
REJECTED_COLUMNS = ("rejected_at", "reason", "line")
KINDS = ("num", "bool", "str")

#: How ``_cell`` writes numbers: int ``str`` and float ``repr`` (``inf``, ``-inf``; NaN is empty).
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf")

Validator = Callable[[dict[str, str]], "str | None"]


class StoreError(ValueError):
    """The path cannot hold a results file (a directory, unreadable, a first line that is no header)."""


class RejectedRowsWarning(UserWarning):
    """Lines of a results file were moved to its ``.rejected.csv`` (the message gives the counts)."""


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
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _append_durably(path: Path, data: bytes) -> None:
    """One ``O_APPEND`` write of ``data`` (whole lines), then ``fsync``."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:  # a regular file takes it in one write; loop for the letter of POSIX
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    finally:
        os.close(fd)


def kind_problem(kind: str, value: str) -> str | None:
    """Why the text ``value`` is not of ``kind`` (``"num"``, ``"bool"``, ``"str"``), or None. Empty is missing: fine."""
    if value == "" or kind == "str":
        return None
    if kind == "num":
        return None if _NUMBER.fullmatch(value) else "is not a number"
    if kind == "bool":
        return None if value in ("True", "False") else "is not True/False"
    raise ValueError(f"kinds: unknown kind {kind!r}; use one of {KINDS}")


def parse_line(raw: bytes, header: list[str]) -> tuple[dict[str, str] | None, str | None]:
    """One line (without its ``\\n``) as a row of ``header``, or (None, reason)."""
    if b"\x00" in raw:
        return None, "NUL byte"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8"
    if text.endswith("\r"):  # a CRLF file: tolerate the line end, not a CR inside
        text = text[:-1]
    if "\r" in text:
        return None, "carriage return inside the line"
    if not text.strip():
        return None, "blank line"
    try:
        records = list(csv.reader([text], strict=True))
    except csv.Error as e:
        return None, f"not one CSV record ({e})"
    if len(records) != 1:
        return None, "not one CSV record"
    fields = records[0]
    if len(fields) != len(header):
        return None, f"wrong field count ({len(fields)}, the header has {len(header)})"
    row = dict(zip(header, fields))
    if row == dict(zip(header, header)):
        return None, "repeated header"
    if not row[KEY].strip():
        return None, "empty key"
    return row, None


class ResultStore:
    """The results of one scan: ``path`` is its CSV file (created on first append).

    Args:
        path: the CSV file.
        validate: ``validate(row) -> reason | None`` on each row (text values by column);
            a row with a reason is rejected (module docstring). Also applied to appended rows.
        kinds: column → ``"num"`` / ``"bool"`` / ``"str"``; columns not named are not checked.
        warn: emit a :class:`RejectedRowsWarning` when a load rejects lines.

    Raises:
        StoreError: ``path`` cannot be a results file (module docstring).
    """

    def __init__(self, path: str | Path, validate: Validator | None = None,
                 kinds: Mapping[str, str] | None = None, warn: bool = True):
        self.path = Path(path)
        self.validate = validate
        self.kinds = dict(kinds or {})
        for c, k in self.kinds.items():
            if k not in KINDS:
                raise ValueError(f"kinds: column {c!r} has unknown kind {k!r}; use one of {KINDS}")
        self.warn = warn
        self.columns: list[str] = []
        self.rows: dict[str, dict[str, str]] = {}  # key → row (as text), insertion-ordered
        self.dropped = 0  # lines dropped by the last load and not yet rewritten (0 after a load)
        self.rejected = 0  # lines the last load moved to the rejected file
        self.rejected_reasons: Counter[str] = Counter()
        self.compacted = 0  # valid rows the last load replaced by a later row of the same key
        self.load()

    @property
    def rejected_path(self) -> Path:
        """``<name>.rejected.csv`` next to the results file."""
        name = self.path.name[:-4] if self.path.name.endswith(".csv") else self.path.name
        return self.path.with_name(name + REJECTED_SUFFIX)

    # ---- reading ----------------------------------------------------------------------
    def _read(self) -> bytes | None:
        if self.path.is_dir():
            raise StoreError(f"results file {str(self.path)!r} is a directory")
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise StoreError(f"results file {str(self.path)!r} cannot be read: {e.strerror or e}") from None

    def _header(self, raw: bytes) -> list[str]:
        what = f"{str(self.path)!r} is not a theorydyn results file"
        hint = "; move it away or choose another scan name / results directory"
        if b"\x00" in raw:
            raise StoreError(f"{what}: its first line holds NUL bytes{hint}")
        try:
            text = raw.decode("utf-8-sig").rstrip("\r")  # a byte-order mark (a spreadsheet's save) is fine
            header = next(csv.reader([text], strict=True))
        except (UnicodeDecodeError, csv.Error, StopIteration):
            raise StoreError(f"{what}: its first line is not a UTF-8 CSV header{hint}") from None
        if KEY not in header:
            raise StoreError(f"{what} (no '{KEY}' column in its first line){hint}")
        if len(set(header)) != len(header) or any(not h.strip() for h in header):
            raise StoreError(f"{what}: its header has empty or repeated column names{hint}")
        return header

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

    def load(self) -> "ResultStore":
        """Read the file; move what is not a valid row aside; rewrite it if anything went.

        Returns self. Raises StoreError only for a file that cannot be a results file.
        """
        self.columns, self.rows, self.dropped, self.compacted = [], {}, 0, 0
        self.rejected, self.rejected_reasons = 0, Counter()
        data = self._read()
        if not data:
            return self
        *lines, torn = data.split(b"\n")
        rejected: list[tuple[str, bytes]] = []
        if torn:
            rejected.append(("torn last line (no line end)", torn))
        if not lines:  # only a torn first line: no header was ever complete
            self._reject(rejected)
            self.path.unlink()
            return self
        header = self._header(lines[0])
        self.columns = header
        for raw in lines[1:]:
            row, why = parse_line(raw, header)
            if row is not None:
                why = self._row_problem(row)
            if why:
                rejected.append((why, raw))
                continue
            if row[KEY] in self.rows:
                self.compacted += 1
                del self.rows[row[KEY]]  # a valid recomputation: the later row stands, at the end
            self.rows[row[KEY]] = row
        if rejected or self.compacted:
            self.dropped = len(rejected) + self.compacted
            self._reject(rejected)
            try:
                self._rewrite()
            except OSError as e:  # e.g. a read-only directory: the file stays as it was
                raise StoreError(f"cannot rewrite results file {str(self.path)!r} without its "
                                 f"{len(rejected)} rejected line(s): {e.strerror or e}") from None
        return self

    def _reject(self, rejected: list[tuple[str, bytes]]) -> None:
        """Append the rejected lines to the rejected file (durably, first), then warn once."""
        if not rejected:
            return
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        rp = self.rejected_path
        head = "" if rp.is_file() and rp.stat().st_size > 0 else _line(REJECTED_COLUMNS)
        body = "".join(_line((now, why, raw.decode("utf-8", "backslashreplace").replace("\x00", "\\x00")))
                       for why, raw in rejected)
        try:
            if rp.is_dir():
                raise IsADirectoryError(21, "is a directory")
            _append_durably(rp, (head + body).encode("utf-8", "backslashreplace"))
        except OSError as e:  # then the results file is not rewritten either: nothing is lost
            raise StoreError(f"{len(rejected)} line(s) of {str(self.path)!r} cannot be trusted and cannot be moved "
                             f"to {str(rp)!r}: {e.strerror or e}") from None
        self.rejected = len(rejected)
        self.rejected_reasons = Counter(why.split(":")[0].split(" (")[0] for why, _ in rejected)
        if self.warn:
            counts = ", ".join(f"{n} {why}" for why, n in self.rejected_reasons.most_common())
            warnings.warn(f"{self.path}: {len(rejected)} line(s) moved to {rp} ({counts})",
                          RejectedRowsWarning, stacklevel=3)

    def keys(self) -> set[str]:
        return set(self.rows)

    def __contains__(self, key: str) -> bool:
        return key in self.rows

    def __len__(self) -> int:
        return len(self.rows)

    def text(self) -> str:
        """The accepted rows as canonical CSV text (header first)."""
        return _line(self.columns) + "".join(_line(r.get(c, "") for c in self.columns) for r in self.rows.values())

    def frame(self, keys: Iterable[str] | None = None) -> pd.DataFrame:
        """The rows (optionally only ``keys``, in that order) as a DataFrame with parsed types.

        Built from the validated rows in memory, never from the file, so whatever the file
        holds the frame has the columns' types (a ``num`` column is numeric).
        """
        if not self.columns:
            return pd.DataFrame(columns=[KEY])
        df = pd.read_csv(io.StringIO(self.text()), dtype={KEY: str}, keep_default_na=True)
        if keys is not None:
            keys = [k for k in keys if k in self.rows]
            df = df.set_index(KEY).loc[keys].reset_index()
        return df.reset_index(drop=True)

    # ---- writing ----------------------------------------------------------------------
    def append(self, row: dict[str, Any]) -> None:
        """Append one row durably (module docstring). ``row`` must hold ``key``.

        Raises:
            ValueError: no key, or a row that loading would reject (the reason given).
        """
        if KEY not in row or not _cell(row[KEY]).strip():
            raise ValueError(f"a result row needs a non-empty '{KEY}'")
        text_row = {k: _cell(v) for k, v in row.items()}
        why = self._row_problem({**{c: "" for c in self.columns}, **text_row})
        if why:
            raise ValueError(f"row {text_row[KEY][:16]} would be rejected on reading: {why}")
        new_cols = [k for k in row if k not in self.columns]
        if not self.path.exists() or new_cols:
            # A rewrite replaces the file: read it again first, so that a line this object has not
            # seen (another writer, a hand edit) is checked and kept or moved aside, never lost.
            self.load()
            new_cols = [k for k in row if k not in self.columns]
            if not self.columns:
                self.columns = [KEY] + [k for k in row if k != KEY]
            else:
                self.columns = self.columns + new_cols
            self.rows.pop(text_row[KEY], None)
            self.rows[text_row[KEY]] = text_row
            self._rewrite()
            return
        _append_durably(self.path, _line(text_row.get(c, "") for c in self.columns).encode())
        if text_row[KEY] in self.rows:  # a duplicate on disk until the next load compacts it
            del self.rows[text_row[KEY]]
        self.rows[text_row[KEY]] = text_row

    def remove(self, keys: Iterable[str]) -> int:
        """Forget the rows of ``keys`` (``--force``); atomic rewrite. Returns how many went."""
        keys = list(keys)
        self.load()  # as in append: the rewrite must not lose lines this object has not seen
        gone = [k for k in keys if k in self.rows]
        for k in gone:
            del self.rows[k]
        if gone:
            self._rewrite()
        return len(gone)

    def _rewrite(self) -> None:
        atomic_write_text(self.path, self.text())
        self.dropped = 0
