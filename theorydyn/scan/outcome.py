"""What a scan did (:class:`ScanOutcome`): the record :func:`theorydyn.scan.run.run_scan` returns and
:func:`theorydyn.scan.summary.summary_text` reads, apart from both so neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd


@dataclass
class ScanOutcome:
    """What a scan did: its rows (this scan's points only), counts and where things went."""

    name: str
    frame: pd.DataFrame
    computed: int
    skipped: int
    failed: list[tuple[str, str]] = field(default_factory=list)
    lost: int = 0
    wall_s: float = 0.0
    results: Path | None = None
    plots: list[Path] = field(default_factory=list)
    exponents: dict[str, dict | None] = field(default_factory=dict)
    summary_csv: Path | None = None
    #: points whose rows another scan of the results folder had stored: key -> that scan's name
    reused: dict[str, str] = field(default_factory=dict)
    export_failed: bool = False  # the CSV export could not be written (a full disk): the rows are in the store

    @property
    def exit_code(self) -> int:
        return 1 if (self.failed or self.lost or self.export_failed) else 0
