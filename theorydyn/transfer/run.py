"""Transfer to a downstream task with a frozen attention (Section 5, Theorems 5.1 and 5.2; SPEC §5).

Downstream distribution D̃: Assumption 1 with the *same* sets S_ℓ and a new unit feature w̃ ⟂ w*
(:func:`downstream_setting`). The attention logits Â stay fixed; ṽ is re-initialised,
ṽ(0) ~ N(0, ω² I_d), and trained alone by GD on the empirical risk (Ẽ) of Ñ downstream samples:

    ṽ ← ṽ − η ∇_ṽ (1/Ñ) Σ_n log(1 + exp(−ỹ_n F_{Â,ṽ}(X̃_n))).

Theorem 5.1: with the pre-trained Â (patch association), Ñ ≤ polylog(D) samples give
Pr[f F ≤ 0] = o(1). Theorem 5.2: without patch-association knowledge, D^{Ω(1)} samples are needed.
Methods compared (accuracy = 1 − Pr[f F ≤ 0 | f ≠ 0] on fresh downstream samples; also against y):

* ``pretrained``  — Â from realistic GD on the upstream task (``theorydyn.simulate``);
* ``init``        — Â at its realistic initialisation (Â_ij ~ N(0, ω²), Â_ii = β);
* ``other-partition`` — Â pre-trained upstream on a different (random) partition;
* ``scratch``     — A and v both trained from the realistic initialisation on the Ñ samples;
* ``logreg``      — L2 logistic regression on the flattened X, λ chosen by cross-validation on
  the Ñ samples (:mod:`theorydyn.logreg`);
* ``oracle``      — optional: the block attention of Lemma 4.1 with a large γ (a reference).

Shapes: X: (N, D, d), A: (D, D), v: (d,).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import expit

from .. import data, model
from ..cli import add_setting_arguments, fail, positive, setting_from_args
from .logreg import fit_logreg_cv
from ..setting import Setting

METHODS = ("pretrained", "init", "other-partition", "scratch", "logreg", "oracle")


# ---- the downstream task ---------------------------------------------------------------------
def downstream_feature(s: Setting) -> int | tuple[float, ...]:
    """A unit feature w̃ ⟂ w*: the next basis vector for w* = e_k, else e_0 (or e_1) minus its w* part."""
    if isinstance(s.feature, int):
        return (s.feature + 1) % s.d
    w = s.w_star
    for k in range(s.d):
        e = np.zeros(s.d)
        e[k] = 1.0
        u = e - (e @ w) * w
        if np.linalg.norm(u) > 0.5:
            return tuple(float(x) for x in u / np.linalg.norm(u))
    raise AssertionError("unreachable: some basis vector is far from w*")


def downstream_setting(s: Setting) -> Setting:
    """D̃: the same setting (same sets) with a feature w̃ ⟂ w* (SPEC §5)."""
    return s.replace(feature=downstream_feature(s))


# ---- attention matrices ----------------------------------------------------------------------
def init_attention(s: Setting, omega: float, rng: np.random.Generator) -> np.ndarray:
    """Realistic initialisation (Parametrization 3.1): Â_ij ~ N(0, ω²) (i ≠ j), Â_ii = β.  → (D, D)."""
    A = rng.normal(0.0, omega, size=(s.D, s.D))
    np.fill_diagonal(A, s.beta)
    return A


def oracle_attention(s: Setting, gap: float = 10.0) -> np.ndarray:
    """A reference block Â (Lemma 4.1's form): in-set logits γ = β (equal to the diagonal, so each
    patch averages its whole set) and cross-set logits ρ = β − gap; S_ij ≈ 1/C in-set."""
    return model.symmetric_attention(s, s.beta, s.beta - gap)


def pretrain(s: Setting, N: int = 16384, eta: float = 10.0, steps: int = 1200, omega: float = 1e-3,
             seed: int = 0, dtype: str = "float32"):
    """Pre-train (A, v) by realistic GD on the upstream task with ``theorydyn.simulate``.

    Returns the simulate result (``res.A`` is the Â to transfer; ``res.trajectory`` the record).
    """
    from ..simulate import simulate  # imported here: the simulator is a heavier module

    return simulate(s, N=N, eta=eta, steps=steps, omega=omega, seed=seed, record_every=max(1, steps // 4),
                    dtype=dtype)


# ---- training of ṽ with Â frozen (the fine-tuning problem (Ẽ)) --------------------------------
def risk_and_grad_v(s: Setting, S: np.ndarray, v: np.ndarray, X: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Risk (Ẽ) and ∇_v for a fixed score matrix S = softmax(Â/τ) (SPEC §2, the ∇_v formula).

    The products with X use stacked matmul / einsum rather than one large BLAS call: at the small
    Ñ of fine-tuning a threaded BLAS gemv costs more in thread start-up than in arithmetic.
    """
    y = np.asarray(y, dtype=np.float64)
    U = X @ v  # (N, D)
    H = U @ S.T
    m = y * model.activation(s, H).sum(axis=1)
    r = float(np.mean(model.logistic_loss(m)))
    G = (-y * expit(-m) / len(y))[:, None] * model.activation_grad(s, H)
    return r, np.einsum("nj,njk->k", G @ S, X)


