"""The activation of Assumption 2 for Numba kernels: the one compiled definition both solvers call.

    σ(x) = x^p + ν x,   σ'(x) = p x^{p−1} + ν        (p odd ≥ 3, ν > 0; docs/theory.md §1)

:func:`theorydyn.core.model.sigma` / :func:`theorydyn.core.model.sigma_grad` are the array definition (NumPy
and torch); this is the scalar one the Numba kernels (:mod:`theorydyn.reduced._kernels`,
:mod:`theorydyn.simulate._kernel`) call, tested equal to it and to exact rational arithmetic
(tests/test_model.py).

Why a module of its own: :mod:`theorydyn.core.model` stays importable without loading Numba.

Numba's on-disk cache (``cache=True``) keys a kernel on its own source file only: after editing
this file, clear the kernels' caches (``find theorydyn -name '*.nb[ic]' -delete``) or they keep
the inlined old definition.

Checked on-disk cache: importing this module (which both kernel modules do before defining a
kernel) installs :func:`install_checked_cache`. Each of the toolkit's cache entries (``.nbc``) is
then written with a header (a magic line and the sha256 of the rest) and holds the cache key it was
written for; on loading, a file whose digest or key does not match, or that cannot be unpickled,
and an index (``.nbi``) that cannot be read, are reported with a :class:`NumbaCacheWarning` and
treated as a cache miss: Numba compiles the kernel again and its save overwrites the bad entry
(atomically, a unique temporary renamed over it). Without this, a damaged entry broke every later
run until the cache was deleted, or reached LLVM and aborted the process. An entry of an older
toolkit (no header) is compiled again once, silently. Other packages' caches are left to Numba.
"""

from __future__ import annotations

import hashlib
import itertools
import pickle
import warnings
from typing import Any

from numba import njit
from numba.core import caching

#: first bytes of a checked cache entry; then the 32-byte sha256 of the rest (the pickled (key, data))
MAGIC = b"theorydyn-nbc-1\n"
_PACKAGE = __name__.split(".")[0]


class NumbaCacheWarning(UserWarning):
    """A damaged Numba cache entry or index of a theorydyn kernel was found; the kernel is compiled again."""


def _ours(cache_file: Any) -> bool:
    """Whether a Numba ``IndexDataCacheFile`` belongs to a theorydyn kernel (marked when its
    ``Cache`` was made for a function of this package)."""
    return bool(getattr(cache_file, "_theorydyn", False))


def _warn(path: str, why: str) -> None:
    warnings.warn(
        f"Numba cache {path} is damaged ({why}); compiling the kernel again and rewriting its cache entry",
        NumbaCacheWarning,
        stacklevel=2,
    )


def _index(cache_file: Any, original) -> dict:
    try:
        return original(cache_file)
    except Exception as e:  # noqa: BLE001 — a garbled pickle raises UnpicklingError, EOFError, ValueError …
        _warn(cache_file._index_path, f"index unreadable: {type(e).__name__}")
        return {}


def _checked_load(cache_file: Any, key: Any, original_index) -> Any:
    """The cached data of ``key``, or None (absent, an older toolkit's entry, or damaged: warned)."""
    data_name = _index(cache_file, original_index).get(key)
    if data_name is None:
        return None
    path = cache_file._data_path(data_name)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        return None
    if not raw.startswith(MAGIC):
        return None  # an older toolkit's entry (or its first bytes lost): compiled again
    digest, payload = raw[len(MAGIC) : len(MAGIC) + 32], raw[len(MAGIC) + 32 :]
    if hashlib.sha256(payload).digest() != digest:
        _warn(path, "its sha256 does not match its contents")
        return None
    try:
        stored_key, data = pickle.loads(payload)
    except Exception as e:  # noqa: BLE001
        _warn(path, f"cannot be unpickled: {type(e).__name__}")
        return None
    if stored_key != key:
        _warn(path, "it was written for another signature (the index points at the wrong entry)")
        return None
    return data


def _checked_save(cache_file: Any, key: Any, data: Any, original_index) -> None:
    """Numba's ``IndexDataCacheFile.save`` with the entry written as MAGIC, sha256, pickled (key, data)."""
    overloads = _index(cache_file, original_index)
    data_name = overloads.get(key)
    if data_name is None:
        existing = set(overloads.values())
        data_name = next(n for i in itertools.count(1) if (n := cache_file._data_name(i)) not in existing)
        overloads[key] = data_name
        cache_file._save_index(overloads)
    payload = cache_file._dump((key, data))
    with cache_file._open_for_write(cache_file._data_path(data_name)) as f:
        f.write(MAGIC + hashlib.sha256(payload).digest() + payload)


def install_checked_cache() -> None:
    """Route the theorydyn kernels' Numba cache files through the checked format (module docstring).
    Idempotent; other packages' cache files keep Numba's own code path."""
    cls: Any = caching.IndexDataCacheFile
    if getattr(cls, "_theorydyn_checked", False):
        return
    load, save, index = cls.load, cls.save, cls._load_index
    cache_cls: Any = caching.Cache
    init = cache_cls.__init__

    def marking_init(self, py_func, *args, **kwargs):
        init(self, py_func, *args, **kwargs)
        if str(getattr(py_func, "__module__", "")).split(".")[0] == _PACKAGE:
            self._cache_file._theorydyn = True

    def checked_load(self, key):
        return _checked_load(self, key, index) if _ours(self) else load(self, key)

    def checked_save(self, key, data):
        return _checked_save(self, key, data, index) if _ours(self) else save(self, key, data)

    cls.load, cls.save = checked_load, checked_save
    cache_cls.__init__ = marking_init
    cls._theorydyn_checked = True


install_checked_cache()


@njit(cache=True, inline="always")
def sigma_and_grad(x, p, nu):
    """(σ(x), σ'(x)) = (x^{p−1}·x + ν x, p x^{p−1} + ν) for a scalar x, from one power x^{p−1}.

    The power is a product of p − 1 factors taken left to right, the rounding the kernels have
    always had at p = 3 (x·x·x). Not ``x ** (p − 1)``: measured, the simulator's float64 kernel
    then compiled to different roundings depending on whether the reduced kernel had been
    compiled first in the process. ``inline="always"`` inlines the Numba IR into the caller, so
    it compiles with the caller's flags (the simulator's fastmath reassociation, the reduced
    kernel's strict IEEE), an unused σ or σ' is dropped as dead code, and a caller that passes a
    literal p (the simulator's p = 3 loops) gets the power unrolled, as if written by hand.
    """
    xp1 = 1.0
    for _ in range(p - 1):
        xp1 *= x
    return xp1 * x + nu * x, p * xp1 + nu
