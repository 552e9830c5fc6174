"""One command runner for every ``python -m theorydyn.<command>``.

A command declares a :class:`Command`: its name, a parser builder (cheap: it imports nothing heavy,
so ``--help`` answers at once) and a run function, which does the heavy imports and the work. The
runner owns what every command shares:

* parsing, plus the flags of every command (:data:`GLOBAL_ARGUMENTS`: adding a flag shared by
  every command touches that list only), the flags a command declares beside its parser
  (:attr:`Command.arguments`, e.g. one flag per field of a configuration object), and ``--format``
  (the figures' file format, :data:`theorydyn.core.plotting.FORMATS`) on every command that draws
  (:attr:`Command.draws`: its default format), declared here once;
* ``matplotlib.use("Agg")`` before the run (commands draw into files, never onto a screen);
* the helpers of the run (:class:`Invocation`): ``fail`` (exit 2 naming the flag), the memory
  guard, the folder and output probes, atomic writes, the flags given explicitly;
* exit codes and the one place where known errors are turned into a message and a status
  (:func:`known_error`): Ctrl-C → one line, ``interrupted; <what was saved and what a rerun does>``
  (the command's :attr:`Command.on_interrupt`, or the account a library gave with
  :class:`theorydyn.infra.interrupt.Interrupted`), status 130 and no traceback;
  a :class:`theorydyn.infra.store.StoreError` (a damaged or foreign store) → status 2 with its message;
  an output path that is a link or a folder (:class:`theorydyn.infra.atomic.UnsafeTarget`) → status 2;
  a full disk, a write refused or a read-only file system → one line naming the path, status 1
  (2 for a read-only output: bad input, not a transient failure).

Exit statuses: 0 success, 1 the run failed (a FAIL row, a divergence, a full disk), 2 bad input
(before any work), 130 interrupted.

The one entry point over the commands, ``theorydyn <command> [options]``, is
:func:`theorydyn.cli.dispatch.dispatch`.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from .._version import __version__
from ..core.plotting import FORMAT_HELP, FORMATS
from ..infra.atomic import UnsafeTarget
from ..infra.interrupt import Interrupted
from ..infra.paths import run_dir
from . import tools as _cli
from .configs import C, add_config_flags, config_from_args

#: status of a Ctrl-C (128 + SIGINT), as a shell reports it
INTERRUPTED = 130
#: what a command that stores nothing along the way says on a Ctrl-C
NOTHING_SAVED = "nothing was saved (a run is written when it ends): the same command, rerun, starts it again"
#: what the commands that store as they go say (scan, verify, transfer, vision: each names what it stores)
RESUMES = "the same command, rerun, resumes from them (--fresh starts over, moving them aside)"
#: errno of a disk that is full (or over quota, or a file over the size limit): rerun once freed
_DISK_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def _add_version(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", action="version", version=f"theorydyn {__version__}")


#: the flags of every command, each added by one function of the parser (issue 29: a shared flag
#: touches one place). A flag with a value also needs its handling in :func:`run_command`.
GLOBAL_ARGUMENTS: tuple[Callable[[argparse.ArgumentParser], None], ...] = (_add_version,)


@dataclass
class Invocation:
    """What a command's run function gets: the parsed flags and the helpers bound to its name."""

    command: Command
    parser: argparse.ArgumentParser
    args: argparse.Namespace
    argv: list[str] | None

    @property
    def prog(self) -> str:
        return self.command.prog

    @property
    def figure_format(self) -> str:
        """The format of the figures the command writes (``--format``; a command that draws none: its
        :attr:`Command.draws`, None)."""
        return getattr(self.args, "format", None) or self.command.draws or "png"

    @property
    def progress(self) -> bool:
        """Whether the run shows its progress on stderr: not ``--quiet`` (its one meaning in every command)."""
        return not getattr(self.args, "quiet", False)

    def fail(self, message: str) -> NoReturn:
        """Exit 2 with ``prog: error: message`` (the message starts with the flag it is about)."""
        _cli.fail(message, self.prog)

    def setting(self, **overrides: Any):
        """The validated :class:`~theorydyn.core.setting.Setting` of the parsed flags (``overrides``
        replace fields); a rule broken exits 2 naming its flag (:func:`theorydyn.cli.tools.setting_from_args`)."""
        return _cli.setting_from_args(self.args, self.prog, **overrides)

    def config(self, cls: type[C], **overrides: Any) -> C:
        """The configuration ``cls`` the parsed flags describe (:func:`~theorydyn.cli.configs.config_from_args`:
        one field per flag, then ``overrides``); a value that breaks its field's rule exits 2 naming the flag."""
        try:
            return config_from_args(cls, self.args, **overrides)
        except ValueError as e:
            self.fail(str(e))

    @contextmanager
    def refusing(self, *errors: type[Exception]) -> Iterator[None]:
        """Bad input found by the library (``errors``, default ValueError, whose message starts with the
        flag it is about, e.g. ``--out: …``): exit 2 with its message, before any work."""
        caught = errors or (ValueError,)
        try:
            yield
        except caught as e:
            self.fail(str(e))

    def given(self) -> set[str]:
        """The destinations of the flags given explicitly (:func:`theorydyn.cli.tools.given_flags`)."""
        return _cli.given_flags(self.parser, self.argv if self.argv is not None else sys.argv[1:])

    def source(self, flag: str) -> str:
        """What names the path of ``flag`` in a message: the flag, or ``THEORYDYN_HOME`` when the flag was
        not given and its default lies under that variable (:func:`theorydyn.cli.tools.path_source`)."""
        if not flag.startswith("--"):
            return flag
        return _cli.path_source(flag, flag[2:].replace("-", "_") in self.given())

    def guard_memory(self, estimate, **kw: Any):
        """:func:`theorydyn.cli.tools.guard_memory` under this command's name, skipped by ``--force`` (its one
        meaning in every command) unless ``force`` is given."""
        kw.setdefault("force", bool(getattr(self.args, "force", False)))
        return _cli.guard_memory(estimate, prog=self.prog, **kw)

    def output_dir(self, path: Path | str, flag: str = "--out") -> Path:
        return _cli.output_dir(path, self.source(flag))

    def probe(self, path: Path | str, flag: str = "--out") -> Path:
        return _cli.probe_output(path, self.source(flag), self.prog)

    def output_file(self, path: Path | str, flag: str) -> Path:
        return _cli.output_file(path, self.source(flag), self.prog)

    def write(self, path: Path | str, writer: Callable[[Path], object]) -> Path:
        return _cli.write_output(path, writer, self.prog)

    def write_figure(self, path: Path | str, fig: Any) -> Path:
        """A matplotlib figure written atomically to ``path``, in the format of its suffix
        (:func:`theorydyn.core.plotting.save`)."""
        from ..core.plotting import save

        return self.write(path, lambda t: save(fig, t))

    def output_files(self, folder: Path | str, stem: str, suffixes: Sequence[str], flag: str = "--out") -> list[Path]:
        """``folder/<stem><suffix>`` for each suffix, before any work: the folder created and proven
        writable, each file probed (a link, a folder or a full disk is refused, exit 2 naming ``flag``)."""
        out = self.output_dir(folder, flag)
        files = [out / f"{stem}{suffix}" for suffix in suffixes]
        for path in files:
            self.probe(path, flag)
        return files

    def write_run(self, csv: Path, js: Path, trajectory: Any, summary: dict) -> None:
        """A run's trajectory (a DataFrame, as CSV without its index) and its summary (JSON), each written
        atomically: a kill or a full disk leaves the earlier file or the new one, never a torn one."""
        self.write(csv, lambda t: trajectory.to_csv(t, index=False))
        text = json.dumps(summary, indent=2, default=str)
        self.write(js, lambda t: t.write_text(text))


