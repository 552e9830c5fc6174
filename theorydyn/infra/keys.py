"""The one key scheme of every stored result and of every hashed name: the sha256 of canonical JSON.

Light on purpose (``json`` and ``hashlib`` only): the command layer names its files with it
(:func:`theorydyn.infra.paths.run_name`) before any heavy import, and the results store
(:mod:`theorydyn.infra.store`) and its keyed clients (:mod:`theorydyn.infra.keyed`) key their rows
with it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, NaN refused: the same text for the same values everywhere."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=True)


def content_key(payload: Mapping[str, Any]) -> str:
    """The one key scheme: sha256 hex of the canonical JSON of ``payload`` (which must hold everything
    the row's numbers depend on, the numerics version included)."""
    return hashlib.sha256(canonical_json(dict(payload)).encode()).hexdigest()


#: The reason of an entry whose stored payload is not the one asked for (:func:`payload_problem`).
OTHER_PAYLOAD = "was made from other parameters"


def payload_problem(stored: str | Mapping[str, Any] | None, wanted: Mapping[str, Any]) -> str | None:
    """The one invalidation rule: an entry is reused only when the payload it was made from (its
    canonical JSON text, or the mapping) is exactly ``wanted``; otherwise :data:`OTHER_PAYLOAD` (the
    entry is recomputed, never silently reused). A content-keyed row meets it by construction (its key
    is the hash of its own payload, checked on loading, and it is looked up by the hash of ``wanted``);
    an entry found by name (a cache file) checks it here."""
    if stored is None:
        return OTHER_PAYLOAD
    text = stored if isinstance(stored, str) else canonical_json(dict(stored))
    return None if text == canonical_json(dict(wanted)) else OTHER_PAYLOAD
