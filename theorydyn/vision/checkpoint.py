"""A training run's files, checked: ``checkpoint.pt`` with its sha256 recorded beside it, and ``history.csv``.

Every file is written atomically (:mod:`theorydyn.infra.atomic`: a unique fsynced temporary renamed over the
target, never through a symbolic link). ``checkpoint.pt`` has its sha256 recorded beside it in
``checkpoint.pt.sha256`` (:func:`save_checkpoint`); :func:`load_checkpoint` verifies it before any use, and a
checkpoint that does not match (or cannot be read) is moved aside to ``checkpoint.pt.damaged-<UTC time>``
with a :class:`CheckpointWarning`, so the run is trained again from scratch. ``history.csv`` is read back
through :func:`read_history`, which compares it with the verified checkpoint's history and rewrites it from
there when it is torn. The training loop that writes them: :mod:`theorydyn.vision.train`.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import pickle
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..infra.atomic import write_bytes, write_text, write_with

CHECKPOINT = "checkpoint.pt"
HISTORY = "history.csv"
#: the columns of a history row, in order (the CSV's header)
HISTORY_COLUMNS = ("epoch", "train_loss", "test_acc", "lr", "images_per_s", "seconds")


class CheckpointWarning(UserWarning):
    """A checkpoint or a history failed its check: moved aside and trained again, or rewritten."""


def write_history(history: list[dict], out: Path) -> None:
    """``out/history.csv`` from a run's history rows, written atomically."""
    write_with(out / HISTORY, lambda t: pd.DataFrame(history).to_csv(t, index=False))


def _hash_path(ckpt: Path) -> Path:
    return ckpt.with_name(ckpt.name + ".sha256")


def _recorded(ckpt: Path) -> list[str] | None:
    """The sha256 hex digests recorded for ``ckpt`` (None: no record; ``[]``: an unreadable one)."""
    side = _hash_path(ckpt)
    if not side.exists() and not side.is_symlink():
        return None
    try:
        if side.is_symlink():
            return []
        lines = side.read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError):
        return []
    return [h for h in lines if len(h) == 64 and all(c in "0123456789abcdef" for c in h)]


def save_checkpoint(ckpt: str | Path, state: dict) -> str:
    """Write ``state`` (``torch.save``) to ``ckpt`` atomically with its sha256 recorded beside it;
    return the digest.

    Order, so that a kill at any moment leaves a checkpoint matching its record: the record first
    lists the new digest and the current checkpoint's, then the checkpoint is replaced, then the record
    keeps only the new digest. Serialising into memory first makes a full disk a plain
    ``OSError(ENOSPC)`` naming the file from the atomic writer (which removes its temporary), not
    torch's ``RuntimeError`` with a temporary left behind.
    """
    ckpt = Path(ckpt)
    buf = io.BytesIO()
    torch.save(state, buf)
    data = buf.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    old = (_recorded(ckpt) or [])[:1] if ckpt.exists() else []
    write_text(_hash_path(ckpt), "\n".join(dict.fromkeys([digest, *old])) + "\n")
    write_bytes(ckpt, data)
    write_text(_hash_path(ckpt), digest + "\n")
    return digest


def _move_aside(ckpt: Path, why: str) -> None:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    n, dest = 1, ckpt.with_name(f"{ckpt.name}.damaged-{stamp}")
    while dest.exists():
        n += 1
        dest = ckpt.with_name(f"{ckpt.name}.damaged-{stamp}-{n}")
    try:
        ckpt.replace(dest)
        where = f"moved to {dest.name}"
    except OSError as e:
        where = f"cannot be moved aside ({e.strerror or e}); it will be overwritten"
    with contextlib.suppress(OSError):
        _hash_path(ckpt).unlink()
    warnings.warn(f"{ckpt}: {why}; {where}, the run is trained again from scratch", CheckpointWarning, stacklevel=3)


