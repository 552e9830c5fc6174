"""Results reused by content: a scan computes only the points no scan of its results folder has stored.

A point's key is the hash of everything its numbers depend on (:func:`theorydyn.scan.grid.point_key`:
the setting, the solver options that act, the seed, the runner and the numerics version), never the
scan's name. Rows live in one database per results folder, one scope per scan name
(:mod:`theorydyn.infra.store`); :func:`reuse_stored` copies into a scan's scope the rows of its points
that another scope holds (:meth:`~theorydyn.infra.store.ResultStore.adopt`: checked as on reading, one
transaction) and the files of each point beside them (trajectories ``<key>.csv``, ``<key>_sim.csv``,
arrays ``<key>_A.npy`` …, copied atomically), so ``--name`` names the output files and nothing else.

>>> import tempfile
>>> from pathlib import Path
>>> from theorydyn.infra.store import ResultStore
>>> d = Path(tempfile.mkdtemp())
>>> ResultStore(d / "first.csv").append({"key": "k1", "T2": 5.0})
True
>>> reuse_stored(ResultStore(d / "second.csv"), ["k1", "k2"], d)
{'k1': 'first'}
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable
from pathlib import Path

from ..infra.atomic import write_with
from ..infra.store import ResultStore

#: The files a runner leaves beside a row (:mod:`theorydyn.scan.point`): ``<key><suffix>.csv`` / ``.npy``.
_FILE = re.compile(r"(?P<suffix>(?:_[A-Za-z0-9]+)*)\.(?:csv|npy)")


def point_files(folder: Path, key: str) -> list[Path]:
    """The files of the point ``key`` in a scan's folder: ``<key>.csv``, ``<key>_sim.csv``, ``<key>_A.npy`` …"""
    if not folder.is_dir():
        return []
    return sorted(
        f for f in folder.glob(f"{key}*") if f.is_file() and not f.is_symlink() and _FILE.fullmatch(f.name[len(key) :])
    )


def reuse_stored(store: ResultStore, keys: Iterable[str], results_dir: str | Path) -> dict[str, str]:
    """Copy into ``store``'s scope the rows of ``keys`` stored under another scan name of the same
    database, and each copied point's files from ``results_dir/<that name>/`` to
    ``results_dir/<this name>/`` (each atomically; one already there is kept). Returns ``{key: the scan
    name it came from}``.

    Raises:
        OSError: the database or a file cannot be written (a full disk); the rows copied before stay.
    """
    copied = store.adopt(keys)
    results_dir = Path(results_dir)
    here = results_dir / store.scope
    for key, scope in copied.items():
        for src in point_files(results_dir / scope, key):
            dest = here / src.name
            if not dest.exists():
                write_with(dest, _copier(src))
    return copied


def _copier(src: Path):
    """A writer (:func:`theorydyn.infra.atomic.write_with`) copying ``src`` into the temporary file."""

    def copy(tmp: Path) -> None:
        shutil.copyfile(src, tmp)

    return copy


def reused_text(copied: dict[str, str]) -> str:
    """'4 from scan D32_C4_q0.3-0.5-0.7' (the count per scan it came from), or '' when nothing was reused."""
    counts: dict[str, int] = {}
    for scope in copied.values():
        counts[scope] = counts.get(scope, 0) + 1
    return ", ".join(f"{n} from scan {scope}" for scope, n in sorted(counts.items(), key=lambda kv: -kv[1]))
