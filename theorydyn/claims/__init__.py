"""The paper's claims, each checked numerically: one module per claim, one record type, one registry.

A claim module (see docs/adding_a_claim.md) defines two functions:

* ``checks(s: Setting, *, quick: bool, progress) -> list[Check]`` — the ledger rows of the claim
  at the ledger's setting ``s`` (a module measured at its own setting says so in its rows'
  params), ``quick`` for the quick sizes, ``progress`` a callable taking a message (or None);
  further keyword-only options must have defaults;
* ``memory(s: Setting, quick: bool) -> MemoryEstimate`` — the estimated peak of ``checks``
  (``.total`` bytes), built from the estimates of :mod:`theorydyn.resources`, so that ``verify``
  refuses a run that would not fit before any check starts. A claim with options of its own (the
  reduced flow's ``s_max``, ``n_samples``, ``seed`` for ``dynamics``) gets them, from
  ``verify``'s flags, in both ``checks`` and ``memory`` as keywords.

:data:`REGISTRY` maps a claim's name to its module path; modules are imported on use
(:func:`load`), since some need optional extras (torch). ``python -m theorydyn.verify`` runs the
registered claims in registry order and collects their rows; :data:`GROUPS` keeps the names of
the earlier ledger (``reduced``, ``theorems``) as groups of modules.

* :mod:`.check` — :class:`Check` (one row of the ledger) and :class:`Verdict`;
* :mod:`.definition21` — Definition 2.1 (the labels agree with f, exactly);
* :mod:`.parametrization31` — Parametrization 3.1 (the scales of A(0) = P Pᵀ);
* :mod:`.dynamics` — the idealized dynamics: Lemma 4.3, Events I–III, Theorem 4.1;
* :mod:`.theorem31`, :mod:`.theorem32` — Theorems 3.1 and 3.2;
* :mod:`.lemma41` — Lemma 4.1 (on the population, and its break at finite N);
* :mod:`.theorem4` — Theorem 4.2 at finite N (with Lemma 4.2 and Figure 4 from its runs);
* :mod:`.nstar` — N*(D), the N Theorem 4.2 needs against D;
* :mod:`.transfer` — Theorems 5.1 and 5.2; :mod:`.figure2` — Figure 2; :mod:`.vision` — Section 6;
* :mod:`.semirealistic` — finite-sample GD against the reduced dynamics (a figure, no rows).

``python -m theorydyn.claims`` (also ``theorydyn theorems``) prints the theorem rows alone.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the row types, for type checkers; at run time .check (NumPy, SciPy) loads on first use
    from .check import LEDGER_COLUMNS, Check, Verdict

__getattr__, __dir__ = lazy_exports(__name__, {"LEDGER_COLUMNS": ".check", "Check": ".check", "Verdict": ".check"})

#: claim name → module path, in ledger order. Adding a claim: one module and one line here.
REGISTRY: dict[str, str] = {
    "definition21": "theorydyn.claims.definition21",
    "parametrization31": "theorydyn.claims.parametrization31",
    "dynamics": "theorydyn.claims.dynamics",
    "theorem31": "theorydyn.claims.theorem31",
    "theorem32": "theorydyn.claims.theorem32",
    "lemma41": "theorydyn.claims.lemma41",
    "theorem4": "theorydyn.claims.theorem4",
    "nstar": "theorydyn.claims.nstar",
    "transfer": "theorydyn.claims.transfer",
    "figure2": "theorydyn.claims.figure2",
    "vision": "theorydyn.claims.vision",
}

#: Seconds each claim took cold (empty store and caches) on the 2-core CI-class machine at D = 64,
#: C = 4, as ``(quick, full)`` (None: not measured), from one cold ``verify --D 64 --C 4 [--quick]`` each
#: (load 1.2-2.0; full mode's vision is the quick mode's, the same runs): the progress bar's
#: weight for a claim that never ran in the store at hand (:func:`expected_seconds`), so that a cold
#: ledger's ETA means something. Not a budget: a claim takes what it takes.
COLD_SECONDS: dict[str, tuple[float, float | None]] = {
    "definition21": (1.0, 1.0),
    "parametrization31": (1.0, 1.0),
    "dynamics": (4.0, 4.0),
    "theorem31": (18.0, 25.0),
    "theorem32": (2.0, 22.0),
    "lemma41": (17.0, 62.0),
    "theorem4": (19.0, 320.0),
    "nstar": (14.0, 633.0),
    "transfer": (29.0, 117.0),
    "figure2": (12.0, 80.0),
    "vision": (1450.0, 1450.0),
}


def expected_seconds(name: str, quick: bool) -> float | None:
    """The cold seconds of claim ``name`` measured on the CI-class machine (:data:`COLD_SECONDS`), or
    None when that mode was not measured; full-mode claims not measured get None (the caller's guess)."""
    quick_s, full_s = COLD_SECONDS.get(name, (None, None))
    return quick_s if quick else full_s


#: names of the earlier ledger's sources → the claims they now are (``verify --only reduced theorems``)
GROUPS: dict[str, tuple[str, ...]] = {
    "reduced": ("dynamics",),
    "theorems": ("theorem31", "theorem32", "lemma41", "theorem4", "nstar"),
}


def names() -> list[str]:
    """Every name ``verify --only`` accepts: the registered claims and the groups."""
    return sorted({*REGISTRY, *GROUPS})


def select(only: list[str] | None) -> list[str]:
    """The registered claims named by ``only`` (claims or groups), in registry order; all when empty.

    Raises:
        ValueError: for a name that is neither a claim nor a group.
    """
    if not only:
        return list(REGISTRY)
    unknown = [x for x in only if x not in REGISTRY and x not in GROUPS]
    if unknown:
        raise ValueError(f"unknown claim {unknown[0]!r}; choose from {', '.join(names())}")
    wanted = {m for x in only for m in GROUPS.get(x, (x,))}
    return [name for name in REGISTRY if name in wanted]


def load(name: str) -> ModuleType:
    """The module of a registered claim, imported now.

    Raises:
        KeyError: for a name that is not registered.
        ImportError: when the module (or an extra it needs) is not installed, or lacks ``checks``
            or ``memory`` — a claim that cannot run (``verify`` turns it into a SKIP row).
    """
    return load_path(REGISTRY[name])


def load_path(path: str) -> ModuleType:
    """The claim module at the import ``path``, checked like :func:`load` (workers and the ledger's
    store find a claim by its path).

    Raises:
        ImportError: as :func:`load`.
    """
    try:
        mod = importlib.import_module(path)
    except ModuleNotFoundError as e:
        raise ImportError(f"{path} is not installed ({e})") from e
    for fn in ("checks", "memory"):
        if not callable(getattr(mod, fn, None)):
            raise ImportError(f"{path} has no {fn}() (docs/adding_a_claim.md)")
    return mod


__all__ = [
    "COLD_SECONDS",
    "GROUPS",
    "LEDGER_COLUMNS",
    "REGISTRY",
    "Check",
    "Verdict",
    "expected_seconds",
    "load",
    "load_path",
    "names",
    "select",
]
