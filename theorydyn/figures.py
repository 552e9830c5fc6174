"""``python -m theorydyn.figures [NAME…|all] [--out figures] [--quick]``: every figure, from data computed here.

Each registered figure is a function ``make(out, quick) -> [paths]`` that computes its data with
the toolkit (the reduced solver, the simulator, a scan, the transfer experiment …) and writes
``out/NAME.png`` and ``out/NAME.pdf``. A figure whose part of the package is not installed is
reported as skipped. ``figures/README.md`` is regenerated from the registry: each figure, the
command that remakes it and the claim it supports.

``--quick`` uses smaller sizes (the committed PNGs are the quick versions); without it the sizes
of SPEC §9. Scans behind a figure go through :func:`theorydyn.scan.run_scan`, so their points are
cached in ``scans/results/`` and a rerun only redraws.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .cli import fail  # noqa: E402
from .model import association_rows  # noqa: E402
from .setting import Setting  # noqa: E402

PROG = "python -m theorydyn.figures"
DPI = 110


@dataclass(frozen=True)
class Figure:
    name: str
    title: str
    claim: str
    requires: tuple[str, ...]
    make: Callable[[Path, bool], list[Path]]


REGISTRY: dict[str, Figure] = {}


def register(name: str, title: str, claim: str, requires: tuple[str, ...] = ()):
    def deco(fn: Callable[[Path, bool], list[Path]]):
        REGISTRY[name] = Figure(name, title, claim, requires, fn)
        return fn

    return deco


def _save(fig, out: Path, name: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.png", out / f"{name}.pdf"]
    for p in paths:
        fig.savefig(p, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return paths


def _both(plot: Callable[[Path], object], out: Path, name: str) -> list[Path]:
    """Run a plot function of another module once per format (it picks the format by suffix)."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.png", out / f"{name}.pdf"]
    for p in paths:
        plot(p)
    plt.close("all")
    return paths


# ---- the reduced dynamics ------------------------------------------------------------------------
@register("phases", "The three phases of the idealized dynamics at D=64, C=4 (SPEC §9)",
          "Section 4.1 (Events I–III) and Lemma 4.3: α rises and the risk plateaus at a GLM-like error (T0); "
          "γ then overtakes max|ρ| (T1) with γ ≥ ρ throughout; the error falls below 2% (T2).",
          ("theorydyn.reduced",))
def fig_phases(out: Path, quick: bool) -> list[Path]:
    from .reduced import integrate
    from .reduced_plot import plot_trajectory

    s = Setting(D=64, C=4, q=0.25)
    traj = integrate(s, method="flow", s_max=3e4, n_samples=2000 if quick else 4000, seed=0, n_points=400)
    ph = traj.attrs["phases"]
    title = (f"reduced gradient flow, D=64, C=4, q=0.25: T0={ph.get('T0') or float('nan'):.3g}, "
             f"T1={ph.get('T1') or float('nan'):.3g}, T2={ph.get('T2') or float('nan'):.3g}")
    return _both(lambda p: plot_trajectory(traj, p, title=title), out, "phases")


def _scan(name: str, base: dict, axes: dict):
    from .scan import run_scan
    from .scangrid import ScanSpec

    return run_scan(ScanSpec(name, base=base, axes=axes), workers=2, progress=True, plots=False, summary=False)


@register("scaling", "Phase times T1, T2 against D (log-log, fitted exponents)",
          "Section 4.1 / Lemma 4.3: per-entry gradients of A are O(1/D) of α's, so phase II lengthens with D; "
          "the fitted exponents measure how (q = C²/D, Assumption 2).",
          ("theorydyn.reduced",))
def fig_scaling(out: Path, quick: bool) -> list[Path]:
    from .scanplots import plot_scaling

    Ds = [32, 64, 128] if quick else [32, 64, 128, 256]
    res = _scan("figure_scaling" + ("_quick" if quick else ""), {"C": 4, "s_max": 1e5 if quick else 3e5,
                                                                 "n_samples": 2000 if quick else 4000},
                {"D": Ds, "seed": [0] if quick else [0, 1, 2]})
    paths: list[Path] = []
    for ext in ("png", "pdf"):
        p, exps = plot_scaling(res.frame, out / f"scaling.{ext}", title="phase scaling with D (C=4, q=C²/D)")
        paths += p
    print(f"[figures] scaling exponents: " + ", ".join(f"{k} ∝ D^{v:.2f}" for k, v in exps.items() if v is not None),
          file=sys.stderr)
    return paths


