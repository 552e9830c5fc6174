"""The paper's claims, each checked numerically: one module per claim, one record type, one registry.

A claim module (see docs/adding_a_claim.md) declares its sizes once, ``SIZES = Sizes(quick=…, full=…)``
(:class:`~theorydyn.claims.sizes.Sizes`: two instances of one frozen, validated
:class:`~theorydyn.core.config.Config`, read only through ``SIZES.pick(quick)``; seeds as
:data:`~theorydyn.core.config.Seeds`), and defines two functions:

* ``checks(s: Setting, *, quick: bool, progress) -> list[Check]`` — the ledger rows of the claim
  (or, for a claim that only judges, ``EXPERIMENT`` (a ``run(s, config, progress)`` of
  :mod:`theorydyn.experiments`), ``config(s, quick)`` and ``rows(results) -> list[Check]``: the ledger
  runs the experiment and the claim judges its results, :func:`judge`: every claim but transfer, Figure 2,
  vision and GPU)
  at the ledger's setting ``s`` (a module measured at its own setting says so in its rows'
  params), ``quick`` for the quick sizes, ``progress`` a callable taking a message (or None);
  further keyword-only options must have defaults;
* ``memory(s: Setting, quick: bool) -> MemoryEstimate`` — the estimated peak of ``checks``
  (``.total`` bytes), built from the estimates of :mod:`theorydyn.infra.memory`, so that ``verify``
  refuses a run that would not fit before any check starts. A claim with options of its own (the
  reduced flow's ``s_max``, ``n_samples``, ``seed`` for ``dynamics``) gets them, from
  ``verify``'s flags, in both ``checks`` and ``memory`` as keywords.

:mod:`.registry` holds the registry: one :class:`Claim` record per claim (its name, one-line summary,
cold seconds and the groups it belongs to), declared by ``@claim(…)`` on a loader that imports its
module, in ledger order. Every other view is derived from it: :data:`REGISTRY` (name → module path),
:data:`COLD_SECONDS`, :data:`GROUPS`, :func:`names`, :func:`select` and :func:`listing` (the list of
claims). Modules are imported on use (:func:`load`), since some need optional extras (torch).
``python -m theorydyn.verify`` runs the registered claims in registry order and collects their rows;
:data:`GROUPS` keeps the names of the earlier ledger (``reduced``, ``theorems``) as groups of claims.

* :mod:`.registry` — the records and the views derived from them;
* :mod:`.check` — :class:`Check` (one row of the ledger) and :class:`Verdict`;
* :mod:`.sizes` — :class:`~.sizes.Sizes` (a claim's quick and full sizes) and :class:`~.sizes.ClaimSizes`;
* :mod:`.semirealistic` — finite-sample GD against the reduced dynamics: the closeness rows of
  Theorem 4.2's proof (``check_closeness``, called from :mod:`theorydyn.claims.theorem4`);
* :mod:`.persistence` — patch association along the whole run (rows of :mod:`.theorem4`).

``theorydyn theorems`` (``python -m theorydyn.theorems``) is ``verify --only theorems``.
``python -m theorydyn.claims`` prints the theorem rows alone (its own flags: ``--only 3.1 3.2``,
``--figure31``).
"""

from typing import TYPE_CHECKING

from ..infra._lazy import lazy_exports

# Every name loads on first use: the row types (.check) need NumPy and SciPy, and a claim module, which
# imports this package, must not import the registry (its store key would then be every claim's code).
if TYPE_CHECKING:
    from .check import LEDGER_COLUMNS, Check, Verdict
    from .registry import (
        CLAIMS,
        COLD_SECONDS,
        GROUPS,
        REGISTRY,
        Claim,
        claim,
        expected_seconds,
        groups_text,
        judge,
        listing,
        load,
        load_path,
        names,
        select,
    )

__all__ = [
    "CLAIMS",
    "COLD_SECONDS",
    "GROUPS",
    "LEDGER_COLUMNS",
    "Claim",
    "REGISTRY",
    "Check",
    "Verdict",
    "claim",
    "expected_seconds",
    "groups_text",
    "judge",
    "listing",
    "load",
    "load_path",
    "names",
    "select",
]
__getattr__, __dir__ = lazy_exports(__name__)
