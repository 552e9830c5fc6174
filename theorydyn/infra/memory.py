"""The generic machinery of memory estimates: refuse a run before any work when it would not fit.

Each estimate is a :class:`MemoryEstimate`: the arrays that dominate the peak resident memory of
one run, each a :class:`Term` with its formula in bytes and the parameters it grows with.
:func:`check_memory` compares the total with :func:`available_memory` and raises
:class:`ResourceError` (a ``ValueError``) naming the parameter of the largest term, the estimate
and the limit, unless ``force`` is set.

The estimates themselves sit beside the code they describe and import its constants
(:func:`theorydyn.core.data.sample_memory`, :func:`theorydyn.reduced.memory.reduced_memory`,
:func:`theorydyn.simulate.memory.simulate_memory`); :mod:`theorydyn.infra.memory` gathers them.
This module imports nothing of the package, so every estimate can import it.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "ResourceError",
    "Term",
    "MemoryEstimate",
    "available_memory",
    "check_memory",
    "format_bytes",
    "parse_bytes",
    "MEMORY_ENV",
    "SMALL",
    "F64",
    "I64",
    "I16",
    "I8",
    "BOOL",
]

#: Environment variable that sets the memory limit (bytes, or with a K/M/G/T suffix, powers of 1024).
MEMORY_ENV = "THEORYDYN_MEMORY_LIMIT"

#: Bytes per element of the dtypes the estimates count.
F64, I64, I16, I8, BOOL = 8, 8, 2, 1, 1


#: Small arrays and buffers not modelled term by term (a fixed allowance in every estimate).
SMALL_BYTES = 1 << 20


class ResourceError(ValueError):
    """A run that would not fit: names the parameter, the estimate and the limit."""


@dataclass(frozen=True)
class Term:
    """One array (or group of arrays) of an estimate: ``nbytes`` and the parameters it grows with."""

    what: str
    nbytes: int
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MemoryEstimate:
    """The peak memory of one run, as a sum of :class:`Term` s."""

    task: str
    terms: tuple[Term, ...]

    @property
    def total(self) -> int:
        return int(sum(t.nbytes for t in self.terms))

    @property
    def largest(self) -> Term:
        return max(self.terms, key=lambda t: t.nbytes)

    def __add__(self, other: MemoryEstimate) -> MemoryEstimate:
        return MemoryEstimate(f"{self.task} + {other.task}", self.terms + other.terms)

    def describe(self) -> str:
        """``task ≈ total: term (bytes), …`` with the three largest terms."""
        top = sorted(self.terms, key=lambda t: -t.nbytes)[:3]
        return (
            f"{self.task} needs ≈ {format_bytes(self.total)} ("
            + "; ".join(f"{t.what}: {format_bytes(t.nbytes)}" for t in top)
            + ")"
        )


def format_bytes(n: float) -> str:
    """1536 → '1.5 KiB' (powers of 1024)."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"  # pragma: no cover


def parse_bytes(text: str | int, name: str = MEMORY_ENV) -> int:
    """'8G', '512M', '1.5T', '123456' → bytes (K/M/G/T = powers of 1024, optional 'iB'/'B').

    Raises:
        ValueError: naming ``name``, for anything else or a value <= 0.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([KMGTP]?)(?:i?B)?\s*", str(text), re.I)
        if not m:
            raise ValueError(f"{name} must be a number of bytes, optionally with K, M, G or T, got {text!r}")
        number = float(m.group(1)) * 1024 ** "BKMGTP".index(m.group(2).upper() or "B")
        if not math.isfinite(number):  # 1e400: float('inf'), which int() cannot take
            raise ValueError(f"{name} must be a finite number of bytes, got {text!r}")
        value = int(number)
    if value <= 0:
        raise ValueError(f"{name} must be > 0 bytes, got {text!r}")
    return value


def _read_int(path: str) -> int | None:
    try:
        text = Path(path).read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def available_memory() -> tuple[int | None, str]:
    """(bytes a new run may use, where that number comes from), the tightest of:

    ``$THEORYDYN_MEMORY_LIMIT`` (when set it alone decides), ``MemAvailable`` of /proc/meminfo,
    the cgroup limit minus usage (v2 ``memory.max``/``memory.current``, v1
    ``memory.limit_in_bytes``/``memory.usage_in_bytes``), else free physical pages.
    (None, reason) when nothing can be read. Only local files are read; it never fails.
    """
    env = os.environ.get(MEMORY_ENV)
    if env:
        return parse_bytes(env), f"${MEMORY_ENV}"
    found: list[tuple[int, str]] = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append((int(line.split()[1]) * 1024, "MemAvailable"))
                break
    except (OSError, ValueError, IndexError):
        pass
    for limit, usage, label in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current", "cgroup memory.max"),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
            "cgroup memory limit",
        ),
    ):
        lim, used = _read_int(limit), _read_int(usage)
        if lim is not None and lim < 1 << 60:  # v1 reports "no limit" as a huge number
            found.append((max(lim - (used or 0), 0), label))
    if not found:
        try:
            found.append((os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"), "free physical pages"))
        except (ValueError, OSError, AttributeError):
            return None, "unknown (no /proc/meminfo, cgroup or sysconf)"
    return min(found)


def check_memory(
    estimate: MemoryEstimate, *, force: bool = False, available: int | None = None, force_name: str = "force"
) -> MemoryEstimate:
    """Raise :class:`ResourceError` when ``estimate.total`` exceeds the available memory.

    Args:
        estimate: from one of the ``*_memory`` functions (or a sum of them).
        force: skip the refusal (the caller takes the risk of running out of memory).
        available: the limit in bytes (default: :func:`available_memory`; no check when unknown).
        force_name: how the caller spells the override, quoted in the message (e.g. ``--force``).

    Returns the estimate, so that a caller can log it.
    """
    if force:
        return estimate
    source = "given limit"
    if available is None:
        available, source = available_memory()
        if available is None:
            return estimate
    if estimate.total > available:
        big = estimate.largest
        named = ", ".join(f"{k}={v}" for k, v in big.params.items()) or "the setting"
        raise ResourceError(
            f"{named}: {estimate.describe()}, more than the {format_bytes(available)} of memory available "
            f"({source}); lower {' or '.join(big.params) or 'the size'}, or pass {force_name} to run anyway"
        )
    return estimate


SMALL = Term("small arrays and buffers", SMALL_BYTES)
