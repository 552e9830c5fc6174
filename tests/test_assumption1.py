"""Assumption 1's rows (theorydyn.claims.assumption1): the measurement against a patch-by-patch route, the
rounding bound against real rounding, and each verdict flipped by a planted sampler that breaks the law."""

import math

import numpy as np
import pytest

from theorydyn import claims
from theorydyn.claims import assumption1 as a1
from theorydyn.core.data import sample
from theorydyn.core.setting import Setting
from theorydyn.experiments.assumption1 import Assumption1Results, BatchLaw, DataLaw, batch_law, data_law

S = Setting(D=64, C=4)
SEEDS = (0, 1, 2, 3, 4)


def _verdicts(rows):
    return [str(r.verdict) for r in rows]


def _law(s, batches, N):
    """A DataLaw of planted batches (X, y, signal), one per seed."""
    return DataLaw(N=N, seeds=tuple(range(len(batches))), batches=tuple(batch_law(s, *b) for b in batches))


def test_batch_law_matches_math_fsum_patch_by_patch():
    """Independent route: every number of batch_law recomputed patch by patch, the projections with
    math.fsum (the products rounded once, their sum exactly), at a w* that is not a basis vector, so that
    the sampler's projection really rounds; and that rounding lies within rounding_tolerance."""
    w = np.random.default_rng(7).standard_normal(16)
    s = Setting(D=16, C=4, q=0.5, feature=w)
    b = sample(s, 40, np.random.default_rng(3))
    law = batch_law(s, b.X, b.y, b.signal)
    ws = s.w_star
    res, wrong, plus, minus, off, noise = 0.0, 0, 0, 0, 0, []
    for n in range(len(b)):
        for j in range(s.D):
            p = math.fsum(ws[k] * b.X[n, j, k] for k in range(s.d))
            z = round(p)
            res = max(res, abs(p - z))
            xi = [b.X[n, j, k] - z * ws[k] for k in range(s.d)]
            noise.append(math.fsum(x * x for x in xi))
            if s.set_of[j] == b.signal[n]:
                wrong += z != b.y[n]
            else:
                wrong += abs(z) > 1
                off += 1
                plus += z == 1
                minus += z == -1
    assert 0 < res <= a1.rounding_tolerance(s.d, law.norm)  # w* off the axes: rounding shows, within the bound
    assert law.residual <= a1.rounding_tolerance(s.d, law.norm)
    assert law.wrong == wrong == 0 and (law.plus, law.minus) == (plus / off, minus / off)
    assert law.noise2 == pytest.approx(np.mean(noise), rel=1e-12)
    assert law.norm == pytest.approx(max(np.linalg.norm(b.X, axis=2).ravel()), rel=1e-14)


def test_the_noise_identity_is_the_trace_of_the_projector():
    """E‖ξ‖² = tr σ² (I − w* w*ᵀ) = σ² (d − 1), the centre of row 4's band."""
    s = Setting(D=16, C=4, feature=np.arange(1.0, 17.0))
    w = s.w_star
    assert np.trace(s.sigma2 * (np.eye(s.d) - np.outer(w, w))) == pytest.approx(s.sigma2 * (s.d - 1), rel=1e-14)


def test_the_samplers_data_pass_every_row():
    rows = claims.judge(a1, S, quick=True)
    assert _verdicts(rows) == ["PASS"] * 5
    assert rows[0].measured == 0.0  # w* = e_0: the projection is exact
    assert abs(rows[2].measured - S.q / 2) < 0.002 and abs(rows[3].measured - S.q / 2) < 0.002


def test_noise_not_projected_out_fails_row_0_and_prints_the_mismatch():
    batches = []
    for k in SEEDS:
        b = sample(S, 512, np.random.default_rng([k, 1001]))
        along = np.random.default_rng(k).standard_normal((512, S.D)) * math.sqrt(S.sigma2)
        batches.append((b.X + along[..., None] * S.w_star, b.y, b.signal))  # planted: ξ_j ~ N(0, σ² I)
    row = a1.rows(Assumption1Results(S, _law(S, batches, 512)))[0]
    assert row.verdict == "FAIL" and row.measured > 0.3  # |N(0, σ²)| rounded to the nearest integer
    assert f"{row.measured:.3g}" in row.note and "times it" in row.note


def test_a_flipped_signal_patch_fails_row_1():
    b = sample(S, 256, np.random.default_rng(1))
    X = b.X.copy()
    j = int(np.flatnonzero(S.set_of == b.signal[0])[0])
    X[0, j] -= 2 * b.y[0] * S.w_star  # planted: one patch of the signal set carries -y w*
    rows = a1.rows(Assumption1Results(S, _law(S, [(X, b.y, b.signal)], 256)))
    assert rows[0].verdict == "PASS" and rows[1].verdict == "FAIL" and rows[1].measured == 1
    assert rows[1].note.startswith("1 of ")


def test_a_sampler_at_another_q_fails_the_frequency_rows():
    law = data_law(Setting(D=64, C=4, q=0.8 * S.q), N=512, seeds=SEEDS)  # planted: q' = 0.8 q
    rows = a1.rows(Assumption1Results(S, law))
    assert _verdicts(rows) == ["PASS", "PASS", "FAIL", "FAIL", "PASS"]
    assert "outside" in rows[2].note and "(by " in rows[2].note


def test_a_sampler_at_another_sigma_fails_the_noise_row():
    law = data_law(Setting(D=64, C=4, sigma2=1.1 * S.sigma2), N=512, seeds=SEEDS)  # planted: σ'² = 1.1 σ²
    rows = a1.rows(Assumption1Results(S, law))
    assert _verdicts(rows) == ["PASS", "PASS", "PASS", "PASS", "FAIL"]


def test_an_interval_across_an_edge_of_the_band_is_info():
    """The band's third outcome: neither inside nor outside (interval_verdict's ``otherwise``)."""
    hi = a1.band(S.q / 2, a1.FREQ_BAND)[1]
    plus = [hi - 0.002, hi + 0.002, hi - 0.001, hi + 0.001, hi]
    batches = tuple(BatchLaw(0.0, 1.0, 0, p, S.q / 2, S.sigma2 * (S.d - 1)) for p in plus)
    rows = a1.rows(Assumption1Results(S, DataLaw(N=1, seeds=SEEDS, batches=batches)))
    assert _verdicts(rows) == ["PASS", "PASS", "INFO", "PASS", "PASS"]
    assert "across an edge" in rows[2].note


def test_the_sizes_and_the_memory_estimate():
    assert (a1.SIZES.quick.N, a1.SIZES.full.N, a1.SIZES.quick.seeds) == (2048, 8192, SEEDS)
    X_bytes = a1.SIZES.quick.N * S.D * S.d * 8
    assert X_bytes < a1.memory(S, True).total < 3 * X_bytes
