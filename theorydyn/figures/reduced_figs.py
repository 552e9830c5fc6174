"""Figures of the reduced dynamics: ``phases`` (one flow), ``scaling`` and ``qscan`` (scans through
:func:`theorydyn.scan.run_scan`). Registered in :data:`theorydyn.figures.REGISTRY` on import by
:mod:`theorydyn.figures.core`."""

from __future__ import annotations

from typing import Any

from ..core.setting import Setting
from ..core.stats import fit_power_law_ci
from ..reduced import integrate, plot_trajectory
from ..scan import ScanSpec, run_scan
from ..scan.plots import group_intervals, plot_phase_times, plot_scaling
from .record import _fmt, _num, register


# ---- the reduced dynamics ------------------------------------------------------------------------
def _phases_setting(quick: bool) -> dict:
    return dict(D=64, C=4, q=0.25, method="flow", s_max=3e4, n_samples=2000 if quick else 4000, seed=0, n_points=400)


def _phases_numbers(res) -> dict:
    ph, last = res.phases, res.trajectory.iloc[-1]
    return dict(
        T0=_num(ph.T0),
        T1=_num(ph.T1),
        T1_mass=_num(ph.T1_mass),
        T2=_num(ph.T2),
        final_s=_num(last["s"]),
        final_alpha=_num(last["alpha"]),
        final_gamma=_num(last["gamma"]),
        final_err_y=_num(last["err_y"]),
        final_err_f=_num(last["err_f"]),
        status=str(res.status),
    )


def _draw_phases(res, axes=None):
    n = _phases_numbers(res)
    st = res.setting
    o = res.options
    return plot_trajectory(
        res,
        axes=axes,
        title=(
            f"Reduced gradient flow (N = ∞): D={st.D}, C={st.C}, q={st.q:g}, s ≤ {o.get('s_max', 3e4):g}, "
            f"Monte Carlo bank of {o.get('n_samples')}, seed {o.get('seed')}\n"
            f"at the end: test error {_fmt(n['final_err_y'])} vs y, {_fmt(n['final_err_f'])} vs f"
        ),
    )


@register(
    "phases",
    "The three phases of the reduced gradient flow at D=64, C=4, q=0.25 (docs/theory.md §9)",
    "Section 4.1 (Events I–III), Lemma 4.3: α rises and the error plateaus at the GLM level from "
    "T0 = {T0:.3g}; γ overtakes |ρ| at T1 = {T1:.3g}, the in-set attention mass rises at T1_mass = "
    "{T1_mass:.3g}, and err_f falls below 2% at T2 = {T2:.3g}; at s = {final_s:.3g}, err_y = "
    "{final_err_y:.3f} and err_f = {final_err_f:.3f}.",
    (),
    _draw_phases,
    _phases_setting,
    _phases_numbers,
)
def fig_phases(quick: bool, recompute: bool = False):
    st = _phases_setting(quick)
    return integrate(
        Setting(D=st["D"], C=st["C"], q=st["q"]),
        method=st["method"],
        s_max=st["s_max"],
        n_samples=st["n_samples"],
        seed=st["seed"],
        n_points=st["n_points"],
    )


def _scan(name: str, st: dict, base: tuple[str, ...], axes: tuple[str, ...], quick: bool, recompute: bool):
    """The rows of the scan ``figure_NAME`` (``_quick`` with ``quick``): the setting ``st``'s entries
    ``base`` fixed, those of ``axes`` scanned."""
    spec = ScanSpec(
        f"figure_{name}" + ("_quick" if quick else ""),
        base={k: st[k] for k in base},
        axes={k: st[k] for k in axes},
    )
    # progress off: the figures driver shows one overall bar
    out = run_scan(spec, workers=2, force=recompute, progress=False, plots=False, summary=False)
    if out.failed or out.lost:  # a figure of the points that happened to finish would be another figure
        why = "; ".join(err for _, err in out.failed[:3]) or f"{out.lost} point(s) lost with a worker"
        raise RuntimeError(f"scan {spec.name}: {len(out.failed) + out.lost} point(s) not computed ({why})")
    return out.frame


def _scaling_setting(quick: bool) -> dict:
    return dict(
        C=4,
        q="C²/D",
        D=[32, 64, 128] if quick else [32, 64, 128, 256],
        seed=[0, 1, 2],
        s_max=1e5 if quick else 3e5,
        n_samples=2000 if quick else 4000,
        method="flow",
    )


