"""The options of one ``python -m theorydyn.figures`` run (:class:`FiguresConfig`), in a module that imports no
figure: the command takes its flags from the fields (:func:`theorydyn.cli.configs.add_config_flags`), so
``--help`` loads no solver.

Where the figures go: ``out`` (default ``<run dir>/figures``: ``$THEORYDYN_HOME`` or ``runs/``,
:mod:`theorydyn.infra.paths`), as ``format`` (default PDF, vector), each with its entry in
``out/manifest.json`` (:mod:`theorydyn.figures.manifest`). The committed figures of a checkout change only
when asked: ``--out figures --format svg`` (they are SVG, which GitHub and the docs show inline; another
format there is refused, :meth:`FiguresConfig.check_out`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..core.config import Config, option
from ..core.plotting import FORMATS
from ..infra.paths import committed_figures, run_dir
from .manifest import COMMITTED_FORMAT, DEFAULT_FORMAT, load_or_committed

#: the flags --list refuses when given (it makes no figure), in the order they are named
LIST_REFUSES = ("quick", "recompute", "write_readme", "readme_only", "quiet", "format")
#: the help of --quick and --full (theorydyn.cli.tools.add_size_arguments: one pair in every command)
QUICK_HELP = "small sizes, what is committed (default off: docs/theory.md §9 sizes)"
FULL_HELP = "docs/theory.md §9 sizes (the default)"


@dataclass(frozen=True)
class FiguresConfig(Config):
    """One run of the figures command: the ``figures`` named (``all``: every registered one) made at the
    ``quick`` sizes or the full ones, every cache ignored with ``recompute``, into ``out`` (None: the run
    directory's) as ``format``; or, with ``readme_only``, no figure, only the README text
    (``write_readme``: also into ``out/README.md``); or, with ``listing``, the figures listed and nothing
    written."""

    figures: tuple[str, ...] = option(
        ("all",),
        "figures to make, space-separated: all, or any of the names --list shows",
        many=True,
        flag="names",
        dest="names",
        nargs="*",
        flag_help="figures to make, space-separated: all, or any of the names --list shows (default ['all'])",
    )
    out: Path | None = option(
        None,
        "output folder (the committed figures: --out figures --format svg), created and proven writable before "
        "any work; holds the figures, manifest.json and README.generated.md",
        kind=object,
        optional=True,
        parse="path",
    )
    quick: bool = option(False, QUICK_HELP, cli=False)
    recompute: bool = option(
        False,
        "ignore every cache (scan rows, the transfer folder, the vision runs); the cost is then measured cold "
        "(default off)",
    )
    write_readme: bool = option(
        False,
        "also rewrite --out/README.md from the registry and the manifest (default off: the text goes to "
        "--out/README.generated.md only)",
    )
    readme_only: bool = option(
        False,
        "make no figure: only write the README text from the registry and --out/manifest.json (with "
        "--write-readme: into --out/README.md) (default off)",
    )
    listing: bool = option(
        False,
        "list the figures with their measured cost (from --out/manifest.json) and whether their cached inputs "
        "are present; writes nothing (default off)",
        flag="--list",
        dest="list",
    )
    format: str = option(DEFAULT_FORMAT, "the figures' file format", choices=FORMATS, cli=False)

    @property
    def folder(self) -> Path:
        """``out``, or else the run directory's ``figures/`` (:func:`~theorydyn.infra.paths.run_dir`)."""
        return self.out if self.out is not None else run_dir("figures")

    @property
    def every(self) -> bool:
        """Whether ``figures`` asks for every figure (``all``, the default)."""
        return not self.figures or "all" in self.figures

    def selected(self, known: Iterable[str]) -> list[str]:
        """The figures to make, in the order ``known`` (the registry's) for ``all``, else as named (once each);
        none with ``readme_only``.

        Raises:
            ValueError: a name that is not known (``names: unknown figure(s) …``).
        """
        known = list(known)
        names = known if self.every else list(dict.fromkeys(self.figures))
        bad = [n for n in names if n not in known]
        if bad:
            raise ValueError(f"names: unknown figure(s) {bad}; known: all, {', '.join(known)}")
        return [] if self.readme_only else names

    def check_list(self, given: Collection[str]) -> None:
        """With ``listing``, raises ValueError naming the first flag that would do nothing (it lists every
        figure and makes none): one of :data:`LIST_REFUSES` in ``given`` (the flags given explicitly, by
        their destinations), or names."""
        if not self.listing:
            return
        for flag in LIST_REFUSES:
            if flag in given:
                raise ValueError(
                    f"--{flag.replace('_', '-')}: has no effect with --list (it lists the figures and makes none)"
                )
        if self.figures not in ((), ("all",)):
            raise ValueError("names: have no effect with --list (it lists every figure)")

    def manifest(self, out: Path) -> dict[str, dict]:
        """The manifest of ``out``, or the committed one (:func:`theorydyn.figures.manifest.load_or_committed`).

        Raises:
            ValueError: one that cannot be read (``--out: …``).
        """
        try:
            return load_or_committed(out)
        except ValueError as e:
            raise ValueError(f"--out: {e}") from None

    def check_out(self, out: Path) -> None:
        """Unless ``listing``, raises ValueError naming the flag when the run would make nothing it was asked for
        or write the wrong format: ``readme_only`` with names, ``quick`` or ``recompute``; figures into the
        checkout's committed folder ``out`` in a format other than
        :data:`~theorydyn.figures.manifest.COMMITTED_FORMAT`."""
        if self.listing:
            return
        if self.readme_only and (self.figures not in ((), ("all",)) or self.quick or self.recompute):
            raise ValueError("--readme-only: makes no figure, so takes no names, --quick or --recompute")
        shipped = committed_figures()
        if shipped is None or self.readme_only or self.format == COMMITTED_FORMAT:
            return
        if out.resolve() == shipped.resolve():
            raise ValueError(
                f"--format: the committed figures are {COMMITTED_FORMAT.upper()} (GitHub and the docs show them "
                f"inline); use --format {COMMITTED_FORMAT} with --out {self.folder}, or another --out for {self.format}"
            )
