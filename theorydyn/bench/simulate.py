"""Benchmark of the finite-sample simulator: ``python -m theorydyn.bench simulate``.

Default run: one GD step (risk, ∂/∂A, ∇_v) of model (T) at N = 16384, D = d = 64, with X stored
in float64 and in float32, timed round-robin (median of ``--repeats`` interleaved repeats, so a
shared machine's load hits every contender alike; each repeat the mean of ``--batch`` calls back to
back, as a GD loop makes them, after a pause and one untimed call: :data:`BATCH`) against
  (a) one streaming pass over X, U = X v (BLAS gemv at the storage dtype): the physical floor of
      a step that reads X once — the fused kernel's goal is ≤ 1.3× this;
  (b) the same step written with PyTorch CPU autograd at the same dtype (gradients checked to
      agree before any ratio is printed): goal ≥ 2× faster;
  (c) ``simulate()`` per step, on the same data (explicit train/test sets, ``record_every=50``, ``dense_until=0``,
      so its recording and test error are included at their default rate), against the kernel
      called the same way (``--sim-steps`` + 1 calls back to back: on a loaded machine the
      scheduler treats a busy process differently from one that just slept): goal ≤ 1.1×;
and 8 replicas sharing one X (per-run cost); then the steps of the other routes on the same X:
  (d) the v-only step (Â frozen: the ∂S product skipped), the Â-frozen control of Section 4, against
      the NumPy v-gradient it replaced (``experiments.theorem4.frozen_grad_v``, two passes over X); and a
      Theorem 4.2 run's step, the trained model with its control in one pass over X (two replicas,
      ∂Â skipped for the second), against the two steps it replaced (the fused step + the NumPy
      v-gradient): the run's time is its steps times this, so the ratio is the run's (goal ≤ 0.4×);
      with float32 X, the fused and the Theorem 4.2 step again on X rounded to bfloat16 (half the bytes;
      ``simulate(dtype="bfloat16")``, a named option since it changes the data);
  (e) the torch port of the step (``simulate(device="cpu")``, :mod:`theorydyn.simulate.torch_step`);
  (f) where torch sees CUDA: the torch step on the GPU against one pass over X in GPU memory
      (``X @ v`` on the device, synchronised), with X's bytes per second of each.
The table runs at each ``--D`` (default 64 and 128, d = D). The machine (CPU model, cores, library
versions, load average) is printed and written with the table to CSV (``--out``).

``--nstar quick|full`` (``--nstar-only``: alone): the N*(D) grid of that ledger timed by the route of
before issue 32 and by today's (:mod:`theorydyn.bench.nstar_grid`).

``--scaling``: the step time against N (D = d = 64; is it linear?) and against D (N fixed, d = D),
each next to one pass over X; and the memory of ``simulate()`` per training sample, measured in
fresh processes at two N (VmHWM), extrapolated to the largest N (and N·D·d) within
``--memory-budget-gib`` (24 GiB by default).

:func:`measure` takes the :class:`Options` (:class:`theorydyn.bench.config.SimulateBench`) and returns the
tables, printing nothing (its lines go to ``report``); the command, its flags and their checks are
:mod:`theorydyn.bench.simulate_cli`.
"""

from __future__ import annotations

import functools
import json
import operator
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
import pandas as pd

from ..core.data import sample
from ..core.model import attention, sigma
from ..core.setting import Setting
from ..simulate import simulate
from ..simulate._kernel import FusedModel, block_size
from ..simulate.bfloat16 import to_bfloat16
from ..simulate.torch_step import TorchModel
from . import BenchError
from .config import SimulateBench
from .timing import BATCH, SETTLE, Timed, _interleaved, _second_after_first  # noqa: F401  (re-exported)

#: what :func:`measure` measures (the flags of the command of the same names): the benchmark's configuration
Options = SimulateBench


def _silent(message: str) -> None:
    pass


