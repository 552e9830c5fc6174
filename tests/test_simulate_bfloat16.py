"""bfloat16 storage of the training X (theorydyn.simulate.bfloat16, simulate(dtype="bfloat16")).

Independent routes: the rounding against float64 arithmetic (frexp, 8 significant bits, ties to even)
and against torch's own bfloat16 cast; the bfloat16 kernel against float64 math on the widened data
(the same data, exact); the run against a float32 run on the widened data.
"""

from __future__ import annotations

import numpy as np
import pytest

from theorydyn.core import model
from theorydyn.core.setting import Setting
from theorydyn.simulate import simulate
from theorydyn.simulate._kernel import FusedModel
from theorydyn.simulate.bfloat16 import BFLOAT16, from_bfloat16, is_bfloat16, to_bfloat16
from theorydyn.simulate.memory import simulate_memory
from theorydyn.simulate.run import training_data


def _rounded_by_float64(x: np.ndarray) -> np.ndarray:
    """x (float32, finite, normal) rounded to 8 significant bits, ties to even, in float64 arithmetic:
    m · 2^e with m ∈ [0.5, 1) → rint(m · 2⁸) / 2⁸ · 2^e (every step exact in float64)."""
    m, e = np.frexp(x.astype(np.float64))
    return np.ldexp(np.rint(m * 256.0) / 256.0, e)


def _values(n: int = 200_000) -> np.ndarray:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)
    ties = np.float32(1.0) + np.arange(1, 200, dtype=np.float32) * np.float32(2.0**-8)  # every other one a tie
    return np.concatenate([x.astype(np.float32), ties, -ties])


def test_rounding_matches_float64_arithmetic_to_the_bit():
    x = _values()
    got = from_bfloat16(to_bfloat16(x)).astype(np.float64)
    want = _rounded_by_float64(x)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"{bad.size} of {x.size} differ, e.g. {x[bad[:3]]} -> {got[bad[:3]]} vs {want[bad[:3]]}"
    rel = np.abs(got - x) / np.abs(x)
    assert rel.max() <= 2.0**-8, f"relative rounding error {rel.max():.3g} > 2^-8 (the unit roundoff of 8 bits)"


def test_rounding_matches_torch_bfloat16_including_specials():
    torch = pytest.importorskip("torch")
    x = np.concatenate(
        [_values(), np.array([np.inf, -np.inf, 0.0, -0.0, 3.4e38, -3.4e38, 1e-40, -1e-42, np.nan], np.float32)]
    )
    want = torch.from_numpy(x).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    got = to_bfloat16(x)
    bad = np.flatnonzero((got != want) & ~np.isnan(x))
    assert bad.size == 0, f"{bad.size} differ from torch, e.g. {x[bad[:3]]}: {got[bad[:3]]} vs {want[bad[:3]]}"
    assert np.isnan(from_bfloat16(got[-1:])).all()  # a NaN stays a NaN
    widened = torch.from_numpy(got.view(np.int16)).view(torch.bfloat16).float().numpy()
    np.testing.assert_array_equal(from_bfloat16(got), widened)


def test_widening_is_exact_on_representable_values():
    b = np.arange(0, 2**16, dtype=np.uint16)
    b = b[~np.isnan(from_bfloat16(b))]
    np.testing.assert_array_equal(to_bfloat16(from_bfloat16(b)), b)
    assert is_bfloat16(b) and not is_bfloat16(b.astype(np.float32)) and BFLOAT16 == np.uint16


