"""The options of one ledger run (:class:`LedgerConfig`), in a module that imports no claim:
``python -m theorydyn.verify`` takes its flags from the fields (:func:`theorydyn.cli.configs.add_config_flags`),
the ledger's files their names (:func:`theorydyn.verify.ledger_name`) and the claims their options."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.config import Config, option
from ..infra.limits import S_MAX_MAX, S_MAX_MIN
from .defaults import DEFAULT_DIR, DEFAULT_LEDGER

#: The claim that takes the reduced flow's options (:attr:`LedgerConfig.options`)
REDUCED_CLAIM = "dynamics"


@dataclass(frozen=True)
class LedgerConfig(Config):
    """One ledger run: ``quick`` (the smaller sizes of every claim), ``only`` (claim names or groups,
    :func:`theorydyn.claims.select`; None: every claim), the reduced flow's ``s_max``, ``n_samples`` and
    ``seed`` (None: the claim's own default), ``out`` (the results folder or the ledger CSV; None: the
    default folder), ``detail`` (print every row), ``scheduler`` (a Dask cluster's address; None: here,
    one claim after the other) and ``fresh`` (start over: what its help names is set aside and computed
    again). ``markdown`` and ``report`` (None: not asked; "": the CSV these options name; else a CSV's
    path) read a saved ledger instead of running one (their flags take an optional value: the command
    adds them)."""

    quick: bool = option(False, "the quick ledger: the smaller sizes of every claim", cli=False)
    only: list[str] | None = option(None, "the claims run (None: every claim)", kind=object, optional=True, cli=False)
    s_max: float | None = option(
        None,
        "horizon of the reduced flow (default reduced.default_horizon(D) = 2e4·max(1, D/64)^1.5)",
        kind=float,
        low=S_MAX_MIN,
        high=S_MAX_MAX,
        optional=True,
    )
    n_samples: int | None = option(
        None,
        "Monte Carlo samples of the reduced risk per seed, >= 2 (default 4000; 1500 with --quick)",
        kind=int,
        low=2,
        optional=True,
    )
    seed: int | None = option(
        None, "first seed of the reduced flows (seeds seed … seed+4; default 0)", kind=int, low=0, optional=True
    )
    out: Path | None = option(
        None,
        f"output folder (default {DEFAULT_DIR}): the ledger CSV is OUT/{DEFAULT_LEDGER} "
        "(named by every parameter that differs from the default, the selection and quick/full), the stored "
        "claims OUT/results.sqlite. A path ending in .csv names the CSV itself, its folder holding the store. "
        "Created and proven writable before any check",
        kind=object,
        parse="path",
        optional=True,
    )
    markdown: str | None = option(
        None,
        "print a ledger CSV as Markdown, the summary (one line per claim) then every row (default: the CSV "
        "these flags would write) and exit, without running any check",
        kind=str,
        optional=True,
        cli=False,
    )
    report: str | None = option(
        None,
        "write a ledger CSV as one self-contained HTML page (the summary, each claim's committed figures and "
        "rows, the setting and provenance; it loads nothing from the network) and exit, without running any "
        "check. CSV: default the one these flags would write, the page beside it; a CSV given: the page goes "
        f"to --out (a folder, or a path ending in .html; default {DEFAULT_DIR})",
        kind=str,
        optional=True,
        cli=False,
    )
    detail: bool = option(
        False,
        "also print every row (the ledger's table, wrapped to the terminal) and the seconds of each claim "
        "before the summary (default: the summary alone, one line per claim; every row is in the CSV)",
    )
    scheduler: str | None = option(
        None,
        "run the claims on a Dask cluster, one task per claim, e.g. tcp://HOST:8786, as scan --scheduler "
        "does (needs the dask extra; default: one after the other in this process)",
        kind=str,
        optional=True,
        metavar="ADDRESS",
    )
    fresh: bool = option(
        False,
        "the selected claims' stored results (reused by default when their setting, options, code and library "
        "versions match) and the ledger CSV",
        cli=False,
    )

    #: the reduced flow's fields: options of the claim :data:`REDUCED_CLAIM`, and parts of the ledger's name
    REDUCED = ("s_max", "n_samples", "seed")

    @property
    def options(self) -> dict[str, dict[str, Any]]:
        """The claims' extra keyword arguments (:func:`theorydyn.verify.collect`): the reduced flow's fields
        for its checks and its memory alike (seed 0 when not given)."""
        return {REDUCED_CLAIM: dict(s_max=self.s_max, n_samples=self.n_samples, seed=self.seed or 0)}

    @property
    def extra(self) -> dict[str, Any]:
        """The reduced flow's fields given, as they name the ledger's file (a seed 0 is the default ledger's)."""
        return dict(s_max=self.s_max, n_samples=self.n_samples, seed=self.seed or None)

    @property
    def saved(self) -> tuple[str, str] | None:
        """(flag, value) of the mode that reads a saved ledger (``--markdown`` first), or None: a run."""
        if self.markdown is not None:
            return "--markdown", self.markdown
        return None if self.report is None else ("--report", self.report)

    def check_selection(self) -> None:
        """Raises ValueError naming the first of the reduced flow's flags given (``--s-max: …``) when the
        selection ``only`` leaves out the claim that reads them: given, they would do nothing."""
        from .. import claims
        from ..cli.configs import flag_of

        given = [name for name in self.REDUCED if getattr(self, name) is not None]
        if given and REDUCED_CLAIM not in claims.select(self.only):
            raise ValueError(
                f"{flag_of(LedgerConfig, given[0])}: only used by the reduced dynamics (dynamics, or the group "
                "reduced), which --only leaves out"
            )
