"""The one entry point, ``theorydyn <command> [options]``: :func:`dispatch` over the registry of the commands
(:class:`theorydyn.infra.registry.Registry`) loads the chosen command's module and runs its ``main``
(:func:`run_entry`, also what ``python -m theorydyn.bench NAME`` runs). This module imports nothing heavy
(not even :mod:`theorydyn.cli.runner`, which loads NumPy), so ``theorydyn --help`` answers at once.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ..infra.registry import Entry, Registry, listing


def usage(commands: Registry[Entry], prog: str = "theorydyn") -> str:
    """What ``PROG --help`` prints: how a command is called, then one line per record of ``commands``."""
    head = f"usage: {prog} <command> [options]   ({prog} <command> --help for its flags)"
    return f"{head}\n\ncommands:\n{listing(commands)}"


def run_entry(entry: Entry, argv: list[str], prog: str) -> int:
    """The module of ``entry`` loaded (an ImportError, a missing extra, reaches the caller before argv changes)
    and its ``main(argv)`` run as ``prog`` (``sys.argv[0]``, what a parser without its own prog shows);
    argparse's exits, 0 (``--help``) and 2 (a bad flag), are returned as statuses, as each command's own."""
    module = entry.load()
    saved, sys.argv = sys.argv, [prog, *argv]
    try:
        return int(module.main(argv) or 0)
    except SystemExit as e:
        return int(e.code or 0) if not isinstance(e.code, str) else (print(e.code, file=sys.stderr) or 1)
    finally:
        sys.argv = saved


def dispatch(commands: Registry[Entry], argv: Sequence[str] | None = None, prog: str = "theorydyn") -> int:
    """``PROG <command> [options]`` (``argv``, default ``sys.argv[1:]``): the record ``command`` of ``commands``
    run on the options (:func:`run_entry`). No command: the :func:`usage`, status 2; ``-h``, ``--help`` or
    ``help``: the usage, 0; an unknown command: the usage and the error on stderr, 2."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if not argv or argv[0] in ("-h", "--help", "help"):
            print(usage(commands, prog))
            return 0 if argv else 2
        if argv[0] not in commands:
            known = ", ".join(commands.names())
            print(
                f"{usage(commands, prog)}\n\n{prog}: error: command: unknown {argv[0]!r}; choose one of {known}",
                file=sys.stderr,
            )
            return 2
        return run_entry(commands[argv[0]], argv[1:], f"{prog} {argv[0]}")
    except BrokenPipeError:  # e.g. `theorydyn --help | head`: the reader left, which is not an error
        # the interpreter flushes stdout again at exit; point it at /dev/null so that flush is silent
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
