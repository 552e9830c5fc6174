"""Every figure of theorydyn, recomputed: a registry of (compute, draw) pairs.

Each registered :class:`Figure` has ``compute(quick) -> data`` (the toolkit's own solvers, a scan,
the transfer experiment …) and ``draw(data, axes=None) -> matplotlib Figure`` (into the given axes,
or a new figure). In a notebook::

    from theorydyn import figures
    fig = figures.REGISTRY["phases"]
    data = fig.compute(quick=True)
    fig.draw(data, axes=my_axes)          # or: fig.draw(data) for a new figure

:func:`make` computes, draws and writes ``out/NAME.png`` and ``.pdf``; ``python -m
theorydyn.figures`` does it for any or all figures and regenerates ``figures/README.md`` (each
figure, the command that remakes it and the claim it supports). ``quick`` uses smaller sizes (the
committed PNGs are the quick versions). Scans behind a figure go through
:func:`theorydyn.scan.run_scan`, so their points are cached in ``scans/results/``.
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd

from .. import transfer
from ..atomic import write_with
from ..claims.figure2 import paper_init
from ..claims.semirealistic import compare_with_reduced
from ..glm import plot_theorem_3_1_scan, theorem_3_1_scan
from ..plotting import axes_or_new, save
from ..positional import figure2_setting
from ..positional import run as run_figure2
from ..positional.plot import make_figure
from ..reduced import integrate, plot_trajectory
from ..scan import ScanSpec, run_scan
from ..scan.plots import plot_phase_times, plot_scaling
from ..setting import Setting
from ..simulate import plot_attention, plot_comparison, plot_figure4, simulate


@dataclass(frozen=True)
class Figure:
    """One registered figure: what it shows, the claim it supports, how to compute and draw it."""

    name: str
    title: str
    claim: str
    requires: tuple[str, ...]
    compute: Callable[[bool], Any]
    draw: Callable[..., Any]


REGISTRY: dict[str, Figure] = {}


def register(name: str, title: str, claim: str, requires: tuple[str, ...], draw: Callable[..., Any]):
    """Decorator registering ``compute(quick) -> data`` with its ``draw(data, axes=None) -> Figure``."""

    def deco(compute: Callable[[bool], Any]):
        REGISTRY[name] = Figure(name, title, claim, requires, compute, draw)
        return compute

    return deco


def make(name: str, out: Path, quick: bool) -> list[Path]:
    """Compute, draw and write ``out/NAME.png`` and ``out/NAME.pdf``; returns the paths."""
    fig = REGISTRY[name]
    drawn = fig.draw(fig.compute(quick))
    out = Path(out)
    paths = [out / f"{name}.png", out / f"{name}.pdf"]
    # atomically (temporary file, fsync, rename): a kill or a full disk leaves the old figure or the new one
    write_with(paths[0], lambda t: save(drawn, t, close=False))
    write_with(paths[1], lambda t: save(drawn, t))
    return paths


# ---- the reduced dynamics ------------------------------------------------------------------------
def _draw_phases(res, axes=None):
    ph = res.phases
    fmt = lambda v: "—" if v is None else f"{v:.3g}"  # noqa: E731
    return plot_trajectory(
        res,
        axes=axes,
        title=f"reduced gradient flow, D=64, C=4, q=0.25: T0={fmt(ph.T0)}, T1={fmt(ph.T1)}, T2={fmt(ph.T2)}",
    )


@register(
    "phases",
    "The three phases of the idealized dynamics at D=64, C=4 (docs/theory.md §9)",
    "Section 4.1 (Events I–III) and Lemma 4.3: α rises and the risk plateaus at a GLM-like error (T0); "
    "γ then overtakes max|ρ| (T1) with γ ≥ ρ throughout; the error falls below 2% (T2).",
    ("theorydyn.reduced",),
    _draw_phases,
)
def fig_phases(quick: bool):
    return integrate(
        Setting(D=64, C=4, q=0.25), method="flow", s_max=3e4, n_samples=2000 if quick else 4000, seed=0, n_points=400
    )


def _scan(name: str, base: dict, axes: dict):
    return run_scan(ScanSpec(name, base=base, axes=axes), workers=2, progress=True, plots=False, summary=False)


def _draw_scaling(frame, axes=None):
    fig, exps = plot_scaling(frame, ax=axes, title="phase scaling with D (C=4, q=C²/D)")
    print(
        "[figures] scaling exponents: "
        + ", ".join(
            f"{k} ∝ D^{v['b']:.2f} [{v['b_low']:.2f}, {v['b_high']:.2f}]" for k, v in exps.items() if v is not None
        ),
        file=sys.stderr,
    )
    return fig


@register(
    "scaling",
    "Phase times T0, T1, T2 against D (log-log, fitted exponents with 95% CIs, local slopes)",
    "Section 4.1 / Lemma 4.3: per-entry gradients of A are O(1/D) of α's, so phase II lengthens with D; "
    "the exponents (and the local slopes, since one power law does not hold) measure how (q = C²/D).",
    ("theorydyn.reduced",),
    _draw_scaling,
)
def fig_scaling(quick: bool):
    Ds = [32, 64, 128] if quick else [32, 64, 128, 256]
    return _scan(
        "figure_scaling" + ("_quick" if quick else ""),
        {"C": 4, "s_max": 1e5 if quick else 3e5, "n_samples": 2000 if quick else 4000},
        {"D": Ds, "seed": [0, 1, 2]},
    ).frame


def _draw_qscan(frame, axes=None):
    return plot_phase_times(frame, "q", ax=axes, title="phase times against q (D=64, C=4)")


@register(
    "qscan",
    "Phase times against q at D=64, C=4 (the default scan)",
    "Assumption 2 (q = poly(C)/D): more spurious ±w* patches make the GLM plateau worse and phase II longer.",
    ("theorydyn.reduced",),
    _draw_qscan,
)
def fig_qscan(quick: bool):
    return _scan(
        "figure_qscan" + ("_quick" if quick else ""),
        {"D": 64, "C": 4, "n_samples": 2000 if quick else 4000},
        {"q": [0.15, 0.2, 0.25, 0.3, 0.35], "seed": [0] if quick else [0, 1, 2]},
    ).frame


# ---- the finite-sample simulator ----------------------------------------------------------------
_SIM_CACHE: dict[tuple, object] = {}


def simulated(quick: bool):
    """One realistic GD run (Theorem 4.2), shared by the figures that show it."""
    kw: dict[str, Any]
    if quick:
        # docs/theory.md §9's D = 32 run keeps q = 0.25 and ν = 1/64 (D = 32's own default q = 1/2 has a
        # GLM plateau that lasts beyond 300 steps, and diverges at η = 10 near step 376)
        s, kw = Setting(D=32, C=4, q=0.25, nu=1 / 64), dict(N=16384, eta=10.0, steps=300, record_every=10)
    else:
        s, kw = Setting(D=64, C=4, q=0.25), dict(N=16384, eta=10.0, steps=1200, record_every=50)
    key = (s.D, tuple(sorted(kw.items())))
    if key not in _SIM_CACHE:
        t = time.perf_counter()
        _SIM_CACHE[key] = simulate(s, omega=1e-3, seed=0, **kw)
        print(
            f"[figures] simulated D={s.D}, N={kw['N']}, {kw['steps']} steps in {time.perf_counter() - t:.0f} s",
            file=sys.stderr,
        )
    return _SIM_CACHE[key]


def _draw_attention(res, axes=None):
    return plot_attention(res, axes=axes)


def _draw_figure4(res, axes=None):
    return plot_figure4(res, axes=axes)


register(
    "attention",
    "Learned attention Â against the set mask (Figure 4 style)",
    "Theorem 4.2 / Definition 2.2: after GD on N samples from a random init, Â's large entries sit on the "
    "sets S_ℓ (patch association), though the sets are never given to the model.",
    ("theorydyn.simulate",),
    _draw_attention,
)(simulated)
register(
    "figure4",
    "The simulator's Figure 4: mask, learned Â, test error and cos(v̂, w*) against steps",
    "Theorem 4.2 (realistic dynamics): patch association and generalization at the end of training.",
    ("theorydyn.simulate",),
    _draw_figure4,
)(simulated)


def _draw_semirealistic(data, axes=None):
    gaps, curves = data
    return plot_comparison(gaps, curves, axes=axes)


@register(
    "semirealistic",
    "Finite-sample GD against the reduced dynamics: the gap against N",
    "Theorem 4.2's proof (the semi-realistic process): GD on N samples from the idealized init tracks "
    "population GD in (α, γ, ρ), with a gap that shrinks as N grows.",
    ("theorydyn.simulate", "theorydyn.reduced"),
    _draw_semirealistic,
)
def fig_semirealistic(quick: bool):
    Ns, seeds = ((256, 1024, 4096, 16384), (0, 1)) if quick else ((256, 1024, 4096, 16384, 65536), (0, 1, 2))
    return compare_with_reduced(Setting(D=8, C=2), Ns=Ns, eta=2.0, steps=150, seeds=seeds, n_test=4096, record_every=5)


# ---- the claims outside the dynamics ----------------------------------------------------------------
def _draw_theorem31(data, axes=None):
    fig, ax = axes_or_new(axes, figsize=(7.5, 4.8))
    plot_theorem_3_1_scan(ax, *data)
    return fig


@register(
    "theorem31",
    "Theorem 3.1: the exact best-GLM error against q(D−C)/C² for D ∈ {64, 128, 256}, C ∈ {4, 8, 16}",
    "Theorem 3.1 (a GLM errs with probability ≥ 1/8) holds only once q(D−C) ≳ 0.75·C²: the exact error "
    "collapses on q(D−C)/C² and crosses 1/8 there (the ledger's DEVIATES row); dotted: q(D−C) = C.",
    ("theorydyn.glm",),
    _draw_theorem31,
)
def fig_theorem31(quick: bool):
    return theorem_3_1_scan()


def _draw_figure2(results, axes=None):
    return make_figure(results)


@register(
    "figure2",
    "Figure 2: a positional-attention ViT with learned P on Gaussian CNN-labelled data, 5 seeds",
    "Figure 2 / Section 3: low test error is reached, and the learned PᵀP shows no patch association "
    "(Definition 2.2) at the paper's training length — but it is not unstructured: same-set encodings "
    "grow more similar (the ledger's DEVIATES row).",
    ("torch", "theorydyn.positional"),
    _draw_figure2,
)
def fig_figure2(quick: bool):
    # the ledger's main row: P and v at Parametrization 3.1's scale (claims.figure2.paper_init)
    s = figure2_setting()
    pi = paper_init(s)
    return run_figure2(s, seeds=range(5), quick=quick, p_std=pi["p_std"], omega=pi["omega"])  # torch on use


# ---- transfer ---------------------------------------------------------------------------------------
_TRANSFER: dict[bool, tuple] = {}


def transfer_tables(quick: bool):
    """The transfer experiment's tables (quick: QUICK sizes, else FULL): the very rows behind the
    ledger's Theorem 5.1/5.2 verdicts (the same resumable folder, ``runs/transfer_checks[_quick]``)."""
    if quick not in _TRANSFER:
        cfg: dict[str, Any] = dict(transfer.QUICK if quick else transfer.FULL)
        out = Path("runs") / ("transfer_checks_quick" if quick else "transfer_checks")
        _raw, summary, tgt, slopes, _up = transfer.run(
            transfer.base_setting(), cfg["Ds"], transfer.options_from(cfg), out=out, progress=None
        )
        _TRANSFER[quick] = (summary, tgt, slopes, pd.read_csv(out / "transfer_levels.csv"))
    return _TRANSFER[quick]


