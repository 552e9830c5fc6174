"""A damaged Numba on-disk cache (issue 33, item 8) is detected and the kernel compiled again, with
a NumbaCacheWarning; it used to break every later run (or abort in LLVM) until deleted by hand.

Each case runs in fresh interpreters with their own ``NUMBA_CACHE_DIR`` (a temporary folder), so the
developer's caches are never touched: the first run compiles and writes the cache, the cache file
is damaged, the second run must give the same numbers and warn, the third must load the repaired
entry without a warning.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# one small kernel of the toolkit (softmax rows): its cache entries are the toolkit's
PROGRAM = """
import warnings, numpy as np
warnings.simplefilter("always")
from theorydyn.simulate._kernel import softmax_rows
A = np.arange(2 * 3 * 3, dtype=np.float64).reshape(2, 3, 3) / 7.0
S = softmax_rows(A, 0.5)
print(repr(float(S.sum())), repr(float(S[1, 2, 0])))
"""


def _run(cache: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), PYTHONWARNINGS="always")
    return subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=300)


def _files(cache: Path, ext: str) -> list[Path]:
    return sorted(p for p in cache.rglob(f"*{ext}") if "softmax_rows" in p.name)


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["nbc-middle", "nbc-truncated", "nbi-garbled"])
def test_a_damaged_numba_cache_is_detected_and_recompiled(tmp_path, damage):
    cache = tmp_path / "numba"
    first = _run(cache)
    assert first.returncode == 0, first.stderr
    (nbc,), (nbi,) = _files(cache, ".nbc"), _files(cache, ".nbi")
    raw = nbc.read_bytes()
    if damage == "nbc-middle":
        mid = len(raw) // 2
        nbc.write_bytes(raw[:mid] + bytes(256) + raw[mid + 256 :])
    elif damage == "nbc-truncated":
        nbc.write_bytes(raw[: len(raw) // 3])
    else:
        idx = nbi.read_bytes()
        nbi.write_bytes(idx[:40] + b"\xff" * 64 + idx[104:])
    second = _run(cache)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout  # compiled again: the same numbers
    assert "NumbaCacheWarning" in second.stderr and "damaged" in second.stderr, second.stderr
    third = _run(cache)
    assert third.returncode == 0 and third.stdout == first.stdout
    assert "NumbaCacheWarning" not in third.stderr, third.stderr  # the entry was rewritten


def test_the_checked_format_is_installed_for_the_toolkit_only():
    from numba.core import caching

    from theorydyn.core import numba_activation as na

    assert getattr(caching.IndexDataCacheFile, "_theorydyn_checked", False)
    from numba import njit

    from theorydyn.simulate._kernel import softmax_rows

    assert na._ours(softmax_rows._cache._cache_file)
    theirs = njit(cache=True)(lambda x: x + 1)  # a function of another module (this test's)
    assert not na._ours(theirs._cache._cache_file)
