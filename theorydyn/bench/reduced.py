"""Benchmark of the reduced solver (docs/theory.md §3): ``python -m theorydyn.bench reduced``.

At D = 64, C = 4 (docs/theory.md §9 setting), a phase-II point (α, γ, ρ) = (3.9, 0.5, −0.05), 10⁵ samples:

1. End to end, sampling included (what a user's call costs):
   ``population_risk(s, α, γ, ρ, method="mc", n_samples=10⁵)`` against a plain NumPy
   implementation that draws its own samples (``rng.multinomial`` count vectors, then
   :func:`theorydyn.reduced._kernels.reference_numpy`), timed round-robin: the ratio of the median
   wall times (goal: ≥ 20×), of the minima, and of the median CPU times (both are single-threaded,
   so CPU time is the load-independent figure on a shared machine). Checked first: on the *same* samples
   (:func:`theorydyn.reduced.mc_set_counts` with the same seed) the two agree to 1e-10; and the two
   independent draws agree within 4 standard errors.
2. The kernel alone on a prebuilt bank (tables over (count type, T)) against the NumPy reference
   on the same samples: one row per sample (like for like) and with identical samples merged.
3. Wall time of the default gradient flow, ``integrate(Setting(), "flow", s_max=1e5)`` (4000
   samples, LSODA), with its phase summary. Goal: ≤ 0.5 s.

``--scaling``: the default flow (4000 samples, q = C²/D, horizon s_max·(D/64)^1.5 since the phase
times grow with D) at D = 64, 256, 1024, … until one run takes longer than ``--budget-s`` (60 s):
the largest D whose flow fits in the budget.

The machine (CPU, cores, versions, load average) is printed; the tables go to CSV (``--out``).
:func:`measure` takes the :class:`Options` (:class:`theorydyn.bench.config.ReducedBench`) and returns the
tables, printing nothing (its lines go to ``report``); the command, its flags and their checks are
:mod:`theorydyn.bench.reduced_cli`.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from ..core.setting import Setting
from ..reduced import bank_from_set_counts, integrate, mc_set_counts, population_risk
from ..reduced._kernels import reference_draw_numpy, reference_numpy
from ..reduced.risk import _Evaluator
from . import BenchError, best_time
from .config import ReducedBench

POINT = (3.9, 0.5, -0.05)  # a phase-II point of docs/theory.md §9


#: what :func:`measure` measures (the flags of the command of the same names): the benchmark's configuration
Options = ReducedBench


def _silent(message: str) -> None:
    pass


def _end_to_end(s, n, repeats, seed=0, settle=0.2):

    nc = mc_set_counts(s, n, seed=seed)
    ref_same = reference_numpy(*POINT, s.beta, s.tau, s.p, s.nu, s.C, s.D, nc)
    est = population_risk(s, *POINT, method="mc", n_samples=n, seed=seed)
    if not (
        abs(est.risk - ref_same[0]) <= 1e-10 * abs(ref_same[0])
        and np.allclose(est.grad, ref_same[1], rtol=1e-9, atol=1e-14)
    ):
        raise RuntimeError(
            f"population_risk and the NumPy reference disagree on the same samples: {est.risk} vs {ref_same[0]}"
        )

    def ours():
        return population_risk(s, *POINT, method="mc", n_samples=n, seed=seed)

    def numpy_ref():
        sc = reference_draw_numpy(s.C, s.L, s.q, n, seed)
        return reference_numpy(*POINT, s.beta, s.tau, s.p, s.nu, s.C, s.D, sc)

    ref_own = numpy_ref()
    z = abs(est.risk - ref_own[0]) / (np.sqrt(2) * est.risk_stderr)
    times = {"ours": [], "numpy": []}
    cpu = {"ours": [], "numpy": []}
    ours(), numpy_ref()  # warm-up
    for _ in range(repeats):
        for k, f in (("ours", ours), ("numpy", numpy_ref)):
            # the NumPy route ends in BLAS dot products whose worker threads then busy-wait: let them
            # sleep, or they share the cores with (and add CPU time to) whatever is timed next
            time.sleep(settle)
            c0 = time.process_time()
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
            cpu[k].append(time.process_time() - c0)
    stats = {
        f"{k}_{name}": float(fn(v))
        for k in times
        for name, fn, v in (
            ("median", np.median, times[k]),
            ("min", np.min, times[k]),
            ("cpu_median", np.median, cpu[k]),
        )
    }
    return stats, z, est


def _kernel_on_bank(s, n, repeats):

    nc = mc_set_counts(s, n, seed=0)
    ref_args = (*POINT, s.beta, s.tau, s.p, s.nu, s.C, s.D, nc)
    ref_risk, ref_grad, _, _ = reference_numpy(*ref_args)
    t_ref = best_time(lambda: reference_numpy(*ref_args), repeats=max(1, repeats // 2))
    rows = [
        dict(
            part="kernel on a bank",
            implementation="numpy reference (per sample, per set)",
            rows=len(nc),
            seconds=t_ref,
            ratio=1.0,
        )
    ]
    for label, merge in (("numba tables, one row per sample", False), ("numba tables, identical samples merged", True)):
        bank = bank_from_set_counts(s, nc, merge=merge)
        ev = _Evaluator(s, bank)
        est = ev.estimate(*POINT)  # also compiles / loads the cache
        if not (
            abs(est.risk - ref_risk) <= 1e-10 * abs(ref_risk) and np.allclose(est.grad, ref_grad, rtol=1e-9, atol=1e-14)
        ):
            raise RuntimeError(f"{label} disagrees with the NumPy reference: {est.risk} vs {ref_risk}")
        t = best_time(functools.partial(ev.raw, *POINT), repeats=repeats * 4)
        rows.append(dict(part="kernel on a bank", implementation=label, rows=len(bank), seconds=t, ratio=t_ref / t))
    return rows


def _flow(s, s_max, n_samples=4000):

    t0 = time.perf_counter()
    res = integrate(s, method="flow", s_max=s_max, n_samples=n_samples, seed=0)
    return time.perf_counter() - t0, res


def _fmt(v):
    return "not reached" if v is None else f"{v:.4g}"


def _scaling(args: Options, report: Callable[[str], None]) -> pd.DataFrame:

    rows = []
    D = 64
    _flow(Setting(D=16, C=4), 10.0, n_samples=100)  # load the compiled kernels before timing
    report(
        f"\nlargest D for the default flow (4000 samples, C = 4, q = C²/D, s_max = {args.s_max:g}·(D/64)^"
        f"{args.s_max_exponent:g}: the phase times grow with D) within {args.budget_s:g} s:"
    )
    while D <= args.D_max:
        s = Setting(D=D, C=4)
        s_max = args.s_max * (D / 64) ** args.s_max_exponent
        t, res = _flow(s, s_max)
        ph = res.phases
        rows.append(
            dict(
                D=D,
                L=s.L,
                q=s.q,
                s_max=s_max,
                seconds=t,
                status=str(res.status),
                T0=ph.T0,
                T1=ph.T1,
                T2=ph.T2,
                final_err_f=ph.final_err_f,
            )
        )
        report(
            f"  D = {D:6d} (s_max {s_max:.3g}): {t:7.2f} s, status {res.status}; T0={_fmt(ph.T0)}, "
            f"T1={_fmt(ph.T1)}, T2={_fmt(ph.T2)}"
        )
        if t > args.budget_s:
            break
        D *= 4
    ok = [r["D"] for r in rows if r["seconds"] <= args.budget_s]
    report(
        f"  largest D measured within {args.budget_s:g} s: {max(ok) if ok else 'none'}"
        + ("" if rows[-1]["seconds"] > args.budget_s else f" (stopped at --D-max {args.D_max})")
    )
    return pd.DataFrame(rows)


def measure(args: Options, report: Callable[[str], None] | None = None) -> list[tuple[str, pd.DataFrame]]:
    """The benchmark's tables, ``[("main", …), ("scaling_D", …)]`` (those of the parts ``args`` runs);
    its lines (the ratios, the flow's phases, the scaling's progress) go to ``report`` (None: silent).

    Raises:
        BenchError: the NumPy reference and the solver disagree (or one of them fails) on the same samples.
    """
    report = report or _silent
    tables = []
    if not args.scaling_only:
        s = Setting(D=64, C=4)
        try:
            med, z, est = _end_to_end(s, args.n_samples, args.repeats, settle=args.settle)
            kernel_rows = _kernel_on_bank(s, args.n_samples, args.repeats)
        except RuntimeError as e:
            raise BenchError(str(e)) from e
        ratio = med["numpy_median"] / med["ours_median"]
        ratio_min = med["numpy_min"] / med["ours_min"]
        ratio_cpu = med["numpy_cpu_median"] / med["ours_cpu_median"]
        rows = [
            dict(
                part="end to end (sampling included)",
                implementation="numpy: rng.multinomial + reference_numpy",
                rows=args.n_samples,
                seconds=med["numpy_median"],
                ratio=1.0,
                seconds_min=med["numpy_min"],
                cpu_seconds=med["numpy_cpu_median"],
            ),
            dict(
                part="end to end (sampling included)",
                implementation='population_risk(method="mc")',
                rows=args.n_samples,
                seconds=med["ours_median"],
                ratio=ratio,
                seconds_min=med["ours_min"],
                cpu_seconds=med["ours_cpu_median"],
                ratio_min=ratio_min,
                ratio_cpu=ratio_cpu,
            ),
        ] + kernel_rows
        report(f"\nreduced risk and gradient, {s}, {args.n_samples:,} Monte Carlo samples, point (α, γ, ρ) = {POINT}")
        report(
            f"(on the same samples the two agree to 1e-10; the two independent draws differ by {z:.2f} standard "
            f"errors; risk {est.risk:.5g} ± {est.risk_stderr:.2g})"
        )
        report(
            f"end to end, sampling included ({args.repeats} interleaved repeats, both single-threaded): "
            f"population_risk {1e3 * med['ours_median']:.1f} ms, NumPy {1e3 * med['numpy_median']:.1f} ms (medians) "
            f"-> {ratio:.1f}x (goal >= 20x); ratio of minima {ratio_min:.1f}x; ratio of median CPU times "
            f"{ratio_cpu:.1f}x ({1e3 * med['ours_cpu_median']:.1f} vs {1e3 * med['numpy_cpu_median']:.1f} ms; "
            f"CPU time does not count waiting for a loaded machine's cores)"
        )
        report(
            f"kernel alone on a prebuilt bank: {kernel_rows[1]['ratio']:.1f}x NumPy (one row per sample), "
            f"{kernel_rows[2]['ratio']:.1f}x with merged samples"
        )
        if not args.no_flow:
            _flow(Setting(D=16, C=4), 10.0, n_samples=100)  # load the compiled kernels before timing
            t_flow, res = _flow(Setting(), args.s_max)
            ph = res.phases
            report(
                f"default gradient flow to s = {args.s_max:g} (4000 samples, LSODA): {t_flow:.2f} s wall "
                "(goal <= 0.5 s), "
                f"status {res.status}; T0={_fmt(ph.T0)}, T1={_fmt(ph.T1)}, T2={_fmt(ph.T2)}, "
                f"final err_f={_fmt(ph.final_err_f)}"
            )
            rows.append(
                dict(
                    part="flow",
                    implementation=f"integrate(Setting(), 'flow', s_max={args.s_max:g})",
                    rows=4000,
                    seconds=t_flow,
                    ratio=np.nan,
                )
            )
        table = pd.DataFrame(rows)
        with pd.option_context("display.width", 140, "display.float_format", "{:.4g}".format):
            report(table.to_string(index=False))
        tables.append(("main", table))
    if args.scaling or args.scaling_only:
        tables.append(("scaling_D", _scaling(args, report)))
    return tables