def checked_state(ckpt: Path, map_location) -> tuple[dict | None, bool]:
    """(the verified state or None, whether a damaged checkpoint was moved aside)."""
    if not ckpt.exists() and not ckpt.is_symlink():
        return None, False
    if ckpt.is_symlink() or not ckpt.is_file():
        _move_aside(ckpt, "is a symbolic link or not a regular file")
        return None, True
    data = ckpt.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    recorded = _recorded(ckpt)
    if recorded is not None and digest not in recorded:
        why = "its sha256 does not match the one recorded" if recorded else "its recorded sha256 is unreadable"
        _move_aside(ckpt, f"{why} in {_hash_path(ckpt).name} (damaged)")
        return None, True
    try:
        state = torch.load(io.BytesIO(data), map_location=map_location, weights_only=True)
        if not isinstance(state, dict) or not {"model", "opt", "history", "epoch", "record"} <= set(state):
            raise ValueError("not a training checkpoint")
    except pickle.UnpicklingError:  # a pickle that would run code: not damage, refused as it is
        raise
    except Exception as e:  # noqa: BLE001 — a torn zip raises RuntimeError, EOFError, ValueError …
        _move_aside(ckpt, f"cannot be read ({type(e).__name__}: {str(e)[:120]})")
        return None, True
    if recorded is None:  # written before hashes were recorded: readable, so its digest is recorded now
        with contextlib.suppress(OSError, ValueError):
            write_text(_hash_path(ckpt), digest + "\n")
    return state, False


def load_checkpoint(ckpt: str | Path, map_location="cpu") -> dict | None:
    """The state of ``ckpt`` after its sha256 is checked against ``ckpt.sha256``; None when there is
    none, or when it is damaged (moved aside to ``<name>.damaged-<UTC time>`` with a
    :class:`CheckpointWarning`). A checkpoint without a record (written before records existed) is
    accepted when it loads, and its digest recorded from then on."""
    return checked_state(Path(ckpt), map_location)[0]


def history_problem(path: Path, history: list[dict] | None) -> str | None:
    """Why ``path`` (a run's ``history.csv``) cannot be plotted, or None: it must be a regular file
    (not a link) with the columns :data:`HISTORY_COLUMNS`, epochs 1, 2, …, n, finite losses and
    accuracies, and, given the checkpoint's ``history``, the same n rows and values (to 1e-12
    relative: the CSV holds each float's repr, read back by pandas' parser)."""
    if path.is_symlink() or not path.is_file():
        return "is a symbolic link or not a regular file" if path.is_symlink() else "is missing"
    try:
        df = pd.read_csv(path)
    except Exception as e:  # noqa: BLE001 — a torn CSV raises ParserError, EmptyDataError, UnicodeError …
        return f"cannot be read ({type(e).__name__})"
    if tuple(df.columns) != HISTORY_COLUMNS:
        return f"has columns {list(df.columns)}, not {list(HISTORY_COLUMNS)}"
    try:
        values = df.to_numpy(dtype=float)
    except (TypeError, ValueError):
        return "holds a cell that is not a number"
    if not np.array_equal(values[:, 0], np.arange(1, len(df) + 1)):
        return "its epochs are not 1, 2, …, n"
    if history is not None:
        ref = pd.DataFrame(history, columns=list(HISTORY_COLUMNS)).to_numpy(dtype=float)
        if ref.shape != values.shape:
            return f"holds {len(values)} epoch(s), its checkpoint {len(ref)} (torn)"
        if not np.allclose(values, ref, rtol=1e-12, atol=0.0, equal_nan=True):
            return "differs from its checkpoint's history"
    elif not np.isfinite(values[:, 1:3]).all():
        return "holds a NaN or infinite loss or accuracy"
    return None


def read_history(folder: str | Path) -> pd.DataFrame:
    """A trained run's ``history.csv``, checked by :func:`history_problem` against its verified
    checkpoint; a torn one (cut, rows missing, NaN cells) is rewritten from the checkpoint's history
    with a :class:`CheckpointWarning` and then read, never plotted as it was.

    Raises:
        ValueError: the history is bad and there is no valid checkpoint to rewrite it from (train the
            run again), or ``history.csv`` is a symbolic link (never written through).
    """
    folder = Path(folder)
    path = folder / HISTORY
    state = load_checkpoint(folder / CHECKPOINT)
    why = history_problem(path, None if state is None else state["history"])
    if why is not None:
        if state is None:
            raise ValueError(f"{path}: {why}, and no valid checkpoint to recompute it from; train the run again")
        write_history(state["history"], folder)  # refuses a link (ValueError), leaving its target as it was
        warnings.warn(f"{path}: {why}; rewritten from the checkpoint's history", CheckpointWarning, stacklevel=2)
    return pd.read_csv(path)
