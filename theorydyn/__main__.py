"""``theorydyn <command> [options]`` (or ``python -m theorydyn``): one entry point for every CLI.

``theorydyn --help`` lists the commands; ``theorydyn <command> --help`` shows a command's flags.
Each command is also ``python -m theorydyn.<command>``.
"""

from __future__ import annotations

import importlib
import os
import runpy
import sys

#: command → (module run as __main__, what it does)
COMMANDS = {
    "reduced": ("theorydyn.reduced", "the idealized dynamics in (α, γ, ρ): phases I–III (Lemmas 4.1–4.3)"),
    "simulate": ("theorydyn.simulate", "GD on N samples with the full D×D attention (Theorem 4.2)"),
    "scan": ("theorydyn.scan", "resumable parameter scans of the phase times"),
    "verify": ("theorydyn.verify", "the claims ledger: one verdict per claim of the paper"),
    "theorems": ("theorydyn.theorems", "verify --only theorems: Theorems 3.1, 3.2, 4.2, Lemma 4.1, N* (quick)"),
    "transfer": ("theorydyn.transfer", "downstream sample complexity (Theorems 5.1, 5.2)"),
    "figures": ("theorydyn.figures", "regenerate every figure"),
    "vision": ("theorydyn.vision", "the slim PyTorch ViT on real images (Section 6)"),
    "bench": ("theorydyn.bench", "benchmarks against the physical floor and what a user would write"),
    "store": ("theorydyn.stores", "results stores: merge TARGET SOURCE… (python -m theorydyn.stores)"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: theorydyn <command> [options]   (theorydyn <command> --help for its flags)", "", "commands:"]
    lines += [f"  {name:{width}s}  {what}" for name, (_, what) in COMMANDS.items()]
    return "\n".join(lines)


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
    module = COMMANDS[name][0]
    importlib.import_module(module)  # an ImportError (a missing extra) surfaces here, before argv changes
    sys.argv = [f"theorydyn {name}"] + rest
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)  # a package runs its __main__
    except SystemExit as e:
        return int(e.code or 0) if not isinstance(e.code, str) else (print(e.code, file=sys.stderr) or 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
