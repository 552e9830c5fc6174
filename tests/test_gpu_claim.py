"""The GPU rows of the ledger (theorydyn.claims.gpu): NOT_RUN with the command where there is no CUDA
device, NOT_RUN naming the memory where a size does not fit, and on a device the CPU rows' own
procedure — run here on torch's CPU device at a small size, against the Numba route's rows."""

from __future__ import annotations

import math

import pytest

from theorydyn.claims import gpu, theorem4
from theorydyn.claims.check import Verdict
from theorydyn.core.setting import Setting, setting_at
from theorydyn.experiments.theorem4 import run_plan, run_seeds

# the experiments' keyed stores (seed runs, N*(D) passes, step-size rules) in a run directory of each test's own
pytestmark = pytest.mark.usefixtures("run_home")

torch = pytest.importorskip("torch")


def test_without_a_device_every_row_is_not_run_with_its_command(monkeypatch):
    monkeypatch.setattr(gpu, "cuda_device", lambda: None)
    s = Setting(D=48, C=4)
    quick, full = gpu.checks(s, quick=True), gpu.checks(s, quick=False)
    assert len(quick) == 2 * len(gpu.SIZES.quick.D)
    assert len(full) == 2 * len(gpu.SIZES.full.D) + 1  # + the N*(D) row
    for rows, mode in ((quick, " --quick"), (full, "")):
        for c in rows:
            assert c.verdict == Verdict.NOT_RUN and math.isnan(c.measured), c
            assert "on CUDA" in c.claim and gpu.NO_DEVICE in c.note, c.note
            assert c.note.endswith(f"python -m theorydyn.verify --D 48 --C 4 --q {s.q:g} --only gpu{mode}"), c.note
    assert [c.params["D"] for c in full[:4]] == [128, 128, 256, 256]
    assert gpu.memory(s, quick=False).total == 0


def test_a_size_that_does_not_fit_the_device_is_not_run_naming_the_memory(monkeypatch):
    monkeypatch.setattr(gpu, "device_bytes", lambda device: 80 * 2**30)  # an 80 GiB card
    rows = gpu._not_run(Setting(), 256, 1 << 18, "x", quick=False)
    assert len(rows) == 2
    # X at D = 256, N = 2^18 in float32 is 64 GiB; with the device's temporaries 80 GiB: not on an 80 GiB card
    need = gpu.DEVICE_X_FACTOR * gpu.x_bytes(256, 1 << 18)
    assert need == 80 * 2**30 and gpu.x_bytes(256, 1 << 18) == 64 * 2**30
    big = gpu.GpuSizes(D=(256,), N=(1 << 18,), nstar=False)
    monkeypatch.setattr(gpu, "SIZES", gpu.Sizes(quick=big, full=big))
    monkeypatch.setattr(gpu, "device_bytes", lambda device: 79 * 2**30)
    out = gpu.checks(Setting(), quick=True, device="cuda")  # nothing runs: the only size does not fit
    assert [c.verdict for c in out] == [Verdict.NOT_RUN] * 2
    assert "X needs 80.0 GiB, cuda has 79.0 GiB" in out[0].note, out[0].note


@pytest.mark.slow
def test_on_a_device_the_rows_are_the_cpu_rows_procedure(monkeypatch):
    """The torch route (device "cpu") gives the Numba route's rows at the same small size: the same
    verdicts, the same discrete numbers (association, errors on fresh samples) and the device in the text."""
    s = Setting(D=16, C=4)
    small = gpu.GpuSizes(D=(16,), N=(2048,), nstar=False)
    monkeypatch.setattr(gpu, "SIZES", gpu.Sizes(quick=small, full=small))
    n4 = theorem4.SIZES.quick.replace(seeds=(0, 1))
    monkeypatch.setattr(theorem4, "SIZES", theorem4.Sizes(quick=n4, full=n4))
    rows = gpu.checks(s, quick=True, device="cpu")
    sg = setting_at(s, 16)
    plan = run_plan(sg, n4)  # the stated rule's step size, N*(D)'s windows
    run = theorem4.RUN.replace(N=2048, steps=plan["steps"], eta=plan["eta"], dtype="float32")
    runs = run_seeds(sg, run, n4.seeds, control=True, record_every=plan["record_every"])
    ref = theorem4.theorem_4_rows(runs, ledger_D=16, T_a=plan["T_a"], ks=plan["ks"])
    assert len(rows) == len(ref) > 2
    for a, b in zip(rows, ref, strict=True):
        assert a.claim == b.claim.replace("Theorem 4.2", "Theorem 4.2 on cpu", 1), (a.claim, b.claim)
        assert a.verdict == b.verdict, (a.claim, a.verdict, b.verdict)
        # float32 steps on two routes agree to rounding; the rows' numbers are fractions of rows and of
        # fresh samples, or cosines: equal, or within float32 rounding of a cosine
        ok = a.measured == pytest.approx(b.measured, rel=1e-4, abs=1e-6, nan_ok=True)
        assert ok, (a.claim, a.measured, b.measured)