def _draw_transfer_target(tables, axes=None):
    summary, tgt, slopes, levels = tables
    fig, ax = axes_or_new(axes, figsize=(8.0, 6.4))
    transfer.plot_samples_to_target(tgt, ax, slopes)
    return fig


def _draw_transfer_curves(tables, axes=None):
    summary, tgt, slopes, levels = tables
    n = summary["D"].nunique()
    fig, ax = axes_or_new(axes, 1, n, figsize=(4.2 * n, 3.9), sharey=True, squeeze=False)
    transfer.plot_curves(summary, levels, list(ax.flat) if hasattr(ax, "flat") else ax)
    return fig


register(
    "transfer_target",
    "Transfer: the downstream samples Ñ_target needed against D (Theorems 5.1, 5.2)",
    "Theorem 5.1: with the pre-trained Â, Ñ_target stays at 1–2 samples for D = 16…256 (slope CI below 0.5); "
    "Theorem 5.2: Â at init, another partition and logistic regression never reach the target (arrows: "
    "lower bounds, never drawn as values; their accuracy ceilings lie below it).",
    ("theorydyn.transfer",),
    _draw_transfer_target,
)(transfer_tables)
register(
    "transfer_curves",
    "Transfer: downstream accuracy against Ñ per D, mean and 95% interval over 5 seeds",
    "Theorems 5.1, 5.2: the accuracy curves behind Ñ_target; dotted: the target a*(D) − 0.05.",
    ("theorydyn.transfer",),
    _draw_transfer_curves,
)(transfer_tables)


