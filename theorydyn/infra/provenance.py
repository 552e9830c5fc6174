"""Where a result came from: code version, commit, library versions, time — on every output.

:func:`provenance` returns a flat dict (JSON and CSV friendly)::

    theorydyn_version  the package version (theorydyn.__version__)
    git_commit         the commit of the checkout the package is imported from, or None
    git_dirty          True when tracked files differ from that commit, None when unknown
    numerics_version   :data:`NUMERICS_VERSION` (the salt of the scan keys)
    python, numpy, scipy, numba, pandas, torch   versions (None when not installed)
    platform           e.g. "Linux-x86_64" (operating system and machine only)
    created_utc        ISO 8601 time in UTC, seconds

It holds no host name, user name, path or command line (no personal data). The commit is read
only when the package lives directly in a git work tree (``<root>/theorydyn`` with
``<root>/.git``), so an installed copy inside some other repository never reports that
repository's commit; reading it runs ``git`` once per process with a short timeout and never
fails (None when git or the repository is missing). Library versions come from the imported
module when it is imported, else from the installed distribution's metadata, so torch is
never imported just to learn its version.

:func:`attach_to_frame` adds it to a DataFrame (one constant column per entry, prefixed, and
``df.attrs["provenance"]``); :func:`attach_to_json` nests it under ``"provenance"``.
"""

from __future__ import annotations

import functools
import hashlib
import platform
import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from .._version import __version__

#: Version of the numerics behind a scan point, part of every key (module docstring).
#: CHANGE IT (add 1) WHENEVER A CHANGE OF THE CODE CAN CHANGE THE NUMBERS OF A POINT — the reduced
#: solver, its bank or kernels, the phase detector, the simulator, the data sampler, a default
#: that is not part of the key. Then no row of older numerics is ever reused: the new keys miss
#: them, so the points are recomputed, and loading moves the old rows to ``<name>.rejected.csv``
#: (reason ``stale``) — kept aside, not deleted, so that old and new numbers can be compared,
#: and not left in the results file, where a reader of the CSV would mix them with current ones.
#: History: 1 — first salted key (rows without ``numerics_version`` predate it and are stale);
#: 2 — the simulator's step computes U = X v and ∇_v = Xᵀ dU by BLAS gemv per sub-block (float32
#: storage: rounding changes of ~1e-7 relative; float64: ~1e-16).
NUMERICS_VERSION = 2

__all__ = [
    "provenance",
    "git_state",
    "cpu_model",
    "numerics_host",
    "library_versions",
    "attach_to_frame",
    "attach_to_json",
    "LIBRARIES",
    "PREFIX",
]


def _cpuinfo() -> dict[str, str]:
    """The first processor's block of ``/proc/cpuinfo`` as key → value ({} where there is none)."""
    out: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if not line.strip():
                    if out:
                        break
                    continue
                key, _, value = line.partition(":")
                out.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return out


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; else :func:`platform.processor` or the architecture).
    Torch's CPU kernels dispatch per instruction set, so a torch result repeats bit for bit only on the
    same CPU: the figures' manifest records it, the benchmarks print it."""
    return _cpuinfo().get("model name") or platform.processor() or platform.machine()


@functools.cache
def numerics_host() -> str:
    """What a floating-point result depends on besides the code and its inputs, as one line::

        AMD EPYC · family 25 model 17 stepping 1 · flags 3f1c0a9e2b7d · openblas 0.3.30 SkylakeX, …
        · numpy 2.4.6 scipy 1.17.1 numba 0.68.1 llvmlite 0.50.0 torch 2.13.0+cpu

    Two processes whose lines are equal ran the same instruction paths: Numba compiles for the CPU
    it finds (its family and model name LLVM's target, its flags the vector width), OpenBLAS picks
    a kernel per CPU at load time, torch dispatches per instruction set. The model name alone does
    not tell this: a virtual machine may show ``AMD EPYC`` for several hosts, and two such hosts gave
    the reduced flow's phase times 3·10⁻⁸ apart (the figures' manifest, December 2026). ``flags`` is
    the first 12 hex digits of the SHA-256 of the sorted CPU flags. Cached per process; the BLAS
    libraries are listed through :func:`theorydyn.infra.blas.blas_libraries` (which imports SciPy's)."""
    from .blas import blas_libraries

    info = _cpuinfo()
    flags = " ".join(sorted(info.get("flags", "").split()))
    where = " ".join(
        f"{k} {info[c]}"
        for k, c in (("family", "cpu family"), ("model", "model"), ("stepping", "stepping"))
        if c in info
    )
    libs = {**library_versions(), "llvmlite": _version("llvmlite", "llvmlite")}
    versions = " ".join(f"{k} {libs[k]}" for k in ("numpy", "scipy", "numba", "llvmlite", "torch") if libs[k])
    parts = [
        cpu_model(),
        where or platform.machine(),
        "flags " + hashlib.sha256(flags.encode()).hexdigest()[:12] if flags else "flags unknown",
        ", ".join(blas_libraries()) or "no BLAS listed",
        versions,
    ]
    return " · ".join(parts)


