"""One tie convention (docs/theory.md, conventions): F = 0 up to rounding counts as an error, against
y and against f, in data.errors, the reduced solver, the simulator and transfer.ceiling.

The setting of issue 21: D = 6, C = 2, q = 1/2 at the idealized initialisation (γ = ρ = 0), where every
noiseless configuration with Σ_j z_j = 0 has F = 0 exactly, and floating-point residue of either
sign used to decide it (err_y 0.0586 in data.errors against the reduced solver's 0.0820).
"""

from __future__ import annotations

import numpy as np
import pytest

from theorydyn import Setting
from theorydyn import transfer as tr
from theorydyn.core import data, model
from theorydyn.reduced import _kernels as rk
from theorydyn.reduced import population_risk
from theorydyn.simulate import simulate_replicas

S = Setting(D=6, C=2, q=0.5)
ALPHA0 = S.nu ** (1 / (S.p - 1))  # Parametrization 3.1's start, as in reduced.integrate


def _enumerated_outputs(s=S, alpha=ALPHA0, gamma=0.0, rho=0.0):
    z, y, w = data.enumerate_population(s)
    X = data.embed(s, z)
    F = model.forward(s, model.symmetric_attention(s, gamma, rho), alpha * s.w_star, X)
    return X, y, w, data.labelling(s, X), F


def test_ties_occur_and_data_reduced_and_simulate_agree():
    X, y, w, f, F = _enumerated_outputs()
    T = X @ S.w_star
    tie = np.isclose(T.sum(axis=1), 0.0)  # Σ_j z_j = 0 at γ = ρ = 0: F = 0 in exact arithmetic
    assert w[tie].sum() > 0.1 and np.max(np.abs(F[tie])) < 1e-15 * np.max(np.abs(F))
    # the residue has both signs, so a rule without a tolerance decides these points at random
    naive = float(w[y * F <= 0].sum())
    e_data = data.errors(F, y, f, weights=w)
    assert abs(naive - e_data["err_y"]) > 0.01
    # the reduced solver (exact expectation, its own tie rule TIE_RTOL): the same numbers
    e_red = population_risk(S, ALPHA0, 0.0, 0.0, method="exact")
    assert e_data["err_y"] == pytest.approx(e_red.err_y, abs=1e-12)
    assert e_data["err_f"] == pytest.approx(e_red.err_f, abs=1e-12)
    assert e_data["amb_f"] == pytest.approx(e_red.amb_f, abs=1e-12)
    # the simulator at the same point: the enumeration as its test set, each point repeated in
    # proportion to its probability (q = 1/2: probabilities are multiples of 4^-(D-C) / (2L))
    reps = np.rint(w * 2 * S.L * 4 ** (S.D - S.C)).astype(int)
    assert np.allclose(reps / reps.sum(), w)
    Xr, yr = np.repeat(X, reps, axis=0), np.repeat(y, reps)
    (res,) = simulate_replicas(  # 0 steps, the start alone: simulate() refuses a run of no steps
        S,
        train=(X, y, w),
        test=(Xr, yr),
        steps=0,
        A0=model.symmetric_attention(S, 0.0, 0.0),
        v0=ALPHA0 * S.w_star,
        record_every=1,
    )
    assert res.trajectory["err_y"].iloc[0] == pytest.approx(e_red.err_y, abs=1e-12)


def test_data_errors_default_tolerance_is_the_reduced_solvers():
    import inspect

    assert inspect.signature(data.errors).parameters["tie_rtol"].default == rk.TIE_RTOL


def test_a_tie_is_an_error_against_y_and_f_and_a_real_sign_is_not():
    F = np.array([1e-17, -1e-17, 0.5, -0.5, 2.0])
    y = np.array([1, -1, 1, -1, -1])
    f = np.array([2, -2, 2, 0, -2])
    e = data.errors(F, y, f)
    # ties: samples 0 and 1 (|F| <= 1e-12 * 2); sample 4 wrong; sample 2, 3 right against y
    assert e["err_y"] == pytest.approx(3 / 5)
    assert e["amb_f"] == pytest.approx(1 / 5) and e["err_f"] == pytest.approx(3 / 4)
    # an explicit scale: with terms of size 1e-3 the same F = 1e-17 is still a tie, F = 1e-6 is not
    e2 = data.errors(np.array([1e-17, 1e-6]), np.array([1, 1]), np.array([2, 2]), scale=1e-3)
    assert e2["err_y"] == pytest.approx(1 / 2)


def test_transfer_ceiling_counts_a_tie_as_an_error():
    """ceiling at one α on the init attention equals 1 − err_f of data.errors on the same draws."""
    s = Setting(D=16, C=4, q=0.25)
    n, seed, a = 4000, 3, 1.0
    acc, _ = tr.ceiling(s, 0.0, 0.0, alphas=(a,), n_samples=n, seed=seed)
    _, _, z = data.sample_z(s, n, np.random.default_rng(seed))
    f = data.labelling_from_z(s, z)
    F = model.forward(s, model.symmetric_attention(s, 0.0, 0.0), a * s.w_star, data.embed(s, z))
    ties = np.isclose(z.sum(axis=1), 0) & (f != 0)
    assert ties.mean() > 0.005  # ties occur (1.4% of these draws): at init F = 0 whenever Σ z = 0
    assert acc == pytest.approx(1 - data.errors(F, np.sign(f) + (f == 0), f)["err_f"], abs=1e-12)


# ---- the departures from Parametrization 3.1 named in every row's params --------------------------------
def test_departures_name_eta_beta_tau_and_only_real_ones():
    from theorydyn.claims.check import departures, unconditional_error

    s = Setting(D=64, C=4)
    d = departures(s, eta=10.0)["departures"]
    assert "eta=10 (paper: eta <= 1/poly(d))" in d and "beta=1" in d and "tau=1" in d and "sqrt(d) = 8" in d
    assert not departures(s)["departures"].startswith("eta")
    assert "gradient flow" in departures(s, eta="flow")["departures"]
    # model (T)'s own temperature is no departure
    assert "tau" not in departures(s.replace(tau=8.0))["departures"]
    assert departures(s, model=False)["departures"].startswith("none")
    assert unconditional_error(0.1, 0.2) == pytest.approx(0.2 + 0.8 * 0.1)


def test_every_row_of_the_touched_claims_names_its_departures():
    from theorydyn.claims import dynamics, theorem31

    small = theorem31.Theorem31Sizes(N_fit=2000, N_test=2000, N_flat=0, seeds=(0, 1), N_literal=500)
    rows = theorem31.check_theorem_3_1(Setting(D=32, C=4, q=0.25), small, scan=False)
    rows += dynamics._flow_vs_gd(Setting(D=32, C=4), dynamics.SIZES.quick.etas)
    assert all("departures" in c.params for c in rows), [c.quantity for c in rows if "departures" not in c.params]