@register("qscan", "Phase times against q at D=64, C=4 (the default scan)",
          "Assumption 2 (q = poly(C)/D): more spurious ±w* patches make the GLM plateau worse and phase II longer.",
          ("theorydyn.reduced",))
def fig_qscan(out: Path, quick: bool) -> list[Path]:
    from .scanplots import plot_phase_times

    res = _scan("figure_qscan" + ("_quick" if quick else ""), {"D": 64, "C": 4, "n_samples": 2000 if quick else 4000},
                {"q": [0.15, 0.2, 0.25, 0.3, 0.35], "seed": [0] if quick else [0, 1, 2]})
    paths: list[Path] = []
    for ext in ("png", "pdf"):
        paths += plot_phase_times(res.frame, "q", out / f"qscan.{ext}", title="phase times against q (D=64, C=4)")
    return paths


# ---- the finite-sample simulator ----------------------------------------------------------------
_SIM_CACHE: dict[tuple, object] = {}


def _simulated(quick: bool):
    """One realistic GD run (Theorem 4.2), shared by the figures that show it."""
    from .simulate import simulate

    if quick:
        # SPEC §9's D = 32 run keeps q = 0.25 and ν = 1/64 (D = 32's own default q = 1/2 has a
        # GLM plateau that lasts beyond 300 steps, and diverges at η = 10 near step 376)
        s, kw = Setting(D=32, C=4, q=0.25, nu=1 / 64), dict(N=16384, eta=10.0, steps=300, record_every=10)
    else:
        s, kw = Setting(D=64, C=4, q=0.25), dict(N=16384, eta=10.0, steps=1200, record_every=50)
    key = (s.D, tuple(sorted(kw.items())))
    if key not in _SIM_CACHE:
        t = time.perf_counter()
        _SIM_CACHE[key] = (s, simulate(s, omega=1e-3, seed=0, **kw), kw)
        print(f"[figures] simulated D={s.D}, N={kw['N']}, {kw['steps']} steps in {time.perf_counter() - t:.0f} s",
              file=sys.stderr)
    return _SIM_CACHE[key]


@register("attention", "Learned attention Â against the set mask (Figure 4 style)",
          "Theorem 4.2 / Definition 2.2: after GD on N samples from a random init, Â's large entries sit on the "
          "sets S_ℓ (patch association), though the sets are never given to the model.",
          ("theorydyn.simulate",))