@pytest.mark.parametrize("D,d,N,R", [(8, 5, 333, 3), (64, 64, 150, 2)])
def test_bfloat16_step_matches_float64_math_on_the_widened_data(D, d, N, R):
    """The bfloat16 kernel (X widened per sub-block, U = X_sub V one GEMM for all replicas) against
    model.risk_and_grad in float64 on the same (widened) data: float32 arithmetic, so held to 1e-5
    norm-wise as the float32 kernel is (tests/test_simulate.py), with per-replica gradient flags."""
    s = Setting(D=D, C=4, d=d)
    rng = np.random.default_rng(D + R)
    X = rng.standard_normal((N, D, d)).astype(np.float32)
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    Xb = to_bfloat16(X)
    X64 = from_bfloat16(Xb).astype(np.float64)
    A = rng.normal(scale=0.6, size=(R, D, D))
    V = rng.normal(scale=0.8, size=(d, R))
    flags = [r % 2 == 0 for r in range(R)]
    fm = FusedModel(Xb, y, s.p, s.nu, s.tau)
    assert fm.bf16 and fm.X is Xb
    risk, err, gA, gV = fm.risk_grad(A, V, grad_A=flags)
    for r in range(R):
        r0, gA0, gv0 = model.risk_and_grad(s, A[r], V[:, r], X64, y)
        assert abs(risk[r] - r0) <= 1e-6 * abs(r0), f"risk {risk[r]} vs {r0}"
        if flags[r]:
            dA = np.linalg.norm(gA[r] - gA0) / np.linalg.norm(gA0)
            assert dA <= 1e-5, f"replica {r}: grad_A off by {dA:.3g} relative"
        else:
            assert not gA[r].any()
        dv = np.linalg.norm(gV[:, r] - gv0) / np.linalg.norm(gv0)
        assert dv <= 1e-5, f"replica {r}: grad_v off by {dv:.3g} relative"
        F0 = model.forward(s, A[r], V[:, r], X64)
        near0 = np.abs(y * F0) <= 1e-4 * np.abs(F0).max()
        assert abs(err[r] - np.mean(y * F0 <= 0)) <= np.mean(near0) + 1e-12
    with pytest.raises(ValueError, match="bfloat16"):
        fm.forward(A, V)


def test_simulate_bfloat16_is_a_float32_run_on_the_rounded_data():
    """simulate(dtype="bfloat16") trains on the float32 draw rounded to bfloat16 and tests on the
    float32 test set: it tracks a float32 run given the widened data explicitly (same test set and
    initialisation) to float32 rounding (1e-5 relative over 200 steps, as float32 vs float64 storage)."""
    s = Setting(D=16, C=4)
    kw = dict(N=1024, eta=1.0, steps=200, record_every=50, n_test=512, seed=3)
    rb = simulate(s, dtype="bfloat16", **kw)
    assert rb.options["dtype"] == "bfloat16"
    tb = training_data(s, 1024, seed=3, dtype="bfloat16")
    assert is_bfloat16(tb.X)
    t32 = training_data(s, 1024, seed=3, dtype="float32")
    np.testing.assert_array_equal(tb.X, to_bfloat16(t32.X))  # the float32 draw, rounded
    kw32 = {k: v for k, v in kw.items() if k != "N"}
    r32 = simulate(s, dtype="float32", train=(from_bfloat16(tb.X), tb.y), **kw32)
    for col in ("alpha", "gamma", "rho", "risk", "err_y"):
        np.testing.assert_allclose(rb.trajectory[col], r32.trajectory[col], rtol=1e-5, atol=1e-7, err_msg=col)
    # and the data did change: a float32 run on the unrounded draw differs by more than rounding
    r_un = simulate(s, dtype="float32", **kw)
    assert np.abs(r_un.trajectory["risk"] - rb.trajectory["risk"]).max() > 1e-6


def test_bfloat16_refusals_name_the_option():
    s = Setting(D=8, C=2)
    with pytest.raises(ValueError, match="dtype='bfloat16'"):
        simulate(s, N=64, steps=1, dtype="bfloat16", device="cpu")
    tb = training_data(s, 64, seed=0, dtype="bfloat16")
    with pytest.raises(ValueError, match="bfloat16 bits"):
        simulate(s, steps=1, dtype="float32", train=(tb.X, tb.y))
    with pytest.raises(ValueError, match="dtype"):
        simulate(s, N=64, steps=1, dtype="float16")


def test_bfloat16_memory_is_the_float32_draw_and_its_bits():
    kw = dict(D=64, C=4, N=4096, n_test=1024)
    f32, b16 = simulate_memory(dtype="float32", **kw), simulate_memory(dtype="bfloat16", **kw)
    assert b16.total - f32.total == 4096 * 64 * 64 * 2
