"""Memory estimates against the real arrays, and the refusal that names parameter, estimate and limit.

Two independent routes: each array term equals ``nbytes`` of the array the code allocates, and
each total lies between the peak that ``tracemalloc`` measures (numpy reports its allocations
to it) and a small multiple of that peak. The exact-expectation term count is checked against
the solver's own count and against brute-force enumeration of multisets.
"""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

from theorydyn import Setting
from theorydyn.core import data
from theorydyn.experiments import theorem32 as xt32
from theorydyn.infra import memory as R
from theorydyn.infra.memory import SMALL_BYTES
from theorydyn.reduced import make_bank
from theorydyn.reduced import memory as reduced_memory_module
from theorydyn.reduced import n_exact_terms as solver_exact_terms
from theorydyn.reduced.bank import mc_type_counts
from theorydyn.simulate import memory as simulate_memory_module
from theorydyn.vision import memory as V

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(R.__file__))))

GiB = 1 << 30


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


# ---- each term is the size of the array it names -------------------------------------------------------
@pytest.mark.parametrize("D,C,N,dtype", [(16, 4, 37, np.float64), (12, 3, 5, np.float32), (8, 2, 64, np.float64)])
def test_X_term_is_the_nbytes_of_X(D, C, N, dtype):
    s = Setting(D=D, C=C, d=D + 3)
    X = data.sample(s, N, seed=0, dtype=dtype).X
    est = data.sample_memory(D, C, D + 3, N, np.dtype(dtype).itemsize)
    assert est.terms[0].nbytes == X.nbytes == N * D * (D + 3) * np.dtype(dtype).itemsize
    assert est.terms[0].params == {"N": N, "D": D, "d": D + 3}


@pytest.mark.parametrize("D,C,N", [(16, 4, 100), (24, 2, 7)])
def test_histogram_term_is_the_nbytes_of_the_bank_draw(D, C, N):
    s = Setting(D=D, C=C)
    assert reduced_memory_module.reduced_memory(D, C, s.q, N).terms[0].nbytes == mc_type_counts(s, N, seed=1).nbytes


def test_mask_and_DxD_terms_are_the_nbytes_of_the_masks_and_logits():
    s = Setting(D=20, C=4)
    masks = s.same_set.nbytes + s.in_set_mask.nbytes + s.cross_set_mask.nbytes + np.eye(s.D, dtype=bool).nbytes
    est = simulate_memory_module.simulate_memory(20, 4, N=100, n_test=50)
    by_what = {t.what.split(" (")[0]: t.nbytes for t in est.terms}
    assert by_what["(D, D) boolean masks of the Setting"] == masks
    assert next(t.nbytes for t in est.terms if t.what.startswith("(D, D) float64")) == 8 * np.empty((20, 20)).nbytes


