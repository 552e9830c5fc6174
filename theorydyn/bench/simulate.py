"""Benchmark of the finite-sample simulator's step: ``python -m theorydyn.bench simulate``
(also ``python -m theorydyn.bench.simulate``).

One GD step (risk, ∂/∂A, ∇_v) of model (T) at N = 16384, D = d = 64, with X stored in float64
and in float32, timed in the same run against
  (a) the same step written with PyTorch CPU autograd at the same dtype (the gradients are
      checked to agree before any ratio is printed), and
  (b) the memory floor of the two-pass formulation: two streaming passes over X,
      U = X v and g = wᵀ X (BLAS; the fused kernel reads X once, so it can beat this floor);
the three are run round-robin and the median of the repeats is reported (the machine may be
shared: interleaving exposes all three to the same load). Also: the per-run cost of 8
replicas sharing one X, and the peak memory of a D = 128, N = 65536 float32 run (a fresh
process; VmHWM from /proc/self/status and the tracemalloc peak) against the size of X.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np


def _torch_step(torch, Xt, yt, A_np, v_np, p, nu, tau):
    """Risk and gradients of (E) by autograd: the reference implementation."""
    A = torch.tensor(A_np, dtype=Xt.dtype, requires_grad=True)
    v = torch.tensor(v_np, dtype=Xt.dtype, requires_grad=True)
    eye = torch.eye(A.shape[0], dtype=torch.bool)
    Am = torch.where(eye, A.detach(), A)  # the diagonal is fixed at β: no gradient through it
    S = torch.softmax(Am / tau, dim=1)
    U = Xt @ v  # (N, D)
    H = U @ S.T
    F = (H**p + nu * H).sum(dim=1)
    risk = torch.nn.functional.softplus(-yt * F).mean()
    risk.backward()
    return float(risk.detach()), A.grad.numpy(), v.grad.numpy()


_MEMORY_SCRIPT = r"""
import json, sys, tracemalloc
import numpy as np
def hwm():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM'):
            return int(line.split()[1]) * 1024
from theorydyn import Setting
from theorydyn.simulate import simulate
simulate(Setting(D=8, C=2), N=64, steps=1, n_test=8, dtype='float32')  # imports and JIT warm-up
base = hwm()
tracemalloc.start()
D, N, steps, n_test = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
res = simulate(Setting(D=D, C=4), N=N, steps=steps, n_test=n_test, dtype='float32', record_every=steps)
cur, peak = tracemalloc.get_traced_memory()
print(json.dumps(dict(vmhwm=hwm(), base=base, traced_peak=peak, status=res.status,
                      seconds=res.seconds)))