def _scaling_numbers(frame) -> dict:
    out: dict[str, Any] = {}
    for ph in ("T0", "T1", "T1_mass", "T2"):
        fit = fit_power_law_ci(frame["D"], frame[ph]) if ph in frame else None
        out[f"{ph}_exponent"] = None if fit is None else [fit["b"], fit["b_low"], fit["b_high"]]
        if ph in frame:
            g = group_intervals(frame, "D", ph, "positive")
            out[f"{ph}_geomean"] = {str(int(k)): _num(v) for k, v in g["centre"].items()}
    return out


def _draw_scaling(frame, axes=None):
    st = _scaling_setting(True) if frame["D"].nunique() == 3 else _scaling_setting(False)
    fig, _ = plot_scaling(
        frame,
        ax=axes,
        title=(
            f"Reduced flow (N = ∞): phase times against D, C={st['C']}, q=C²/D, s ≤ {st['s_max']:g}, "
            f"Monte Carlo bank of {st['n_samples']}, seeds 0–2"
        ),
    )
    return fig


@register(
    "scaling",
    "Phase times T0, T1, T1_mass, T2 of the reduced flow against D (C=4, q=C²/D; fitted exponents, 95% CIs)",
    "Section 4.1 / Lemma 4.3: phase II lengthens with D. Fitted over D = 32, 64, 128 (3 seeds, 95% CIs): "
    "T0 ∝ D^{T0_exponent[0]:.2f} [{T0_exponent[1]:.2f}, {T0_exponent[2]:.2f}], T1 ∝ D^{T1_exponent[0]:.2f} "
    "[{T1_exponent[1]:.2f}, {T1_exponent[2]:.2f}] (depends on s_max), T1_mass ∝ D^{T1_mass_exponent[0]:.2f} "
    "[{T1_mass_exponent[1]:.2f}, {T1_mass_exponent[2]:.2f}], T2 ∝ D^{T2_exponent[0]:.2f} "
    "[{T2_exponent[1]:.2f}, {T2_exponent[2]:.2f}]; the local slopes in its legend differ between "
    "32→64 and 64→128, so one power law does not describe them.",
    (),
    _draw_scaling,
    _scaling_setting,
    _scaling_numbers,
)
def fig_scaling(quick: bool, recompute: bool = False):
    return _scan("scaling", _scaling_setting(quick), ("C", "s_max", "n_samples"), ("D", "seed"), quick, recompute)


def _qscan_setting(quick: bool) -> dict:
    return dict(
        D=64,
        C=4,
        q=[0.15, 0.2, 0.25, 0.3, 0.35],
        seed=[0] if quick else [0, 1, 2],
        n_samples=2000 if quick else 4000,
        method="flow",
    )


def _qscan_numbers(frame) -> dict:
    out: dict[str, Any] = {}
    for ph in ("T0", "T1", "T1_mass", "T2"):
        if ph in frame:
            g = group_intervals(frame, "q", ph, "positive")
            out[ph] = {f"{k:g}": _num(v) for k, v in g["centre"].items()}
    return out


def _draw_qscan(frame, axes=None):
    n = frame["seed"].nunique()
    return plot_phase_times(
        frame,
        "q",
        ax=axes,
        title=f"Reduced flow (N = ∞): phase times against q, D=64, C=4, s ≤ {frame['s_max'].max():g}, "
        f"Monte Carlo bank of {int(frame['n_samples'].iloc[0])}, {n} seed{'s' if n > 1 else ''}",
    )


@register(
    "qscan",
    "Phase times of the reduced flow against q at D=64, C=4",
    "Assumption 2 (q = poly(C)/D): more spurious ±w* patches (larger q) lengthen phase II: T2 rises from "
    "{T2[0.15]:.3g} at q = 0.15 to {T2[0.35]:.3g} at q = 0.35 and T1 from {T1[0.15]:.3g} to {T1[0.35]:.3g}, "
    "while T0 comes sooner ({T0[0.15]:.3g} → {T0[0.35]:.3g}); one seed, so no intervals.",
    (),
    _draw_qscan,
    _qscan_setting,
    _qscan_numbers,
)
def fig_qscan(quick: bool, recompute: bool = False):
    return _scan("qscan", _qscan_setting(quick), ("D", "C", "n_samples"), ("q", "seed"), quick, recompute)
