"""Figures of the finite-sample simulator (realistic GD, Theorem 4.2): ``attention``, ``figure4``,
``figure4_d64`` and ``semirealistic`` (the simulator against the reduced recursion). Registered in
:data:`theorydyn.figures.REGISTRY` on import by :mod:`theorydyn.figures.core`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.model import association
from ..core.setting import Setting
from ..experiments.semirealistic import compare_with_reduced
from ..simulate import plot_attention, plot_comparison, plot_figure4, simulate
from .record import _num, register

# ---- the finite-sample simulator ----------------------------------------------------------------
_SIM_CACHE: dict[tuple, object] = {}


def _sim_setting(quick: bool) -> dict:
    if quick:
        # docs/theory.md §9's D = 32 run keeps q = 0.25 and ν = 1/64 (D = 32's own default q = 1/2 has a
        # GLM plateau that lasts beyond 300 steps, and diverges at η = 10 near step 376)
        return dict(D=32, C=4, q=0.25, nu=1 / 64, N=16384, eta=10.0, steps=300, record_every=10, omega=1e-3, seed=0)
    return dict(D=64, C=4, q=0.25, nu=1 / 64, N=16384, eta=10.0, steps=1200, record_every=50, omega=1e-3, seed=0)


def _d64_setting(quick: bool) -> dict:
    # exactly `python -m theorydyn.simulate --steps 1500` (its defaults: X in float32, 8192 test samples)
    return dict(
        D=64, C=4, q=0.25, nu=1 / 64, N=16384, eta=10.0, steps=1500, record_every=10, omega=1e-3, seed=0,
        dtype="float32", n_test=8192, dense_until=40,
    )  # fmt: skip


def _simulate(st: dict, recompute: bool):
    key = tuple(sorted(st.items()))
    if recompute or key not in _SIM_CACHE:
        kw = {k: v for k, v in st.items() if k not in ("D", "C", "q", "nu")}
        _SIM_CACHE[key] = simulate(Setting(D=st["D"], C=st["C"], q=st["q"], nu=st["nu"]), **kw)
    return _SIM_CACHE[key]


def simulated(quick: bool, recompute: bool = False):
    """One realistic GD run (Theorem 4.2), shared by the figures that show it."""
    return _simulate(_sim_setting(quick), recompute)


def _sim_numbers(res) -> dict:
    t = res.trajectory
    i = int(t["association"].to_numpy(float).argmax())
    peak = t["association"].to_numpy(float) >= t["association"].max()
    last = t.iloc[-1]
    return dict(
        final_step=int(last["step"]),
        final_association=_num(last["association"]),
        final_association_of_A=_num(association(res.setting, np.asarray(res.A, float))),
        peak_association=_num(t["association"].iloc[i]),
        peak_steps=[int(t["step"][peak].min()), int(t["step"][peak].max())],
        final_err_y=_num(last["err_y"]),
        final_err_f=_num(last["err_f"]),
        min_err_y=_num(t["err_y"].min()),
        final_cos_v=_num(last["cos_v"]),
        T2_steps=_num(res.phases.T2 / res.options["eta"]) if res.phases.T2 is not None else None,
        status=str(res.status),
    )


register(
    "attention",
    "Learned attention Â against the set mask after realistic GD (D=32, C=4, q=0.25, N=16384, 300 steps)",
    "Theorem 4.2 / Definition 2.2: after GD on N samples from a random init, Â's large entries sit on the "
    "sets S_ℓ though the sets are never given to the model: patch association {final_association:.2f} at "
    "step {final_step}.",
    (),
    lambda res, axes=None: plot_attention(res, axes=axes),
    _sim_setting,
    _sim_numbers,
)(simulated)
register(
    "figure4",
    "The simulator's Figure 4 at D=32, C=4, q=0.25, N=16384, η=10, 300 steps: mask, Â, test error, association",
    "Theorem 4.2 at D = 32: the association reaches {peak_association:.2f} by step {peak_steps[0]} and is "
    "{final_association:.2f} at step {final_step}; err_f falls below 2% at step ≈ {T2_steps:.0f} (T2) and the "
    "test error ends at {final_err_y:.3f} against y, {final_err_f:.3f} against f.",
    (),
    lambda res, axes=None: plot_figure4(res, axes=axes),
    _sim_setting,
    _sim_numbers,
)(simulated)


@register(
    "figure4_d64",
    "The simulator's Figure 4 at D=64, C=4, q=0.25, N=16384, η=10, 1500 steps (docs/theory.md §9)",
    "Theorem 4.2 at D = 64: the association peaks at {peak_association:.2f} (every row; steps "
    "{peak_steps[0]}–{peak_steps[1]}) and then falls to {final_association:.2f} by step {final_step}; err_f "
    "crosses 2% only at step ≈ {T2_steps:.0f} and the test error ends at {final_err_y:.4f} against y, "
    "{final_err_f:.4f} against f, at the 2% line rather than below it. So the run shows full association "
    "during training and a test error of ≈ 2% at the end, not both held at the end.",
    (),
    lambda res, axes=None: plot_figure4(res, axes=axes),
    _d64_setting,
    _sim_numbers,
    file="figure4-D64-N16384-1500steps",
)
def fig_figure4_d64(quick: bool, recompute: bool = False):
    return _simulate(_d64_setting(quick), recompute)


def _semi_setting(quick: bool) -> dict:
    return dict(
        D=8,
        C=2,
        q=0.5,
        init="idealized",
        Ns=[256, 1024, 4096, 16384] if quick else [256, 1024, 4096, 16384, 65536],
        seeds=[0, 1] if quick else [0, 1, 2],
        eta=2.0,
        steps=150,
        n_test=4096,
        record_every=5,
        reduced="gd, exact expectation",
    )


def _semi_final_gap(curves: dict, col: str) -> dict[str, float | None]:
    """|simulator − reduced| of ``col`` at the last recorded s, per N (the first seed's run)."""
    red = curves["reduced"]
    out = {}
    for label, df in curves.items():
        if label == "reduced":
            continue
        s_end = float(df["s"].iloc[-1])
        out[label.removeprefix("N=")] = _num(abs(float(df[col].iloc[-1]) - np.interp(s_end, red["s"], red[col])))
    return out


def _semi_numbers(data) -> dict:
    gaps, curves = data
    g = gaps.groupby("N").mean(numeric_only=True)
    out: dict[str, Any] = {
        col: {str(int(n)): _num(v) for n, v in g[col].items()}
        for col in ("gap_alpha", "gap_gamma", "gap_rho", "gap_err_f")
    }
    out["err_f_gap_at_end_seed0"] = _semi_final_gap(curves, "err_f")
    return out


def _draw_semirealistic(data, axes=None):
    gaps, curves = data
    st = _semi_setting(gaps["N"].nunique() == 4)
    return plot_comparison(
        gaps,
        curves,
        axes=axes,
        final_gap=_semi_final_gap(curves, "err_f"),
        setting=(
            f"D={st['D']}, C={st['C']}, q={st['q']:g}, idealized init, η={st['eta']:g}, {st['steps']} steps, "
            f"seeds {', '.join(map(str, st['seeds']))}, {st['n_test']} test samples; reduced: same GD recursion, "
            "exact expectation"
        ),
    )


@register(
    "semirealistic",
    "Finite-sample GD against the reduced GD recursion from the idealized init (D=8, C=2): the gap against N",
    "Theorem 4.2's proof (the semi-realistic process): the gaps in α, γ, ρ (max over s, mean of 2 seeds) "
    "shrink from {gap_alpha[256]:.3f}, {gap_gamma[256]:.3f}, {gap_rho[256]:.3f} at N = 256 to "
    "{gap_alpha[16384]:.3f}, {gap_gamma[16384]:.3f}, {gap_rho[16384]:.4f} at N = 16384; the err_f gap stays "
    "at {gap_err_f[256]:.3f}–{gap_err_f[16384]:.3f} for every N (see the note), and at the last step "
    "(hollow, seed 0) it is {err_f_gap_at_end_seed0[256]:.3f}, {err_f_gap_at_end_seed0[1024]:.3f}, "
    "{err_f_gap_at_end_seed0[4096]:.3f}, {err_f_gap_at_end_seed0[16384]:.3f} (N = 256 … 16384): no "
    "monotone trend. docs/theory.md §4's 'the gap must shrink' holds for α, γ, ρ, not for err_f's maximum.",
    (),
    _draw_semirealistic,
    _semi_setting,
    _semi_numbers,
    note=(
        "Why the err_f gap (max over s) does not shrink: at D = 8, C = 2 (q = 1/2) a sample whose ±w* patches "
        "cancel (Σ_j z_j = 0) but whose label f ≠ 0 is 8.1% of the decisive samples; at the three-value point "
        "with γ ≈ ρ ≈ 0 its output is decided only by the γ − ρ term, which is ≈ 0 early in training. Any "
        "departure from the three-value form — the O(N^-1/2) off-w* part of v̂ and spread of Â that finite N "
        "always has — then sets its sign at random, so about half of them (≈ 0.03–0.04) are errors for every "
        "finite N, while the reduced recursion (exactly on the three-value point) gets them right: err_f is "
        "not continuous in N at early s. Evaluating the forward pass on the reduced parameters reproduces the "
        "reduced err_f (0.0184 at s = 6–96), and perturbing v by 1e-2 off w* raises it to 0.046 (checked for "
        "this note, D = 8, C = 2, 200000 test samples). As γ − ρ grows these samples get a margin and the "
        "simulator's err_f descends towards the reduced one (its curves), but within 150 steps not to it."
    ),
)
def fig_semirealistic(quick: bool, recompute: bool = False):
    st = _semi_setting(quick)
    return compare_with_reduced(
        Setting(D=st["D"], C=st["C"]),
        Ns=st["Ns"],
        eta=st["eta"],
        steps=st["steps"],
        seeds=st["seeds"],
        n_test=st["n_test"],
        record_every=st["record_every"],
    )
