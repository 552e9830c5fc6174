"""theorydyn.allocator: with glibc's thresholds fixed, freed blocks of several MiB are reused, so a
loop that allocates and frees them stops faulting on fresh pages (measured in a child process each,
with and without the setting, so that the contrast shows that the setting is what removes them)."""

import subprocess
import sys

import pytest

CHILD = """
import resource, sys
import numpy as np
from theorydyn.allocator import keep_freed_memory
kept = keep_freed_memory() if sys.argv[1] == "1" else None
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
def churn(n):
    for _ in range(n):  # three 8 MiB blocks at the heap top, freed together: glibc trims them
        a = np.ones(2**20); b = np.ones(2**20); c = np.ones(2**20)
        del a, b, c
churn(3)
f = faults()
churn(20)
print(kept, faults() - f)
"""


def _faults(keep: bool) -> tuple[str, int]:
    argv = [sys.executable, "-c", CHILD, "1" if keep else "0"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
    kept, n = out.stdout.split()
    return kept, int(n)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt is glibc's (Linux)")
def test_freed_blocks_are_reused_without_page_faults():
    _, without = _faults(False)
    kept, with_ = _faults(True)
    assert kept == "True"
    # 20 rounds of 24 MiB are 122,880 pages; without the setting most of them fault again
    assert without > 20_000
    assert with_ < 500
