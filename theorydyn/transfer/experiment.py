"""The transfer experiment's runner (Section 5, Theorems 5.1 and 5.2; the package docstring): its
options, one row per (D, method, Ñ, seed) committed to the results store, and the run across D.

Resumable (:func:`run`): each result is one row of the transactional store (:mod:`theorydyn.infra.store`,
``OUT/results.sqlite``, scope ``transfer_rows``) keyed by :func:`row_key`, the sha256 of everything
it depends on (the cache hash of its pre-trained Â and the numerics version included); an
interrupted run loses nothing, a rerun computes only the missing rows, and ``OUT/transfer_rows.csv``
is an export (with provenance), never read back.
"""

from __future__ import annotations

import functools
import json
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..core import data, model
from ..core.logreg import fit_logreg_cv, flatten
from ..core.setting import Setting, setting_at
from ..infra import keyed
from ..infra._progress import progress_bar
from ..infra.keyed import KeyedStore
from ..infra.keys import canonical_json
from ..infra.provenance import NUMERICS_VERSION, provenance
from ..infra.store import ResultStore
from .analysis import report, stop_target, write_table
from .cache import flow_attention, other_partition, pretrained_attention
from .config import FULL, QUICK, TRANSFER_DEFAULTS, TransferConfig, options_from  # noqa: F401 — re-exported
from .fitting import fit_kernel, fit_scratch, fit_v, kernel_outputs
from .sizes import SCOPE_DS, fine_grid  # noqa: F401 — re-exported
from .task import (
    DEFAULT_METHODS,
    FROZEN,
    METHODS,
    ORACLE_GAP,
    TestSet,
    accuracies,
    block_ceiling,
    ceiling,
    downstream_setting,
    init_attention,
    linear_reference,
    oracle_attention,
    outputs_linear,
    outputs_v,
    with_count,
)

#: Learners without attention or the sets: ``kernel`` (:func:`theorydyn.transfer.fitting.fit_kernel`).
GENERIC = ("kernel",)
ALL_METHODS = METHODS + GENERIC  # every method run() accepts


# ---- experiments -----------------------------------------------------------------------------
#: The former name of :class:`~theorydyn.transfer.config.TransferConfig` (claims and tests import it).
TransferOptions = TransferConfig


def train_seed(seed: int, N: int) -> int:
    """Seed of the Ñ training samples of repeat ``seed`` (the same data for every method)."""
    return 1000 * seed + N


def compute_row(
    sd: Setting, method: str, A: np.ndarray | None, N: int, seed: int, opts: TransferConfig, test: TestSet
) -> dict[str, float]:
    """Train one method on the Ñ = ``N`` downstream samples of repeat ``seed`` and test it.

    Frozen methods train ṽ alone (:func:`fit_v`, ṽ(0) from ``seed``); ``scratch`` trains A and v
    (:func:`fit_scratch`); ``logreg`` fits :func:`theorydyn.core.logreg.fit_logreg_cv`; ``kernel`` fits
    :func:`fit_kernel` on the feature values z of the same samples (``data.sample_z`` from the same
    seed draws the same (y, z) as ``data.sample``, whose noise is ⟂ w̃, so z_j = ⟨w̃, X_j⟩ exactly).
    Returns {acc_f, acc_y, wall_s}."""
    t = time.perf_counter()
    if method == "kernel":
        y, _, z = data.sample_z(sd, N, np.random.default_rng(train_seed(seed, N)))
        P, alpha = fit_kernel(z, y, opts.kernel_degree, opts.kernel_ridge)
        F = kernel_outputs(P, alpha, test.z, opts.kernel_degree)
        return dict(**accuracies(F, test), wall_s=time.perf_counter() - t)
    tr = data.sample(sd, N, seed=train_seed(seed, N))
    if method in FROZEN:
        if A is None:
            raise ValueError(f"method {method!r} trains ṽ with a frozen attention: A must be given")
        v = fit_v(sd, A, tr.X, tr.y, opts.omega, opts.eta, opts.steps_v, seed=seed, method=opts.method)
        F = outputs_v(sd, model.attention(sd, A), v, test)
    elif method == "scratch":
        A2, v = fit_scratch(sd, tr.X, tr.y, opts.omega, opts.eta, opts.steps_scratch, seed=seed)
        F = outputs_v(sd, model.attention(sd, A2), v, test)
    elif method == "logreg":
        w, b = fit_logreg_span(tr.X, tr.y, seed=seed)
        F = outputs_linear(sd, w.reshape(sd.D, sd.d), b, test)
    else:
        raise ValueError(f"method must be one of {ALL_METHODS}, got {method!r}")
    return dict(**accuracies(F, test), wall_s=time.perf_counter() - t)


