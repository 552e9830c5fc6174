"""The exact reduction of docs/theory.md §3, rebuilt symbolically with sympy (an independent route).

Nothing here reuses the toolkit's formulas: sympy builds the row softmax of the three-value
attention (logits b = β/τ once, c = γ/τ on the C − 1 in-set entries, r = ρ/τ on the D − C
cross-set ones), the per-patch pre-activation, the output F and the logistic loss, enumerates the
count types of the random sets itself (ordered tuples, probabilities from the multinomial law),
and differentiates. The results are compared with

* the softmax-derivative tables of docs/theory.md §3 (symbolic identity, and a wrong variant is
  shown to be rejected);
* the O(L) formula h = α[(Λ−Γ)z + (Γ−Ξ)s_m + ΞT] against the definition h_i = Σ_j S_ij α z_j
  (symbolic identity on concrete count vectors);
* the Numba kernel's per-set table (``reduced._kernels.build_table``: F, ∂F/∂α, ∂F/∂c, ∂F/∂r) and
  ``reduced.forward_counts``;
* ``reduced.population_risk(..., method="exact")``: the risk and (∂/∂α, ∂/∂γ, ∂/∂ρ) with the 1/τ;
* the full D×D model's per-entry gradient (``model.risk_and_grad`` on the exhaustively enumerated
  population), which must equal the reduced gradient divided by D(C−1) and D(D−C).

Tolerances are relative 1e-10; β, τ ≠ 1 so that a missing 1/τ or a wrong count would show.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest

sp = pytest.importorskip("sympy")  # a declared dependency: CI installs it, so this never skips there
mpmath = pytest.importorskip("mpmath")  # sympy's own dependency

from theorydyn import Setting  # noqa: E402
from theorydyn.core import data, model  # noqa: E402
from theorydyn.reduced import _kernels as rk  # noqa: E402
from theorydyn.reduced import forward_counts, population_risk  # noqa: E402

RTOL = 1e-10
a_, g_, r_ = sp.symbols("alpha gamma rho", real=True)
c_, x_ = sp.symbols("c r", real=True)  # the logits γ/τ and ρ/τ
NP, NM, N0, TT = sp.symbols("n_plus n_minus n_zero T", integer=True)  # a set's counts, the sample's T

# Two small cases; every parameter is an exact rational so sympy's numbers are exact too.
CASES = [
    dict(D=6, C=2, q=sp.Rational(2, 5), p=3, nu=sp.Rational(1, 4), beta=sp.Rational(7, 10), tau=sp.Rational(3, 2)),
    dict(D=8, C=2, q=sp.Rational(1, 2), p=5, nu=sp.Rational(1, 8), beta=sp.Rational(1, 2), tau=sp.Rational(4, 5)),
]
POINT = (0.9, 0.35, -0.2)  # (α, γ, ρ)


def _setting(case) -> Setting:
    return Setting(
        D=case["D"],
        C=case["C"],
        q=float(case["q"]),
        p=case["p"],
        nu=float(case["nu"]),
        beta=float(case["beta"]),
        tau=float(case["tau"]),
    )


def _softmax(b, c, r, C, D):
    """(Λ, Γ, Ξ) of one row: logit b once, c on C − 1 entries, r on D − C entries."""
    Z = sp.exp(b) + (C - 1) * sp.exp(c) + (D - C) * sp.exp(r)
    return sp.exp(b) / Z, sp.exp(c) / Z, sp.exp(r) / Z


def _types(C):
    return [(a, b, C - a - b) for a in range(C + 1) for b in range(C + 1 - a)]


def _set_term(case):
    """One set's contribution to F of docs/theory.md §3, generic in its counts: a sympy expression in
    (α, γ, ρ) and the symbols (n⁺, n⁻, n⁰, T) of the set's z-value counts and the sample's T:
    Σ_z n^z σ(h_z), h_z = α[(Λ−Γ)z + (Γ−Ξ)s_m + ΞT], s_m = n⁺ − n⁻, Λ, Γ, Ξ the softmax of
    (β/τ, γ/τ, ρ/τ) with multiplicities (1, C−1, D−C)."""
    C, D, p, nu, tau = case["C"], case["D"], case["p"], case["nu"], case["tau"]
    Lam, Gam, Xi = _softmax(case["beta"] / tau, g_ / tau, r_ / tau, C, D)
    sm = NP - NM
    out = 0
    for n, z in ((NP, 1), (NM, -1), (N0, 0)):
        h = a_ * ((Lam - Gam) * z + (Gam - Xi) * sm + Xi * TT)
        out += n * (h**p + nu * h)
    return out


@functools.cache
def _set_fn(ci: int):
    """mpmath function (α, γ, ρ, n⁺, n⁻, n⁰, T) → (term, ∂term/∂α, ∂term/∂γ, ∂term/∂ρ) of CASES[ci],
    the derivatives taken by sympy through the softmax."""
    term = _set_term(CASES[ci])
    return sp.lambdify(
        [a_, g_, r_, NP, NM, N0, TT], [term] + [sp.diff(term, v) for v in (a_, g_, r_)], "mpmath", cse=True
    )


def _F_and_grad(ci: int, counts, point=POINT):
    """(F, ∂F/∂α, ∂F/∂γ, ∂F/∂ρ) at ``point`` (30 digits) for concrete per-set counts of z-values."""
    fn = _set_fn(ci)
    T = sum(n[0] - n[1] for n in counts)
    with mpmath.workdps(30):
        pt = [mpmath.mpf(x) for x in point]
        acc = [mpmath.mpf(0)] * 4
        for n in counts:
            acc = [x + v for x, v in zip(acc, fn(*pt, *n, T), strict=True)]
        return np.array([float(x) for x in acc])


def _reduced_numeric(ci: int, point=POINT):
    """(ℓ_red, ∂ℓ_red/∂α, ∂ℓ_red/∂γ, ∂ℓ_red/∂ρ) of CASES[ci] at ``point``, 30 digits.

    sympy differentiates the generic set term (softmax included) and the logistic loss once; the sum
    over the enumerated population (:func:`_population`) is then taken numerically in mpmath:
    ∂ℓ(yF)/∂θ = ℓ'(yF) · y · Σ_m ∂(set term)/∂θ."""
    fn = _set_fn(ci)
    m = sp.Symbol("m")
    loss = sp.log(1 + sp.exp(-m))
    lfn = sp.lambdify([m], [loss, sp.diff(loss, m)], "mpmath")
    with mpmath.workdps(30):
        pt = [mpmath.mpf(x) for x in point]
        tot = [mpmath.mpf(0)] * 4
        cache: dict = {}  # a set's term depends on the sample only through (its counts, T)
        for y, sets, pr in _population(CASES[ci]):
            T = sum(n[0] - n[1] for n in sets)
            acc = [mpmath.mpf(0)] * 4
            for n in sets:
                if (n, T) not in cache:
                    cache[n, T] = fn(*pt, *n, T)
                acc = [x + v for x, v in zip(acc, cache[n, T], strict=True)]
            l, dl = lfn(y * acc[0])
            w = mpmath.mpf(pr.p) / pr.q
            tot = [tot[0] + w * l] + [t + w * dl * y * d for t, d in zip(tot[1:], acc[1:], strict=True)]
        return np.array([float(x) for x in tot])


