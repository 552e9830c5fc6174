"""Figure 2's training (docs/theory.md §7): full-batch Adam on Gaussian CNN-labelled data.

Data: :func:`theorydyn.core.data.sample_gaussian_cnn` with the partition of Figure 2 (D = 16 patches on
a 4 × 4 grid, C = 4, the spatially localized 2 × 2 tiles, :func:`~theorydyn.positional.model.figure2_setting`).
Training: full-batch Adam on the empirical logistic risk mean ℓ(y F(X)), ℓ(m) = log(1 + e^{−m}),
in float32 (``dtype``) on CPU; the test error Pr[y F ≤ 0] on a fresh sample is recorded along the
way, with Definition 2.2 (:func:`theorydyn.core.model.association`, diagonal included) and
:func:`~theorydyn.positional.model.block_contrast` of the Gram matrix (PᵀP or Â).

Sizes and hyper-parameters: :class:`~theorydyn.positional.config.PositionalConfig`, its named runs
:data:`~theorydyn.positional.config.QUICK_RUN` (the ledger default and ``figures/figure2.svg``: N = 4096,
1000 Adam steps, the horizon of the paper's Figure 2) and ``FULL_RUN`` (N = 8192, 4000 steps).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import data
from ..core.model import association
from ..core.setting import Setting
from .config import FULL, FULL_RUN, POSITIONAL_DEFAULTS, QUICK, QUICK_RUN, PositionalConfig
from .model import KINDS, _torch, block_contrast, init_torch_params, set_rows

_D = POSITIONAL_DEFAULTS  # the library's defaults of train(): one place

__all__ = ["FULL", "QUICK", "TrainRun", "run", "sample", "train"]  # FULL, QUICK: the former dictionaries, kept


@dataclass
class TrainRun:
    """One training run.

    Attributes:
        kind, seed: the model and the seed (same seed: same data, same init, same numbers).
        steps: (R,) the Adam steps at which the curve was recorded (0 = init, last = ``n_steps``).
        test_err: (R,) Pr[y F ≤ 0] on the test sample at those steps.
        train_loss: (R,) empirical logistic risk at those steps.
        assoc_curve, contrast_curve: (R,) Definition 2.2 and :func:`block_contrast` of the Gram
            (PᵀP or Â) at those steps.
        final_err: test error at the end.
        gram: (D, D) learned PᵀP (positional) or Â with diagonal β (T).
        gram_init: (D, D) the same matrix at initialisation.
        logits: (D, D) the learned logits entering the softmax.
        assoc, assoc_init, assoc_logits: Definition 2.2 on gram, gram_init, logits.
        contrast, contrast_init, contrast_logits: :func:`block_contrast` of the same three.
        some_set_logits: fraction of rows of the logits whose Top-C is some set (:func:`set_rows`).
        moved: ‖gram − gram_init‖_F / ‖gram_init‖_F, how far training moved the Gram.
        linear_err: test error of sign Σ_j ⟨w*, X_j⟩, the uniform-attention (GLM) plateau.
        params: sizes and hyper-parameters.
    """

    kind: str
    seed: int
    steps: np.ndarray
    test_err: np.ndarray
    train_loss: np.ndarray
    assoc_curve: np.ndarray
    contrast_curve: np.ndarray
    final_err: float
    gram: np.ndarray
    gram_init: np.ndarray
    logits: np.ndarray
    assoc: float
    assoc_init: float
    assoc_logits: float
    contrast: float
    contrast_init: float
    contrast_logits: float
    some_set_logits: float
    moved: float
    linear_err: float
    params: dict[str, Any] = field(default_factory=dict)


def sample(s: Setting, N: int, N_test: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Train and test samples of Figure 2's data from one generator seeded with ``seed``.

    Returns X: (N, D, d), y: (N,), X_test: (N_test, D, d), y_test: (N_test,); y ∈ {−1, +1}.
    """
    rng = np.random.default_rng(int(seed))
    X, y = data.sample_gaussian_cnn(s, N, seed=rng)
    Xt, yt = data.sample_gaussian_cnn(s, N_test, seed=rng)
    return X, y, Xt, yt