def fit_logreg_span(X: np.ndarray, y: np.ndarray, seed: int = 0) -> tuple[np.ndarray, float]:
    """:func:`theorydyn.core.logreg.fit_logreg_cv` on the Ñ flattened samples Z: (Ñ, D·d), solved in
    their row span. With Zᵀ = Q R (Q: (D·d, r) orthonormal, r ≤ Ñ), the L2 penalty and every
    decision ⟨w, z⟩ see w only through its part in span(Z) (representer theorem; the bias is not
    penalised), so the minimiser is w = Q a with a the minimiser on the features Z Q = Rᵀ: (Ñ, r).
    A held-out fold's rows lie in the span too, so the cross-validation scores, and the λ chosen,
    are the same. L-BFGS from 0 is invariant under the orthogonal change of variables, so the
    iterates are Q times the reduced ones up to rounding. Cost per iteration Ñ·r instead of Ñ·D·d.
    Returns (w: (D·d,), b)."""
    Z = flatten(np.asarray(X, dtype=np.float64))
    Q, R = np.linalg.qr(Z.T)  # reduced mode: Q (D·d, r), R (r, Ñ) with r = min(Ñ, D·d)
    lr = fit_logreg_cv(R.T, y, seed=seed)
    return Q @ lr.w, lr.b


def row_params(D: int, method: str, N: int, seed: int, config: dict) -> str:
    """The canonical JSON of everything one row depends on (the numerics version included)."""
    return canonical_json(dict(D=D, method=method, N=N, seed=seed, config=config, numerics=NUMERICS_VERSION))


def row_key(D: int, method: str, N: int, seed: int, config: dict) -> str:
    """The store key of one result: sha256 of :func:`row_params` (the one key scheme,
    :func:`theorydyn.infra.store.content_key`): results of older numerics, other options or another
    pre-trained Â (its cache hash is in ``config``) are recomputed, never reused."""
    return KeyedStore.key(json.loads(row_params(D, method, N, seed, config)))


#: Kinds of the transfer row columns: a row whose value does not parse is moved aside and recomputed.
TRANSFER_KINDS = {
    "D": "num",
    "N_tilde": "num",
    "seed": "num",
    "acc_f": "num",
    "acc_y": "num",
    "wall_s": "num",
    "prov_numerics_version": "num",
}


_stale = keyed.version_stale("params", "numerics", NUMERICS_VERSION)


def _check(row: dict[str, str], params: Any) -> str | None:
    try:
        if (str(params["D"]), params["method"], str(params["N"]), str(params["seed"])) != (
            row["D"],
            row["method"],
            row["N_tilde"],
            row["seed"],
        ):
            return "invalid: the row's D, method, N_tilde or seed differ from its parameters"
        for c in ("acc_f", "acc_y"):
            if not 0.0 <= float(row[c]) <= 1.0:
                return f"invalid: {c}={row[c]} outside [0, 1]"
        float(row["wall_s"])
    except KeyError as e:
        return f"invalid: no column {e.args[0]!r}"
    except (ValueError, TypeError, AttributeError) as e:
        return f"invalid: {type(e).__name__}: {e}"
    return None