def _torch_step(torch, Xt, yt, A_np, v_np, p, nu, tau):
    """Risk and gradients of (E) by autograd: the reference implementation."""
    A = torch.tensor(A_np, dtype=Xt.dtype, requires_grad=True)
    v = torch.tensor(v_np, dtype=Xt.dtype, requires_grad=True)
    eye = torch.eye(A.shape[0], dtype=torch.bool)
    Am = torch.where(eye, A.detach(), A)  # the diagonal is fixed at β: no gradient through it
    S = torch.softmax(Am / tau, dim=1)
    U = Xt @ v  # (N, D)
    H = U @ S.T
    F = sigma(H, p, nu).sum(dim=1)
    risk = torch.nn.functional.softplus(-yt * F).mean()
    risk.backward()
    return float(risk.detach()), A.grad.numpy(), v.grad.numpy()


def _point(s, rng):
    """A phase-II-like point (docs/theory.md §9): small off-diagonal logits, v ≈ 3.9 w*."""
    A = rng.normal(scale=0.05, size=(s.D, s.D))
    np.fill_diagonal(A, s.beta)
    v = 3.9 * s.w_star + rng.normal(scale=0.05, size=s.d)
    return A, v


_MEMORY_SCRIPT = r"""
import json, sys
def hwm():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM'):
            return int(line.split()[1]) * 1024
from ..setting import Setting
from theorydyn.simulate import simulate
simulate(Setting(D=8, C=2), N=64, steps=1, n_test=8, dtype='float32')  # imports and JIT warm-up
base = hwm()
D, N, steps, n_test, dtype = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
res = simulate(Setting(D=D, C=4), N=N, steps=steps, n_test=n_test, dtype=dtype, record_every=steps)
print(json.dumps(dict(vmhwm=hwm(), base=base, status=str(res.status), seconds=res.seconds)))
"""


def memory_run(D: int = 64, N: int = 16384, steps: int = 2, n_test: int = 1024, dtype: str = "float32") -> dict:
    """Peak memory (VmHWM) of a ``simulate()`` run in a fresh process, and the bytes of X."""
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [sys.executable, "-c", _MEMORY_SCRIPT, str(D), str(N), str(steps), str(n_test), dtype],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    m = json.loads(out.stdout.strip().splitlines()[-1])
    item = np.dtype(dtype).itemsize
    m.update(D=D, N=N, n_test=n_test, dtype=dtype, X_bytes=N * D * D * item, growth=m["vmhwm"] - m["base"])
    return m


