"""``python -m theorydyn.simulate``: GD on N samples with the full D×D attention (Theorem 4.2).

Writes ``trajectory.csv``, ``summary.json`` and ``figure4.png`` into ``--out``. Exit status 0 on
success, 1 when the run diverged (what was recorded up to there is written all the same; the
message names the step) or an output could not be written (a full disk: every file is written
atomically, so the earlier one is left as it was), 2 on bad input (before any work).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")

from ..cli import (
    ArgumentParser,
    add_common_arguments,
    add_setting_arguments,
    fail,
    guard_memory,
    number,
    output_dir,
    positive,
    probe_output,
    setting_from_args,
    write_output,
)
from ..limits import SIM_STEPS_MAX
from ..plotting import save
from .memory import simulate_memory
from .plot import plot_figure4
from .run import simulate, symmetry_breaking

PROG = "python -m theorydyn.simulate"


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(
        prog=PROG,
        description="GD on N samples with the full D×D attention (Theorem 4.2); "
        "writes trajectory.csv, summary.json and figure4.png.",
    )
    add_setting_arguments(ap)
    g = ap.add_argument_group("simulation")
    g.add_argument("--N", type=positive(int, "--N"), default=16384, help="training samples (default %(default)s)")
    g.add_argument("--eta", type=positive(float, "--eta"), default=10.0, help="step size (default %(default)s)")
    g.add_argument(
        "--steps",
        type=number(int, "--steps", low=0, high=SIM_STEPS_MAX),
        default=1200,
        help=f"GD steps, 0..{SIM_STEPS_MAX:.0e} (default %(default)s)",
    )
    g.add_argument("--omega", type=positive(float, "--omega", allow_zero=True), default=1e-3, help="init scale ω")
    g.add_argument("--record-every", type=positive(int, "--record-every"), default=10, help="record every k steps")
    g.add_argument("--dtype", choices=("float64", "float32"), default="float32", help="storage of X")
    g.add_argument("--n-test", type=positive(int, "--n-test"), default=8192, help="fresh test samples")
    g.add_argument(
        "--dense-until",
        type=positive(int, "--dense-until", allow_zero=True),
        default=40,
        help="also record every step up to this one (default %(default)s: resolves phase I)",
    )
    g.add_argument("--force", action="store_true", help="run even where the memory estimate exceeds the machine's")
    add_common_arguments(ap, seed=0, out="runs/simulate")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    s = setting_from_args(args, PROG)
    guard_memory(simulate_memory(s.D, s.C, s.d, args.N, args.n_test, args.dtype), force=args.force, prog=PROG)
    out = output_dir(args.out)
    files = [out / "trajectory.csv", out / "summary.json", out / "figure4.png"]
    for path in files:
        probe_output(path, "--out", PROG)  # a link, a folder or a full disk is refused before any work
    try:
        res = simulate(
            s,
            N=args.N,
            eta=args.eta,
            steps=args.steps,
            omega=args.omega,
            seed=args.seed,
            record_every=args.record_every,
            dtype=args.dtype,
            n_test=args.n_test,
            progress=not args.quiet,
            dense_until=args.dense_until,
        )
    except ValueError as e:
        fail(str(e), PROG)
    # each file atomically: a kill or a full disk leaves the earlier file or the new one, never a torn one
    write_output(files[0], lambda t: res.trajectory.to_csv(t, index=False), PROG)
    summary = res.summary()
    summary["symmetry_breaking_final"] = symmetry_breaking(s, res.A)
    text = json.dumps(summary, indent=2, default=str)
    write_output(files[1], lambda t: t.write_text(text), PROG)
    fig = plot_figure4(res)
    write_output(files[2], lambda t: save(fig, t), PROG)
    print(
        f"{res.status}{' — ' + res.message if res.message else ''}; {len(res.trajectory)} records in "
        f"{res.seconds:.1f} s -> {out}/trajectory.csv, summary.json, figure4.png"
    )
    eta = float(args.eta)
    steps = res.phases.in_steps(eta)
    ph = res.phases
    print("phases (in GD steps): " + ", ".join(f"{k}={'—' if v is None else f'{v:.4g}'}" for k, v in steps.items()))
    at = "—" if ph.cos_v_min_s is None else f"{ph.cos_v_min_s / eta:.4g}"  # None when the run diverged at once
    print(f"association peak {ph.assoc_peak}, cos(v̂,w*) min {ph.cos_v_min} at step {at}")
    return 0 if res.ok else 1


if __name__ == "__main__":
    sys.exit(main())