def row_problem(row: dict[str, str]) -> str | None:
    """Why a stored transfer row cannot be trusted, or None (the one validation,
    :func:`theorydyn.infra.keyed.row_problem`): not of other numerics, its key the hash of its own
    ``params``, which must name its D, method, Ñ and seed; the accuracies must lie in [0, 1]."""
    return keyed.row_problem(row, keyed.json_column("params"), _stale, _check)


def _row_config(sd: Setting, method: str, opts: TransferConfig, source: dict) -> dict:
    keep = ("N_test", "omega", "eta", "test_seed")
    cfg = {k: getattr(opts, k) for k in keep}
    if method in FROZEN:
        cfg.update(steps_v=opts.steps_v, fit=opts.method)
    if method == "scratch":
        cfg.update(steps_scratch=opts.steps_scratch)
    if method == "logreg":
        cfg.update(fit="logreg-cv-in-row-span")  # the solver of fit_logreg_span (rounding differs from the full one)
    if method == "kernel":
        cfg.update(fit="krr-onehot", kernel_degree=opts.kernel_degree, kernel_ridge=opts.kernel_ridge)
    return dict(setting=sd.to_dict(), method_opts=cfg, source=source)


def open_rows(out: str | Path) -> ResultStore:
    """The store of the transfer rows of the folder ``out`` (export ``out/transfer_rows.csv``), every row
    checked on loading (:func:`row_problem`, :data:`TRANSFER_KINDS`)."""
    Path(out).mkdir(parents=True, exist_ok=True)
    return KeyedStore(
        Path(out) / "transfer_rows.csv", payload_column="params", stale=_stale, check=_check, kinds=TRANSFER_KINDS
    )


#: the files of a transfer run in OUT that :func:`start_over` sets aside (the store's rows are set aside row by row)
OUTPUT_GLOBS = ("transfer_*.csv", "transfer_*.png", "transfer_*.pdf", "transfer_*.svg")


def start_over(out: Path) -> list[str]:
    """Start a run in ``out`` over (``--fresh``): the earlier transfer tables and figures renamed to
    ``<name>.old-<UTC time>`` (never overwritten), a damaged results store moved aside; the rows of this
    run are set aside in the store's rejected table as they are computed again (``recompute``). Returns
    what was moved, in words (one line each)."""
    from ..infra.atomic import set_aside_all
    from ..infra.store import DB_NAME, move_aside_if_damaged

    said = []
    moved = set_aside_all(sorted({q for g in OUTPUT_GLOBS for q in out.glob(g)}))
    if moved:
        said.append(f"{len(moved)} earlier file(s) moved aside, e.g. {moved[0]}")
    if (aside := move_aside_if_damaged(out / DB_NAME)) is not None:
        said.append(f"the damaged store moved to {aside}")
    return said


def _store(out: str | Path | None) -> ResultStore | _MemoryStore:
    return _MemoryStore() if out is None else open_rows(out)


class _MemoryStore:
    """The in-memory stand-in for a ResultStore (``out=None``)."""

    def __init__(self) -> None:
        self.rows: dict[str, dict] = {}

    def __contains__(self, key: object) -> bool:
        return key in self.rows

    def append(self, row: dict[str, Any]) -> bool:
        self.rows[row["key"]] = {k: str(v) for k, v in row.items()}
        return True

    def remove(self, keys) -> int:
        gone = [k for k in keys if self.rows.pop(k, None) is not None]
        return len(gone)