def descend(obj: Callable[[list[np.ndarray]], tuple[float, list[np.ndarray]]], params: list[np.ndarray],
            eta: float, steps: int) -> tuple[list[np.ndarray], float, int]:
    """GD with step η, halved (up to 40 times) whenever a step would raise the risk or leave the
    finite range: with the cubic activation a fixed large step can jump to |v| ~ 1e100 in a few
    steps once margins grow, so each step is accepted only if the risk does not increase.
    Stops early when no halving decreases the risk (a numerical stationary point) or the risk is 0.

    ``obj(params)`` → (risk, grads). Returns (params, final risk, steps taken).
    """
    r, grads = obj(params)
    t = 0
    for t in range(1, steps + 1):
        step = eta
        for _ in range(40):
            trial = [p - step * g for p, g in zip(params, grads)]
            with np.errstate(over="ignore", invalid="ignore"):
                r2, g2 = obj(trial)
            if np.isfinite(r2) and r2 <= r and all(np.all(np.isfinite(g)) for g in g2):
                break
            step *= 0.5
        else:
            return params, r, t - 1
        params, r, grads = trial, r2, g2
        if r == 0.0:
            break
    return params, r, t


def fit_v(s: Setting, A: np.ndarray, X: np.ndarray, y: np.ndarray, omega: float = 1e-3, eta: float = 10.0,
          steps: int = 300, seed: int = 0, method: str = "gd") -> np.ndarray:
    """Train ṽ alone with Â frozen, from ṽ(0) ~ N(0, ω² I_d) (Section 5, fine-tuning (Ẽ)).

    method ``"gd"``: ``steps`` GD steps of size η, safeguarded by :func:`descend`;
    ``"lbfgs"``: scipy L-BFGS with at most ``steps`` iterations. Returns ṽ: (d,).
    """
    S = model.attention(s, A)
    v = np.random.default_rng(seed).normal(0.0, omega, size=s.d)
    X = np.asarray(X, dtype=np.float64)
    if method == "lbfgs":
        with np.errstate(over="ignore", invalid="ignore"):
            res = minimize(lambda w: risk_and_grad_v(s, S, w, X, y), v, jac=True, method="L-BFGS-B",
                           options={"maxiter": steps})
        return res.x
    if method != "gd":
        raise ValueError(f"method must be 'gd' or 'lbfgs', got {method!r}")

    def obj(p):
        r, g = risk_and_grad_v(s, S, p[0], X, y)
        return r, [g]

    return descend(obj, [v], eta, steps)[0][0]


