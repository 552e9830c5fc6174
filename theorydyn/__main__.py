"""``theorydyn <command> [options]`` (or ``python -m theorydyn``): one entry point for every CLI.

``theorydyn --help`` lists the commands; ``theorydyn <command> --help`` shows a command's flags.
Each command is also ``python -m theorydyn.<command>``.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType

from .infra.registry import Entry, Registry, listing

#: The commands, one record each (:class:`theorydyn.infra.registry.Entry`: name, what it does, and a loader
#: importing the command's ``__main__``, which defines ``main(argv) -> int``, most through
#: :class:`theorydyn.cli.runner.Command`), in the order ``theorydyn --help`` lists them; a command's module
#: is imported only once it is chosen. Adding a command: its package's ``__main__`` and one record here.
command: Registry[Entry] = Registry(Entry)


@command("reduced", "the idealized dynamics in (α, γ, ρ): phases I–III (Lemmas 4.1–4.3)")
def _reduced() -> ModuleType:
    from .reduced import __main__

    return __main__


@command("simulate", "GD on N samples with the full D×D attention (Theorem 4.2)")
def _simulate() -> ModuleType:
    from .simulate import __main__

    return __main__


@command("scan", "resumable parameter scans of the phase times")
def _scan() -> ModuleType:
    from .scan import __main__

    return __main__


@command("verify", "the claims ledger: one verdict per claim of the paper")
def _verify() -> ModuleType:
    from .verify import __main__

    return __main__


@command("theorems", "verify --only theorems: Theorems 3.1, 3.2, 4.2, Lemma 4.1, N* (quick)")
def _theorems() -> ModuleType:
    from .theorems import __main__

    return __main__


@command("transfer", "downstream sample complexity (Theorems 5.1, 5.2)")
def _transfer() -> ModuleType:
    from .transfer import __main__

    return __main__


@command("figures", "regenerate every figure")
def _figures() -> ModuleType:
    from .figures import __main__

    return __main__


@command("vision", "the slim PyTorch ViT on real images (Section 6)")
def _vision() -> ModuleType:
    from .vision import __main__

    return __main__


@command("bench", "benchmarks against the physical floor and what a user would write")
def _bench() -> ModuleType:
    from .bench import __main__

    return __main__


@command("store", "results stores: merge TARGET SOURCE… (python -m theorydyn.stores)")
def _stores() -> ModuleType:
    from .stores import __main__

    return __main__


COMMAND_ENTRIES: tuple[Entry, ...] = command.entries()
#: command → (its package, the parent of the ``__main__`` its loader imports; what it does): ``python -m PACKAGE``
COMMANDS: dict[str, tuple[str, str]] = {e.name: (e.module.rpartition(".")[0], e.summary) for e in command}


def usage() -> str:
    lines = ["usage: theorydyn <command> [options]   (theorydyn <command> --help for its flags)", "", "commands:"]
    return "\n".join(lines) + "\n" + listing(COMMAND_ENTRIES)


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:  # e.g. `theorydyn --help | head`: the reader left, which is not an error
        # the interpreter flushes stdout again at exit; point it at /dev/null so that flush is silent
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in command:
        print(
            f"{usage()}\n\ntheorydyn: error: command: unknown {name!r}; choose one of {', '.join(COMMANDS)}",
            file=sys.stderr,
        )
        return 2
    # the command's own main, imported here: an ImportError (a missing extra) surfaces before argv changes
    module = command[name].load()
    saved = sys.argv
    sys.argv = [f"theorydyn {name}", *rest]  # what a parser without its own prog would show
    try:
        return int(module.main(rest) or 0)
    except SystemExit as e:  # argparse's exit 0 (--help) and 2 (a bad flag), as each command always did
        return int(e.code or 0) if not isinstance(e.code, str) else (print(e.code, file=sys.stderr) or 1)
    finally:
        sys.argv = saved


if __name__ == "__main__":
    sys.exit(main())