def attentions_at(
    s_up: Setting, D: int, methods: Sequence[str], opts: TransferConfig, cache: str | Path | None, progress=None
) -> tuple[dict[str, np.ndarray], dict[str, dict], list[dict]]:
    """The frozen Â of each frozen method at D, with their provenance (part of the row keys) and a
    table of upstream diagnostics. ``s_up`` is the upstream setting at D."""
    attn, source, ups = {}, {}, []
    need_flow = any(m in methods for m in ("pretrained", "other-partition"))
    if need_flow:
        g, r, info = flow_attention(s_up, n_samples=opts.flow_n_samples, cache=cache)
        src = dict(
            kind="reduced-flow",
            s_max=info["s_max"],
            n_samples=opts.flow_n_samples,
            gamma=round(g, 10),
            rho=round(r, 10),
            cache=info["cache_sha256"],
        )
        ups.append(
            dict(
                D=D,
                method="pretrained",
                gamma=g,
                rho=r,
                **{k: info[k] for k in ("alpha", "err_f", "T2", "status", "s_max", "cached")},
            )
        )
        if progress:
            progress(
                f"upstream D={D}: reduced flow to s={info['s_max']:g}: γ={g:.3f}, ρ={r:.4f}, "
                f"err_f={info['err_f']:.4f}"
                f"{' (cached)' if info['cached'] else ''}"
            )
        if "pretrained" in methods:
            attn["pretrained"], source["pretrained"] = model.symmetric_attention(s_up, g, r), src
        if "other-partition" in methods:
            attn["other-partition"] = model.symmetric_attention(other_partition(s_up), g, r)
            source["other-partition"] = dict(src, partition_seed=s_up.partition_seed + 1)
    if "pretrained-sim" in methods and D <= opts.sim_max_D:
        A, info = pretrained_attention(s_up, opts.upstream_N, opts.upstream_steps, opts.eta, opts.omega, 0, cache)
        ok = not str(info["status"]).startswith("diverged")
        # a diverged pre-training leaves no Â to transfer; it stays a row of the upstream table (with
        # where and why it diverged), which the ledger reports — never dropped (issue 17)
        if ok:
            attn["pretrained-sim"] = A
            source["pretrained-sim"] = dict(
                kind="simulate",
                N=opts.upstream_N,
                steps=opts.upstream_steps,
                eta=opts.eta,
                omega=opts.omega,
                cache=info["cache_sha256"],
            )
        ups.append(
            dict(
                D=D,
                method="pretrained-sim",
                err_f=info["test_err_f"],
                association=info["association"],
                status=info["status"],
                message=info["message"],
                steps=info["steps"],
                N=opts.upstream_N,
                eta=opts.eta,
                cached=info["cached"],
            )
        )
        if progress:
            progress(
                f"upstream D={D}: finite-sample GD N={opts.upstream_N}, {opts.upstream_steps} steps: "
                f"{info['status']}, association {info['association']:.2f}, err_f {info['test_err_f']:.3f}"
                f"{' (cached)' if info['cached'] else ''}{'' if ok else ' — no Â to transfer: ' + str(info['message'])}"
            )
    if "init" in methods:
        attn["init"] = init_attention(s_up, opts.omega, np.random.default_rng(12345))
        source["init"] = dict(kind="init", omega=opts.omega, rng=12345)
    if "oracle" in methods:
        attn["oracle"] = oracle_attention(s_up)
        source["oracle"] = dict(kind="oracle", gap=ORACLE_GAP)
    return attn, source, ups


def vanishing_eps(D: int) -> float:
    """Theorem 5.1's "test error o(1)" read at D as ε(D) = 1/D, fixed from the paper before its verdict was
    looked at (docs/theory.md §10.10): an error that vanishes with D as o(1) does, on the paper's own scale
    (1/D = 1/d, the data's dimension), harder than the fixed 0.05 at every D ≥ 21, and still resolved by
    the test set at the largest D (N_test/D = 16 expected errors at D = 256 in the quick run).

    Example:
        >>> vanishing_eps(256)
        0.00390625
    """
    return 1.0 / D


