"""``python -m theorydyn.verify``: the ledger — every numerical check of the paper's claims, one table.

One row per check (:class:`theorydyn.claims.check.Check`), columns :data:`theorydyn.claims.check.LEDGER_COLUMNS`
(claim, quantity, measured, ci_low, ci_high, threshold, verdict, note, route, params). Verdicts:
PASS, FAIL, DEVIATES (the note says what and why), OUT_OF_SCOPE (the note names the assumption),
INFO (a diagnostic the paper does not claim, a definition, or a proxy), NOT_RUN (the claim's own
experiment could not run here; the note gives the command that would run it). Every number that
depends on randomness is a mean over ≥ 5 independent seeds with its 95% t-interval; exact numbers have ci_low = ci_high.

The claims are the records of :data:`theorydyn.claims.CLAIMS` (each module imported on use, one
protocol: ``checks(s, *, quick, progress)``, or an ``EXPERIMENT`` run here and judged by the claim's ``rows``,
and ``memory(s, quick)``; :func:`theorydyn.claims.judge`, docs/adding_a_claim.md), run in registry order.
Their list, each with the statement it checks, is made from the records, never written out by hand:
:func:`theorydyn.claims.listing` (``verify --help`` shows their names as ``--only``'s choices). ``--only``
also takes the groups of :data:`theorydyn.claims.GROUPS`, which keep the earlier ledger's names ``reduced``
and ``theorems`` (their members: :func:`theorydyn.claims.groups_text`).
This module runs, collects, stores and prints; the claims judge.

The command is its flags and a few library steps, each raising and returning: :mod:`.config`
(:class:`~theorydyn.verify.config.LedgerConfig`, the run's options, whose fields are its flags),
:mod:`.files` (where the ledger's files are; a saved ledger read back whole), :mod:`.run` (the memory
estimate, the cluster, the collection, the frame written) and the screen
(:func:`~theorydyn.verify.summary.format_glance`, ``--detail``: :func:`~theorydyn.verify.core.format_detail`).

A claim that is not installed becomes one SKIP row saying so; a claim that raises becomes a
FAIL row with the exception (a check that could not run is not a pass).

Where it lands, and resuming. Each claim is one unit of work: as soon as it finishes, its rows are
committed to ``<out>/results.sqlite`` (default ``runs/ledger/``; :mod:`theorydyn.verify.ledger`),
keyed by the claim, the setting, quick or full, the claim's options, the sources of the code it runs
and the library versions. A rerun reads back every claim whose key matches (checked on reading) and
computes the others, so an interrupted ledger (Ctrl-C, ``kill -9``, a lost machine) loses only the
claim in progress; ``--recompute`` computes everything again. The ledger CSV,
``<out>/verify_D<D>_C<C>[_<every other parameter that differs from its default>]_<quick|full>.csv``
(:func:`ledger_name`), is an export written atomically at the end, with the provenance columns.

``--scheduler ADDRESS`` runs the claims on the Dask cluster ``scan --scheduler`` uses
(:func:`theorydyn.scan.executor.make_executor`), one task per claim; the rows equal a local run's.

Printed: the setting, then the summary, one line per claim of the paper (:mod:`theorydyn.verify.summary`:
the rows grouped by :func:`~theorydyn.verify.summary.paper_claim`, each group decided by one row, a row
marked ``decides=True`` else the first of FAIL > DEVIATES > PASS > OUT_OF_SCOPE > NOT_RUN > INFO), no
line wider than the terminal or 100 columns; the verdict counts, the seconds per claim and the CSV's
path, whole. ``--detail`` prints every row first (:func:`format_table`, the note under every DEVIATES,
OUT_OF_SCOPE, NOT_RUN, FAIL and SKIP row) and the table of seconds (:func:`format_times`). On stderr
one progress bar whose ETA weighs each claim by its last stored time (``--quiet``: none).

``--markdown`` prints, from the ledger CSV written by a previous run, the summary and then every row
as Markdown (:func:`format_markdown`; docs/ledger.md). ``--report`` writes the same ledger as one
self-contained HTML page with the committed figures of each claim (:mod:`theorydyn.verify.report`).

Exit status: 0 unless a row is FAIL (1); 2 on bad input; 1 when the disk fills under the store (the
claims stored so far stay); 130 on Ctrl-C. NOT_RUN, like SKIP, never makes it non-zero.
"""

from typing import TYPE_CHECKING

from ..infra._lazy import lazy_exports

if TYPE_CHECKING:  # the names, for type checkers; at run time .core loads on first use (pandas, the claims)
    from .core import (
        COLUMNS,
        DEFAULT_DIR,
        FALLBACK_WIDTH,
        NOTED,
        PROG,
        collect,
        default_out,
        format_markdown,
        format_measured,
        format_table,
        format_times,
        ledger_name,
        terminal_width,
        wrap,
    )
    from .summary import paper_claim, summarize

__all__ = [
    "COLUMNS",
    "DEFAULT_DIR",
    "FALLBACK_WIDTH",
    "NOTED",
    "PROG",
    "collect",
    "default_out",
    "format_markdown",
    "format_measured",
    "format_table",
    "format_times",
    "ledger_name",
    "paper_claim",
    "summarize",
    "terminal_width",
    "wrap",
]
__getattr__, __dir__ = lazy_exports(__name__)