# ---- real images (Section 6), the vision extra ----------------------------------------------------------
def digits(quick: bool):
    """The bundled 8×8 digits (scikit-learn; no download); the figures train or read the cached runs
    under ``runs/vision/ledger`` that the ledger's Section 6 rows use (one thread: reproducible)."""
    v = _vision()
    v.torch.set_num_threads(1)
    return v.data.load("digits", download=False)


def _vision() -> SimpleNamespace:
    """torch and the modules of :mod:`theorydyn.vision` used here (``data``, ``figs``)."""
    # the vision extra (torch): imported only when these figures are made, so the other figures run without it
    import torch

    from ..vision import data, figs

    return SimpleNamespace(torch=torch, data=data, figs=figs)


def _vision_drawer(name: str):
    def draw(data, axes=None):
        return getattr(_vision().figs, name)(data)

    return draw


for _name, _fn, _title, _claim in (
    (
        "vision_pos_similarity",
        "similarity_figure_digits",
        "Section 6 / Figure 1a: cosine similarity of the learned positional encodings (P initialised at 0.02 as "
        "in the paper's ViT), and its profile against grid distance (positional, vanilla, untrained; bands over "
        "3 seeds)",
        "Section 6: positional encodings learn spatial structure. On the 8×8 digits the similarity *rises* with "
        "grid distance: the patches of the border ring, nearly blank in every digit, learn alike encodings (the "
        "ledger's DEVIATES row).",
    ),
    (
        "vision_compare",
        "compare_figure_digits",
        "Section 6 / Figures 6–7: positional against vanilla attention, test accuracy and loss per epoch (3 seeds)",
        "Section 6: positional attention performs about as well as vanilla attention (the ledger's row).",
    ),
    (
        "vision_permuted",
        "permuted_figure_digits",
        "Section 6 / Figure 5a (digits form): ViT and a small CNN on original and π_s-permuted digits, s = 1 "
        "(ViT patch 1) and s = 2 (ViT patch 2), 10 seeds",
        "Figure 5a: a ViT is insensitive to a fixed permutation of patches while a CNN degrades. On the digits "
        "the ViT does not drop measurably and the CNN loses 0.9 (π_2) and 1.5 points (π_1): the contrast shows, "
        "small (the "
        "ledger's two rows).",
    ),
):
    register(_name, _title, _claim, ("torch", "sklearn", "theorydyn.vision.figs"), _vision_drawer(_fn))(digits)


