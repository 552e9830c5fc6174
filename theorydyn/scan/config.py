"""The options of ``python -m theorydyn.scan`` itself (:class:`ScanConfig`): where the grid comes from, its
name, how its points run. The grid's own keys are the configurations' scanned fields
(:data:`theorydyn.scan.schema.OPTIONS`) and the Setting's; this module imports nothing heavy (``--help``
reads it)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.config import Config, option


@dataclass(frozen=True)
class ScanConfig(Config):
    """How the scan command reads its grid and runs its points (each field a flag of the command,
    :func:`theorydyn.cli.configs.add_config_flags`)."""

    spec: str | None = option(
        None,
        "a saved grid, scans/NAME.toml (flags given as well override its entries; default: none, the flags alone)",
        kind=str,
        optional=True,
    )
    name: str | None = option(None, "scan name (default: derived from the spec or the flags)", kind=str, optional=True)
    first_seed: int | None = option(
        None, "the first of the --seeds seeds, an integer >= 0 (default 0)", kind=int, low=0, optional=True, metavar="F"
    )
    workers: int = option(2, "local worker processes; 0 runs in this process", low=0)
    scheduler: str | None = option(
        None,
        "run on a Dask cluster, e.g. tcp://HOST:8786, or on Slurm jobs: slurm[:queue=Q,account=A,walltime="
        "HH:MM:SS,memory=4GB,cores=1,jobs=2] (needs the dask extra; default: local --workers)",
        kind=str,
        optional=True,
    )
    no_plots: bool = option(False, "skip the plots")
    runner: str | None = option(
        None,
        "advanced: 'module:function' computing one point (default theorydyn.scan.point:run_point)",
        kind=str,
        optional=True,
    )