@dataclass(frozen=True)
class Command:
    """One command: ``prog`` (how it is invoked, for messages), ``build_parser`` (imports nothing
    heavy) and ``run`` (the work; returns the exit status).

    ``arguments``: functions that each add flags to the parser after ``build_parser`` (and before the
    flags of every command), for flags declared elsewhere than in the parser: e.g. one flag per field
    of a frozen configuration class, ``functools.partial(add_config_flags, FlowConfig)``, so that the
    class's fields (default, rule, help) are the command's flags and adding a field adds its flag. Each
    must import nothing heavy (``--help`` runs it).

    ``on_interrupt``: what was saved and what a rerun does, printed after ``interrupted;`` on a Ctrl-C
    that the run did not account for itself (:class:`theorydyn.infra.interrupt.Interrupted`).

    ``draws``: the default format of the figures the command writes (one of
    :data:`theorydyn.core.plotting.FORMATS`), for which the runner adds ``--format``; None for a command
    that draws nothing."""

    prog: str
    build_parser: Callable[[], argparse.ArgumentParser]
    run: Callable[[Invocation], int | None]
    arguments: tuple[Callable[[argparse.ArgumentParser], None], ...] = ()
    on_interrupt: str = NOTHING_SAVED
    draws: str | None = None

    def parser(self) -> argparse.ArgumentParser:
        """The command's parser with its declared :attr:`arguments`, ``--format`` when it draws
        (:attr:`draws`) and the flags of every command (:data:`GLOBAL_ARGUMENTS`)."""
        ap = self.build_parser()
        for add in self.arguments:
            add(ap)
        if self.draws is not None:
            _add_format(ap, self.draws)
        for add in GLOBAL_ARGUMENTS:
            add(ap)
        return ap

    def main(self, argv: Sequence[str] | None = None) -> int:
        return run_command(self, argv)


