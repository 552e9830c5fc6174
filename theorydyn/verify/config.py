"""The options of one ledger run (:class:`LedgerConfig`), in a module that imports no claim:
``python -m theorydyn.verify`` takes its flags from the fields (:func:`theorydyn.cli.configs.add_config_flags`),
the ledger's files their names (:func:`theorydyn.verify.ledger_name`) and the claims their options."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.config import Config, option
from ..infra.limits import S_MAX_MAX, S_MAX_MIN

#: The claim that takes the reduced flow's options (:attr:`LedgerConfig.options`)
REDUCED_CLAIM = "dynamics"


@dataclass(frozen=True)
class LedgerConfig(Config):
    """One ledger run: ``quick`` (the smaller sizes of every claim), ``only`` (claim names or groups,
    :func:`theorydyn.claims.select`; None: every claim), the reduced flow's ``s_max``, ``n_samples`` and
    ``seed`` (None: the claim's own default), ``detail`` (print every row), ``scheduler`` (a Dask cluster's
    address; None: here, one claim after the other) and ``fresh`` (start over: recompute the stored claims)."""

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
    fresh: bool = option(False, "start over: the selected claims computed again", cli=False)

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