# ---- driver -----------------------------------------------------------------------------------------
def available(fig: Figure) -> str | None:
    """None when the figure can be made, else why not."""
    for mod in fig.requires:
        try:
            importlib.import_module(mod)
        except ImportError as e:
            return f"needs {mod} ({e})"
    return None


#: The committed full-size Figure 4 (made by the simulator's CLI, not by this module: ~4 minutes).
FULL_FIGURE4 = "figure4-D64-N16384-1500steps.png"


def readme(out: Path) -> str:
    """The text of ``figures/README.md``: each figure, its files, the command that remakes it, its claim."""
    lines = [
        "# Figures",
        "",
        "Every figure here is computed by theorydyn; the committed PNGs are the `--quick` versions "
        "(PDFs are written next to them but not committed).",
        "Regenerate all of them with `python -m theorydyn.figures all --quick` "
        "(or without `--quick` for the sizes of docs/theory.md §9), "
        "one with `python -m theorydyn.figures NAME`.",
        "",
        "| figure | files | command | claim it supports |",
        "|---|---|---|---|",
    ]
    for fig in REGISTRY.values():
        longer = [o for o in REGISTRY if o != fig.name and o.startswith(fig.name)]  # "vision" vs "vision_compare"
        files = (
            sorted(p.name for p in out.glob(f"{fig.name}*.png") if not any(p.name.startswith(o) for o in longer))
            if out.exists()
            else []
        )
        if fig.name == "transfer":
            files = sorted(p.name for p in out.glob("transfer_*.png"))
        shown = (
            ", ".join(f"[`{f}`]({f})" for f in files) or "(not made yet: " + (available(fig) or "run the command") + ")"
        )
        lines.append(
            f"| **{fig.name}**: {fig.title} | {shown} | `python -m theorydyn.figures {fig.name} --quick` | "
            f"{fig.claim} |"
        )
    lines += [
        "",
        "Scan plots (phase times against the scanned axis, T1/T2 scaling in D, overlaid trajectories) are "
        "written next to each scan's results in `scans/results/` by `python -m theorydyn.scan`.",
        "",
    ]
    if (out / FULL_FIGURE4).exists():
        lines += [
            f"`{FULL_FIGURE4}` is the full-size run of docs/theory.md §9 (D = 64, C = 4, q = 0.25, N = 16384, "
            "η = 10, ω = 10⁻³, X in float32, seed 0), made by `python -m theorydyn.simulate --steps 1500 "
            "--out runs/d64` (minutes on 2 cores), which writes it as `runs/d64/figure4.png`.",
            "",
        ]
    return "\n".join(lines)