def memory_scaling(D: int, N1: int, N2: int, budget_gib: float, dtype: str = "float32") -> tuple[pd.DataFrame, dict]:
    """Bytes per training sample from two fresh-process runs (N1 < N2), and the largest N in the budget.

    per_sample = (VmHWM(N2) − VmHWM(N1)) / (N2 − N1); fixed = VmHWM(N1) − N1 · per_sample (interpreter,
    libraries, test set); N_max = (budget − fixed) / per_sample.
    """
    runs = [memory_run(D=D, N=n, dtype=dtype) for n in (N1, N2)]
    per = (runs[1]["vmhwm"] - runs[0]["vmhwm"]) / (N2 - N1)
    fixed = runs[0]["vmhwm"] - N1 * per
    budget = budget_gib * 2**30
    n_max = int((budget - fixed) // per)
    x_per = D * D * np.dtype(dtype).itemsize
    summary = dict(
        D=D,
        d=D,
        dtype=dtype,
        bytes_per_sample=per,
        X_bytes_per_sample=x_per,
        per_sample_over_X=per / x_per,
        fixed_MiB=fixed / 2**20,
        budget_GiB=budget_gib,
        N_max=n_max,
        NDd_max=n_max * D * D,
    )
    return pd.DataFrame(runs), summary


#: Bytes of X for the in-cache step (:func:`_in_cache_samples`): n and 2n samples fit the last-level
#: cache of current x86 parts (≥ 16 MiB) together with the kernel's working set.
IN_CACHE_BYTES = 1 << 23


def _in_cache_samples(fm: FusedModel, N: int) -> int:
    """n for the in-cache step: a whole number of small-N blocks per thread (no thread idles on the
    last block), about :data:`IN_CACHE_BYTES` of X, at most N/2."""
    threads = numba.get_num_threads()
    unit = threads * block_size(1, fm.sub)  # the block of every N ≤ MAX_BLOCKS · MIN_BLOCK
    per = fm.D * fm.d * fm.X.itemsize
    return int(min(max(1, IN_CACHE_BYTES // (unit * per)) * unit, max(1, N // 2)))


def _main_table(args, s, torch) -> pd.DataFrame:
    A, v = _point(s, np.random.default_rng(0))
    return pd.DataFrame([_main_row(args, s, torch, dtype, A, v) for dtype in args.dtypes])


def _other_routes(s, torch, b, fm, A, v) -> dict[str, Callable[[], Any]]:
    """Contenders (d) and (e) of the module docstring on the main row's X."""
    from ..experiments.theorem4 import frozen_grad_v  # imported where used (the experiments load the solvers)

    S = attention(s, A)
    A2, V2 = np.repeat(A[None], 2, axis=0), np.repeat(v[:, None], 2, axis=1)
    fns: dict[str, Callable[[], Any]] = dict(
        v_only=lambda: fm.risk_grad(A[None], v[:, None], grad_A=False),
        frozen_numpy=lambda: frozen_grad_v(s, S, v, b.X, b.y),
        # a Theorem 4.2 run's step since issue 32: the trained model and its A-frozen control in one pass
        paired=lambda: fm.risk_grad(A2, V2, grad_A=[True, False]),
    )
    if b.X.dtype == np.float32:  # the same X rounded to bfloat16 (simulate(dtype="bfloat16")): half the bytes
        f16 = FusedModel(to_bfloat16(b.X), b.y, s.p, s.nu, s.tau)
        fns["fused_bf16"] = lambda: f16.risk_grad(A[None], v[:, None])
        fns["paired_bf16"] = lambda: f16.risk_grad(A2, V2, grad_A=[True, False])
    if torch is not None:
        tm = TorchModel(b.X, b.y, s.p, s.nu, s.tau, device="cpu")
        fns["torch_step"] = lambda: tm.risk_grad(A[None], v[:, None])
    return fns


def _cuda_row(args, s, torch, b, A, v) -> dict[str, float]:
    """(f): the torch step on the GPU against one pass over X in GPU memory, each synchronised (medians
    of ``args.repeats`` × ``args.batch`` calls after a warm-up); {} without CUDA."""
    if torch is None or not torch.cuda.is_available():
        return {}
    tm = TorchModel(b.X, b.y, s.p, s.nu, s.tau, device="cuda")
    X2 = tm.X.reshape(-1, s.d)
    vg = torch.as_tensor(v, device="cuda").to(X2.dtype)

    def one_pass():
        X2 @ vg
        torch.cuda.synchronize()

    med = _interleaved(
        dict(gpu_step=lambda: tm.risk_grad(A[None], v[:, None]), gpu_one_pass=one_pass),
        args.repeats,
        0.0,
        args.batch,
    )
    nbytes = b.X.nbytes  # the device copy of X is freed on return (the closures above are local)
    return dict(
        gpu=torch.cuda.get_device_name(0),
        gpu_step_ms=1e3 * med["gpu_step"],
        gpu_one_pass_ms=1e3 * med["gpu_one_pass"],
        gpu_step_over_one_pass=med["gpu_step"] / med["gpu_one_pass"],
        gpu_X_GB_per_s_step=nbytes / med["gpu_step"] / 1e9,
        gpu_X_GB_per_s_one_pass=nbytes / med["gpu_one_pass"] / 1e9,
    )


def _main_row(args, s, torch, dtype: str, A: np.ndarray, v: np.ndarray) -> dict[str, Any]:
    """The main table's row of one storage dtype (its X is freed on return, before the next dtype's)."""
    b = sample(s, args.N, seed=1, dtype=dtype)
    bt = sample(s, args.n_test, seed=2, dtype=dtype)
    X2 = b.X.reshape(-1, s.d)
    fm = FusedModel(b.X, b.y, s.p, s.nu, s.tau)
    Ar = np.repeat(A[None], args.replicas, axis=0)
    Vr = np.repeat(v[:, None], args.replicas, axis=1)
    vx = v.astype(dtype)
    fns: dict[str, Callable[[], Any]] = dict(fused=lambda: fm.risk_grad(A[None], v[:, None]), one_pass=lambda: X2 @ vx)
    # the step's arithmetic alone: X resident in cache, the per-call cost removed as the difference
    # between n and 2n samples (both cached), scaled to N
    n_c = _in_cache_samples(fm, args.N)
    fm1 = FusedModel(b.X[:n_c], b.y[:n_c], s.p, s.nu, s.tau)
    fm2 = FusedModel(b.X[: 2 * n_c], b.y[: 2 * n_c], s.p, s.nu, s.tau)
    fns["in_cache_1"] = lambda: fm1.risk_grad(A[None], v[:, None])
    fns["in_cache_2"] = lambda: fm2.risk_grad(A[None], v[:, None])
    fns["fused_after_pass"] = _second_after_first(fns["one_pass"], fns["fused"])
    fns["pass_after_fused"] = _second_after_first(fns["fused"], fns["one_pass"])
    if torch is not None:
        Xt = torch.from_numpy(b.X)  # shares memory with X
        yt = torch.from_numpy(b.y.astype(dtype))
        fns["autograd"] = lambda: _torch_step(torch, Xt, yt, A, v, s.p, s.nu, s.tau)
        r_f, _, gA_f, gv_f = fns["fused"]()
        r_t, gA_t, gv_t = fns["autograd"]()
        tol = 1e-9 if dtype == "float64" else 2e-3
        ok = (
            abs(r_f[0] - r_t) <= tol * abs(r_t)
            and np.allclose(gA_f[0], gA_t, rtol=tol, atol=tol * np.abs(gA_t).max())
            and np.allclose(gv_f[:, 0], gv_t, rtol=tol, atol=tol * np.abs(gv_t).max())
        )
        if not ok:
            raise RuntimeError(f"fused step and autograd disagree in {dtype}")
    if not args.no_simulate:
        K = args.sim_steps

        def sim():
            # dense_until=0: the steady per-step cost at the recording rate; the default dense
            # recording of the first 40 steps (phase I) is a fixed cost per run, not per step
            res = simulate(
                s,
                train=(b.X, b.y),
                test=(bt.X, bt.y),
                steps=K,
                eta=1e-3,
                A0=A,
                v0=v,
                record_every=50,
                dense_until=0,
                dtype=dtype,
            )
            if res.status != "ok":
                raise RuntimeError(f"simulate() did not finish: {res.status}")
            return K + 1  # steps + 1 risk-and-gradient evaluations (the last one recorded, not applied)

        fns["simulate_step"] = sim

        def fused_seq():  # the kernel as simulate() calls it: K + 1 calls back to back
            for _ in range(K + 1):
                fm.risk_grad(A[None], v[:, None])
            return K + 1

        fns["fused_back_to_back"] = fused_seq
    fns["replicas"] = lambda: fm.risk_grad(Ar, Vr)
    fns.update(_other_routes(s, torch, b, fm, A, v))
    med = _interleaved(fns, args.repeats, args.settle, args.batch)
    row = dict(
        dtype=dtype,
        N=args.N,
        D=s.D,
        d=s.d,
        X_MiB=b.X.nbytes / 2**20,
        repeats=args.repeats,
        batch=args.batch,
        sim_steps=args.sim_steps,
        fused_ms=1e3 * med["fused"],
        one_pass_ms=1e3 * med["one_pass"],
        fused_over_one_pass=med["fused"] / med["one_pass"],
        X_GB_per_s_fused=b.X.nbytes / med["fused"] / 1e9,
        X_GB_per_s_one_pass=b.X.nbytes / med["one_pass"] / 1e9,
        fused_after_pass_ms=1e3 * med["fused_after_pass"],
        pass_after_fused_ms=1e3 * med["pass_after_fused"],
        in_cache_n=n_c,
        in_cache_ms=1e3 * (med["in_cache_2"] - med["in_cache_1"]) * args.N / n_c,
    )
    row["in_cache_over_fused"] = row["in_cache_ms"] / row["fused_ms"]
    row["in_cache_over_one_pass"] = row["in_cache_ms"] / row["one_pass_ms"]
    if "autograd" in med:
        row.update(autograd_ms=1e3 * med["autograd"], autograd_over_fused=med["autograd"] / med["fused"])
    if "simulate_step" in med:
        row.update(
            simulate_step_ms=1e3 * med["simulate_step"],
            fused_back_to_back_ms=1e3 * med["fused_back_to_back"],
            simulate_over_fused=med["simulate_step"] / med["fused_back_to_back"],
        )
    row.update(
        replicas=args.replicas,
        replicas_per_run_ms=1e3 * med["replicas"] / args.replicas,
        replica_run_over_single=med["replicas"] / args.replicas / med["fused"],
        v_only_ms=1e3 * med["v_only"],
        frozen_numpy_ms=1e3 * med["frozen_numpy"],
        frozen_numpy_over_v_only=med["frozen_numpy"] / med["v_only"],
        paired_ms=1e3 * med["paired"],
        theorem42_before_ms=1e3 * (med["fused"] + med["frozen_numpy"]),
        theorem42_after_over_before=med["paired"] / (med["fused"] + med["frozen_numpy"]),
    )
    if "paired_bf16" in med:
        row.update(
            fused_bf16_ms=1e3 * med["fused_bf16"],
            fused_bf16_over_fused=med["fused_bf16"] / med["fused"],
            paired_bf16_ms=1e3 * med["paired_bf16"],
            theorem42_bf16_over_before=med["paired_bf16"] / (med["fused"] + med["frozen_numpy"]),
        )
    if "torch_step" in med:
        row.update(torch_step_ms=1e3 * med["torch_step"], torch_step_over_fused=med["torch_step"] / med["fused"])
    row.update(_cuda_row(args, s, torch, b, A, v))
    return row


def args_steps(r) -> str:
    return str(int(r["sim_steps"]) + 1) if "sim_steps" in r and pd.notna(r.get("sim_steps")) else "K + 1"


#: The lines :func:`main_text` prints for each dtype, in order: (the column whose part must have run, or None
#: for a line always printed; the line, ``str.format`` of the row's values and of ``calls``, ``in_cache_2n``).
MAIN_LINES: tuple[tuple[str | None, str], ...] = (
    (
        None,
        "  {dtype}: fused step {fused_ms:.1f} ms; one pass over X {one_pass_ms:.1f} ms "
        "-> {fused_over_one_pass:.2f}x one pass (goal <= 1.3x)",
    ),
    (
        "fused_after_pass_ms",
        "    alternating with no pause: the step right after one pass {fused_after_pass_ms:.1f} ms, one pass right "
        "after the step {pass_after_fused_ms:.1f} ms (the other library's idle threads still spinning: see SETTLE)",
    ),
    (
        "in_cache_ms",
        "    with X in cache (from {in_cache_n} and {in_cache_2n} samples, scaled to N): {in_cache_ms:.1f} ms = "
        "{in_cache_over_fused:.2f}x the step, {in_cache_over_one_pass:.2f}x one pass (the step's arithmetic alone; "
        "when this exceeds 1.3x one pass, the goal is out of this machine's reach)",
    ),
    (
        "autograd_ms",
        "    torch autograd {autograd_ms:.1f} ms -> fused is {autograd_over_fused:.2f}x faster (goal >= 2x)",
    ),
    (
        "simulate_step_ms",
        "    simulate() per step {simulate_step_ms:.1f} ms; the kernel called the same way ({calls} calls back to "
        "back) {fused_back_to_back_ms:.1f} ms per call -> {simulate_over_fused:.2f}x the kernel (goal <= 1.1x)",
    ),
    (
        None,
        "    {replicas} replicas sharing X: {replicas_per_run_ms:.1f} ms per run "
        "({replica_run_over_single:.2f}x a single run)",
    ),
    (
        "v_only_ms",
        "    A-frozen control: v-only fused step {v_only_ms:.1f} ms; the NumPy v-gradient it replaced "
        "{frozen_numpy_ms:.1f} ms ({frozen_numpy_over_v_only:.2f}x)",
    ),
    (
        "paired_ms",
        "    a Theorem 4.2 run's step (the trained model and its A-frozen control): before, the fused step and "
        "the NumPy v-gradient {theorem42_before_ms:.1f} ms; now, both in one pass {paired_ms:.1f} ms "
        "-> {theorem42_after_over_before:.2f}x (goal <= 0.4x)",
    ),
    (
        "paired_bf16_ms",
        "    X rounded to bfloat16 (simulate(dtype='bfloat16'), a named option: it changes the data): fused step "
        "{fused_bf16_ms:.1f} ms ({fused_bf16_over_fused:.2f}x float32's); a Theorem 4.2 run's step "
        "{paired_bf16_ms:.1f} ms -> {theorem42_bf16_over_before:.2f}x before (goal <= 0.4x)",
    ),
    (
        "torch_step_ms",
        "    torch step on CPU (simulate(device='cpu')) {torch_step_ms:.1f} ms "
        "= {torch_step_over_fused:.2f}x the fused step",
    ),
    (
        "gpu_step_ms",
        "    GPU ({gpu}): torch step {gpu_step_ms:.2f} ms; one pass over X in GPU memory {gpu_one_pass_ms:.2f} ms "
        "-> {gpu_step_over_one_pass:.2f}x one pass; X read at {gpu_X_GB_per_s_step:.0f} GB/s by the step, "
        "{gpu_X_GB_per_s_one_pass:.0f} GB/s by one pass",
    ),
)


def main_text(t: pd.DataFrame) -> str:
    """The main table in words, a line or a few per dtype (what the command prints under each D):
    :data:`MAIN_LINES`, each line whose part ran."""
    lines: list[str] = []
    for _, r in t.iterrows():
        values = dict(r.items(), calls=args_steps(r), replicas=int(r["replicas"]))
        if "in_cache_n" in r and pd.notna(r.get("in_cache_n")):
            values.update(in_cache_n=int(r["in_cache_n"]), in_cache_2n=2 * int(r["in_cache_n"]))
        for column, line in MAIN_LINES:
            if column is None or (column in r and pd.notna(r.get(column))):
                lines.append(line.format(**values))
    return "\n".join(lines)


def _scaling_row(n: int, D: int, dtype: str, fused: float, one: float, **per_sample: float) -> dict[str, Any]:
    """A row of the scaling tables: N = ``n`` samples at D = d = ``D``, the median seconds of the fused step
    (``fused``) and of one pass over X (``one``) in ms and their ratio, then ``per_sample``."""
    return (
        dict(N=n, D=D, d=D, dtype=dtype, fused_ms=1e3 * fused, one_pass_ms=1e3 * one, fused_over_one_pass=fused / one)
        | per_sample
    )


def _against(
    rows: list[dict[str, Any]], axis: str, where: str, slope_means: str, report: Callable[[str], None]
) -> tuple[str, pd.DataFrame]:
    """The table ``scaling_<axis>`` of ``rows``, reported with the log-log slope of the step time in ``axis``."""
    t = pd.DataFrame(rows)
    slope = float(np.polyfit(np.log(t[axis]), np.log(t.fused_ms), 1)[0]) if len(t) > 1 else float("nan")
    report(f"\nstep time against {axis} ({where}):")
    report(t.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    report(f"  log-log slope of the step time in {axis}: {slope:.2f} ({slope_means})")
    return f"scaling_{axis}", t


def _scaling(args: Options, report: Callable[[str], None]) -> list[tuple[str, pd.DataFrame]]:

    dtype = args.scaling_dtype
    out = []
    # ---- against N: one sample at the largest N, views of its first n samples (X is never copied)
    s = Setting(D=64, C=4)
    A, v = _point(s, np.random.default_rng(0))
    Ns = sorted(args.scaling_N)
    b = sample(s, Ns[-1], seed=1, dtype=dtype)
    fns: dict[str, Callable[[], Any]] = {}
    vx = v.astype(dtype)
    for n in Ns:
        fm = FusedModel(b.X[:n], b.y[:n], s.p, s.nu, s.tau)
        fns[f"fused_{n}"] = functools.partial(fm.risk_grad, A[None], v[:, None])
        fns[f"one_{n}"] = functools.partial(operator.matmul, b.X[:n].reshape(-1, s.d), vx)
    med = _interleaved(fns, args.repeats, args.settle, args.batch)
    rows = [
        _scaling_row(n, 64, dtype, med[f"fused_{n}"], med[f"one_{n}"], fused_us_per_sample=1e6 * med[f"fused_{n}"] / n)
        for n in Ns
    ]
    out.append(_against(rows, "N", f"D = d = 64, {dtype}, median of {args.repeats}", "1 = linear", report))
    del b, fns
    # ---- against D (d = D): the X terms cost D·d per sample, the D×D products D² per sample
    rows = []
    for D in sorted(args.scaling_D):
        s = Setting(D=D, C=4)
        A, v = _point(s, np.random.default_rng(0))
        b = sample(s, args.scaling_N_for_D, seed=1, dtype=dtype)
        fm = FusedModel(b.X, b.y, s.p, s.nu, s.tau)
        med = _interleaved(
            dict(
                fused=functools.partial(fm.risk_grad, A[None], v[:, None]),
                one=functools.partial(operator.matmul, b.X.reshape(-1, s.d), v.astype(dtype)),
            ),
            args.repeats,
            args.settle,
            args.batch,
        )
        n = args.scaling_N_for_D
        rows.append(
            _scaling_row(
                n, D, dtype, med["fused"], med["one"], fused_ns_per_sample_per_D2=1e9 * med["fused"] / n / D**2
            )
        )
        del b, fm
    where = f"d = D, N = {args.scaling_N_for_D}, {dtype}, median of {args.repeats}"
    out.append(_against(rows, "D", where, "2 = proportional to the size of X, N·D·d", report))
    # ---- memory per sample
    if not args.no_memory:
        runs, m = memory_scaling(64, args.memory_N[0], args.memory_N[1], args.memory_budget_gib, dtype)
        report(
            f"\nmemory of simulate() (fresh processes, VmHWM, D = d = 64, {dtype}, n_test = 1024): "
            f"{m['bytes_per_sample']:.0f} bytes per training sample = {m['per_sample_over_X']:.3f}x the sample's "
            f"X ({m['X_bytes_per_sample']} bytes); fixed {m['fixed_MiB']:.0f} MiB"
        )
        report(
            f"  largest N in {m['budget_GiB']:g} GiB at D = d = 64: N = {m['N_max']:,} (N·D·d = {m['NDd_max']:.3g}); "
            f"the same N·D·d holds at other D, d since X dominates"
        )
        out.append(("memory", pd.concat([runs, pd.DataFrame([m])], ignore_index=True)))
    return out


def measure(args: Options, report: Callable[[str], None] | None = None) -> list[tuple[str, pd.DataFrame]]:
    """The benchmark's tables, ``[("main", …), ("scaling_N", …), ("scaling_D", …), ("memory", …)]`` (those of
    the parts ``args`` runs); its lines (the main table in words per D, the scaling's slopes, the memory
    per sample) go to ``report`` (None: silent).

    Raises:
        BenchError: the contenders disagree (or one of them fails) before any ratio is measured.
    """
    report = report or _silent
    torch: Any = None
    if not args.no_torch:
        try:
            import torch  # optional (extra "vision"): imported here, only when the autograd reference runs
        except ImportError:
            report("torch not installed: skipping the autograd reference")
    tables: list[tuple[str, pd.DataFrame]] = []
    if not (args.scaling_only or args.nstar_only):
        parts = []
        for D in args.D:  # one table per D, X freed between them
            s = Setting(D=D, C=4)
            try:
                t = _main_table(args, s, torch)
            except RuntimeError as e:
                raise BenchError(str(e)) from e
            report(
                f"\nsimulator step, N={args.N}, D=d={s.D} (median of {args.repeats} interleaved repeats, each the mean "
                f"of {args.batch} calls back to back after a {args.settle:g} s pause and one untimed call; load "
                f"{os.getloadavg()[0]:.2f}):"
            )
            report(main_text(t))
            parts.append(t)
        tables.append(("main", pd.concat(parts, ignore_index=True)))
    if args.scaling or args.scaling_only:
        tables += _scaling(args, report)
    if args.nstar:
        from .nstar_grid import nstar_grid  # the claims' sizes: imported only for this part

        report(f"\nthe N*(D) grid of the {args.nstar} ledger, before and after issue 32 (each route once, wall time):")
        tables.append(("nstar", nstar_grid(args.nstar, report)))
    return tables
