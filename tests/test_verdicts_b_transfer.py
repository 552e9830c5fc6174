"""Theorem 5.2 at the theorem's target (test error ≤ ε): the kernel learner against an independent
route, its blindness to the partition, and the planted counter-cases that flip each verdict row."""

import math

import numpy as np
import pandas as pd
import pytest

import theorydyn.transfer as tr
from theorydyn.claims.transfer import checks_from
from theorydyn.core import data
from theorydyn.transfer.experiment import compute_row
from theorydyn.transfer.fitting import fit_kernel, kernel_outputs, onehot


def _features(P: np.ndarray) -> np.ndarray:
    """The explicit feature map of (1 + ⟨a, b⟩)²: ψ(a) = (1, √2 a, vec(a aᵀ))."""
    outer = (P[:, :, None] * P[:, None, :]).reshape(len(P), -1)
    return np.concatenate([np.ones((len(P), 1)), math.sqrt(2) * P, outer], axis=1)


def test_kernel_ridge_equals_the_primal_ridge_on_the_explicit_features():
    s = tr.downstream_setting(tr.setting_at(tr.base_setting(), 16, "count"))
    y, _, z = data.sample_z(s, 60, np.random.default_rng(3))
    _, _, zt = data.sample_z(s, 40, np.random.default_rng(4))
    P, alpha = fit_kernel(z, y)
    F = kernel_outputs(P, alpha, zt.astype(float), chunk=7)
    Psi, Psit = _features(onehot(z)), _features(onehot(zt))
    K = Psi @ Psi.T
    lam = 1e-3 * np.trace(K) / len(K)
    # primal: w = (ΨᵀΨ + λ I)⁻¹ Ψᵀ y, the same minimiser as the dual (K + λ I)⁻¹ y
    w = np.linalg.solve(Psi.T @ Psi + lam * np.eye(Psi.shape[1]), Psi.T @ y)
    err = np.max(np.abs(F - Psit @ w))
    assert err < 1e-7 * max(1.0, np.max(np.abs(F))), f"dual and primal kernel ridge differ by {err:.3g}"


def test_kernel_learner_has_no_partition_knowledge():
    """Permuting the positions of the training and test data permutes nothing in the outputs."""
    s = tr.downstream_setting(tr.setting_at(tr.base_setting(), 16, "count"))
    y, _, z = data.sample_z(s, 80, np.random.default_rng(5))
    _, _, zt = data.sample_z(s, 50, np.random.default_rng(6))
    pi = np.random.default_rng(7).permutation(s.D)
    F = kernel_outputs(*fit_kernel(z, y), zt.astype(float))
    Fp = kernel_outputs(*fit_kernel(z[:, pi], y), zt[:, pi].astype(float))
    assert np.max(np.abs(F - Fp)) < 1e-8 * np.max(np.abs(F)), np.max(np.abs(F - Fp))


def test_sample_z_gives_the_feature_values_of_the_same_samples():
    """compute_row's kernel branch relies on it: data.sample_z with the seed of data.sample draws the
    same (y, z), z_j = ⟨w̃, X_j⟩."""
    s = tr.downstream_setting(tr.setting_at(tr.base_setting(), 16, "count"))
    b = data.sample(s, 30, seed=11)
    y, _, z = data.sample_z(s, 30, np.random.default_rng(11))
    assert np.array_equal(b.y, y)
    assert np.max(np.abs(b.X @ s.w_star - z)) < 1e-12


def test_compute_row_runs_the_kernel_learner():
    s = tr.downstream_setting(tr.setting_at(tr.base_setting(), 32, "count"))
    test = tr.TestSet.draw(s, 1024, seed=1)
    r = compute_row(s, "kernel", None, 256, 0, tr.TransferOptions(), test)
    assert 0.9 < r["acc_f"] <= 1.0  # the learner reaches small error with enough samples (D = 32)
    assert tr.TransferOptions(kernel_max_N=512).max_N("kernel", s) == 512  # no Ñ·D·d budget: it sees z only


def _raw(needs, Ds=(32, 64, 128, 256), seeds=5, Ns=tuple(2**k for k in range(14))):
    """Per-seed curves acc = 0.95 + 0.1·log2(Ñ/need(D)) (+ seed noise), clipped to [0.5, 1]: the seed
    mean crosses 0.95 (test error 0.05) at need(D)."""
    rng = np.random.default_rng(1)
    rows = []
    for method, need in needs.items():
        for D in Ds:
            for k in range(seeds):
                shift = 0.005 * rng.normal()
                for N in Ns:
                    acc = float(np.clip(0.95 + 0.1 * np.log2(N / need(D)) + shift, 0.5, 1.0))
                    rows.append(dict(D=D, method=method, N_tilde=N, seed=k, acc_f=acc, acc_y=acc))
    levels = pd.DataFrame(
        dict(D=list(Ds), target=0.75, target_theorem=0.95, target_eps=0.95, a_star=1.0, init_ceiling=0.6)
    ).assign(linear_reference=0.9)
    return pd.DataFrame(rows), levels


def _rows(needs):
    raw, levels = _raw(needs)
    summary, tgt, slopes = tr.report(raw, levels, None, B=200)
    rows = checks_from(summary, tgt, slopes, levels, pd.DataFrame(), tr.TransferOptions(), {})
    return {r.quantity: r for r in rows if r.claim == "Theorem 5.2"}


FLAT = lambda D: 1.5 + 0.0 * D  # noqa: E731
KEY = "slope of log Ñ_target on log D ({}, test error ≤ 0.05)"


def test_theorem_52_at_epsilon_passes_when_the_need_grows_and_fails_when_flat():
    """Planted: the kernel learner needs ∝ D samples at test error 0.05, the pre-trained Â a flat 1.5:
    PASS; the same procedure with a flat learner need against a pre-trained Â whose need grows like
    √D: FAIL (the counter-case); with both flat: INFO (no separation either way)."""
    good = _rows({"pretrained": FLAT, "kernel": lambda D: 0.5 * D, "scratch": lambda D: 0.5 * D})
    for m in ("kernel", "scratch"):
        r = good[KEY.format(m)]
        assert r.verdict == "PASS" and r.measured == pytest.approx(1.0, abs=0.1), (m, r.measured, r.note)
    assert good["slope of log Ñ_target on log D (kernel, accuracy ≥ a*(D) − 0.05)"].verdict == "INFO"
    bad = _rows({"pretrained": lambda D: 0.5 * D**0.5, "kernel": FLAT, "scratch": FLAT})
    for m in ("kernel", "scratch"):
        assert bad[KEY.format(m)].verdict == "FAIL", (m, bad[KEY.format(m)].note)
    same = _rows({"pretrained": FLAT, "kernel": FLAT})
    assert same[KEY.format("kernel")].verdict == "INFO"


def test_theorem_52_at_epsilon_is_info_when_censored_everywhere_or_the_reference_fails():
    """Never reached within the cap (lower bounds only): INFO, never PASS; a pre-trained Â that never
    reaches the target: INFO."""
    v = _rows({"pretrained": FLAT, "kernel": lambda D: 1e9})
    r = v["Ñ_target lower bound, min over D (kernel, test error ≤ 0.05)"]
    assert r.verdict == "INFO" and math.isnan(r.ci_high) and "ci_high = +∞" in r.note
    w = _rows({"pretrained": lambda D: 1e9, "kernel": lambda D: 0.5 * D})
    assert w[KEY.format("kernel")].verdict == "INFO"
    assert "fewer than two D" in w[KEY.format("kernel")].note
