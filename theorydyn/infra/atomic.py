"""Atomic output files: a reader, a kill or a full disk sees the old file or the new one, never a torn one.

Every file the toolkit writes (ledgers, trajectories, JSON summaries, caches, figures, checkpoints)
goes through :func:`atomic_path`: the content is written to a temporary file in the same folder,
flushed and ``fsync``-ed, then renamed over the target with ``os.replace`` (atomic on POSIX), and
the folder is ``fsync``-ed so that the rename itself survives a power cut. On any exception (a full
disk is ``OSError(ENOSPC)``) the temporary file is removed and the old file is left as it was.

The temporary file has a unique name (process id and 64 random bits: two threads or processes
writing the same target never share one) and is created exclusively. An ``OSError`` raised while
writing (``ENOSPC``, ``EDQUOT``, ``EIO``) is raised again as an ``OSError`` of the same errno whose
message names the target path (the temporary's name means nothing to the user).

A target that is a symbolic link is refused: the toolkit never writes through a link it did not
create (the rename would replace the link, not its target, which is what the user pointed at).

Starting over (a command's ``--fresh``) never overwrites either: :func:`set_aside` renames an earlier
output (a file, a folder or a link, as it is) to ``<name>.old-<UTC time>`` beside it.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any


class UnsafeTarget(ValueError):
    """An output path the toolkit will not write: a symbolic link, or something that is not a regular
    file (a folder, a pipe, a device). A ValueError (the callers that caught one still do); the command
    layer reports it in one line, exit 2 (:func:`theorydyn.cli.runner.known_error`)."""


def unsafe_target(path: str | Path) -> str | None:
    """Why ``path`` cannot be an output file (a link, or not a regular file), or None (absent or a file).
    Only ``lstat``: cheap enough to check every output of a run before any work."""
    p = Path(path)
    if p.is_symlink():
        return "is a symbolic link; theorydyn does not write through links"
    if p.exists() and not p.is_file():
        return "exists and is not a regular file (a folder, a pipe or a device)"
    return None


def check_targets(paths: Iterable[str | Path]) -> None:
    """Raise :class:`UnsafeTarget` naming the first of ``paths`` that :func:`unsafe_target` refuses."""
    for q in paths:
        why = unsafe_target(q)
        if why is not None:
            raise UnsafeTarget(f"{q}: {why}")


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # some filesystems do not open directories; the rename is still atomic
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str | Path, *, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on a clean exit, make it ``path`` atomically.

    The temporary name keeps ``path``'s suffix (or ``suffix``), so that writers that infer a
    format from it (``savefig``, ``np.savez``) write the right one.

    Raises:
        UnsafeTarget: ``path`` is a symbolic link or exists and is not a regular file (a ValueError).
        OSError: the write failed (for example ``ENOSPC``); ``path`` is unchanged.
    """
    path = Path(path)
    check_targets([path])
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_name(path, suffix)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        if path.is_symlink():  # planted while the content was written: still never replaced
            raise UnsafeTarget(f"{path}: is a symbolic link; theorydyn does not write through links")
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if e.errno is None:
            raise
        raise OSError(e.errno, f"cannot write {path}: {e.strerror or e}") from e
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)


def temporary_name(path: Path, suffix: str | None = None) -> Path:
    """A fresh hidden name beside ``path``: ``.<stem>.<pid>.<16 hex>.tmp<suffix>`` (``suffix`` default:
    ``path``'s, so that writers inferring a format from it still do). Unique per call."""
    tail = suffix if suffix is not None else path.suffix
    return path.with_name(f".{path.stem}.{os.getpid()}.{secrets.token_hex(8)}.tmp{tail}")


def write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (module docstring)."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` atomically."""
    write_bytes(path, text.encode("utf-8"))


def write_json(path: str | Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON to ``path`` atomically; NaN and infinities are refused."""
    write_text(path, json.dumps(obj, indent=2, allow_nan=False, default=str) + "\n")


def write_with(path: str | Path, writer: Callable[[Path], object], *, suffix: str | None = None) -> None:
    """Call ``writer(tmp)`` to write a temporary file, then move it onto ``path`` atomically.

    For writers that take a path: ``write_with(p, lambda t: df.to_csv(t, index=False))``,
    ``write_with(p, fig.savefig)``, ``write_with(p, lambda t: np.savez(t, **arrays))``.
    """
    with atomic_path(path, suffix=suffix) as tmp:
        writer(tmp)


def stamp() -> str:
    """The UTC time in file names: ``20250101T120000Z``."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


def set_aside(path: str | Path, tag: str = "old", when: str | None = None) -> Path | None:
    """Rename ``path`` (a file, a folder or a symbolic link, moved as it is, never followed) to
    ``<name>.<tag>-<UTC time>`` beside it (``-2``, ``-3``, … when that name is taken: never over an
    existing name); return the new path, or None when nothing is at ``path``. ``when``: the time
    stamp (default now, :func:`stamp`), so that the outputs one command sets aside share it.

    A file is moved by a hard link then an unlink (the link fails if the name was taken meanwhile);
    a folder, or a file system without hard links, by a rename to a name checked free just before.

    Raises:
        OSError: the rename failed (the folder is read-only); ``path`` is unchanged.
    """
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return None
    base = f"{path.name}.{tag}-{when or stamp()}"
    for n in range(1, 10_000):
        dest = path.with_name(base if n == 1 else f"{base}-{n}")
        if dest.exists() or dest.is_symlink():
            continue
        if path.is_symlink() or path.is_file():
            try:
                os.link(path, dest, follow_symlinks=False)
            except FileExistsError:
                continue
            except OSError:  # no hard links here (or across a bind mount): a rename to the free name
                os.rename(path, dest)
                return dest
            os.unlink(path)
            return dest
        os.rename(path, dest)
        return dest
    raise OSError(f"cannot find a free name beside {path} to set it aside")


def set_aside_all(paths: Iterable[str | Path], tag: str = "old") -> list[Path]:
    """:func:`set_aside` of each of ``paths`` that exists, with one time stamp; the new paths."""
    when = stamp()
    return [q for q in (set_aside(p, tag, when) for p in paths) if q is not None]