def train(
    s: Setting,
    kind: str,
    N: int,
    steps: int,
    seed: int,
    *,
    N_test: int = _D.N_test,
    lr: float = _D.lr,
    record_every: int = _D.record_every,
    omega: float = _D.omega,
    d_p: int | None = _D.d_p,
    dtype: str = _D.dtype,
    p_std: float = _D.p_std,
) -> TrainRun:
    """Train one model on Figure 2's data with full-batch Adam; deterministic per ``seed``.

    Args:
        s: the setting (:func:`figure2_setting` for the paper's).
        kind: ``"positional"`` or ``"T"`` (module docstring).
        N, N_test: training and test samples (same ``seed`` → same data for both kinds).
        steps: Adam steps (full batch); ``record_every``: spacing of the recorded curve.
        lr: Adam learning rate; omega, d_p, p_std: see :func:`init_torch_params`.
        dtype: ``"float32"`` (default: half the time of float64 on CPU) or ``"float64"``; the data
            are drawn in float64 either way, so both see the same sample.

    Returns:
        A :class:`TrainRun`.

    Raises:
        ValueError: on a bad size or an unknown kind.
    """
    torch = _torch()
    # the rules of PositionalConfig's fields (omega, p_std, kind: init_torch_params checks them)
    PositionalConfig.check_values(N=N, N_test=N_test, record_every=record_every, steps=steps, lr=lr, dtype=dtype)
    tdt = getattr(torch, dtype)
    X, y, Xt, yt = sample(s, N, N_test, seed)
    linear_err = float(np.mean(yt * (Xt @ s.w_star).sum(axis=1) <= 0))
    X, Xt = (torch.from_numpy(Z).to(tdt) for Z in (X, Xt))
    y, yt = (torch.from_numpy(z.astype(np.float64)).to(tdt) for z in (y, yt))
    prm = init_torch_params(s, kind, seed, omega=omega, d_p=d_p, dtype=tdt, p_std=p_std)
    gram_init = prm.gram(s)
    opt = torch.optim.Adam(list(prm.tensors.values()), lr=lr)
    rec_steps, errs, losses, assocs, contrasts = [], [], [], [], []

    def record(k: int, loss: float) -> None:
        with torch.no_grad():
            F = prm.forward(s, Xt)
        G = prm.gram(s)
        rec_steps.append(k)
        errs.append(float((yt * F <= 0).double().mean()))
        losses.append(loss)
        assocs.append(association(s, G))
        contrasts.append(block_contrast(s, G))

    for k in range(int(steps) + 1):
        opt.zero_grad()
        loss = torch.nn.functional.softplus(-y * prm.forward(s, X)).mean()  # ℓ(m) = log(1 + e^{−m})
        if k % record_every == 0 or k == steps:
            record(k, float(loss.detach()))
        if k == steps:
            break
        loss.backward()
        opt.step()
    gram = prm.gram(s)
    with torch.no_grad():
        logits = prm.logits(s).numpy().astype(np.float64)
    params = dict(
        kind=kind,
        D=s.D,
        C=s.C,
        d=s.d,
        partition=s.partition,
        N=N,
        N_test=N_test,
        steps=steps,
        lr=lr,
        omega=omega,
        p_std=p_std,
        seed=seed,
        dtype=dtype,
    )
    return TrainRun(
        kind=kind,
        seed=int(seed),
        steps=np.array(rec_steps),
        test_err=np.array(errs),
        train_loss=np.array(losses),
        assoc_curve=np.array(assocs),
        contrast_curve=np.array(contrasts),
        final_err=errs[-1],
        gram=gram,
        gram_init=gram_init,
        logits=logits,
        assoc=association(s, gram),
        assoc_init=association(s, gram_init),
        assoc_logits=association(s, logits),
        contrast=block_contrast(s, gram),
        contrast_init=block_contrast(s, gram_init),
        contrast_logits=block_contrast(s, logits),
        some_set_logits=float(np.mean(set_rows(s, logits))),
        moved=float(np.linalg.norm(gram - gram_init) / np.linalg.norm(gram_init)),
        linear_err=linear_err,
        params=params,
    )


def run(
    s: Setting,
    seeds: Iterable[int] = range(5),
    quick: bool = True,
    kinds: Sequence[str] = KINDS,
    progress: Callable[[str], None] | None = None,
    **overrides: Any,
) -> dict[str, list[TrainRun]]:
    """Train every kind at every seed with the QUICK (or FULL) sizes (:data:`~.config.QUICK_RUN`,
    :data:`~.config.FULL_RUN`); ``overrides`` replace fields of that :class:`~.config.PositionalConfig`,
    e.g. the initialisation (``omega``, ``p_std``: :func:`train`)."""
    torch = _torch()
    say = progress or (lambda msg: None)
    cfg = (QUICK_RUN if quick else FULL_RUN).replace(**overrides)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny model: one thread is the fastest, and the machine is shared
    try:
        out: dict[str, list[TrainRun]] = {}
        for kind in kinds:
            out[kind] = []
            for seed in seeds:
                say(f"Figure 2: {kind} seed {seed}")
                out[kind].append(
                    train(
                        s,
                        kind,
                        cfg.N,
                        cfg.steps,
                        seed,
                        N_test=cfg.N_test,
                        lr=cfg.lr,
                        record_every=cfg.record_every,
                        omega=cfg.omega,
                        d_p=cfg.d_p,
                        dtype=cfg.dtype,
                        p_std=cfg.p_std,
                    )
                )
    finally:
        torch.set_num_threads(threads)
    return out