def _population(case):
    """Every (y, multiset of random-set types) with its probability, enumerated as ordered tuples.

    Returns a list of (y, counts per set (signal set first), probability) with the probabilities
    as exact rationals summing to 1; y = −1 mirrors the z-values (n⁺ ↔ n⁻)."""
    C, L, q = case["C"], case["D"] // case["C"], case["q"]
    probs = {
        t: sp.factorial(C)
        / (sp.factorial(t[0]) * sp.factorial(t[1]) * sp.factorial(t[2]))
        * (q / 2) ** (t[0] + t[1])
        * (1 - q) ** t[2]
        for t in _types(C)
    }
    agg: dict = {}
    for tup in itertools.product(_types(C), repeat=L - 1):
        key = tuple(sorted(tup))
        agg[key] = agg.get(key, 0) + sp.prod([probs[t] for t in tup])
    out = []
    for y in (1, -1):
        for key, pr in agg.items():
            sets = [(C, 0, 0)] + list(key)
            if y == -1:
                sets = [(b, a, c) for a, b, c in sets]
            out.append((y, sets, pr / 2))
    return out


# ---- softmax derivatives ------------------------------------------------------------------------
@pytest.mark.parametrize("C,D", [(2, 6), (4, 64), (3, 12)])
def test_softmax_derivative_tables(C, D):
    """∂(Λ,Γ,Ξ)/∂c = (−Λ(C−1)Γ, Γ−(C−1)Γ², −Ξ(C−1)Γ), ∂(Λ,Γ,Ξ)/∂r = (−Λ(D−C)Ξ, −Γ(D−C)Ξ, Ξ−(D−C)Ξ²)
    as symbolic identities; Λ + (C−1)Γ + (D−C)Ξ = 1; a wrong table (C in place of C−1) is rejected."""
    b = sp.Symbol("b", real=True)
    Lam, Gam, Xi = _softmax(b, c_, x_, C, D)
    assert sp.simplify(Lam + (C - 1) * Gam + (D - C) * Xi - 1) == 0
    table_c = (-Lam * (C - 1) * Gam, Gam - (C - 1) * Gam**2, -Xi * (C - 1) * Gam)
    table_r = (-Lam * (D - C) * Xi, -Gam * (D - C) * Xi, Xi - (D - C) * Xi**2)
    for f, dc, dr in zip((Lam, Gam, Xi), table_c, table_r, strict=True):
        assert sp.simplify(sp.diff(f, c_) - dc) == 0
        assert sp.simplify(sp.diff(f, x_) - dr) == 0
    wrong = Gam - C * Gam**2
    assert sp.simplify(sp.diff(Gam, c_) - wrong) != 0
    # ∂/∂γ = (1/τ) ∂/∂c with c = γ/τ
    tau = sp.Rational(3, 2)
    assert sp.simplify(sp.diff(Gam.subs(c_, g_ / tau), g_) - (table_c[1] / tau).subs(c_, g_ / tau)) == 0


