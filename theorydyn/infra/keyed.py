"""The one keyed-store helper: every client of the results store (scan points, the ledger's claims, the
transfer rows, the cached vision runs) keys, checks, reads and writes its rows through it.

A client declares three things:

* **what determines its numbers**: a JSON-able *payload* (a scan point's setting, options, seed,
  runner and numerics version; a claim's setting, options and code fingerprint; …). The key of a row
  is :func:`theorydyn.infra.keys.content_key` of it, the sha256 of its canonical JSON;
* **where a row keeps its payload**: a column holding its canonical JSON (``payload_column``), or a
  function that rebuilds it from the row (``payload_of``: the scans write their parameters as columns);
* **what else a row must satisfy**: ``stale(row)`` (checked first: a row written by other numerics is
  *stale*, whatever else it holds) and ``check(row, payload)`` (its values).

One validation, in this order, on every row read (and on every row before it is written)::

    stale(row)                         -> the client's reason ("stale: …")
    payload = payload_of(row)          -> "invalid: no column 'x'" / "invalid: <why it does not parse>"
    content_key(payload) != row["key"] -> "key mismatch: the key is not the hash of the row's parameters"
    check(row, payload)                -> the client's reason ("invalid: …")

One invalidation rule (:func:`theorydyn.infra.keys.payload_problem`): an entry is reused only when the
payload it was made from is exactly the one asked for. Here that holds by construction: rows are
looked up by the key of the wanted payload, and a row whose key is not the hash of its own payload is
moved to the store's ``rejected`` table on loading (:class:`~theorydyn.infra.store.RejectedRowsWarning`)
and computed again. A damaged database is refused with :class:`~theorydyn.infra.store.StoreDamaged`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from .keys import canonical_json, content_key
from .store import KEY, ResultStore

#: ``payload_of(row) -> payload``: the payload a stored row (text by column) was made from; raises
#: KeyError (a column missing) or ValueError / TypeError (it does not parse).
PayloadOf = Callable[[dict[str, str]], Mapping[str, Any]]
#: ``check(row, payload) -> reason | None``: a client's checks of a row's values.
Check = Callable[[dict[str, str], Mapping[str, Any]], "str | None"]
#: ``stale(row) -> reason | None``: checked before anything else.
Stale = Callable[[dict[str, str]], "str | None"]

KEY_MISMATCH = "key mismatch: the key is not the hash of the row's parameters"


def json_column(column: str) -> PayloadOf:
    """``payload_of`` of rows that keep their payload as canonical JSON in ``column``."""

    def payload_of(row: dict[str, str]) -> Mapping[str, Any]:
        p = json.loads(row[column])
        if not isinstance(p, dict):
            raise ValueError(f"{column} is not a JSON object")
        return p

    return payload_of


def version_stale(column: str, field: str, current: int) -> Stale:
    """``stale`` of rows whose payload (canonical JSON in ``column``) records the version of the code's
    numerics as ``field``: another version is ``stale: <field>=<v>, current <current>`` (a payload that
    does not parse is left to the key check)."""

    def stale(row: dict[str, str]) -> str | None:
        try:
            p = json.loads(row[column])
        except (KeyError, ValueError):
            return None
        if isinstance(p, dict) and p.get(field) != current:
            return f"stale: {field}={p.get(field)}, current {current}"
        return None

    return stale


def row_problem(
    row: dict[str, str], payload_of: PayloadOf, stale: Stale | None = None, check: Check | None = None
) -> str | None:
    """Why a stored row cannot be trusted, or None: the one validation (module docstring), in its order."""
    why = stale(row) if stale is not None else None
    if why:
        return why
    try:
        payload = payload_of(row)
        if content_key(payload) != row.get(KEY):
            return KEY_MISMATCH
    except KeyError as e:
        return f"invalid: no column {e.args[0]!r}"
    except (ValueError, TypeError, AttributeError) as e:  # JSON errors (and a scan's ScanError) are ValueErrors
        return f"invalid: {e}"
    return check(row, payload) if check is not None else None


class KeyedStore(ResultStore):
    """A :class:`~theorydyn.infra.store.ResultStore` scope whose rows are keyed by the content hash of
    their payload and checked by the one validation (module docstring).

    Args:
        path: as :class:`~theorydyn.infra.store.ResultStore`; ``store``: its keywords (``kinds``, ``warn``,
            ``db``, ``scope``, ``create``), passed on as they are.
        payload_column: the column holding the payload's canonical JSON (written by :meth:`put`).
        payload_of: how to rebuild the payload from a row, when it is not kept in one column.
        stale, check: the client's checks (module docstring).

    Raises:
        ValueError: neither or both of ``payload_column`` and ``payload_of``.
        theorydyn.infra.store.StoreError, StoreDamaged: as the store.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        payload_column: str | None = None,
        payload_of: PayloadOf | None = None,
        stale: Stale | None = None,
        check: Check | None = None,
        **store: Any,
    ):
        if (payload_column is None) == (payload_of is None):
            raise ValueError("KeyedStore: give exactly one of payload_column and payload_of")
        self.payload_column = payload_column
        self.payload_of = payload_of if payload_of is not None else json_column(str(payload_column))
        self.stale, self.check = stale, check
        super().__init__(path, validate=self.problem, **store)

    @staticmethod
    def key(payload: Mapping[str, Any]) -> str:
        """The key of ``payload``: :func:`theorydyn.infra.keys.content_key`."""
        return content_key(payload)

    def problem(self, row: dict[str, str]) -> str | None:
        """Why a stored row cannot be trusted, or None: the one validation (:func:`row_problem`)."""
        return row_problem(row, self.payload_of, self.stale, self.check)

    def get(self, payload: Mapping[str, Any]) -> dict[str, str] | None:
        """The checked row made from ``payload`` (text by column), or None: absent, or rejected on loading."""
        return self.rows.get(content_key(payload))

    def row(self, payload: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
        """The row :meth:`put` commits: ``values`` under the key of ``payload`` (its canonical JSON in
        ``payload_column`` when the store keeps it there)."""
        out: dict[str, Any] = {KEY: content_key(payload), **values}
        if self.payload_column is not None:
            out[self.payload_column] = canonical_json(dict(payload))
        return out

    def put(self, payload: Mapping[str, Any], values: Mapping[str, Any]) -> bool:
        """Commit ``values`` under the key of ``payload`` (one transaction); False when that key was
        committed already (the first row stands).

        Raises:
            ValueError: the row would be rejected on reading (the reason given).
            OSError: the database cannot be written.
        """
        return self.append(self.row(payload, values))

    def replace(self, payload: Mapping[str, Any], values: Mapping[str, Any]) -> bool:
        """:meth:`put`, first removing a stored row of the same key (two transactions: a kill between
        them leaves the entry absent, computed again, never torn)."""
        key = content_key(payload)
        if key in self:
            self.remove([key])
        return self.put(payload, values)

    def forget(self, payloads: Iterable[Mapping[str, Any]]) -> int:
        """Remove the rows of ``payloads`` (``--recompute``); how many went."""
        return self.remove(content_key(p) for p in payloads)


__all__ = ["KEY_MISMATCH", "KeyedStore", "json_column", "row_problem", "version_stale"]
