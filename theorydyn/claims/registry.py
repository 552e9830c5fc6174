"""The claim registry: one :class:`Claim` record per claim of the paper, declared by :data:`claim`, in ledger order.

Each record is its name (``verify --only NAME``), one line saying what it checks, its cold seconds
and its groups, declared on a loader that imports the claim's module (:mod:`theorydyn.infra.registry`);
declaring imports nothing of a claim. Every other view is derived from the records: :data:`CLAIMS`,
:data:`REGISTRY` (name → module path, read from the loaders' imports), :data:`COLD_SECONDS`,
:data:`GROUPS`, :func:`names`, :func:`select`, ``verify --only``'s choices and help, and the tests'
expectations. Adding a claim: its module and one record here (docs/adding_a_claim.md).

The package :mod:`theorydyn.claims` re-exports these names; a test may replace its ``REGISTRY`` or
``GROUPS`` (``tests/conftest.py::register_claims``), and :func:`names`, :func:`select` and :func:`load`
read them there. The claim modules never import this one: a claim's stored rows are keyed by the
sources it imports (:mod:`theorydyn.verify.ledger`), which are then its own, not every claim's.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..infra.registry import Entry, Registry

if TYPE_CHECKING:
    from ..core.setting import Setting
    from .check import Check


@dataclass(frozen=True)
class Claim(Entry):
    """One registered claim (:class:`theorydyn.infra.registry.Entry`: ``name``, ``summary``, ``loader``).

    Attributes:
        cold: seconds the claim took cold (empty store and caches) on the 2-core CI-class
            machine at D = 64, C = 4, as ``(quick, full)`` (None: not measured), from one cold
            ``verify --D 64 --C 4 [--quick]`` each (load 1.2-2.0; full mode's vision is the quick
            mode's, the same runs): the progress bar's weight for a claim that never ran in the store
            at hand (:func:`expected_seconds`), so that a cold ledger's ETA means something. Not a
            budget: a claim takes what it takes.
        groups: the groups of the earlier ledger it belongs to (``verify --only reduced``,
            ``--only theorems``).
    """

    cold: tuple[float | None, float | None] = (None, None)
    groups: tuple[str, ...] = ()


#: The decorator declaring a claim: ``@claim(name, summary, cold=(quick_s, full_s), groups=(…))`` on its loader.
claim: Registry[Claim] = Registry(Claim)


@claim("definition21", "Definition 2.1: the labels agree with f, exactly", cold=(1.0, 1.0))
def _definition21() -> ModuleType:
    from . import definition21

    return definition21


@claim("assumption1", "Assumption 1: the sampler's data have the paper's law", cold=(3.0, 15.0))
def _assumption1() -> ModuleType:
    from . import assumption1

    return assumption1


@claim("parametrization31", "Parametrization 3.1: the scales of A(0) = P Pᵀ", cold=(1.0, 1.0))
def _parametrization31() -> ModuleType:
    from . import parametrization31

    return parametrization31


@claim("dynamics", "the idealized dynamics: Lemma 4.3, Events I–III, Theorem 4.1", cold=(4.0, 4.0), groups=("reduced",))
def _dynamics() -> ModuleType:
    from . import dynamics

    return dynamics


@claim("theorem31", "Theorem 3.1: a generalized linear model errs", cold=(18.0, 25.0), groups=("theorems",))
def _theorem31() -> ModuleType:
    from . import theorem31

    return theorem31


@claim(
    "theorem32",
    "Theorem 3.2: positional attention fits f without patch association",
    cold=(2.0, 22.0),
    groups=("theorems",),
)
def _theorem32() -> ModuleType:
    from . import theorem32

    return theorem32


@claim(
    "lemma41", "Lemma 4.1: the three-value form of Â, on (P) and at finite N", cold=(17.0, 62.0), groups=("theorems",)
)
def _lemma41() -> ModuleType:
    from . import lemma41

    return lemma41


@claim(
    "theorem4",
    "Theorem 4.2 at finite N, with Lemma 4.2 and Figure 4 from its runs",
    cold=(19.0, 320.0),
    groups=("theorems",),
)
def _theorem4() -> ModuleType:
    from . import theorem4

    return theorem4


@claim("nstar", "N*(D): the N Theorem 4.2 needs against D", cold=(14.0, 633.0), groups=("theorems",))
def _nstar() -> ModuleType:
    from . import nstar

    return nstar


@claim("transfer", "Theorems 5.1 and 5.2: downstream sample complexity", cold=(29.0, 117.0))
def _transfer() -> ModuleType:
    from . import transfer

    return transfer


@claim("figure2", "Figure 2: the paper's own experiment, verdicts over seeds", cold=(12.0, 80.0))
def _figure2() -> ModuleType:
    from . import figure2

    return figure2


@claim("vision", "Section 6: the paper's datasets when present, 8×8 digits as a proxy", cold=(1450.0, 1450.0))
def _vision() -> ModuleType:
    from . import vision

    return vision


@claim("gpu", "Theorem 4.2 and N*(D) on a CUDA device, D = 128 and 256 (NOT_RUN without one)", cold=(0.1, 0.1))
def _gpu() -> ModuleType:
    from . import gpu

    return gpu


#: The registry: one record per claim, in ledger order.
CLAIMS: tuple[Claim, ...] = claim.entries()

#: claim name → module path, in ledger order (derived from :data:`CLAIMS`; tests may replace it)
REGISTRY: dict[str, str] = {c.name: c.module for c in CLAIMS}

#: claim name → ``(quick, full)`` cold seconds (:attr:`Claim.cold`, derived from :data:`CLAIMS`)
COLD_SECONDS: dict[str, tuple[float | None, float | None]] = {c.name: c.cold for c in CLAIMS}

#: group → its claims in ledger order (``verify --only reduced theorems``), derived from :data:`CLAIMS`
GROUPS: dict[str, tuple[str, ...]] = {
    g: tuple(c.name for c in CLAIMS if g in c.groups) for g in dict.fromkeys(g for c in CLAIMS for g in c.groups)
}


def _views() -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """``(REGISTRY, GROUPS)`` as the package :mod:`theorydyn.claims` holds them now (a test may replace them)."""
    package = sys.modules[__package__ or ""]
    return getattr(package, "REGISTRY", REGISTRY), getattr(package, "GROUPS", GROUPS)


def expected_seconds(name: str, quick: bool) -> float | None:
    """The cold seconds of claim ``name`` measured on the CI-class machine (:data:`COLD_SECONDS`), or
    None when that mode was not measured; full-mode claims not measured get None (the caller's guess)."""
    quick_s, full_s = COLD_SECONDS.get(name, (None, None))
    return quick_s if quick else full_s


def listing(claims: tuple[Claim, ...] = CLAIMS) -> str:
    """The claims as a reST list, ``* ``name`` — summary`` (the docs' list)."""
    return "\n".join(f"* ``{c.name}`` — {c.summary}" for c in claims)


def groups_text() -> str:
    """``reduced (= dynamics) and theorems (= theorem31 …)``: the groups in words (``verify --help``)."""
    return " and ".join(f"{g} (= {' '.join(members)})" for g, members in _views()[1].items())


def names() -> list[str]:
    """Every name ``verify --only`` accepts: the registered claims and the groups."""
    registry, groups = _views()
    return sorted({*registry, *groups})


def select(only: list[str] | None) -> list[str]:
    """The registered claims named by ``only`` (claims or groups), in registry order; all when empty.

    Raises:
        ValueError: for a name that is neither a claim nor a group.
    """
    registry, groups = _views()
    if not only:
        return list(registry)
    unknown = [x for x in only if x not in registry and x not in groups]
    if unknown:
        raise ValueError(f"unknown claim {unknown[0]!r}; choose from {', '.join(names())}")
    wanted = {m for x in only for m in groups.get(x, (x,))}
    return [name for name in registry if name in wanted]


def load(name: str) -> ModuleType:
    """The module of a registered claim, imported now.

    Raises:
        KeyError: for a name that is not registered.
        ImportError: when the module (or an extra it needs) is not installed, or lacks ``checks`` (or,
            declaring ``EXPERIMENT``, its ``config`` and ``rows``) or ``memory`` — a claim that cannot run
            (``verify`` turns it into a SKIP row).
    """
    return load_path(_views()[0][name])


def load_path(path: str) -> ModuleType:
    """The claim module at the import ``path``, checked like :func:`load`: the one import by path, since
    a worker process and the ledger's store find a claim by the path :data:`REGISTRY` gives.

    Raises:
        ImportError: as :func:`load`.
    """
    try:
        mod = importlib.import_module(path)
    except ModuleNotFoundError as e:
        raise ImportError(f"{path} is not installed ({e})") from e
    runs = EXPERIMENT_PROTOCOL if declares_experiment(mod) else ("checks",)
    for fn in (*runs, "memory"):
        if not callable(getattr(mod, fn, None)):
            raise ImportError(f"{path} has no {fn}() (docs/adding_a_claim.md)")
    return mod


#: What a claim that declares its experiment defines besides ``memory``: the experiment's ``run``
#: (``EXPERIMENT``), its config at the ledger's setting (``config``) and the judge of its results (``rows``).
EXPERIMENT_PROTOCOL = ("EXPERIMENT", "config", "rows")


def declares_experiment(mod: ModuleType) -> bool:
    """Whether the claim module ``mod`` declares its experiment (``EXPERIMENT``): it then only judges."""
    return callable(getattr(mod, "EXPERIMENT", None))


def judge(
    mod: ModuleType, s: Setting, *, quick: bool, progress: Callable[[str], None] | None = None, **options: Any
) -> list[Check]:
    """The rows of the claim module ``mod`` at the ledger's setting ``s`` (``verify``'s one call of a claim).

    A claim that declares its experiment (:data:`EXPERIMENT_PROTOCOL`) only judges: the experiment is run here,
    ``mod.rows(mod.EXPERIMENT(s, mod.config(s, quick, **options), progress))``, so that the claim's code
    never runs anything (Theorem 4.2: :func:`theorydyn.experiments.theorem4.run` judged by
    :func:`theorydyn.claims.theorem4.rows`); any other claim returns its rows from
    ``mod.checks(s, quick=quick, progress=progress, **options)``.

    Returns:
        list[Check]: the claim's rows.
    """
    if declares_experiment(mod):
        return list(mod.rows(mod.EXPERIMENT(s, mod.config(s, quick, **options), progress)))
    return list(mod.checks(s, quick=quick, progress=progress, **options))
