"""Every registered claim declares its quick and full sizes once, as two instances of one Config
(theorydyn.claims.sizes.Sizes), and its seeds are one type (Seeds: a tuple of integers)."""

import dataclasses

import pytest

from theorydyn import claims
from theorydyn.claims.sizes import ClaimSizes, Sizes, grid_option, seeds_option
from theorydyn.core.config import Config, option

# the experiments' keyed stores (seed runs, N*(D) passes, step-size rules) in a run directory of each test's own
pytestmark = pytest.mark.usefixtures("run_home")

#: Claims without a SIZES, each with the reason.
EXEMPT = {
    # exact enumeration: no sample size, no seed; quick changes nothing (its docstring says so)
    "definition21": "exact",
}


def _modules():
    out = []
    for c in claims.CLAIMS:
        if c.name in EXEMPT:
            continue
        try:
            out.append(pytest.param(claims.load(c.name), id=c.name))
        except ImportError as e:  # an optional extra not installed
            out.append(pytest.param(None, id=c.name, marks=pytest.mark.skip(reason=str(e))))
    return out


@pytest.mark.parametrize("mod", _modules())
def test_every_claim_declares_its_sizes_as_two_configs(mod):
    sizes = mod.SIZES
    assert isinstance(sizes, Sizes)
    assert isinstance(sizes.quick, Config) and isinstance(sizes.full, Config)
    assert type(sizes.quick) is type(sizes.full)
    assert sizes.pick(True) is sizes.quick and sizes.pick(False) is sizes.full
    for side in (sizes.quick, sizes.full):
        if "seeds" in side.names():
            seeds = side.seeds
            assert isinstance(seeds, tuple) and seeds and all(type(k) is int and k >= 0 for k in seeds)
        # every field has its help text once, in the field
        assert all(side.help_of(n) for n in side.names())


def test_exempt_claims_are_registered():
    assert set(EXEMPT) <= set(claims.REGISTRY)


@dataclasses.dataclass(frozen=True)
class _Toy(ClaimSizes):
    N: int = option(10, "samples", positive=True)
    Ns: tuple[int, ...] = grid_option((2, 4), "grid")
    etas: tuple[float, ...] = grid_option((0.5,), "steps", kind=float, low=0.0, low_open=True)
    seeds: tuple[int, ...] = seeds_option(3)


def test_claim_sizes_validate_their_fields():
    t = _Toy()
    assert t.seeds == (0, 1, 2) and t.Ns == (2, 4)
    for bad, word in (
        (dict(N=0), "N must"),
        (dict(seeds=()), "seeds must"),
        (dict(seeds=(0, -1)), "seeds"),
        (dict(seeds=3), "seeds must"),  # a count is converted at the boundary (as_seeds), not stored
        (dict(Ns=(2, 0)), r"Ns\[1\] must be an integer >= 1"),
        (dict(Ns=()), "Ns must"),
        (dict(etas=(0.0,)), r"etas\[0\] must be a number > 0"),
    ):
        with pytest.raises(ValueError, match=word):
            _Toy(**bad)
    with pytest.raises(ValueError, match="quick is a"):
        Sizes(quick=_Toy(), full=claims.load("theorem32").SIZES.full)
    with pytest.raises(ValueError, match="Config"):
        Sizes(quick={"N": 1}, full={"N": 2})  # type: ignore[arg-type]


