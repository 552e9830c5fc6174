"""The paper's claims, each checked numerically: one module per claim family, one record type.

* :mod:`.check` — :class:`Check` (one row of the ledger) and :class:`Verdict`;
* :mod:`.theorems` — Theorems 3.1, 3.2, 4.1, 4.2 and Lemma 4.1;
* :mod:`.semirealistic` — finite-sample GD against the reduced dynamics (Theorem 4.2's proof).

``python -m theorydyn.verify`` collects every check into the ledger; ``python -m
theorydyn.claims`` (also ``python -m theorydyn.theorems``) prints the theorem checks alone.
"""

from .check import LEDGER_COLUMNS, Check, Verdict

__all__ = ["LEDGER_COLUMNS", "Check", "Verdict"]