"""


def memory_run(D: int = 128, N: int = 65536, steps: int = 2, n_test: int = 1024) -> dict:
    """Peak memory of a float32 simulate() run in a fresh process, against the size of X."""
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", _MEMORY_SCRIPT, str(D), str(N), str(steps), str(n_test)],
                         capture_output=True, text=True, env=env, check=True)
    m = json.loads(out.stdout.strip().splitlines()[-1])
    x_bytes = N * D * D * 4
    xt_bytes = n_test * D * D * 4
    m.update(D=D, N=N, n_test=n_test, X_bytes=x_bytes, X_test_bytes=xt_bytes,
             extra_over_X_and_test=m["vmhwm"] - m["base"] - x_bytes - xt_bytes,
             ND_float64_bytes=N * D * 8)
    return m


def run(argv: list[str] | None = None) -> int:
    from ..cli import positive
    from ..data import sample
    from ..simulate._kernel import FusedModel
    from ..setting import Setting

    ap = argparse.ArgumentParser(prog="python -m theorydyn.bench simulate")
    ap.add_argument("--N", type=positive(int, "--N"), default=16384)
    ap.add_argument("--D", type=positive(int, "--D"), default=64)
    ap.add_argument("--repeats", type=positive(int, "--repeats"), default=7)
    ap.add_argument("--replicas", type=positive(int, "--replicas"), default=8)
    ap.add_argument("--no-torch", action="store_true", help="skip the autograd reference")
    ap.add_argument("--no-memory", action="store_true", help="skip the D=128, N=65536 memory run")
    args = ap.parse_args(argv)

    s = Setting(D=args.D, C=4)
    rng = np.random.default_rng(0)
    A = rng.normal(scale=0.05, size=(s.D, s.D))  # a phase-II-like point (SPEC §9)
    np.fill_diagonal(A, s.beta)
    v = 3.9 * s.w_star + rng.normal(scale=0.05, size=s.d)
    torch = None
    if not args.no_torch:
        try:
            import torch  # noqa: F811 — optional (extra "vision"); imported only here
        except ImportError:
            print("torch not installed: skipping the autograd reference")
    rows = []
    for dtype in (np.float64, np.float32):
        b = sample(s, args.N, seed=1, dtype=dtype)
        X2 = b.X.reshape(-1, s.d)
        fm = FusedModel(b.X, b.y, s.p, s.nu, s.tau)
        Ar = np.repeat(A[None], args.replicas, axis=0)
        Vr = np.repeat(v[:, None], args.replicas, axis=1)
        vx = v.astype(dtype)
        wx = np.ones(X2.shape[0], dtype=dtype)

        def fused():
            return fm.risk_grad(A[None], v[:, None])

        def floor():
            X2 @ vx
            wx @ X2

        def one_pass():
            X2 @ vx

        def reps():
            fm.risk_grad(Ar, Vr)

        fns = dict(fused=fused, floor_two_passes=floor, one_pass=one_pass, replicas=reps)
        if torch is not None:
            Xt = torch.from_numpy(b.X)  # shares memory with X
            yt = torch.from_numpy(b.y.astype(dtype))
            fns["autograd"] = lambda: _torch_step(torch, Xt, yt, A, v, s.p, s.nu, s.tau)
            r_f, _, gA_f, gv_f = fused()
            r_t, gA_t, gv_t = fns["autograd"]()
            tol = 1e-9 if dtype == np.float64 else 2e-3
            ok = (abs(r_f[0] - r_t) <= tol * abs(r_t) and np.allclose(gA_f[0], gA_t, rtol=tol, atol=tol * np.abs(gA_t).max())
                  and np.allclose(gv_f[:, 0], gv_t, rtol=tol, atol=tol * np.abs(gv_t).max()))
            if not ok:
                print(f"ERROR: fused step and autograd disagree in {np.dtype(dtype).name}", file=sys.stderr)
                return 1
        times = {k: [] for k in fns}
        for f in fns.values():  # warm-up (JIT, caches)
            f()
        for _ in range(args.repeats):
            for k, f in fns.items():
                t0 = time.perf_counter()
                f()
                times[k].append(time.perf_counter() - t0)
        med = {k: float(np.median(t)) for k, t in times.items()}
        row = dict(dtype=np.dtype(dtype).name, N=args.N, D=s.D, d=s.d, X_MiB=b.X.nbytes / 2**20,
                   fused_ms=1e3 * med["fused"], floor_two_passes_ms=1e3 * med["floor_two_passes"],
                   one_pass_ms=1e3 * med["one_pass"],
                   replicas=args.replicas, replicas_per_run_ms=1e3 * med["replicas"] / args.replicas)
        row["fused_over_floor"] = med["fused"] / med["floor_two_passes"]
        row["replica_run_over_single"] = med["replicas"] / args.replicas / med["fused"]
        if "autograd" in med:
            row["autograd_ms"] = 1e3 * med["autograd"]
            row["speedup_vs_autograd"] = med["autograd"] / med["fused"]
        rows.append(row)
        print(json.dumps({k: (round(x, 3) if isinstance(x, float) else x) for k, x in row.items()}), flush=True)
        del b, X2, fm

    print("\nsimulator step, N={}, D=d={} (median of {} interleaved repeats):".format(args.N, s.D, args.repeats))
    for r in rows:
        line = (f"  {r['dtype']}: fused {r['fused_ms']:.1f} ms; two passes over X (floor) {r['floor_two_passes_ms']:.1f} ms"
                f" -> {r['fused_over_floor']:.2f}x the floor (goal <= 1.5x)")
        if "autograd_ms" in r:
            goal = 2.0 if r["dtype"] == "float64" else 1.5
            line += f"; autograd {r['autograd_ms']:.1f} ms -> {r['speedup_vs_autograd']:.2f}x faster (goal >= {goal}x)"
        print(line)
        print(f"    {r['replicas']} replicas sharing X: {r['replicas_per_run_ms']:.1f} ms per run "
              f"({r['replica_run_over_single']:.2f}x a single run)")
    if not args.no_memory:
        m = memory_run()
        print(f"\npeak memory, float32 run D={m['D']}, N={m['N']} ({m['n_test']} test samples): VmHWM growth "
              f"{(m['vmhwm'] - m['base']) / 2**30:.3f} GiB; X {m['X_bytes'] / 2**30:.3f} GiB + test X "
              f"{m['X_test_bytes'] / 2**30:.3f} GiB; the rest {m['extra_over_X_and_test'] / 2**20:.1f} MiB "
              f"(= {m['extra_over_X_and_test'] / m['ND_float64_bytes']:.1f} x one float64 (N, D) array); "
              f"tracemalloc peak {m['traced_peak'] / 2**30:.3f} GiB; status {m['status']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run())