# ---- the O(L) formula against the definition ------------------------------------------------------
@pytest.mark.parametrize(
    "counts",
    [
        [(2, 0, 0), (1, 1, 0), (0, 0, 2)],
        [(2, 0, 0), (0, 2, 0), (1, 0, 1)],
        [(0, 2, 0), (2, 0, 0), (0, 1, 1), (1, 0, 1)],
    ],
)
def test_count_formula_equals_attention_definition(counts):
    """h = α[(Λ−Γ)z + (Γ−Ξ)s_m + ΞT] is h_i = Σ_j S_ij α z_j for the three-value S (symbolic identity)."""
    C, L = 2, len(counts)
    D = C * L
    Lam, Gam, Xi = _softmax(sp.Symbol("b"), c_, x_, C, D)
    z = []
    for npl, nmi, nze in counts:
        z += [1] * npl + [-1] * nmi + [0] * nze
    T = sum(z)
    for i in range(D):
        m = i // C
        direct = sum((Lam if j == i else Gam if j // C == m else Xi) * a_ * z[j] for j in range(D))
        sm = sum(z[m * C : (m + 1) * C])
        formula = a_ * ((Lam - Gam) * z[i] + (Gam - Xi) * sm + Xi * T)
        assert sp.simplify(direct - formula) == 0


# ---- per-sample output and derivatives against the Numba table --------------------------------------
@pytest.mark.parametrize("ci", [0, 1], ids=["D6C2p3", "D8C2p5"])
def test_per_sample_F_and_derivatives_match_kernel(ci):
    """For concrete count vectors: F and ∂F/∂(α, c, r) from sympy against the kernel's per-set table
    (summed over the sets) and against forward_counts; ∂F/∂c is τ·∂F/∂γ."""
    case = CASES[ci]
    s = _setting(case)
    C, tau = s.C, float(case["tau"])
    rng = np.random.default_rng(3)
    plus, minus, zero = rk.count_types(C)
    index = {(int(a), int(b)): k for k, (a, b) in enumerate(zip(plus, minus, strict=True))}
    for _ in range(3):
        z = rng.choice([-1, 0, 1], size=s.D)
        z[s.sets[0]] = 1  # the signal set (y = +1)
        counts = [(int((z[S] == 1).sum()), int((z[S] == -1).sum()), int((z[S] == 0).sum())) for S in s.sets]
        T = float(sum(n[0] - n[1] for n in counts))
        tab = np.empty((len(plus), 1, 4))
        rk.build_table(*POINT, s.beta, s.tau, s.p, s.nu, C, s.D, plus, minus, zero, np.array([T]), tab)
        got = sum(tab[index[(n[0], n[1])], 0, :] for n in counts)
        want = _F_and_grad(ci, counts) * np.array([1.0, 1.0, tau, tau])  # the kernel's c, r derivatives: τ·∂/∂γ, τ·∂/∂ρ
        # atol: a sample mirrored by symmetry has F = 0 exactly in the kernel, ~1e-160 in 30-digit sympy
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-13)
        np.testing.assert_allclose(forward_counts(s, *POINT, z[None, :])[0], want[0], rtol=RTOL, atol=1e-13)
        # the full model on X = z w* (noise-free) is the same function
        X = data.embed(s, z[None, :].astype(np.int8))
        Ffull = model.forward(s, model.symmetric_attention(s, POINT[1], POINT[2]), POINT[0] * s.w_star, X)[0]
        assert Ffull == pytest.approx(want[0], rel=1e-12, abs=1e-13)


# ---- the exact reduced risk and its gradient --------------------------------------------------------
@pytest.mark.parametrize("ci", [0, 1], ids=["D6C2p3", "D8C2p5"])
def test_exact_reduced_risk_and_gradient(ci):
    """ℓ_red = Σ_(y, types) Pr · log(1 + e^{−yF}) built and differentiated in sympy, against
    population_risk(method="exact"); a gradient without the 1/τ is rejected."""
    case = CASES[ci]
    s = _setting(case)
    assert sum(pr for _, _, pr in _population(case)) == 1
    want = _reduced_numeric(ci)
    est = population_risk(s, *POINT, method="exact")
    got = np.array([est.risk, *est.grad])
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=0)
    # the comparison is sharp enough to see a forgotten 1/τ (τ ≠ 1 here)
    wrong = got.copy()
    wrong[2:] *= float(case["tau"])
    assert not np.allclose(wrong, want, rtol=1e-6, atol=0)


