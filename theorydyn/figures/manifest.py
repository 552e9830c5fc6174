"""The figures' manifest: for each committed figure, what made it and what it shows.

``figures/manifest.json`` maps each figure name to one entry::

    {"file": "phases.svg", "sha256": "…",          # the file as written, hashed
     "command": "python -m theorydyn.figures phases --quick --format svg --out figures",
     "quick": true, "setting": {"D": 64, …},       # every size and seed the figure depends on
     "numbers": {"T0": 46.9, …},                   # the key numbers the figure shows
     "cost_s": 3.1, "cold": true, "load_avg_1m": 0.4, "cpus": 2,   # measured cost of compute + draw + save
     "regenerated_in_ci": true,                    # cost_s ≤ CI_MAX_SECONDS, measured cold
     "git_commit": "…", "git_dirty": false, "matplotlib": "3.9.2", "made_utc": "…",
     "note": "…"}                                  # optional: why an entry is not regenerated

``git_commit`` is the commit whose code drew the figure; ``git_dirty`` is True when tracked files differed
from it, and regenerating figures into ``figures/`` makes the tracked files themselves differ, so a
regeneration run from a clean commit reads dirty too. The committed figures are SVG
(:data:`COMMITTED_FORMAT`); the command writes PDF by default (:data:`DEFAULT_FORMAT`).

``tests/test_figures_manifest.py`` recomputes the numbers of every entry with
``regenerated_in_ci`` through the same code path and compares them with :func:`numbers_differ`, and
checks every committed file's hash against its entry, so a figure whose code, data or file changed without the
manifest (or the other way round) fails.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..infra.atomic import write_with
from ..infra.paths import committed_figures

#: A figure whose cold cost (compute + draw + save, measured on the machine that wrote the manifest)
#: is at most this many seconds is recomputed by the test suite; a dearer one is checked by hash only.
CI_MAX_SECONDS = 30.0

#: Relative tolerance of the recomputed numbers on the host that made the entry (its ``host``, see
#: :func:`theorydyn.infra.provenance.numerics_host`: CPU family, model and flags, BLAS kernels, library
#: versions). The figures are seeded (same seed, same numbers, bit-identical there); 1e-9 leaves room
#: for a different BLAS summation order only.
RTOL = 1e-9
#: The tolerance on another host than the one that made the entry (entries without ``host`` count as
#: another): its rounding (libm, the BLAS kernel OpenBLAS picks, the vector width Numba compiles for)
#: takes the reduced flow's adaptive solver (rtol 1e-7 per step) along other steps, and phase times
#: and fitted exponents then agree to ~1e-7 relative (measured 6.5e-8 between an AMD EPYC and an Intel
#: Xeon, 3e-8 between two hosts that both call themselves "AMD EPYC"); 1e-6 leaves the solver's global
#: error room, while a figure made stale by a change of the code moves by far more.
RTOL_OTHER_CPU = 1e-6

NAME = "manifest.json"
#: The format ``python -m theorydyn.figures`` writes unless told (``--format``): vector, for a paper.
DEFAULT_FORMAT = "pdf"
#: The format of the committed figures (``figures/*.svg``): vector, and shown inline by GitHub and the
#: docs (a PDF is not); remade with ``--out figures --format svg`` (:data:`COMMITTED_OUT`).
COMMITTED_FORMAT = "svg"
#: The ``--out`` of the committed figures, as their commands write it.
COMMITTED_OUT = "figures"


def sha256(path: str | Path) -> str:
    """The hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def jsonable(x: Any) -> Any:
    """``x`` with numpy scalars turned into Python numbers, tuples into lists and non-finite floats
    into None (JSON has no NaN), recursively; dict keys become strings."""
    if isinstance(x, Mapping):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if hasattr(x, "item") and callable(x.item) and getattr(x, "ndim", 0) == 0:  # numpy scalar
        x = x.item()
    if isinstance(x, bool) or x is None or isinstance(x, (int, str)):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    raise TypeError(f"not a manifest value: {type(x).__name__} {x!r}")


def numbers_differ(expected: Any, got: Any, rtol: float = RTOL, where: str = "") -> list[str]:
    """Every place where ``got`` differs from ``expected`` (both :func:`jsonable`): floats beyond
    ``rtol`` relative (|a − b| ≤ rtol·max(|a|, |b|), so 0 only equals 0), anything else exactly.
    Returns human-readable lines, empty when they agree."""
    if isinstance(expected, dict) and isinstance(got, dict):
        out = [f"{where}.{k}: missing" for k in expected if k not in got]
        out += [f"{where}.{k}: unexpected" for k in got if k not in expected]
        for k in expected:
            if k in got:
                out += numbers_differ(expected[k], got[k], rtol, f"{where}.{k}")
        return out
    if isinstance(expected, list) and isinstance(got, list):
        if len(expected) != len(got):
            return [f"{where}: {len(expected)} items in the manifest, {len(got)} recomputed"]
        return [
            d
            for i, (a, b) in enumerate(zip(expected, got, strict=True))
            for d in numbers_differ(a, b, rtol, f"{where}[{i}]")
        ]
    num = (int, float)
    if (
        isinstance(expected, num)
        and isinstance(got, num)
        and not isinstance(expected, bool)
        and not isinstance(got, bool)
    ):
        if abs(expected - got) <= rtol * max(abs(expected), abs(got)):
            return []
        return [f"{where}: manifest {expected!r}, recomputed {got!r}"]
    return [] if expected == got else [f"{where}: manifest {expected!r}, recomputed {got!r}"]


def load(path: str | Path) -> dict[str, dict]:
    """The manifest at ``path`` ({} when there is none yet).

    Raises:
        ValueError: the file is not a JSON object of entries.
    """
    path = Path(path)
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ValueError(f"{path}: not a figures manifest (a JSON object of entries)")
    return data


def load_or_committed(out: str | Path) -> dict[str, dict]:
    """The manifest of the folder ``out``; where ``out`` has none yet, the checkout's committed one
    (:func:`theorydyn.infra.paths.committed_figures`), whose measured costs give a first run its ETA.

    Raises:
        ValueError: the file is not a JSON object of entries (:func:`load`).
    """
    path = Path(out) / NAME
    shipped = committed_figures()
    if not path.is_file() and shipped is not None:
        path = shipped / NAME
    return load(path)


def keep_cold_cost(old: Mapping[str, Any] | None, entry: dict) -> dict:
    """``entry`` (a figure just made) with the measured cold cost of ``old`` (its earlier entry) where
    ``entry`` ran warm: a warm run (cached inputs) says nothing about the cold cost."""
    if not entry["cold"] and old is not None and old.get("cold") and old.get("cost_s") is not None:
        entry.update(
            cost_s=old["cost_s"],
            load_avg_1m=old["load_avg_1m"],
            cold=True,
            regenerated_in_ci=old["regenerated_in_ci"],
        )
    return entry


def dumps(manifest: Mapping[str, Mapping]) -> str:
    """The manifest's JSON text, entries sorted by name (a stable diff)."""
    return json.dumps(jsonable(dict(sorted(manifest.items()))), indent=1, ensure_ascii=False) + "\n"


def save(path: str | Path, manifest: Mapping[str, Mapping]) -> Path:
    """Write the manifest atomically (:mod:`theorydyn.infra.atomic`)."""
    text = dumps(manifest)
    write_with(Path(path), lambda t: Path(t).write_text(text))
    return Path(path)
