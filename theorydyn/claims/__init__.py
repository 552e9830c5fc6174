"""The paper's claims, each checked numerically: one module per claim, one record type, one registry.

A claim module (see docs/adding_a_claim.md) declares its sizes once, ``SIZES = Sizes(quick=…, full=…)``
(:class:`~theorydyn.claims.sizes.Sizes`: two instances of one frozen, validated
:class:`~theorydyn.core.config.Config`, read only through ``SIZES.pick(quick)``; seeds as
:data:`~theorydyn.core.config.Seeds`), and defines two functions:

* ``checks(s: Setting, *, quick: bool, progress) -> list[Check]`` — the ledger rows of the claim
  at the ledger's setting ``s`` (a module measured at its own setting says so in its rows'
  params), ``quick`` for the quick sizes, ``progress`` a callable taking a message (or None);
  further keyword-only options must have defaults;
* ``memory(s: Setting, quick: bool) -> MemoryEstimate`` — the estimated peak of ``checks``
  (``.total`` bytes), built from the estimates of :mod:`theorydyn.infra.memory`, so that ``verify``
  refuses a run that would not fit before any check starts. A claim with options of its own (the
  reduced flow's ``s_max``, ``n_samples``, ``seed`` for ``dynamics``) gets them, from
  ``verify``'s flags, in both ``checks`` and ``memory`` as keywords.

:data:`CLAIMS` is the registry: one :class:`Claim` record per claim (its name, module path,
one-line summary, cold seconds and the groups it belongs to), in ledger order. Every other view is
derived from it: :data:`REGISTRY` (name → module path), :data:`COLD_SECONDS`, :data:`GROUPS`,
:func:`names`, :func:`select` and the list below. Modules are imported on use (:func:`load`), since
some need optional extras (torch). ``python -m theorydyn.verify`` runs the registered claims in
registry order and collects their rows; :data:`GROUPS` keeps the names of the earlier ledger
(``reduced``, ``theorems``) as groups of claims.

* :mod:`.check` — :class:`Check` (one row of the ledger) and :class:`Verdict`;
* :mod:`.sizes` — :class:`~.sizes.Sizes` (a claim's quick and full sizes) and :class:`~.sizes.ClaimSizes`;
* :mod:`.semirealistic` — finite-sample GD against the reduced dynamics: the closeness rows of
  Theorem 4.2's proof (``check_closeness``, called from :mod:`theorydyn.claims.theorem4`);
* :mod:`.persistence` — patch association along the whole run (rows of :mod:`.theorem4`).

The registered claims (from :data:`CLAIMS`):

{claims}

``theorydyn theorems`` (``python -m theorydyn.theorems``) is ``verify --only theorems``.
``python -m theorydyn.claims`` prints the theorem rows alone (its own flags: ``--only 3.1 3.2``,
``--figure31``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

from ..infra._lazy import lazy_exports
from ..infra.registry import Entry, table

if TYPE_CHECKING:  # the row types, for type checkers; at run time .check (NumPy, SciPy) loads on first use
    from .check import LEDGER_COLUMNS, Check, Verdict

__getattr__, __dir__ = lazy_exports(__name__, {"LEDGER_COLUMNS": ".check", "Check": ".check", "Verdict": ".check"})


@dataclass(frozen=True)
class Claim(Entry):
    """One registered claim (:class:`theorydyn.infra.registry.Entry`: ``name``, ``module``, ``summary``).

    Attributes:
        cold_seconds: seconds the claim took cold (empty store and caches) on the 2-core CI-class
            machine at D = 64, C = 4, as ``(quick, full)`` (None: not measured), from one cold
            ``verify --D 64 --C 4 [--quick]`` each (load 1.2-2.0; full mode's vision is the quick
            mode's, the same runs): the progress bar's weight for a claim that never ran in the store
            at hand (:func:`expected_seconds`), so that a cold ledger's ETA means something. Not a
            budget: a claim takes what it takes.
        groups: the groups of the earlier ledger it belongs to (``verify --only reduced``,
            ``--only theorems``).
    """

    cold_seconds: tuple[float | None, float | None] = (None, None)
    groups: tuple[str, ...] = ()


def _claim(name: str, summary: str, quick_s: float, full_s: float | None, *groups: str) -> Claim:
    return Claim(name, f"{__name__}.{name}", summary, (quick_s, full_s), groups)


#: The registry: one record per claim, in ledger order. Adding a claim: one module and one record here.
CLAIMS: tuple[Claim, ...] = (
    _claim("definition21", "Definition 2.1: the labels agree with f, exactly", 1.0, 1.0),
    _claim("parametrization31", "Parametrization 3.1: the scales of A(0) = P Pᵀ", 1.0, 1.0),
    _claim("dynamics", "the idealized dynamics: Lemma 4.3, Events I–III, Theorem 4.1", 4.0, 4.0, "reduced"),
    _claim("theorem31", "Theorem 3.1: a generalized linear model errs", 18.0, 25.0, "theorems"),
    _claim("theorem32", "Theorem 3.2: positional attention fits f without patch association", 2.0, 22.0, "theorems"),
    _claim("lemma41", "Lemma 4.1: the three-value form of Â, on (P) and at finite N", 17.0, 62.0, "theorems"),
    _claim("theorem4", "Theorem 4.2 at finite N, with Lemma 4.2 and Figure 4 from its runs", 19.0, 320.0, "theorems"),
    _claim("nstar", "N*(D): the N Theorem 4.2 needs against D", 14.0, 633.0, "theorems"),
    _claim("transfer", "Theorems 5.1 and 5.2: downstream sample complexity", 29.0, 117.0),
    _claim("figure2", "Figure 2: the paper's own experiment, verdicts over seeds", 12.0, 80.0),
    _claim("vision", "Section 6: the paper's datasets when present, 8×8 digits as a proxy", 1450.0, 1450.0),
    _claim("gpu", "Theorem 4.2 and N*(D) on a CUDA device, D = 128 and 256 (NOT_RUN without one)", 0.1, 0.1),
)

#: claim name → module path, in ledger order (derived from :data:`CLAIMS`; tests may replace it)
REGISTRY: dict[str, str] = {c.name: c.module for c in table(CLAIMS).values()}

#: claim name → ``(quick, full)`` cold seconds (:attr:`Claim.cold_seconds`, derived from :data:`CLAIMS`)
COLD_SECONDS: dict[str, tuple[float | None, float | None]] = {c.name: c.cold_seconds for c in CLAIMS}


def expected_seconds(name: str, quick: bool) -> float | None:
    """The cold seconds of claim ``name`` measured on the CI-class machine (:data:`COLD_SECONDS`), or
    None when that mode was not measured; full-mode claims not measured get None (the caller's guess)."""
    quick_s, full_s = COLD_SECONDS.get(name, (None, None))
    return quick_s if quick else full_s


#: group → its claims in ledger order (``verify --only reduced theorems``), derived from :data:`CLAIMS`
GROUPS: dict[str, tuple[str, ...]] = {
    g: tuple(c.name for c in CLAIMS if g in c.groups) for g in dict.fromkeys(g for c in CLAIMS for g in c.groups)
}


def listing(claims: tuple[Claim, ...] = CLAIMS) -> str:
    """The claims as a reST list, ``* ``name`` — summary`` (the module docstring's list, the docs')."""
    return "\n".join(f"* ``{c.name}`` — {c.summary}" for c in claims)


def groups_text() -> str:
    """``reduced (= dynamics) and theorems (= theorem31 …)``: the groups in words (``verify --help``)."""
    return " and ".join(f"{g} (= {' '.join(members)})" for g, members in GROUPS.items())


if __doc__:  # the list of claims in the docstring is made from the records (python -OO strips docstrings)
    __doc__ = __doc__.replace("{claims}", listing())


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
    "CLAIMS",
    "COLD_SECONDS",
    "GROUPS",
    "LEDGER_COLUMNS",
    "Claim",
    "REGISTRY",
    "Check",
    "Verdict",
    "expected_seconds",
    "groups_text",
    "listing",
    "load",
    "load_path",
    "names",
    "select",
]