def _add_format(parser: argparse.ArgumentParser, default: str) -> None:
    """``--format``: the one declaration of the figures' file format, on every command that draws."""
    if default not in FORMATS:
        raise ValueError(f"draws must be one of {list(FORMATS)}, got draws={default!r}")
    parser.add_argument("--format", choices=FORMATS, default=default, help=f"{FORMAT_HELP} (default %(default)s)")


def solver_parser(
    prog: str,
    description: str,
    config: type,
    *,
    title: str,
    only: Sequence[str],
    run: str,
    out_help: str,
    defaults: Mapping[str, Any] | None = None,
    notes: Mapping[str, str] | None = None,
    switches: Mapping[str, str] | None = None,
) -> argparse.ArgumentParser:
    """The parser of a solver's command (``python -m theorydyn.reduced``, ``python -m theorydyn.simulate``):
    the Setting's flags; the group ``title`` with one flag per field ``only`` of the configuration class
    ``config`` (:func:`~theorydyn.cli.configs.add_config_flags`: their defaults, rules and help are the
    library's; ``defaults`` and ``notes`` as there) and the ``switches`` (flag → help); the
    configuration's ``--seed``; ``--out`` (default the run folder ``run``,
    :func:`~theorydyn.infra.paths.run_dir`; ``out_help``), ``--quiet`` and ``--force`` (the machine's memory)."""
    ap = _cli.ArgumentParser(prog=prog, description=description)
    _cli.add_setting_arguments(ap)
    g = ap.add_argument_group(title)
    add_config_flags(g, config, only=only, defaults=defaults, notes=notes)
    for flag, text in (switches or {}).items():
        g.add_argument(flag, action="store_true", help=text)
    add_config_flags(ap, config, only=("seed",))
    _cli.add_common_arguments(ap, seed=None, out=str(run_dir(run)), out_help=out_help, force="machine")
    return ap


def known_error(e: BaseException) -> tuple[int, str] | None:
    """(exit status, message) of an error the command layer reports in one line, or None (a bug:
    its traceback is shown). Every mapping of the commands is here."""
    store = sys.modules.get("theorydyn.infra.store")  # not imported: no store error can have been raised
    if store is not None and isinstance(e, store.StoreError):
        return 2, str(e)  # the store's own message names the file
    if isinstance(e, UnsafeTarget):  # a link or a folder at an output path, found when it was written
        return 2, f"{e} (remove it, or choose another --out); what was saved so far stays"
    sqlite = sys.modules.get("sqlite3")
    if sqlite is not None and isinstance(e, sqlite.DatabaseError):
        return 2, f"a results store is damaged ({e}); move it aside and rerun"
    if isinstance(e, OSError) and e.errno in (*_DISK_FULL, errno.EROFS, errno.EACCES, errno.EPERM):
        where = f" {e.filename!r}" if e.filename else ""
        reason = e.strerror or os.strerror(e.errno or 0)
        if e.errno == errno.EROFS:
            return 2, f"cannot write{where}: {reason} (a read-only file system); choose another --out"
        if e.errno in _DISK_FULL:
            return 1, f"cannot write{where}: {reason}; what was saved so far stays: free space and rerun to resume"
        return 1, f"cannot write{where}: {reason}; what was saved so far stays"
    if isinstance(e, RuntimeError) and "torch" in sys.modules and "file write failed" in str(e):
        # torch.save on a full disk raises RuntimeError ("PytorchStreamWriter failed writing file …: file
        # write failed"), not OSError: the same one line, the earlier checkpoint kept (atomic writes)
        return 1, f"cannot write a checkpoint ({str(e).splitlines()[-1].strip()}); free space and rerun to resume"
    return None


def _interrupted(command: Command, e: KeyboardInterrupt) -> int:
    """One line on stderr (none when the run printed its account already), status 130."""
    if isinstance(e, Interrupted):
        if not e.reported:
            print(f"\n{command.prog}: interrupted; {e.detail}", file=sys.stderr, flush=True)
    else:
        print(f"\n{command.prog}: interrupted; {command.on_interrupt}", file=sys.stderr, flush=True)
    return INTERRUPTED


def run_command(command: Command, argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: ``sys.argv[1:]``), run the command, map known errors (module docstring).

    Bad flags exit 2 through argparse (SystemExit, as ``main`` always did); a Ctrl-C at any point,
    in parsing or in the run, returns 130."""
    argv = None if argv is None else list(argv)
    try:
        parser = command.parser()
        args = parser.parse_args(argv)
        import matplotlib  # here, not at the top: --help and bad flags never load it

        matplotlib.use("Agg")
        return int(command.run(Invocation(command, parser, args, argv)) or 0)
    except KeyboardInterrupt as e:
        return _interrupted(command, e)
    except Exception as e:
        mapped = known_error(e)
        if mapped is None:
            raise
        print(f"{command.prog}: error: {mapped[1]}", file=sys.stderr)
        return mapped[0]
