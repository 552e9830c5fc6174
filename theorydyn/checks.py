"""The record of one numerical check of a claim of the paper.

Every check in theorydyn (``theorems``, ``reduced``, ``simulate``, ``transfer``) returns
:class:`Check` records; ``python -m theorydyn.verify`` collects them into one table.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Check:
    """One claim checked at one size.

    Attributes:
        claim: where the claim is stated, e.g. ``"Theorem 3.1"``, ``"Lemma 4.3"``, ``"Definition 2.2"``.
        quantity: what was measured, in words, e.g. ``"min over GLMs of Pr[f g <= 0]"``.
        measured: the measured value.
        threshold: the value it is compared with, in words or as a number, e.g. ``">= 0.125"``.
        passed: whether the measured value satisfies the claim.
        params: the parameters of the measurement (setting, N, seeds …).
        note: anything a reader must know to interpret the verdict.
    """

    claim: str
    quantity: str
    measured: float
    threshold: str
    passed: bool
    params: dict[str, Any] = field(default_factory=dict)
    note: str = ""

    @property
    def verdict(self) -> str:
        return "PASS" if self.passed else "FAIL"

    def row(self) -> dict[str, Any]:
        """A flat dict for a pandas row (params rendered as text)."""
        out = asdict(self)
        out["verdict"] = self.verdict
        out["params"] = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return out