def test_sizes_keep_the_numbers_they_replaced():
    """The declared sizes are the ad-hoc tables they replaced (issue 29: every number stays as it is)."""
    from theorydyn.claims import (
        dynamics,
        lemma41,
        nstar,
        parametrization31,
        semirealistic,
        theorem4,
        theorem31,
        theorem32,
    )

    t4 = theorem4.SIZES
    assert (t4.quick.N, t4.quick.steps, t4.full.N, t4.full.steps) == (16384, 250, 16384, 1200)
    assert (t4.quick.D_max, t4.full.D_max, t4.quick.seeds) == (32, None, (0, 1, 2, 3, 4))
    assert t4.quick.closeness is semirealistic.CLOSENESS.quick and t4.full.closeness is semirealistic.CLOSENESS.full
    cl = semirealistic.CLOSENESS
    assert (cl.quick.Ns, cl.quick.steps, cl.quick.seeds) == ((2048, 4096, 8192, 16384), 150, (0, 1, 2))
    assert (cl.full.Ns[-1], cl.full.steps, len(cl.full.seeds), cl.full.eta) == (65536, 300, 5, 10.0)
    # N*(D) and Theorem 4.2 moved to one footing (issue 39): both windows, the quick grid up to Theorem 4.2's N
    ns = nstar.SIZES
    quick_Ns = (1024, 2048, 4096, 8192, 16384)
    assert (ns.quick.Ns, ns.quick.seeds, ns.quick.ks, ns.quick.n_D) == (quick_Ns, (0, 1, 2), (1.5, 3.0), 1)
    assert (ns.full.Ns, ns.full.n_D) == (tuple(2**k for k in range(10, 17)), 4)
    assert t4.quick.ks == t4.full.ks == ns.full.ks
    l41 = lemma41.SIZES
    assert (l41.quick.Ns[-1], l41.quick.steps, l41.full.Ns[-1], l41.full.steps) == (32768, 150, 65536, 300)
    t31, t32 = theorem31.SIZES, theorem32.SIZES
    assert (t31.quick.N_fit, t31.quick.N_flat, t31.full.N_fit, t31.full.N_flat) == (50_000, 2_000, 200_000, 8_000)
    assert (t32.quick.N, t32.full.N) == (5_000, 50_000)
    dy = dynamics.SIZES
    assert (dy.quick.n_samples, dy.full.n_samples, dy.quick.etas) == (1500, 4000, (0.125, 0.0625))
    assert parametrization31.SIZES.full.grid[-1] == 1024 and len(parametrization31.SIZES.quick.grid) == 5


def _functions_with_seeds():
    """Every function of claims/ (but vision, another owner's this round) and experiments/ with a ``seeds``
    parameter, with its annotation (a string: the modules use ``from __future__ import annotations``)."""
    import importlib
    import inspect
    import pkgutil

    import theorydyn.claims
    import theorydyn.experiments

    out = []
    for pkg in (theorydyn.claims, theorydyn.experiments):
        for info in pkgutil.iter_modules(pkg.__path__):
            if info.name in ("vision", "__main__"):
                continue
            try:
                mod = importlib.import_module(f"{pkg.__name__}.{info.name}")
            except ImportError:  # an optional extra
                continue
            for name, fn in vars(mod).items():
                if inspect.isfunction(fn) and fn.__module__ == mod.__name__:
                    p = inspect.signature(fn).parameters.get("seeds")
                    if p is not None:
                        out.append((f"{mod.__name__}.{name}", p.annotation))
    return out


#: the public boundary: a count is accepted and made Seeds at once (as_seeds), the default from SIZES
BOUNDARY = {
    "theorydyn.claims.dynamics.config": "int | Seeds | None",
    "theorydyn.claims.figure2.checks": "int | Iterable[int] | None",
    "theorydyn.claims.sizes.seeds_option": "int | Iterable[int]",
}


def test_seeds_are_one_type_in_claims_and_experiments():
    """Seeds are Seeds (a tuple of integers) in every signature of claims/ and experiments/; a count only at
    the public boundary, converted with as_seeds at once."""
    found = dict(_functions_with_seeds())
    assert "theorydyn.experiments.theorem4.run_seeds" in found and "theorydyn.claims.dynamics.config" in found
    bad = {f: a for f, a in found.items() if a != "Seeds" and BOUNDARY.get(f) != a}
    assert not bad, bad


def test_the_same_seeds_give_the_same_numbers():
    """A seed names its draw: the numbers of seed k do not depend on the other seeds run beside it, and a
    count at the boundary is its tuple (as_seeds(2) == (0, 1))."""
    import numpy as np

    from theorydyn.core.config import as_seeds
    from theorydyn.core.setting import Setting
    from theorydyn.experiments import theorem32 as xt32

    s = Setting(D=16, C=4, q=0.5)
    M = xt32.construct_theorem_3_2(s, kappa=60.0 * s.tau)
    A = (M.P.T @ M.W_Q) @ (M.P.T @ M.W_K).T
    both = xt32.measure_errors(s, A, M.v, 300, as_seeds(2), 0)
    one = xt32.measure_errors(s, A, M.v, 300, (1,), 0)
    assert both == xt32.measure_errors(s, A, M.v, 300, (0, 1), 0)
    assert [x[1] for x in both[:2]] == [x[0] for x in one[:2]]  # errors and Pr[f = 0] per seed
    assert np.isfinite(both[0]).all()
