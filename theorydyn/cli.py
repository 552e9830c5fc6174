"""Command-line plumbing shared by every entry point.

Every CLI builds its :class:`~theorydyn.setting.Setting` through
:func:`add_setting_arguments` / :func:`setting_from_args`, so the flags, their
defaults and their validation are the same everywhere. Bad input never produces
a traceback: :func:`fail` prints ``error: <parameter>: <rule>`` and exits with
status 2, like argparse itself.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import NoReturn

from .setting import Setting


def _prog() -> str:
    """``python -m theorydyn.X`` for a module run with -m (argv[0] is then its file path)."""
    path = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path("theorydyn")
    parts = path.with_suffix("").parts
    if path.suffix == ".py" and "theorydyn" in parts:
        mod = parts[len(parts) - 1 - parts[::-1].index("theorydyn"):]
        mod = mod[:-1] if mod[-1] == "__main__" else mod
        return "python -m " + ".".join(mod)
    return path.name


def fail(message: str, prog: str | None = None) -> NoReturn:
    """Print ``prog: error: message`` to stderr and exit with status 2."""
    prog = prog or _prog()
    print(f"{prog}: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def _partition_arg(text: str):
    """``blocks``/``grid``/``random`` or an explicit partition ``0,1;2,3;…``."""
    if ";" in text or "," in text:
        try:
            return tuple(tuple(int(i) for i in part.split(",")) for part in text.split(";"))
        except ValueError:
            raise argparse.ArgumentTypeError(f"explicit partition must look like '0,1;2,3', got {text!r}") from None
    return text


def add_setting_arguments(parser: argparse.ArgumentParser, D: int = 64, C: int = 4) -> None:
    """Add the flags of every Setting field (docs/theory.md §1) to ``parser``."""
    g = parser.add_argument_group("setting (docs/theory.md §1)")
    g.add_argument("--D", type=int, default=D, help="number of patches (default %(default)s)")
    g.add_argument("--C", type=int, default=C, help="size of each set S_l (default %(default)s)")
    g.add_argument("--d", type=int, default=None, help="patch dimension (default D)")
    g.add_argument("--q", type=float, default=None, help="probability of ±w* in a random patch (default C²/D)")
    g.add_argument("--sigma2", type=float, default=None, help="noise variance (default 1/d)")
    g.add_argument("--p", type=int, default=3, help="degree of the activation (odd, >= 3)")
    g.add_argument("--nu", type=float, default=None, help="linear part of the activation (default 1/d)")
    g.add_argument("--beta", type=float, default=1.0, help="fixed attention diagonal (default 1)")
    g.add_argument("--tau", type=float, default=1.0, help="softmax temperature (default 1)")
    g.add_argument("--partition", type=_partition_arg, default="blocks", help="blocks | grid | random | '0,1;2,3;…'")
    g.add_argument("--partition-seed", type=int, default=0, help="seed of the random partition")


def setting_from_args(args: argparse.Namespace, **overrides) -> Setting:
    """Build a validated Setting from parsed flags; on a rule broken, exit 2 naming it."""
    kw = dict(
        D=args.D, C=args.C, d=args.d, q=args.q, sigma2=args.sigma2, p=args.p, nu=args.nu,
        beta=args.beta, tau=args.tau, partition=args.partition, partition_seed=args.partition_seed,
    )
    kw.update(overrides)
    try:
        return Setting(**kw)
    except ValueError as e:
        fail(str(e))


def positive(kind=float, name: str = "value", allow_zero: bool = False, below: float | None = None):
    """argparse ``type=`` converter: a finite number > 0 (≥ 0 with ``allow_zero``; < ``below`` if given).

    nan and ±inf are refused, so no flag can carry them past parsing; the message names the flag.
    """
    name = name if name.startswith("--") else f"--{name}"

    def conv(text: str):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a{'n integer' if kind is int else ' number'}, "
                                             f"got {text!r}") from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"{name} must be finite, got {text}")
        if v < 0 or (v == 0 and not allow_zero):
            raise argparse.ArgumentTypeError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {text}")
        if below is not None and v >= below:
            raise argparse.ArgumentTypeError(f"{name} must be < {below:g}, got {text}")
        return v

    return conv


def add_common_arguments(parser: argparse.ArgumentParser, *, seed: int | None = 0, out: str | None = None,
                         quiet: bool = True) -> None:
    """The flags every run CLI spells the same way: ``--seed`` (one integer ≥ 0), ``--out`` (a
    folder, proven writable before any work by :func:`output_dir`) and ``--quiet`` (no progress bar)."""
    if seed is not None:
        parser.add_argument("--seed", type=positive(int, "--seed", allow_zero=True), default=seed,
                            help="random seed, an integer >= 0 (default %(default)s); same seed, same numbers")
    if out is not None:
        parser.add_argument("--out", type=Path, default=Path(out), help="output folder (default %(default)s)")
    if quiet:
        parser.add_argument("--quiet", action="store_true", help="no progress bar on stderr")


def output_dir(path: Path | str, flag: str = "--out") -> Path:
    """Create ``path`` (a folder) and prove it writable, before any work; exit 2 naming ``flag`` if not."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".theorydyn-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        fail(f"{flag}: cannot write to folder {str(path)!r}: {e.strerror or e}")
    return path