def _level_row(
    s_up: Setting, D: int, opts: TransferConfig, a_star: float, target: float, target_theorem: float, target_eps: float
) -> dict:
    """The row of ``transfer_levels.csv`` at D: q, K = q(D − C), a*(D), the targets (the vanishing level
    a*(D) − :func:`vanishing_eps`), the ceiling of Â at init and the linear reference."""
    return dict(
        D=D,
        q=s_up.q,
        K=s_up.q * (D - s_up.C),
        a_star=a_star,
        target=target,
        target_theorem=target_theorem,
        target_eps=target_eps,
        target_vanish=a_star - vanishing_eps(D),
        init_ceiling=ceiling(s_up, 0.0, 0.0, n_samples=opts.ceiling_samples)[0],
        linear_reference=linear_reference(s_up, n_samples=10 * opts.ceiling_samples),
    )


def _stored_result(store, key: str) -> dict:
    r = store.rows[key]
    return dict(acc_f=float(r["acc_f"]), acc_y=float(r["acc_y"]), wall_s=float(r["wall_s"]))


def _row_result(
    store, recompute: bool, work: Callable[[], dict], D: int, method: str, N: int, seed: int, config, prov: dict
) -> dict:
    """acc_f, acc_y, wall_s of one (D, method, Ñ, seed): its stored row's (with ``recompute`` the row is
    removed first), else ``work()``'s, committed at once with its parameters and provenance ``prov``."""
    key = row_key(D, method, N, seed, config)
    if recompute and key in store:
        store.remove([key])
    if key in store:
        return _stored_result(store, key)
    res = {k: float(v) for k, v in work().items()}
    if not store.append(
        dict(
            key=key,
            D=D,
            method=method,
            N_tilde=N,
            seed=seed,
            **res,
            params=row_params(D, method, N, seed, config),
            **prov,
        )
    ):
        return _stored_result(store, key)  # another process committed this row first: its row stands
    return res


