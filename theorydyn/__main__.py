"""``theorydyn <command> [options]`` (or ``python -m theorydyn``): one entry point for every CLI.

``theorydyn --help`` lists the commands; ``theorydyn <command> --help`` shows a command's flags.
Each command is also ``python -m theorydyn.<command>``.
"""

from __future__ import annotations

import importlib
import os
import sys

from .infra.registry import Entry, listing, table

#: The commands, one record each (:class:`theorydyn.infra.registry.Entry`: name, the package whose
#: ``__main__`` runs it, what it does), in the order ``theorydyn --help`` lists them. A command's
#: ``__main__`` module defines ``main(argv) -> int`` (most through :class:`theorydyn.cli.runner.Command`).
#: Adding a command: its package's ``__main__`` and one record here.
COMMAND_ENTRIES: tuple[Entry, ...] = (
    Entry("reduced", "theorydyn.reduced", "the idealized dynamics in (α, γ, ρ): phases I–III (Lemmas 4.1–4.3)"),
    Entry("simulate", "theorydyn.simulate", "GD on N samples with the full D×D attention (Theorem 4.2)"),
    Entry("scan", "theorydyn.scan", "resumable parameter scans of the phase times"),
    Entry("verify", "theorydyn.verify", "the claims ledger: one verdict per claim of the paper"),
    Entry("theorems", "theorydyn.theorems", "verify --only theorems: Theorems 3.1, 3.2, 4.2, Lemma 4.1, N* (quick)"),
    Entry("transfer", "theorydyn.transfer", "downstream sample complexity (Theorems 5.1, 5.2)"),
    Entry("figures", "theorydyn.figures", "regenerate every figure"),
    Entry("vision", "theorydyn.vision", "the slim PyTorch ViT on real images (Section 6)"),
    Entry("bench", "theorydyn.bench", "benchmarks against the physical floor and what a user would write"),
    Entry("store", "theorydyn.stores", "results stores: merge TARGET SOURCE… (python -m theorydyn.stores)"),
)
_TABLE = table(COMMAND_ENTRIES)
#: command → (its package, what it does): the older view of the same records
COMMANDS: dict[str, tuple[str, str]] = {e.name: (e.module, e.summary) for e in COMMAND_ENTRIES}


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
    if name not in COMMANDS:
        print(
            f"{usage()}\n\ntheorydyn: error: command: unknown {name!r}; choose one of {', '.join(COMMANDS)}",
            file=sys.stderr,
        )
        return 2
    # the command's own main, imported here: an ImportError (a missing extra) surfaces before argv changes
    command = importlib.import_module(f"{_TABLE[name].module}.__main__")
    saved = sys.argv
    sys.argv = [f"theorydyn {name}", *rest]  # what a parser without its own prog would show
    try:
        return int(command.main(rest) or 0)
    except SystemExit as e:  # argparse's exit 0 (--help) and 2 (a bad flag), as each command always did
        return int(e.code or 0) if not isinstance(e.code, str) else (print(e.code, file=sys.stderr) or 1)
    finally:
        sys.argv = saved


if __name__ == "__main__":
    sys.exit(main())
