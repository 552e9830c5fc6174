"""``python -m theorydyn.bench reduced|simulate|all [options]``: dispatch to the benchmark modules.

The benchmarks are the records of :data:`benchmark` (:class:`theorydyn.infra.registry.Entry`: name, what
it measures, a loader importing its command module), the registration every plug-in of theorydyn uses. A
record's module is the benchmark's command (``NAME_cli``: its parser, checks and printing, light to import),
which defines ``main(argv) -> int`` through :class:`theorydyn.cli.runner.Command`; the measurement itself
is ``NAME.py`` (:mod:`theorydyn.bench`). Adding a benchmark: its two modules and one record here.
"""

from __future__ import annotations

import sys
from types import ModuleType

from ..cli.dispatch import run_entry
from ..infra.registry import Entry, Registry, listing

PROG = "python -m theorydyn.bench"

#: The benchmarks, one record each, in the order ``all`` runs them.
benchmark: Registry[Entry] = Registry(Entry)


@benchmark("reduced", "the reduced risk end to end and the flow's wall time, against NumPy")
def _reduced() -> ModuleType:
    from . import reduced_cli

    return reduced_cli


@benchmark("simulate", "the simulator's step against one pass over X and torch autograd")
def _simulate() -> ModuleType:
    from . import simulate_cli

    return simulate_cli


#: the benchmarks' names (derived from the records)
BENCHMARKS: tuple[str, ...] = benchmark.names()
#: the first line of the usage, and of every error
HEAD = f"usage: {PROG} {{{','.join((*BENCHMARKS, 'all'))}}} [options of that benchmark]"


def usage() -> str:
    return f"{HEAD}\n\nbenchmarks:\n{listing(benchmark)}"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    which, rest = argv[0], argv[1:]
    if which not in (*BENCHMARKS, "all"):
        return _refuse(f"benchmark must be one of {BENCHMARKS + ('all',)}, got {which!r}")
    if which == "all" and rest:  # 'all' runs each benchmark at its defaults: options would be dropped silently
        return _refuse(
            f"{rest[0]}: 'all' takes no options (each benchmark runs at its defaults); run one benchmark to pass "
            "options"
        )
    rc = 0
    for name in BENCHMARKS if which == "all" else (which,):
        print(f"== benchmark: {name} ==", flush=True)
        rc = max(rc, run_entry(benchmark[name], rest, f"{PROG} {name}"))
    return rc


def _refuse(error: str) -> int:
    print(f"{HEAD}\n{PROG}: error: {error}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
