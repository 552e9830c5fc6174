"""``python -m theorydyn.bench reduced|simulate|all [options]``: dispatch to the benchmark modules."""

from __future__ import annotations

import importlib
import inspect
import sys

BENCHMARKS = ("reduced", "simulate")


def _run_one(name: str, argv: list[str]) -> int:
    try:
        mod = importlib.import_module(f"theorydyn.bench.{name}")
    except ModuleNotFoundError as e:
        if e.name == f"theorydyn.bench.{name}":
            print(f"benchmark {name!r} is not available (theorydyn/bench/{name}.py not found)", file=sys.stderr)
            return 2
        raise
    run = mod.run
    params = inspect.signature(run).parameters
    rc = run(argv) if params else run()
    return int(rc or 0)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    usage = "usage: python -m theorydyn.bench {reduced,simulate,all} [options of that benchmark]"
    if not argv or argv[0] in ("-h", "--help"):
        print(usage)
        return 0 if argv else 2
    which, rest = argv[0], argv[1:]
    if which not in BENCHMARKS + ("all",):
        print(
            f"{usage}\npython -m theorydyn.bench: error: benchmark must be one of {BENCHMARKS + ('all',)}, "
            f"got {which!r}",
            file=sys.stderr,
        )
        return 2
    if which == "all" and rest:
        # 'all' runs each benchmark at its defaults: options would be dropped silently, so they are refused
        print(
            f"{usage}\npython -m theorydyn.bench: error: {rest[0]}: 'all' takes no options (each benchmark runs "
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
