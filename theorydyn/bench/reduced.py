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
"""

from __future__ import annotations

import argparse
import functools
import time

import numpy as np
import pandas as pd

from ..cli import ArgumentParser, fail, given_flags, guard_memory, number, output_file, positive
from ..limits import S_MAX_MAX, S_MAX_MIN
from ..reduced import bank_from_set_counts, integrate, mc_set_counts, population_risk
from ..reduced._kernels import reference_draw_numpy, reference_numpy
from ..reduced.memory import reduced_memory
from ..reduced.risk import _Evaluator
from ..resources import MemoryEstimate, Term
from ..setting import D_MAX, Setting
from . import add_bench_arguments, best_time, check_parts, fill_defaults
from ._driver import drive

POINT = (3.9, 0.5, -0.05)  # a phase-II point of docs/theory.md §9


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
    res = integrate(s, "flow", s_max=s_max, n_samples=n_samples, seed=0)
    return time.perf_counter() - t0, res


def _fmt(v):
    return "not reached" if v is None else f"{v:.4g}"


def _scaling(args) -> pd.DataFrame:

    rows = []
    D = 64
    _flow(Setting(D=16, C=4), 10.0, n_samples=100)  # load the compiled kernels before timing
    print(
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
        print(
            f"  D = {D:6d} (s_max {s_max:.3g}): {t:7.2f} s, status {res.status}; T0={_fmt(ph.T0)}, "
            f"T1={_fmt(ph.T1)}, T2={_fmt(ph.T2)}",
            flush=True,
        )
        if t > args.budget_s:
            break
        D *= 4
    ok = [r["D"] for r in rows if r["seconds"] <= args.budget_s]
    print(
        f"  largest D measured within {args.budget_s:g} s: {max(ok) if ok else 'none'}"
        + ("" if rows[-1]["seconds"] > args.budget_s else f" (stopped at --D-max {args.D_max})")
    )
    return pd.DataFrame(rows)


PROG = "python -m theorydyn.bench reduced"
#: flags of the main table / of --scaling (each an error where its part does not run); None in the parser
_MAIN_FLAGS = ("n_samples", "repeats", "settle", "no_flow")
_SCALING_FLAGS = ("s_max_exponent", "budget_s", "D_max")
_DEFAULTS = dict(n_samples=100_000, repeats=7, settle=0.2, s_max=1e5, s_max_exponent=1.5, budget_s=60.0, D_max=65536)


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(prog=PROG, description="Benchmark of the reduced solver (docs/theory.md §3).")
    g = ap.add_argument_group("main table (not with --scaling-only)")
    g.add_argument(
        "--n-samples",
        type=number(int, "--n-samples", low=2),
        default=None,
        help="Monte Carlo samples, >= 2 (default 100000)",
    )
    g.add_argument(
        "--repeats", type=number(int, "--repeats", low=1), default=None, help="timed calls per measurement (default 7)"
    )
    g.add_argument(
        "--settle",
        type=number(float, "--settle", low=0, high=10),
        default=None,
        help="pause before each timed call, 0..10 s (lets spinning BLAS threads sleep; default 0.2)",
    )
    g.add_argument("--no-flow", action="store_true", help="skip the flow timing")
    ap.add_argument(
        "--s-max",
        type=number(float, "--s-max", low=S_MAX_MIN, high=S_MAX_MAX),
        default=None,
        help="horizon of the timed flow and of --scaling at D = 64 (default 1e5)",
    )
    ap.add_argument("--scaling", action="store_true", help="the largest D whose default flow fits in --budget-s")
    ap.add_argument("--scaling-only", action="store_true", help="only the --scaling part")
    g = ap.add_argument_group("--scaling")
    g.add_argument(
        "--s-max-exponent",
        type=positive(float, "--s-max-exponent", allow_zero=True),
        default=None,
        help="--scaling runs to s_max·(D/64)^this (default 1.5; 0 keeps s_max)",
    )
    g.add_argument(
        "--budget-s", type=positive(float, "--budget-s"), default=None, help="time budget per flow, s (default 60)"
    )
    g.add_argument(
        "--D-max",
        type=number(int, "--D-max", low=64, high=D_MAX),
        default=None,
        help=f"largest D tried by --scaling, 64..{D_MAX} (default 65536)",
    )
    add_bench_arguments(
        ap, "bench_results/reduced.csv", "output file: the CSV of the table; the scaling table goes next to it"
    )
    return ap


def _memory(n: int) -> MemoryEstimate:
    """The main table at D = 64, C = 4: the bank of ``n`` samples (reduced.memory.reduced_memory) and the NumPy
    reference's count vectors (N, L, 3) (int64 twice, their float64 copy) and (N, L) float64 temporaries."""
    s = Setting(D=64, C=4)
    return reduced_memory(s.D, s.C, s.q, n) + MemoryEstimate(
        "NumPy reference",
        (
            Term(
                f"count vectors ({n}, {s.L}, 3) int64 ×3 and float64, ~10 ({n}, {s.L}) float64 temporaries",
                n * s.L * (4 * 3 * 8 + 10 * 8),
                {"n_samples": n},
            ),
        ),
    )