def test_exact_term_count_against_the_solver_and_brute_force():
    for D, C, q in [(8, 2, 0.3), (12, 3, 0.5), (16, 4, 1.0), (16, 4, 0.0), (40, 4, 0.1), (256, 4, 0.0625)]:
        s = Setting(D=D, C=C, q=q)
        assert reduced_memory_module.n_exact_terms(D, C, q) == solver_exact_terms(s)
    for D, C, q in [(8, 2, 0.3), (12, 3, 1.0), (10, 2, 0.0), (15, 3, 0.7)]:
        k = reduced_memory_module.n_count_types(C, q)
        brute = sum(1 for _ in itertools.combinations_with_replacement(range(k), D // C - 1))
        assert reduced_memory_module.n_exact_terms(D, C, q) == brute
    assert (
        reduced_memory_module.n_count_types(4, 0.3) == 15
        and reduced_memory_module.n_count_types(4, 1.0) == 5
        and reduced_memory_module.n_count_types(4, 0.0) == 1
    )


# ---- each total bounds the measured peak ---------------------------------------------------------------
def _between(peak: int, est: int, factor: float = 2.5) -> None:
    assert peak <= est <= factor * peak + SMALL_BYTES, (peak, est, est / peak)


def test_reduced_bank_estimates_bound_the_measured_peak():
    make_bank(Setting(D=8, C=2), "mc", n_samples=50)  # compile the kernels outside the measurement
    make_bank(Setting(D=8, C=2), "exact")
    for D, C, N in [(64, 4, 20_000), (128, 8, 5_000)]:
        s = Setting(D=D, C=C)
        _between(
            _peak(lambda: make_bank(s, "mc", n_samples=N)), reduced_memory_module.reduced_memory(D, C, s.q, N).total
        )
    s = Setting(D=32, C=4)
    _between(
        _peak(lambda: make_bank(s, "exact")),
        reduced_memory_module.reduced_memory(32, 4, s.q, expectation="exact").total,
    )


def test_sample_estimate_bounds_the_measured_peak():
    for D, N, dt in [(16, 3000, np.float64), (32, 2000, np.float32)]:
        s = Setting(D=D, C=4)
        est = data.sample_memory(D, 4, None, N, np.dtype(dt).itemsize).total
        _between(_peak(lambda: data.sample(s, N, seed=0, dtype=dt)), est)


def test_simulate_estimate_bounds_the_measured_peak():
    from theorydyn.simulate import simulate

    simulate(Setting(D=8, C=2), N=64, steps=1, n_test=64)  # compile outside the measurement
    for D, N, n_test, dt in [(16, 2000, 1000, "float64"), (32, 1000, 3000, "float32")]:
        s = Setting(D=D, C=4)
        peak = _peak(lambda: simulate(s, N=N, steps=2, n_test=n_test, dtype=dt, record_every=1))
        _between(peak, simulate_memory_module.simulate_memory(D, 4, None, N, n_test, dt).total)


def test_theorem_3_2_estimate_bounds_the_measured_peak():
    from theorydyn.claims.theorem32 import Theorem32Sizes, check_theorem_3_2

    s = Setting(D=64, C=4)
    _between(_peak(lambda: check_theorem_3_2(s, Theorem32Sizes(N=300))), xt32.memory(64, 4, None, 300).total)


@pytest.mark.slow  # importing torch alone takes seconds
def test_vit_estimate_bounds_the_tensors_autograd_saves():
    torch = pytest.importorskip("torch")
    from theorydyn.vision.model import ViT, ViTConfig

    for att, (w, depth, heads, patch, B) in itertools.product(
        ("positional", "vanilla"), [(96, 2, 4, 4, 8), (64, 3, 2, 8, 16)]
    ):
        torch.manual_seed(0)
        m = ViT(ViTConfig(width=w, depth=depth, heads=heads, mlp=w, patch=patch, attention=att))
        saved: dict[int, int] = {}

        def pack(t):
            st = t.untyped_storage()
            saved[st.data_ptr()] = st.nbytes()
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            m(torch.randn(B, 3, 32, 32)).sum()
        params = {p.untyped_storage().data_ptr() for p in m.parameters()}
        act = sum(v for k, v in saved.items() if k not in params)
        est = V.vit_batch_memory(B, w, depth, heads, w, patch)
        assert est.terms[0].nbytes == torch.randn(B, 3, 32, 32).untyped_storage().nbytes()
        assert act <= est.terms[1].nbytes <= 2.5 * act, (att, w, act, est.terms[1].nbytes)


# ---- refusing --------------------------------------------------------------------------------------------
def test_refusal_names_the_parameter_the_estimate_and_the_limit():
    est = reduced_memory_module.reduced_memory(
        16, 4, 1.0, n_samples=10**12
    )  # `reduced --n-samples 1e12` (CLI default D=16, C=4)
    assert est.total > 80 * (1 << 40)
    with pytest.raises(R.ResourceError) as e:
        R.check_memory(est, available=8 * GiB, force_name="--force")
    msg = str(e.value)
    assert msg.startswith("n_samples=1000000000000:") and "TiB" in msg and "8.0 GiB" in msg and "--force" in msg
    assert isinstance(e.value, ValueError)
    assert R.check_memory(est, available=8 * GiB, force=True) is est
    assert R.check_memory(reduced_memory_module.reduced_memory(16, 4, 1.0, 4000), available=8 * GiB).total < 8 * GiB


@pytest.mark.parametrize(
    "est,named",
    [
        (simulate_memory_module.simulate_memory(64, 4, N=10**12), "N=1000000000000"),
        (simulate_memory_module.simulate_memory(64, 4, N=100, n_test=10**12), "n_test=1000000000000"),
        (simulate_memory_module.simulate_memory(100_000, 4, N=2), "D=100000"),
        (xt32.memory(100_000, 4), "N=20000, D=100000"),
        (V.vit_batch_memory(100_000_000, 96, 2, 4), "batch=100000000"),
        (reduced_memory_module.reduced_memory(512, 2, 0.0078, expectation="exact"), "D=512, C=2"),
    ],
)
def test_the_issue_cases_are_refused_naming_their_parameter(est, named):
    with pytest.raises(R.ResourceError, match=named):
        R.check_memory(est, available=64 * GiB)


def test_available_memory_and_its_override(monkeypatch):
    monkeypatch.delenv(R.MEMORY_ENV, raising=False)
    avail, source = R.available_memory()
    assert avail is None or (avail > 0 and source)
    monkeypatch.setenv(R.MEMORY_ENV, "3G")
    assert R.available_memory() == (3 * GiB, f"${R.MEMORY_ENV}")
    with pytest.raises(R.ResourceError, match=r"more than the 3.0 GiB of memory available \(\$THEORYDYN"):
        R.check_memory(simulate_memory_module.simulate_memory(64, 4, N=10**9))
    monkeypatch.setenv(R.MEMORY_ENV, "lots")
    with pytest.raises(ValueError, match=R.MEMORY_ENV):
        R.available_memory()


def test_parse_and_format_bytes():
    assert R.parse_bytes("1.5K") == 1536 and R.parse_bytes("2 GiB") == 2 * GiB and R.parse_bytes(7) == 7
    for bad in ("", "-1G", "0", "1X", "G"):
        with pytest.raises(ValueError, match="must be"):
            R.parse_bytes(bad, name="limit")
    assert R.format_bytes(1536) == "1.5 KiB" and R.format_bytes(3) == "3 B"
    assert R.format_bytes(87 * (1 << 40)) == "87.0 TiB" and math.isclose(R.parse_bytes("87T"), 87 * (1 << 40))


@pytest.mark.parametrize("bad", ["abc", "-5", "nan", "NaN", "inf", "1e400", "1e400G", "0.5", "-1e3"])
def test_an_invalid_memory_limit_is_a_value_error_naming_the_variable(monkeypatch, bad):
    """Never an OverflowError (1e400 used to reach int(inf)): the CLIs turn the ValueError into exit 2."""
    with pytest.raises(ValueError, match=R.MEMORY_ENV):
        R.parse_bytes(bad)
    monkeypatch.setenv(R.MEMORY_ENV, bad)
    with pytest.raises(ValueError, match=R.MEMORY_ENV):
        R.available_memory()
    assert R.parse_bytes("1e3") == 1000 and R.parse_bytes("1e300") == int(1e300)  # large and finite: a number


# ---- the estimates beside their code; resources below the solvers ---------------------------------------
def test_memory_module_imports_no_solver():
    """infra.memory is what every CLI imports before parsing its flags, and the bottom layer: the
    estimates are imported from beside their code (core.data, the solvers, the experiments,
    vision.memory), never through it."""
    assert not hasattr(R, "reduced_memory") and not hasattr(R, "simulate_memory")
    assert not hasattr(R, "sample_memory") and not hasattr(R, "theorem_3_1_memory")
    code = (
        "import sys, theorydyn.infra.memory as R; assert 'theorydyn.reduced' not in sys.modules; "
        "assert 'theorydyn.simulate' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ, PYTHONPATH=_ROOT))
