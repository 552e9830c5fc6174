"""``theorydyn <command> [options]`` (or ``python -m theorydyn``): one entry point for every CLI.

``theorydyn --help`` lists the commands; ``theorydyn <command> --help`` shows a command's flags.
Each command is also ``python -m theorydyn.<command>``.
"""

from __future__ import annotations

import sys
from types import ModuleType

from .cli.dispatch import dispatch
from .infra.registry import Entry, Registry

#: The commands, one record each (:class:`theorydyn.infra.registry.Entry`: name, what it does, and a loader
#: importing the command's ``__main__``, which defines ``main(argv) -> int``, most through
#: :class:`theorydyn.cli.runner.Command`), in the order ``theorydyn --help`` lists them; a command's module
#: is imported only once it is chosen (:func:`theorydyn.cli.dispatch.dispatch`). Adding a command: its
#: package's ``__main__`` and one record here.
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


#: command → (its package, the parent of the ``__main__`` its loader imports; what it does): ``python -m PACKAGE``
COMMANDS: dict[str, tuple[str, str]] = {e.name: (e.module.rpartition(".")[0], e.summary) for e in command}


def main(argv: list[str] | None = None) -> int:
    return dispatch(command, argv)


if __name__ == "__main__":
    sys.exit(main())