def run(
    s: Setting,
    Ds: Iterable[int] = (16, 32, 64, 128, 256),
    opts: TransferConfig = TRANSFER_DEFAULTS,
    upstream_N: int | None = None,
    upstream_steps: int | None = None,
    upstream_eta: float | None = None,
    methods: Sequence[str] = DEFAULT_METHODS,
    targets: Sequence[float] | None = None,
    out: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
    cache: str | Path | None = None,
    compute: Callable[..., dict] = compute_row,
    B: int = 2000,
    bar: bool = False,
    recompute: bool = False,
    plot_format: str = "png",
):
    """The whole transfer experiment, resumable.

    For each D: the upstream setting :func:`setting_at` (q rule ``"count"`` with K = ``opts.count``),
    its a*(D) and target a*(D) − ε, the frozen attentions (:func:`attentions_at`), then for each
    method the log grid of Ñ (with the caps of :class:`~.config.TransferConfig`), ``opts.seeds`` repeats each.
    Every finished (D, method, Ñ, seed) is appended at once to ``out/transfer_rows.csv`` keyed by
    :func:`row_key`; rows already there are read, not recomputed. ``compute`` (default
    :func:`compute_row`) is the per-row work (a parameter so that tests can interrupt it); ``B``
    bootstrap replicates for the intervals. ``recompute``: every row this run needs is computed again
    and replaces its stored row (the pre-trained attentions of ``cache`` are kept; they are validated
    on use).
    ``upstream_*`` override ``opts.upstream_*``; ``targets`` is accepted for compatibility and
    ignored (the targets are ``opts.target`` and a*(D) − ε).

    Returns (raw, summary, target_df, slopes, upstream) DataFrames; with ``out`` also writes the
    CSVs and the two figures there (:func:`report`).
    """
    del targets
    repl: dict[str, Any] = {
        k: v for k, v in (("upstream_N", upstream_N), ("upstream_steps", upstream_steps)) if v is not None
    }
    if upstream_eta is not None and upstream_eta != opts.eta:
        repl["eta"] = upstream_eta
    if repl:
        opts = replace(opts, **repl)
    bad = [m for m in methods if m not in ALL_METHODS]
    if bad:
        raise ValueError(f"methods must be among {ALL_METHODS}, got {bad}")
    base = with_count(s, opts.count) if opts.count is not None else s
    rule = "count" if opts.count is not None else "keep"
    if cache is None and out is not None:
        cache = Path(out) / "upstream_cache"
    store = _store(out)
    prov = {f"prov_{k}": v for k, v in provenance().items()}
    rows: list[dict] = []
    ups: list[dict] = []
    level_rows: list[dict] = []
    # one overall bar (``bar``) over the (D, method) pairs, its ETA from their mean time so far
    Ds = list(Ds)
    pb = progress_bar(bar, len(Ds) * len(methods), "transfer", unit="(D, method)")
    try:
        for D in Ds:
            s_up = setting_at(base, D, rule)
            sd = downstream_setting(s_up)
            a_star = block_ceiling(s_up, n_samples=opts.ceiling_samples)
            target_theorem = a_star - opts.eps
            target_eps = 1.0 - opts.err_eps  # Theorem 5.2's "test error ≤ o(1)" read as ε = err_eps
            target = target_theorem if opts.target is None else opts.target
            level_rows.append(_level_row(s_up, D, opts, a_star, target, target_theorem, target_eps))
            attn, source, up = attentions_at(s_up, D, methods, opts, cache, progress)
            ups += up
            test = TestSet.draw(sd, opts.N_test, seed=opts.test_seed)
            for method in methods:
                if (
                    (method in FROZEN and method not in attn)
                    or (method == "scratch" and D > opts.scratch_max_D)
                    or (method == "logreg" and D > opts.logreg_max_D)
                ):
                    pb.update(1)
                    continue  # pretrained-sim above sim_max_D, scratch / logreg above their max D
                config = _row_config(sd, method, opts, source.get(method, {}))
                n_max = opts.max_N(method, sd)
                # the grid goes on until the highest target this method is judged at is reached
                stop_at = stop_target(method, level_rows[-1])
                after = None  # grid points done since the seed-mean first reached stop_at
                t0 = time.perf_counter()
                for N in [n for n in opts.Ns if n <= n_max]:
                    accs = []
                    for seed in range(opts.seeds):
                        work = functools.partial(compute, sd, method, attn.get(method), N, seed, opts, test)
                        res = _row_result(store, recompute, work, D, method, N, seed, config, prov)
                        rows.append(dict(D=D, method=method, N_tilde=N, seed=seed, **res))
                        accs.append(res["acc_f"])
                    if after is not None:
                        after += 1
                    elif np.mean(accs) >= stop_at:
                        after = 0
                    if after is not None and after >= opts.extra:
                        break
                if progress:
                    progress(f"transfer D={D} {method}: Ñ ≤ {N} ({time.perf_counter() - t0:.0f} s)")
                pb.set_postfix_str(f"D={D} {method}", refresh=False)
                pb.update(1)
    finally:  # the CSV export, also after an interrupted run (the rows are in the store already)
        pb.close()
        if isinstance(store, ResultStore):
            try:
                store.export()
            except (OSError, ValueError) as e:  # e.g. a link or a full disk: the rows stay in the database
                warnings.warn(
                    f"the transfer rows are in {store.db} but their CSV export {store.path} could not be written: {e}",
                    RuntimeWarning,
                    stacklevel=2,
                )
    raw = pd.DataFrame(rows, columns=["D", "method", "N_tilde", "seed", "acc_f", "acc_y", "wall_s"])
    levels = pd.DataFrame(level_rows)
    upstream = pd.DataFrame(ups)
    summary, tgt, slopes = report(raw, levels, out, B=B, plot_format=plot_format)
    if out is not None:
        write_table(upstream, Path(out) / "transfer_upstream.csv")
        write_table(levels, Path(out) / "transfer_levels.csv")
    return raw, summary, tgt, slopes, upstream


def base_setting() -> Setting:
    """The transfer experiment's setting: C = 4, ν = 1/64, β = τ = 1, K = q(D − C) = 8 (module docstring)."""
    return with_count(Setting(D=64, C=4, nu=1 / 64), 8.0)