def _parse(argv) -> argparse.Namespace:
    """Parse and check every input before any work (exit 2 naming the flag)."""
    args = build_parser().parse_args(argv)
    given = given_flags(build_parser(), argv)
    check_parts(args, given, PROG, _MAIN_FLAGS, _SCALING_FLAGS)
    if not (args.scaling or args.scaling_only) and args.no_flow and "s_max" in given:
        fail("--s-max: only used by the flow timing (which --no-flow skips) and by --scaling", PROG)
    fill_defaults(args, _DEFAULTS)
    if not args.scaling_only:
        guard_memory(_memory(args.n_samples), force=args.force, prog=PROG)
    output_file(args.out, "--out", PROG)
    return args


def main(argv: list[str] | None = None) -> int:
    """``python -m theorydyn.bench.reduced``: :func:`run`."""
    return run(argv)


def run(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    return drive(args, PROG, lambda: _main_tables(args), lambda info: [("scaling_D", _scaling(args))])


def _main_tables(args) -> list[tuple[str, pd.DataFrame]]:
    """The main table (parts 1–3 of the module docstring), printed; a RuntimeError when a contender
    disagrees with the NumPy reference on the same samples."""
    s = Setting(D=64, C=4)
    med, z, est = _end_to_end(s, args.n_samples, args.repeats, settle=args.settle)
    kernel_rows = _kernel_on_bank(s, args.n_samples, args.repeats)
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
    print(f"\nreduced risk and gradient, {s}, {args.n_samples:,} Monte Carlo samples, point (α, γ, ρ) = {POINT}")
    print(
        f"(on the same samples the two agree to 1e-10; the two independent draws differ by {z:.2f} standard "
        f"errors; risk {est.risk:.5g} ± {est.risk_stderr:.2g})"
    )
    print(
        f"end to end, sampling included ({args.repeats} interleaved repeats, both single-threaded): "
        f"population_risk {1e3 * med['ours_median']:.1f} ms, NumPy {1e3 * med['numpy_median']:.1f} ms (medians) "
        f"-> {ratio:.1f}x (goal >= 20x); ratio of minima {ratio_min:.1f}x; ratio of median CPU times "
        f"{ratio_cpu:.1f}x ({1e3 * med['ours_cpu_median']:.1f} vs {1e3 * med['numpy_cpu_median']:.1f} ms; "
        f"CPU time does not count waiting for a loaded machine's cores)"
    )
    print(
        f"kernel alone on a prebuilt bank: {kernel_rows[1]['ratio']:.1f}x NumPy (one row per sample), "
        f"{kernel_rows[2]['ratio']:.1f}x with merged samples"
    )
    if not args.no_flow:
        _flow(Setting(D=16, C=4), 10.0, n_samples=100)  # load the compiled kernels before timing
        t_flow, res = _flow(Setting(), args.s_max)
        ph = res.phases
        print(
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
        print(table.to_string(index=False))
    return [("main", table)]


if __name__ == "__main__":
    raise SystemExit(main())