#: Libraries whose versions are recorded (module name → distribution name).
LIBRARIES = {"numpy": "numpy", "scipy": "scipy", "numba": "numba", "pandas": "pandas", "torch": "torch"}
#: Column prefix used by :func:`attach_to_frame`.
PREFIX = "prov_"
#: The provenance columns a table gets from :func:`attach_to_frame` that hold text (all but the
#: numerics version), e.g. for a store that checks the kind of every column.
PROVENANCE_TEXT_COLUMNS = tuple(
    PREFIX + k
    for k in ("theorydyn_version", "git_commit", "git_dirty", "python", *LIBRARIES, "platform", "created_utc")
)
_GIT_TIMEOUT_S = 3.0


def _package_root() -> Path:
    return Path(__file__).resolve().parents[2]  # <checkout>/theorydyn/infra/provenance.py


def _git(root: Path, *args: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None


@functools.cache
def git_state(root: str | None = None) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the work tree at ``root`` (default: the one holding this package).

    (None, None) outside a git work tree or without git; dirty is None when it cannot be told.
    Cached per process: results name the code they were computed with at start-up.
    """
    r = Path(root) if root is not None else _package_root()
    if not (r / ".git").exists():  # a directory, or a file in a linked worktree
        return None, None
    head = _git(r, "rev-parse", "--verify", "--quiet", "HEAD")
    if head is None or head.returncode != 0 or not head.stdout.strip():
        return None, None
    commit = head.stdout.strip()
    status = _git(r, "status", "--porcelain", "--untracked-files=no")
    dirty = None if status is None or status.returncode != 0 else bool(status.stdout.strip())
    return commit, dirty


def _version(module: str, dist: str) -> str | None:
    mod = sys.modules.get(module)
    v = getattr(mod, "__version__", None) if mod is not None else None
    if v is not None:
        return str(v)
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def library_versions() -> dict[str, str | None]:
    """python and LIBRARIES versions; a library not installed is None (never imported here)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for module, dist in LIBRARIES.items():
        out[module] = _version(module, dist)
    return out


def provenance(root: str | None = None) -> dict[str, Any]:
    """The provenance of a result computed now (module docstring)."""
    commit, dirty = git_state(root)
    out: dict[str, Any] = {
        "theorydyn_version": __version__,
        "git_commit": commit,
        "git_dirty": dirty,
        "numerics_version": NUMERICS_VERSION,
    }
    out.update(library_versions())
    out["platform"] = f"{platform.system()}-{platform.machine()}"
    out["created_utc"] = datetime.now(UTC).isoformat(timespec="seconds")
    return out


def attach_to_frame(df: pd.DataFrame, prov: dict[str, Any] | None = None, prefix: str = PREFIX) -> pd.DataFrame:
    """A copy of ``df`` with one constant column ``prefix + name`` per provenance entry, and
    ``attrs["provenance"]``. Columns of that name already present are overwritten."""
    prov = provenance() if prov is None else dict(prov)
    out = df.copy()
    for k, v in prov.items():
        out[prefix + k] = pd.Series([v] * len(out), index=out.index, dtype=object)
    out.attrs["provenance"] = prov
    return out


def attach_to_json(obj: dict[str, Any], prov: dict[str, Any] | None = None, key: str = "provenance") -> dict[str, Any]:
    """A copy of the JSON-ready dict ``obj`` with the provenance under ``key``.

    Raises:
        ValueError: ``obj`` already holds ``key`` with something else.
    """
    if not isinstance(obj, dict):
        raise ValueError(f"obj must be a dict, got {type(obj).__name__}")
    prov = provenance() if prov is None else dict(prov)
    if key in obj and obj[key] != prov:
        raise ValueError(f"key {key!r} is already used in obj; pass another key")
    return {**obj, key: prov}