def fit_scratch(s: Setting, X: np.ndarray, y: np.ndarray, omega: float = 1e-3, eta: float = 10.0,
                steps: int = 1200, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Train A (off-diagonal) and v together on the Ñ samples from the realistic initialisation
    (the upstream algorithm with only the downstream data), by the safeguarded GD of
    :func:`descend`.  → (A, v)."""
    rng = np.random.default_rng(seed)
    A = init_attention(s, omega, rng)
    v = rng.normal(0.0, omega, size=s.d)
    X = np.asarray(X, dtype=np.float64)

    def obj(p):
        r, gA, gv = model.risk_and_grad(s, p[0], p[1], X, y)
        return r, [gA, gv]

    A, v = descend(obj, [A, v], eta, steps)[0]
    return A, v


# ---- evaluation ------------------------------------------------------------------------------
@dataclass(frozen=True)
class TestSet:
    """Fresh downstream samples with their labelling f: X (N, D, d), y (N,), f (N,)."""

    X: np.ndarray
    y: np.ndarray
    f: np.ndarray

    @classmethod
    def draw(cls, s: Setting, N: int, seed: int) -> "TestSet":
        b = data.sample(s, N, seed=seed)
        return cls(b.X, b.y, data.labelling(s, b.X))


def accuracies(F: np.ndarray, test: TestSet) -> dict[str, float]:
    """acc_f = 1 − Pr[f F ≤ 0 | f ≠ 0] (Theorem 5.1's quantity) and acc_y = Pr[y F > 0].

    A non-finite output (overflow of σ, inf − inf) counts as an error, never as a success."""
    F = np.where(np.isfinite(F), F, 0.0)
    e = data.errors(F, test.y, test.f)
    return {"acc_f": 1.0 - e["err_f"], "acc_y": 1.0 - e["err_y"]}


# ---- experiments -----------------------------------------------------------------------------
@dataclass(frozen=True)
class TransferOptions:
    """Sizes and hyper-parameters of one transfer experiment."""

    Ns: tuple[int, ...] = (8, 16, 32, 64, 128, 256)
    seeds: int = 5
    N_test: int = 4096
    omega: float = 1e-3
    eta: float = 10.0
    steps_v: int = 300
    steps_scratch: int = 1200
    method: str = "gd"
    logreg_max_N: int = 4096
    scratch_max_N: int = 1024


def _forward(s: Setting, A: np.ndarray, v: np.ndarray, X: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return model.forward(s, A, v, X)


def _progress(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def transfer_curves(s: Setting, attentions: dict[str, np.ndarray], opts: TransferOptions = TransferOptions(),
                    baselines: Sequence[str] = ("scratch", "logreg"), test_seed: int = 10_000,
                    progress: Callable[[str], None] | None = _progress) -> pd.DataFrame:
    """Accuracy against Ñ for each frozen Â in ``attentions`` and each baseline, on the downstream
    task of ``s`` (the *upstream* setting; the downstream one is :func:`downstream_setting`).

    Repeat k at size Ñ trains every method on the same Ñ samples (seed 1000·k + Ñ) with ṽ(0) from
    seed k; all are tested on one fresh test set (seed ``test_seed``), so the error bars are the
    spread over training samples and initialisations. Returns a tidy DataFrame: D, method, N_tilde,
    seed, acc_f, acc_y.
    """
    sd = downstream_setting(s)
    test = TestSet.draw(sd, opts.N_test, seed=test_seed)
    rows = []
    t0 = time.perf_counter()
    for N in opts.Ns:
        for seed in range(opts.seeds):
            tr = data.sample(sd, N, seed=1000 * seed + N)
            for name, A in attentions.items():
                v = fit_v(sd, A, tr.X, tr.y, opts.omega, opts.eta, opts.steps_v, seed=seed, method=opts.method)
                rows.append(dict(method=name, N_tilde=N, seed=seed, **accuracies(_forward(sd, A, v, test.X), test)))
            if "scratch" in baselines and N <= opts.scratch_max_N:
                A, v = fit_scratch(sd, tr.X, tr.y, opts.omega, opts.eta, opts.steps_scratch, seed=seed)
                rows.append(dict(method="scratch", N_tilde=N, seed=seed, **accuracies(_forward(sd, A, v, test.X), test)))
            if "logreg" in baselines and N <= opts.logreg_max_N:
                lr = fit_logreg_cv(tr.X, tr.y, seed=seed)
                rows.append(dict(method="logreg", N_tilde=N, seed=seed, **accuracies(lr.decision(test.X), test)))
        if progress:
            progress(f"transfer D={s.D}: N~={N} done ({time.perf_counter() - t0:.0f} s)")
    df = pd.DataFrame(rows)
    df.insert(0, "D", s.D)
    return df


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Mean ± std over seeds of acc_f and acc_y per (D, method, Ñ)."""
    g = df.groupby(["D", "method", "N_tilde"], sort=True)
    out = g[["acc_f", "acc_y"]].agg(["mean", "std", "count"])
    out.columns = [f"{a}_{b}" for a, b in out.columns]
    return out.reset_index()


def samples_to_target(summary: pd.DataFrame, target: float = 0.9, column: str = "acc_f_mean") -> pd.DataFrame:
    """The Ñ each method needs for a mean accuracy ≥ ``target``: the first crossing of the mean curve,
    interpolated linearly in log Ñ. ``reached`` is False (and N_target NaN) when the largest Ñ tried
    falls short; ``N_max`` is that largest Ñ (a lower bound on the need). ``at_smallest``: reached
    already at the smallest Ñ, so N_target = Ñ_min is an upper bound on the need."""
    rows = []
    for (D, method), g in summary.groupby(["D", "method"], sort=True):
        g = g.sort_values("N_tilde")
        N, a = g["N_tilde"].to_numpy(float), g[column].to_numpy(float)
        hit = np.flatnonzero(a >= target)
        if len(hit) == 0:
            Nt = np.nan
        elif hit[0] == 0:
            Nt = N[0]
        else:
            k = hit[0]
            x0, x1 = np.log(N[k - 1]), np.log(N[k])
            Nt = float(np.exp(x0 + (target - a[k - 1]) / (a[k] - a[k - 1]) * (x1 - x0)))
        rows.append(dict(D=D, method=method, target=target, N_target=Nt, reached=len(hit) > 0,
                         at_smallest=len(hit) > 0 and hit[0] == 0, N_max=N.max()))
    return pd.DataFrame(rows)


def loglog_slopes(target_df: pd.DataFrame) -> pd.DataFrame:
    """Least-squares slope of log Ñ_target against log D per (target, method), over the D's where the
    target was reached (NaN with fewer than two). A slope near 0 is polylog-like (Theorem 5.1); a
    clearly positive one is D^{Ω(1)} (Theorem 5.2). ``n_unreached`` counts the D's where even the
    largest Ñ fell short (their need is larger than any Ñ tried, so the slope understates it)."""
    rows = []
    for (target, method), g in target_df.groupby(["target", "method"], sort=True):
        r = g[g["reached"]]
        slope = float(np.polyfit(np.log(r["D"]), np.log(r["N_target"]), 1)[0]) if r["D"].nunique() >= 2 else np.nan
        rows.append(dict(target=target, method=method, slope=slope, n_D=int(r["D"].nunique()),
                         n_unreached=int((~g["reached"]).sum())))
    return pd.DataFrame(rows)


# ---- pictures --------------------------------------------------------------------------------
def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_curves(summary: pd.DataFrame, path: str | Path, column: str = "acc_f", target: float | None = 0.9) -> Path:
    """Accuracy (mean ± std over seeds) against Ñ (log axis), one panel per D, one line per method."""
    plt = _pyplot()
    Ds = sorted(summary["D"].unique())
    fig, axes = plt.subplots(1, len(Ds), figsize=(4.6 * len(Ds), 3.8), squeeze=False, sharey=True)
    for ax, D in zip(axes[0], Ds):
        for method, g in summary[summary["D"] == D].groupby("method", sort=False):
            g = g.sort_values("N_tilde")
            ax.errorbar(g["N_tilde"], g[f"{column}_mean"], yerr=g[f"{column}_std"].fillna(0), marker="o",
                        ms=3, capsize=2, label=method)
        if target is not None:
            ax.axhline(target, color="grey", lw=0.8, ls=":")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("downstream samples Ñ")
        ax.set_title(f"D = {D}")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("test accuracy (vs f)" if column == "acc_f" else "test accuracy (vs y)")
    axes[0][-1].legend(fontsize=8, loc="lower right")
    fig.suptitle("Transfer with a frozen attention (Theorems 5.1, 5.2)")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_samples_to_target(target_df: pd.DataFrame, path: str | Path, target: float | None = None) -> Path:
    """Ñ needed for the target accuracy against D, log-log (the first target in the table unless
    given). Filled circles: interpolated crossing; filled ▼: reached already at the smallest Ñ (an
    upper bound); open ▲ at the largest Ñ tried: never reached (a lower bound). Methods are shifted
    slightly along D so that equal values stay visible."""
    plt = _pyplot()
    target = float(target_df["target"].iloc[0]) if target is None else target
    target_df = target_df[np.isclose(target_df["target"], target)]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    groups = list(target_df.groupby("method", sort=True))
    for i, (method, g) in enumerate(groups):
        g = g.sort_values("D")
        color = f"C{i}"
        x = g["D"].to_numpy(float) * 2.0 ** (0.05 * (i - (len(groups) - 1) / 2))
        reached, small = g["reached"].to_numpy(bool), g["at_smallest"].to_numpy(bool)
        y = np.where(reached, g["N_target"], g["N_max"])
        ax.plot(x[reached], y[reached], color=color, label=method)
        ax.scatter(x[reached & ~small], y[reached & ~small], marker="o", color=color)
        ax.scatter(x[small], y[small], marker="v", color=color)
        ax.scatter(x[~reached], y[~reached], marker="^", facecolors="none", edgecolors=color)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("D (number of patches)")
    ax.set_ylabel(f"Ñ for accuracy ≥ {target:g}")
    ax.set_title("● crossing   ▼ reached at the smallest Ñ   △ not reached (> largest Ñ)", fontsize=8)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


# ---- the whole experiment ----------------------------------------------------------------------
def setting_at(s: Setting, D: int) -> Setting:
    """``s`` at another number of patches D: "the same settings" — q, ν, β, τ, p and C kept; d = D and
    σ² = 1/d re-derived when ``s`` used those defaults (Simplification 3.1, ‖ξ‖ ≈ ‖w*‖). An explicit
    partition cannot move to another D, so it becomes ``"blocks"``.

    q is kept (not rescaled to C²/D) so that only D changes across a scan: at D = 16 the default
    C²/D would give q = 1 (every patch a ±w*), a different problem.
    """
    kw = dict(d=None if s.d == s.D else s.d, sigma2=None if s.sigma2 == 1.0 / s.d else s.sigma2)
    part = s.partition if isinstance(s.partition, str) else "blocks"
    return Setting(D=D, C=s.C, q=s.q, p=s.p, nu=s.nu, beta=s.beta, tau=s.tau, partition=part,
                   partition_seed=s.partition_seed, **kw)


def _cache_key(s: Setting, N: int, steps: int, eta: float, omega: float, seed: int) -> str:
    part = s.partition if isinstance(s.partition, str) else "explicit"
    return (f"upstream_D{s.D}_C{s.C}_d{s.d}_q{s.q:g}_nu{s.nu:g}_beta{s.beta:g}_tau{s.tau:g}_{part}{s.partition_seed}"
            f"_feat{s.feature if isinstance(s.feature, int) else 'vec'}_N{N}_steps{steps}_eta{eta:g}_omega{omega:g}_seed{seed}.npz")


def pretrained_attention(s: Setting, N: int, steps: int, eta: float, omega: float, seed: int = 0,
                         cache: str | Path | None = None) -> tuple[np.ndarray, dict]:
    """Â pre-trained upstream (:func:`pretrain`), read from / written to ``cache`` (an .npz per
    setting and options) so that the downstream experiment can be re-run without pre-training.
    Returns (Â, info) with info: status, steps, test_err_f, association (own sets), wall_s, cached."""
    from ..model import association

    path = Path(cache) / _cache_key(s, N, steps, eta, omega, seed) if cache is not None else None
    if path is not None and path.exists():
        z = np.load(path, allow_pickle=False)
        info = {k: z[k].item() for k in z.files if k != "A"}
        info["cached"] = True
        return np.array(z["A"]), info
    t = time.perf_counter()
    res = pretrain(s, N=N, eta=eta, steps=steps, omega=omega, seed=seed)
    last = res.trajectory.iloc[-1]
    info = dict(status=str(res.status), steps=int(last["step"]), test_err_f=float(last.get("test_err_f", np.nan)),
                association=association(s, res.A), wall_s=time.perf_counter() - t)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, A=res.A, **{k: np.asarray(v) for k, v in info.items()})
    info["cached"] = False
    return res.A, info


def run(s: Setting, Ds: Iterable[int] = (16, 32, 64), opts: TransferOptions = TransferOptions(),
        upstream_N: int = 16384, upstream_steps: int = 1200, upstream_eta: float = 10.0,
        methods: Sequence[str] = ("pretrained", "init", "other-partition", "scratch", "logreg"),
        targets: Sequence[float] = (0.9, 0.95), out: str | Path | None = None,
        progress: Callable[[str], None] | None = _progress, cache: str | Path | None = None):
    """Pre-train upstream at each D (or read Â from ``cache``, default ``out/upstream_cache``), then
    the transfer curves and the Ñ-to-target table.

    Returns (raw, summary, target_df, slopes, upstream) DataFrames; with ``out`` writes them (see
    :func:`report`) and ``transfer_upstream.csv`` there.
    """
    if cache is None and out is not None:
        cache = Path(out) / "upstream_cache"
    raws, ups = [], []
    for D in Ds:
        sD = setting_at(s, D)
        attn: dict[str, np.ndarray] = {}
        for name in ("pretrained", "other-partition"):
            if name not in methods:
                continue
            up_s = sD if name == "pretrained" else sD.replace(partition="random", partition_seed=sD.partition_seed + 1)
            A, info = pretrained_attention(up_s, upstream_N, upstream_steps, upstream_eta, opts.omega, 0, cache)
            info = dict(D=D, method=name, association_blocks=association_of(sD, A), **info)
            ups.append(info)
            if progress:
                progress(f"upstream D={D} {name}: status {info['status']}, association (own sets) "
                         f"{info['association']:.2f}, with the downstream sets {info['association_blocks']:.2f}, "
                         f"err_f {info['test_err_f']:.3f}, {info['wall_s']:.0f} s{' (cached)' if info['cached'] else ''}")
            attn[name] = A
        if "init" in methods:
            attn["init"] = init_attention(sD, opts.omega, np.random.default_rng(12345))
        if "oracle" in methods:
            attn["oracle"] = oracle_attention(sD)
        baselines = [m for m in ("scratch", "logreg") if m in methods]
        raws.append(transfer_curves(sD, attn, opts, baselines=baselines, progress=progress))
    raw = pd.concat(raws, ignore_index=True)
    upstream = pd.DataFrame(ups)
    summary, tgt, slopes = report(raw, out, targets)
    if out is not None:
        upstream.to_csv(Path(out) / "transfer_upstream.csv", index=False)
    return raw, summary, tgt, slopes, upstream


def association_of(s: Setting, A: np.ndarray) -> float:
    """Definition 2.2's association of Â with the sets of ``s``."""
    from ..model import association

    return association(s, A)


def report(raw: pd.DataFrame, out: str | Path | None = None, targets: Sequence[float] = (0.9, 0.95)):
    """From the tidy per-seed table (possibly several runs concatenated): the summary, the Ñ-to-target
    table and the log-log slopes; with ``out`` writes ``transfer_raw.csv``, ``transfer_summary.csv``,
    ``transfer_target.csv``, ``transfer_slopes.csv``, ``transfer_curves.png``, ``transfer_target.png``."""
    summary = summarize(raw)
    tgt = pd.concat([samples_to_target(summary, t) for t in targets], ignore_index=True)
    slopes = loglog_slopes(tgt)
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        for name, df in (("raw", raw), ("summary", summary), ("target", tgt), ("slopes", slopes)):
            df.to_csv(out / f"transfer_{name}.csv", index=False)
        plot_curves(summary, out / "transfer_curves.png", target=targets[0])
        plot_samples_to_target(tgt, out / "transfer_target.png")
    return summary, tgt, slopes


# ---- CLI -------------------------------------------------------------------------------------
QUICK = dict(Ds=(16, 32), Ns=(8, 16, 32, 64, 128), seeds=3, N_test=2048, upstream_N=8192, upstream_steps=400,
             logreg_max_N=512, scratch_max_N=128)
# The sizes of the reported run (about 15 min of pre-training at D = 64 and 25 min downstream on a
# busy 2-core machine; pre-trained Â are cached under OUT/upstream_cache).
FULL = dict(Ds=(16, 32, 64), Ns=(8, 16, 32, 64, 128, 256, 512, 1024), seeds=3, N_test=8192,
            upstream_N=16384, upstream_steps=1200, logreg_max_N=1024, scratch_max_N=512)


def _int_list(text: str) -> tuple[int, ...]:
    try:
        vals = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not vals or any(v < 1 for v in vals):
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return vals


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m theorydyn.transfer",
                                 description="Transfer with a frozen attention: accuracy vs Ñ and Ñ-to-target vs D "
                                             "(Theorems 5.1, 5.2). Quick by default; --full for the report sizes.")
    add_setting_arguments(ap)
    ap.add_argument("--full", action="store_true", help="D in {16,32,64}, Ñ up to 1024, 3 seeds, full pre-training")
    ap.add_argument("--Ds", type=_int_list, help="comma-separated D values (each must be divisible by C)")
    ap.add_argument("--Ns", type=_int_list, help="comma-separated downstream sample sizes Ñ")
    ap.add_argument("--seeds", type=positive(int, "--seeds"), help="repeats per Ñ")
    ap.add_argument("--N-test", type=positive(int, "--N-test"), help="fresh test samples")
    ap.add_argument("--upstream-N", type=positive(int, "--upstream-N"), help="pre-training samples")
    ap.add_argument("--upstream-steps", type=positive(int, "--upstream-steps"), help="pre-training GD steps")
    ap.add_argument("--eta", type=positive(float, "--eta"), default=10.0, help="GD step size (default 10)")
    ap.add_argument("--omega", type=positive(float, "--omega"), default=1e-3, help="initialisation scale ω")
    ap.add_argument("--steps-v", type=positive(int, "--steps-v"), default=300, help="fine-tuning steps for ṽ")
    ap.add_argument("--method", choices=("gd", "lbfgs"), default="gd", help="optimiser of ṽ")
    ap.add_argument("--methods", default="pretrained,init,other-partition,scratch,logreg",
                    help=f"comma-separated subset of {','.join(METHODS)}")
    ap.add_argument("--target", default="0.9,0.95", help="target accuracies, comma-separated (each in (0, 1); "
                    "the first is plotted)")
    ap.add_argument("--out", default="runs/transfer", help="output folder (CSV + PNG; default runs/transfer)")
    ap.add_argument("--cache", default=None, help="folder of pre-trained Â (.npz; default OUT/upstream_cache)")
    args = ap.parse_args(argv)
    cfg = dict(FULL if args.full else QUICK)
    for k in ("Ds", "Ns", "seeds"):
        if getattr(args, k) is not None:
            cfg[k] = getattr(args, k)
    for k, a in (("N_test", "N_test"), ("upstream_N", "upstream_N"), ("upstream_steps", "upstream_steps")):
        if getattr(args, a) is not None:
            cfg[k] = getattr(args, a)
    try:
        targets = tuple(float(x) for x in args.target.split(",") if x.strip())
    except ValueError:
        fail(f"--target: expected comma-separated numbers, got {args.target!r}")
    if not targets or not all(0 < x < 1 for x in targets):
        fail(f"--target: each must lie strictly between 0 and 1, got {args.target!r}")
    methods = tuple(m.strip() for m in args.methods.split(",") if m.strip())
    bad = [m for m in methods if m not in METHODS]
    if bad or not methods:
        fail(f"--methods: each must be one of {', '.join(METHODS)}, got {args.methods!r}")
    s = setting_from_args(args)
    for D in cfg["Ds"]:
        if D % s.C or D <= s.C:
            fail(f"--Ds: each D must be a multiple of C={s.C} and larger than it, got D={D}")
        try:
            setting_at(s, D)
        except ValueError as e:
            fail(f"--Ds: D={D}: {e}")
    opts = TransferOptions(Ns=tuple(cfg["Ns"]), seeds=cfg["seeds"], N_test=cfg["N_test"], omega=args.omega,
                           eta=args.eta, steps_v=args.steps_v, method=args.method,
                           logreg_max_N=cfg["logreg_max_N"], scratch_max_N=cfg["scratch_max_N"])
    raw, summary, tgt, slopes, upstream = run(s, cfg["Ds"], opts, upstream_N=cfg["upstream_N"],
                                              upstream_steps=cfg["upstream_steps"], upstream_eta=args.eta,
                                              methods=methods, targets=targets, out=args.out, cache=args.cache)
    with pd.option_context("display.width", 160, "display.max_rows", 200):
        print(summary.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
        print(tgt.to_string(index=False))
        print(slopes.to_string(index=False))
    print(f"wrote {args.out}/transfer_*.csv, transfer_curves.png, transfer_target.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