def fig_attention(out: Path, quick: bool) -> list[Path]:
    s, res, kw = _simulated(quick)
    A = np.array(res.A, dtype=float)
    off = A.copy()
    np.fill_diagonal(off, np.nan)  # the diagonal is the fixed β, not learned
    assoc = association_rows(s, A)
    fig, ax = plt.subplots(1, 3, figsize=(14, 4.4), layout="constrained", gridspec_kw=dict(width_ratios=[1, 1.2, 1.1]))
    ax[0].imshow(s.same_set, cmap="Greys", interpolation="nearest")
    ax[0].set_title(f"set mask: i, j in the same S_ℓ (C={s.C})")
    lim = np.nanmax(np.abs(off))
    im = ax[1].imshow(off, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
    fig.colorbar(im, ax=ax[1], shrink=0.9)
    ax[1].set_title("learned Â (off-diagonal)")
    vals_in = A[s.in_set_mask]
    vals_x = A[s.cross_set_mask]
    ax[2].hist(vals_x, bins=60, alpha=0.7, label=f"cross-set ({vals_x.size})", color="tab:gray", log=True)
    ax[2].hist(vals_in, bins=30, alpha=0.8, label=f"in-set ({vals_in.size})", color="tab:red", log=True)
    ax[2].set_title(f"entries of Â; patch association {assoc.mean():.2f}")
    ax[2].set_xlabel("Â_ij")
    ax[2].set_ylabel("count")
    ax[2].legend(fontsize=8)
    for a in ax[:2]:
        a.set_xlabel("j")
        a.set_ylabel("i")
    status = getattr(res, "status", "ok")
    fig.suptitle(f"realistic GD (Theorem 4.2): D={s.D}, C={s.C}, N={kw['N']}, η={kw['eta']:g}, "
                 f"{kw['steps']} steps, ω=1e-3 (status: {status})", fontsize=10)
    return _save(fig, out, "attention")


@register("figure4", "The simulator's Figure 4: mask, learned Â, test error and cos(v̂, w*) against steps",
          "Theorem 4.2 (realistic dynamics): patch association and generalization at the end of training.",
          ("theorydyn.simulate",))
def fig_figure4(out: Path, quick: bool) -> list[Path]:
    from .simulate import plot_figure4

    s, res, _ = _simulated(quick)
    return _both(lambda p: plot_figure4(res, s, p), out, "figure4")


@register("semirealistic", "Finite-sample GD against the reduced dynamics: the gap against N",
          "Theorem 4.2's proof (the semi-realistic process): GD on N samples from the idealized init tracks "
          "population GD in (α, γ, ρ), with a gap that shrinks as N grows.",
          ("theorydyn.simulate", "theorydyn.reduced"))
def fig_semirealistic(out: Path, quick: bool) -> list[Path]:
    from .simcompare import compare_with_reduced
    from .simplots import plot_comparison

    Ns, seeds = ((256, 1024, 4096, 16384), (0, 1)) if quick else ((256, 1024, 4096, 16384, 65536), (0, 1, 2))
    gaps, curves = compare_with_reduced(Setting(D=8, C=2), Ns=Ns, eta=2.0, steps=150, seeds=seeds, n_test=4096,
                                        record_every=5)
    return _both(lambda p: plot_comparison(gaps, p, curves), out, "semirealistic")


# ---- transfer and vision ---------------------------------------------------------------------------
@register("transfer", "Transfer: downstream accuracy against Ñ, and the Ñ needed against D",
          "Theorems 5.1, 5.2: with the pre-trained Â, few downstream samples suffice; without patch association "
          "(Â at init, another partition, logistic regression) many more are needed.",
          ("theorydyn.transfer", "theorydyn.simulate"))
def fig_transfer(out: Path, quick: bool) -> list[Path]:
    from . import transfer

    cfg = dict(transfer.QUICK if quick else transfer.FULL)
    opts = transfer.TransferOptions(Ns=tuple(cfg["Ns"]), seeds=cfg["seeds"], N_test=cfg["N_test"],
                                    logreg_max_N=cfg["logreg_max_N"], scratch_max_N=cfg["scratch_max_N"])
    work = Path("scans/results") / ("figure_transfer" + ("_quick" if quick else ""))
    transfer.run(Setting(D=64, C=4), cfg["Ds"], opts, upstream_N=cfg["upstream_N"],
                 upstream_steps=cfg["upstream_steps"], out=work)
    paths = []
    for src, name in (("transfer_curves.png", "transfer_curves.png"), ("transfer_target.png", "transfer_target.png")):
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(work / src, out / name)
        paths.append(out / name)
    return paths


@register("vision", "Real images: similarity of learned positional encodings (Figure 1a / 5c style)",
          "Section 6: a ViT with positional attention, trained on images, learns positional encodings whose "
          "similarity rows concentrate on spatial neighbours (patch association), here on the bundled 8×8 digits.",
          ("torch", "theorydyn.vision.experiments"))
def fig_vision(out: Path, quick: bool) -> list[Path]:
    import torch

    from .vision.data import load
    from .vision.experiments import RunSpec, preset_configs, run

    torch.set_num_threads(2)
    data = load("digits", download=False)  # scikit-learn's bundled digits: no network
    # the vision CLI's digits preset (16 patches of 2×2 pixels); fewer epochs when quick
    vit, tcfg = preset_configs(data, **({"epochs": 15} if quick else {}))
    work = Path("runs/figures") / ("vision_quick" if quick else "vision")
    spec = RunSpec("vit", "positional", None, 0, vit.patch)
    row = run(spec, data, vit, tcfg, work, resume=True, perm_seed=0)
    print(f"[figures] vision: digits ViT (positional) test accuracy {row['final_test_acc']:.3f}", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    dst = out / "vision_pos_similarity.png"
    shutil.copyfile(work / spec.name / "pos_similarity.png", dst)
    return [dst]


@register("vision_compare", "Real images: positional against vanilla attention, test accuracy over epochs (Figures 6/7 style)",
          "Section 6: a ViT whose attention scores come from the positional encodings alone performs about as "
          "well as the vanilla ViT, here on the bundled 8×8 digits (mean ± std over seeds).",
          ("torch", "theorydyn.vision.experiments"))
def fig_vision_compare(out: Path, quick: bool) -> list[Path]:
    import torch

    from .vision.data import load
    from .vision.experiments import compare, preset_configs

    torch.set_num_threads(1)  # bit-identical reruns need a fixed thread count
    data = load("digits", download=False)
    vit, tcfg = preset_configs(data)
    work = Path("runs/figures") / ("vision_compare_quick" if quick else "vision_compare")
    work.mkdir(parents=True, exist_ok=True)
    df = compare(data, vit, tcfg, work, seeds=(0, 1) if quick else (0, 1, 2, 3, 4), resume=True, perm_seed=0)
    print(f"[figures] vision_compare: {df.groupby('attention')['final_test_acc'].agg(['mean', 'std']).to_dict()}",
          file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    dst = out / "vision_compare.png"
    shutil.copyfile(work / "compare.png", dst)
    return [dst]


# ---- driver -----------------------------------------------------------------------------------------
def available(fig: Figure) -> str | None:
    """None when the figure can be made, else why not."""
    import importlib

    for mod in fig.requires:
        try:
            importlib.import_module(mod)
        except ImportError as e:
            return f"needs {mod} ({e})"
    return None


#: The committed full-size Figure 4 (made by the simulator's CLI, not by this module: ~4 minutes).
FULL_FIGURE4 = "figure4-D64-N16384-1500steps.png"


def readme(out: Path, made: dict[str, list[Path]] | None = None) -> str:
    lines = ["# Figures", "",
             "Every figure here is computed by theorydyn; the committed PNGs are the `--quick` versions "
             "(PDFs are written next to them but not committed).",
             "Regenerate all of them with `python -m theorydyn.figures all --quick` "
             "(or without `--quick` for the sizes of SPEC §9), one with `python -m theorydyn.figures NAME`.", "",
             "| figure | files | command | claim it supports |", "|---|---|---|---|"]
    for fig in REGISTRY.values():
        longer = [o for o in REGISTRY if o != fig.name and o.startswith(fig.name)]  # "vision" vs "vision_compare"
        files = sorted(p.name for p in out.glob(f"{fig.name}*.png")
                       if not any(p.name.startswith(o) for o in longer)) if out.exists() else []
        if fig.name == "transfer":
            files = sorted(p.name for p in out.glob("transfer_*.png"))
        shown = ", ".join(f"[`{f}`]({f})" for f in files) or "(not made yet: " + (available(fig) or "run the command") + ")"
        lines.append(f"| **{fig.name}**: {fig.title} | {shown} | `python -m theorydyn.figures {fig.name} --quick` | "
                     f"{fig.claim} |")
    lines += ["", "Scan plots (phase times against the scanned axis, T1/T2 scaling in D, overlaid trajectories) are "
                  "written next to each scan's results in `scans/results/` by `python -m theorydyn.scan`.", ""]
    if (out / FULL_FIGURE4).exists():
        lines += [f"`{FULL_FIGURE4}` is the full-size run of SPEC §9 (D = 64, C = 4, q = 0.25, N = 16384, "
                  "η = 10, ω = 10⁻³, X in float32, seed 0), made by `python -m theorydyn.simulate --steps 1500 "
                  "--out runs/d64` (about 4 minutes on 2 cores), which writes it as `runs/d64/figure4.png`.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", default=["all"], help=f"figures to make: all or any of {', '.join(REGISTRY)}")
    ap.add_argument("--out", default="figures", help="output folder (default %(default)s)")
    ap.add_argument("--quick", action="store_true", help="small sizes (what is committed)")
    ap.add_argument("--list", action="store_true", help="list the figures and whether each can be made")
    args = ap.parse_args(argv)
    names = list(REGISTRY) if (not args.names or "all" in args.names) else args.names
    bad = [n for n in names if n not in REGISTRY]
    if bad:
        fail(f"unknown figure(s) {bad}; known: all, {', '.join(REGISTRY)}", PROG)
    out = Path(args.out)
    if args.list:
        for fig in REGISTRY.values():
            why = available(fig)
            print(f"{fig.name:10s} {'ready' if why is None else 'skipped: ' + why}  — {fig.title}")
        return 0
    made: dict[str, list[Path]] = {}
    failed = []
    for name in names:
        fig = REGISTRY[name]
        why = available(fig)
        if why is not None:
            print(f"[figures] {name}: skipped, {why}", file=sys.stderr)
            continue
        t = time.perf_counter()
        print(f"[figures] {name} …", file=sys.stderr, flush=True)
        try:
            made[name] = fig.make(out, args.quick)
        except Exception as e:  # noqa: BLE001 — one broken figure must not stop the others
            failed.append(name)
            print(f"[figures] {name}: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
            traceback.print_exc(limit=3, file=sys.stderr)
            continue
        print(f"[figures] {name}: {', '.join(str(p) for p in made[name])} ({time.perf_counter() - t:.0f} s)",
              file=sys.stderr)
    (out / "README.md").write_text(readme(out, made)) if out.exists() else None
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
