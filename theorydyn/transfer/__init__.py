"""Transfer to a downstream task with a frozen attention (Theorems 5.1, 5.2; docs/theory.md §5).

:mod:`.experiment` trains ṽ on Ñ downstream samples with Â frozen (pre-trained, at
initialisation, or pre-trained on another partition) and measures the Ñ needed to reach a target
accuracy across D, resumably; :mod:`.logreg` is the L2 logistic-regression baseline on the
flattened patches. The ledger's rows for Theorems 5.1/5.2 are :mod:`theorydyn.claims.transfer`.
CLI: ``python -m theorydyn.transfer --help``.
"""

from . import logreg
from .experiment import (    ALPHAS, FROZEN, FULL, METHODS, QUICK, Q_RULES, SLOPE_51, TestSet, TransferOptions, _MemoryStore,
    accuracies, attentions_at, base_setting, block_ceiling, ceiling, compute_row, crossing, descend,
    describe_slope, downstream_feature, downstream_setting, fit_scratch, fit_v, flow_attention,
    flow_s_max, growth_fits, init_attention, linear_reference, options_from, oracle_attention,
    other_partition, outputs_linear, outputs_v, plot_curves, plot_samples_to_target, pretrain,
    pretrained_attention, report, risk_and_grad_v, row_key, run, setting_at, slope_bounds,
    summarize, target_table, tie_tolerance, train_seed, with_count)

__all__ = ["logreg", "ALPHAS", "FROZEN", "FULL", "METHODS", "QUICK", "Q_RULES", "SLOPE_51", "TestSet", "TransferOptions", "_MemoryStore", "accuracies", "attentions_at", "base_setting", "block_ceiling", "ceiling", "compute_row", "crossing", "descend", "describe_slope", "downstream_feature", "downstream_setting", "fit_scratch", "fit_v", "flow_attention", "flow_s_max", "growth_fits", "init_attention", "linear_reference", "options_from", "oracle_attention", "other_partition", "outputs_linear", "outputs_v", "plot_curves", "plot_samples_to_target", "pretrain", "pretrained_attention", "report", "risk_and_grad_v", "row_key", "run", "setting_at", "slope_bounds", "summarize", "target_table", "tie_tolerance", "train_seed", "with_count"]
