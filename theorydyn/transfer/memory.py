"""Peak memory of the transfer experiment (:func:`transfer_memory`), beside the code it describes.

Built from the estimates of the pieces it runs: the reduced Monte Carlo bank
(:func:`theorydyn.reduced.memory.reduced_memory`), the simulator
(:func:`theorydyn.simulate.memory.simulate_memory`) and the downstream samples
(:func:`theorydyn.core.data.sample_memory`); the machinery is :mod:`theorydyn.infra.memory`.
"""

from __future__ import annotations

from ..core.data import sample_memory
from ..infra.memory import BOOL, F64, I8, SMALL, MemoryEstimate, Term
from ..reduced.memory import reduced_memory
from ..simulate.memory import simulate_memory


def transfer_memory(
    D: int,
    C: int,
    d: int | None,
    q: float,
    N_test: int,
    N_train: int,
    *,
    ceiling_samples: int = 20000,
    flow_n_samples: int | None = 2000,
    upstream_N: int | None = None,
) -> MemoryEstimate:
    """Peak of :func:`theorydyn.transfer.experiment.run` at one D (the D's run one after the other).

    The phases at D run in turn, so the peak is the largest of them (the D × D attentions, ≈ 8
    float64 matrices, live throughout):

    * the population references (``ceiling``, ``linear_reference``): feature values of
      ``ceiling_samples`` samples, u (n, D) float64, z (n, D) int8 and three (n, D) boolean masks;
    * the idealized pre-training (``flow_n_samples`` not None): the reduced Monte Carlo bank
      (:func:`reduced_memory`);
    * the finite-sample pre-training (``upstream_N`` not None): :func:`simulate_memory` in float32
      with its default 8192 test samples;
    * the rows: the test set in projected form (z, g: (N_test, D) float64, and its draw's
      u, int8 z and masks) with the (N_test, D) float64 outputs of one evaluation (u, u Sᵀ, σ: 3),
      and the ``N_train`` downstream samples X: (N_train, D, d) (:func:`sample_memory`).
    """
    d = D if d is None else d
    attn = Term("D × D float64 attentions and scores (≈ 8)", 8 * D * D * F64, {"D": D})
    n = int(ceiling_samples)
    phases = [
        MemoryEstimate(
            f"transfer references at D={D}",
            (
                Term(
                    f"feature values of {n} samples: u ({n}, {D}) float64, z int8, 3 masks",
                    n * D * (F64 + I8 + 3 * BOOL),
                    {"D": D},
                ),
                attn,
                SMALL,
            ),
        )
    ]
    if flow_n_samples is not None:
        phases.append(reduced_memory(D, C, q, flow_n_samples) + MemoryEstimate("attentions", (attn,)))
    if upstream_N is not None:
        sim = simulate_memory(D, C, d, upstream_N, 8192, "float32")
        # its N is the upstream sample size (named so that a caller can tell it from the downstream Ñ)
        terms = tuple(
            Term(t.what, t.nbytes, {("upstream_N" if k == "N" else k): v for k, v in t.params.items()})
            for t in sim.terms
        )
        phases.append(MemoryEstimate(f"finite-sample pre-training at D={D}", terms + (attn,)))
    N = int(N_test)
    train = sample_memory(D, C, d, N_train, 8, "N")
    phases.append(
        MemoryEstimate(
            f"transfer rows at D={D}",
            (
                Term(
                    f"test set z, g ({N}, {D}) float64 and its draw's u, int8 z, masks",
                    N * D * (2 * F64 + F64 + I8 + 3 * BOOL),
                    {"N_test": N, "D": D},
                ),
                Term(f"outputs of one evaluation ({N}, {D}) float64 ×3", 3 * N * D * F64, {"N_test": N, "D": D}),
                *train.terms[:-1],
                attn,
                SMALL,
            ),
        )
    )
    return max(phases, key=lambda e: e.total)


def run_memory(base, opts, methods, rule: str) -> MemoryEstimate:
    """The largest :func:`transfer_memory` over the D's of ``opts`` (they run in turn): at each D the
    upstream setting of ``base`` by the q rule ``rule``, the largest Ñ of the methods that run there
    (:meth:`~theorydyn.transfer.config.TransferConfig.runs`), the finite-sample pre-training where it runs."""
    from ..core.setting import setting_at
    from .task import downstream_setting

    ests = []
    for D in opts.Ds:
        s_up = setting_at(base, D, rule)
        sd = downstream_setting(s_up)
        run_at = [m for m in methods if opts.runs(m, D)]
        n_train = max((opts.max_N(m, sd) for m in run_at), default=min(opts.Ns))
        sim = "pretrained-sim" in methods and D <= opts.sim_max_D
        ests.append(
            transfer_memory(
                D,
                s_up.C,
                s_up.d,
                s_up.q,
                opts.N_test,
                n_train,
                ceiling_samples=opts.ceiling_samples,
                flow_n_samples=opts.flow_n_samples if set(methods) & {"pretrained", "other-partition"} else None,
                upstream_N=opts.upstream_N if sim else None,
            )
        )
    return max(ests, key=lambda e: e.total)