def test_full_model_per_entry_gradient_is_reduced_gradient_over_counts():
    """The full D×D model's gradient at the symmetric point: every in-set entry of ∂(P)/∂A equals
    (∂ℓ_red/∂γ)/(D(C−1)), every cross-set entry (∂ℓ_red/∂ρ)/(D(D−C)), and ∇_v = (∂ℓ_red/∂α) w*,
    with ℓ_red built in sympy and (P) enumerated exhaustively by theorydyn.core.data (D = 6, C = 2)."""
    case = CASES[0]
    s = _setting(case)
    rk_, dA, dG, dR = _reduced_numeric(0)
    z, y, w = data.enumerate_population(s)
    X = data.embed(s, z)
    r, gA, gv = model.risk_and_grad(
        s, model.symmetric_attention(s, POINT[1], POINT[2]), POINT[0] * s.w_star, X, y, weights=w
    )
    assert r == pytest.approx(rk_, rel=RTOL)
    np.testing.assert_allclose(gA[s.in_set_mask], dG / s.n_in, rtol=RTOL, atol=0)
    np.testing.assert_allclose(gA[s.cross_set_mask], dR / s.n_cross, rtol=RTOL, atol=0)
    np.testing.assert_allclose(gv, dA * s.w_star, rtol=RTOL, atol=1e-15)
    assert s.n_in == s.D * (s.C - 1) and s.n_cross == s.D * (s.D - s.C)
    # dividing by the wrong count (D(C−1) vs D·C) is visible
    assert not math.isclose(gA[s.in_set_mask][0], dG / (s.D * s.C), rel_tol=1e-3)
