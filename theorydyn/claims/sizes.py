"""A claim's sizes, declared once: :class:`Sizes` holds its quick and its full configuration (issue 29).

Every claim module declares ``SIZES = Sizes(quick=..., full=...)``, each side an instance of one frozen,
validated :class:`~theorydyn.core.config.Config` (an existing one where its fields fit, e.g.
:class:`~theorydyn.simulate.config.SimConfig`, else a claim's own :class:`ClaimSizes` subclass with just
its size fields: N, steps, the N grid, the seeds …), and reads its sizes only through
``SIZES.pick(quick)``, in ``checks`` and in ``memory`` alike::

    @dataclass(frozen=True)
    class Theorem32Sizes(ClaimSizes):
        N: int = option(5_000, "fresh samples per seed", positive=True)
        seeds: Seeds = seeds_option(5)

    SIZES = Sizes(quick=Theorem32Sizes(), full=Theorem32Sizes(N=50_000))

A field's default, rule and help text are written once, in the field (:func:`~theorydyn.core.config.option`);
tuples get their rule from :func:`seeds_option` (:data:`~theorydyn.core.config.Seeds`, made by
:func:`~theorydyn.core.config.as_seeds`) and :func:`grid_option` (a grid of numbers), checked by
:class:`ClaimSizes` on construction. ``tests/test_claims_sizes.py`` checks that every registered claim
declares its sizes this way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..core.config import Config, _is_int, as_seeds, option

C = TypeVar("C", bound=Config)


@dataclass(frozen=True)
class Sizes(Generic[C]):
    """The quick and the full sizes of one claim: two instances of one :class:`Config` class.

    Raises:
        ValueError: a side that is not a :class:`Config`, or two sides of different classes.
    """

    quick: C
    full: C

    def __post_init__(self) -> None:
        for side in ("quick", "full"):
            if not isinstance(getattr(self, side), Config):
                raise ValueError(f"Sizes.{side} must be a Config instance, got {getattr(self, side)!r}")
        if type(self.quick) is not type(self.full):
            raise ValueError(f"Sizes: quick is a {type(self.quick).__name__}, full a {type(self.full).__name__}")

    def pick(self, quick: bool) -> C:
        """The quick sizes when ``quick``, else the full ones."""
        return self.quick if quick else self.full


def seeds_option(seeds: int | Iterable[int], help: str = "the seeds, one independent run each") -> Any:
    """A field of :data:`~theorydyn.core.config.Seeds`: its default ``as_seeds(seeds)`` (a count K is seeds
    0 … K−1), checked by :class:`ClaimSizes` with :func:`~theorydyn.core.config.as_seeds`."""
    return _with(option(as_seeds(seeds), help, kind=tuple, cli=False), seeds=True)


def grid_option(values: Sequence[float], help: str, *, kind: type = int, low: float = 1, low_open: bool = False) -> Any:
    """A field holding a non-empty grid of numbers (N's, D's, step sizes …), each of ``kind`` and ≥ ``low``
    (> ``low`` with ``low_open``), checked by :class:`ClaimSizes`."""
    return _with(option(tuple(values), help, kind=tuple, cli=False), grid=(kind, low, low_open))


def _with(f: Any, **meta: Any) -> Any:
    return dataclasses.field(default=f.default, metadata={**f.metadata, **meta})


class ClaimSizes(Config):
    """The base of a claim's own size configuration: :class:`Config`'s checks, and the tuples' rules of
    :func:`seeds_option` (:func:`~theorydyn.core.config.as_seeds`) and :func:`grid_option`.

    Subclasses are ``@dataclass(frozen=True)`` with :func:`~theorydyn.core.config.option`,
    :func:`seeds_option` and :func:`grid_option` fields."""

    def __post_init__(self) -> None:
        super().__post_init__()
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if f.metadata.get("seeds"):
                if not isinstance(v, tuple) or as_seeds(v) != v or not v:
                    raise ValueError(f"{f.name} must be a non-empty tuple of integers >= 0, got {f.name}={v!r}")
            grid = f.metadata.get("grid")
            if grid is not None:
                _check_grid(f.name, v, *grid)


def _check_grid(name: str, v: Any, kind: type, low: float, low_open: bool) -> None:
    ok_kind = _is_int if kind is int else (lambda x: isinstance(x, (int, float)) and not isinstance(x, bool))
    if not isinstance(v, tuple) or not v:
        raise ValueError(f"{name} must be a non-empty tuple, got {name}={v!r}")
    for i, x in enumerate(v):
        if not ok_kind(x) or x < low or (low_open and x == low):
            what = f"{'an integer' if kind is int else 'a number'} {'>' if low_open else '>='} {low:g}"
            raise ValueError(f"{name}[{i}] must be {what}, got {name}[{i}]={x!r}")


__all__ = ["ClaimSizes", "Sizes", "grid_option", "seeds_option"]
