"""``python -m theorydyn.bench reduced|simulate|all [options]``: dispatch to the benchmark modules.

The benchmarks are the records of :data:`BENCHMARKS` (:class:`theorydyn.infra.registry.Entry`: name, module,
what it measures), the registration every plug-in of theorydyn uses. A record names the benchmark's
command module (``NAME_cli``: its parser, checks and printing, light to import), which defines
``main(argv) -> int`` through :class:`theorydyn.cli.runner.Command`; the measurement itself is ``NAME.py``
(:mod:`theorydyn.bench`). Adding a benchmark: its two modules and one record here.
"""

from __future__ import annotations

import importlib
import sys

from ..infra.registry import Entry, listing, table

PROG = "python -m theorydyn.bench"

#: The benchmarks, one record each, in the order ``all`` runs them.
BENCHMARK_ENTRIES: tuple[Entry, ...] = (
    Entry(
        "reduced", "theorydyn.bench.reduced_cli", "the reduced risk end to end and the flow's wall time, against NumPy"
    ),
    Entry(
        "simulate", "theorydyn.bench.simulate_cli", "the simulator's step against one pass over X and torch autograd"
    ),
)
_TABLE = table(BENCHMARK_ENTRIES)
#: the benchmarks' names (derived from :data:`BENCHMARK_ENTRIES`)
BENCHMARKS: tuple[str, ...] = tuple(_TABLE)


def _run_one(name: str, argv: list[str]) -> int:
    entry = _TABLE[name]
    try:
        mod = importlib.import_module(entry.module)
    except ModuleNotFoundError as e:
        if e.name == entry.module:
            print(f"benchmark {name!r} is not available ({entry.module} not found)", file=sys.stderr)
            return 2
        raise
    return int(mod.main(argv) or 0)


def usage() -> str:
    head = f"usage: {PROG} {{{','.join((*BENCHMARKS, 'all'))}}} [options of that benchmark]"
    return f"{head}\n\nbenchmarks:\n{listing(BENCHMARK_ENTRIES)}"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    head = usage().split("\n", 1)[0]
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    which, rest = argv[0], argv[1:]
    if which not in BENCHMARKS + ("all",):
        print(
            f"{head}\n{PROG}: error: benchmark must be one of {BENCHMARKS + ('all',)}, got {which!r}",
            file=sys.stderr,
        )
        return 2
    if which == "all" and rest:
        # 'all' runs each benchmark at its defaults: options would be dropped silently, so they are refused
        print(
            f"{head}\n{PROG}: error: {rest[0]}: 'all' takes no options (each benchmark runs "
            f"at its defaults); run one benchmark to pass options",
            file=sys.stderr,
        )
        return 2
    names = BENCHMARKS if which == "all" else (which,)
    rc = 0
    for name in names:
        print(f"== benchmark: {name} ==", flush=True)
        rc = max(rc, _run_one(name, rest if which != "all" else []))
    return rc


if __name__ == "__main__":
    sys.exit(main())
