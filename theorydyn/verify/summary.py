"""The ledger at a glance: one line per claim of the paper, decided by one rule (:func:`deciding_row`).

The ledger has one row per check (a claim has several: one per quantity, size or scope). A reader
asks first "does Theorem 3.1 hold?", so :func:`summarize` groups the rows by the part of the paper
they check (:func:`paper_claim`: ``"Theorem 3.1 (scan) [scope: Assumption 1]"`` → ``"Theorem 3.1"``,
``"Figure 2 / Definition 2.2"`` → ``"Figure 2"``) and gives each group the verdict of one row:

1. a row whose params say ``decides=True`` (a summary row a claim writes to reconcile its rows)
   decides; of several, the first of the highest verdict below;
2. otherwise the first row of the highest verdict in :data:`PRECEDENCE`:
   FAIL > DEVIATES > PASS > OUT_OF_SCOPE > NOT_RUN > SKIP > INFO (a failure is never hidden by a
   pass beside it; a disagreement with the paper's text outranks a pass; a pass outranks rows that
   could not judge).

That row's measured value and interval, and its setting where it differs from the ledger's (D, C,
q; N and steps as run), are the claim's line. Rows are numbered 1… in ledger order (the CSV's data
rows, the header not counted), the same numbers the ``--detail`` table and the HTML report show.

This module only groups and formats: it imports pandas and nothing that computes.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..infra.terminal import number_text

#: Verdicts from the one that decides a claim first to the one that decides it last (module docstring).
PRECEDENCE = ("FAIL", "DEVIATES", "PASS", "OUT_OF_SCOPE", "NOT_RUN", "SKIP", "INFO")
#: The summary's columns (``form``, the claim's logical form, follows when the ledger has that column).
SUMMARY_COLUMNS = [
    "claim",
    "verdict",
    "quantity",
    "measured",
    "ci_low",
    "ci_high",
    "measured_text",
    "setting",
    "row",
    "rows",
    "n_rows",
    "verdicts",
    "decided_by",
    "paper",
]
#: The widest a summary line may be, whatever the terminal (one screen: 40 lines of at most 100 columns).
MAX_WIDTH = 100

_PART = re.compile(
    r"^(Definition|Parametrization|Assumption|Simplification|Lemma|Theorem|Corollary|Proposition|Section|Figure|"
    r"Table|Appendix)s?\s+([A-Z]?\d+(?:\.\d+)*[a-z]?)"
)
_KEY = re.compile(r", (?=[A-Za-z_]\w*=)")


def paper_claim(claim: str) -> str:
    """The part of the paper a ledger row's ``claim`` text checks: the first reference it opens with.

    A row naming two parts belongs to the first (``"Figure 2 / Definition 2.2"`` checks Figure 2's
    experiment); text that names no part of the paper (a diagnostic such as ``"docs/theory.md §3 (GD vs
    flow)"``, or the module path of a claim that raised) is its own group, cut before its first
    parenthesis, bracket, comma or colon.

    >>> paper_claim("Theorem 3.1 (scan) [scope: Assumption 1]")
    'Theorem 3.1'
    >>> paper_claim("Section 4.1, Event III")
    'Section 4.1'
    >>> paper_claim("Figure 2 / Definition 2.2")
    'Figure 2'
    >>> paper_claim("Section 6, Figures 6/7 (cifar10)")
    'Section 6'
    >>> paper_claim("docs/theory.md §3 (GD vs flow) [D = 16, q = 0.25, s <= 200; not the ledger's D]")
    'docs/theory.md §3'
    """
    text = " ".join(str(claim).split())
    m = _PART.match(text)
    if m:
        return f"{m.group(1)} {m.group(2)}"
    return re.split(r" ?[(\[,:]| / ", text, maxsplit=1)[0].strip() or text


def is_paper_part(name: str) -> bool:
    """Whether a group of :func:`paper_claim` names a part of the paper (not a diagnostic).

    >>> is_paper_part("Lemma 4.3"), is_paper_part("docs/theory.md §3")
    (True, False)
    """
    return _PART.match(name) is not None


def parse_params(text: Any) -> dict[str, str]:
    """A ledger row's ``params`` text (``"k=v, k=v"``, as :meth:`Check.row` writes it) as a dict of
    texts. A value may hold commas (``D=[32, 64]``) and ``=`` (``departures=eta=10 (…)``): a new entry
    starts only at ``", name="``.

    >>> parse_params("D=[32, 64, 128], q=C^2/D, departures=eta=10 (paper: eta <= 1/poly(d)), decides=True")
    {'D': '[32, 64, 128]', 'q': 'C^2/D', 'departures': 'eta=10 (paper: eta <= 1/poly(d))', 'decides': 'True'}
    """
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return {}
    out: dict[str, str] = {}
    for part in _KEY.split(str(text)):
        key, eq, value = part.partition("=")
        if eq and key.strip():
            out[key.strip()] = value.strip()
    return out


def _decides(params: Mapping[str, str]) -> bool:
    return params.get("decides", "").strip().lower() in ("true", "1", "yes")


def _rank(verdict: Any) -> int:
    v = str(verdict)
    return PRECEDENCE.index(v) if v in PRECEDENCE else len(PRECEDENCE)


def deciding_row(verdicts: Sequence[Any], params: Sequence[Any]) -> tuple[int, str]:
    """The position (in the group) of the row that decides a claim, and why (module docstring):
    ``"decides=True"`` when some row's params say so (the first of the highest verdict among them),
    else ``"precedence"``: the first row of the highest verdict in :data:`PRECEDENCE`.

    >>> deciding_row(["PASS", "INFO", "DEVIATES", "FAIL", "DEVIATES"], [""] * 5)
    (3, 'precedence')
    >>> deciding_row(["PASS", "FAIL", "DEVIATES"], ["", "", "decides=True, N=8"])
    (2, 'decides=True')

    Raises:
        ValueError: no rows, or ``verdicts`` and ``params`` of different lengths.
    """
    if not verdicts or len(verdicts) != len(params):
        raise ValueError(f"deciding_row: {len(verdicts)} verdicts and {len(params)} params (need equal, >= 1)")
    marked = [i for i, p in enumerate(params) if _decides(parse_params(p))]
    pool, how = (marked, "decides=True") if marked else (list(range(len(verdicts))), "precedence")
    return min(pool, key=lambda i: (_rank(verdicts[i]), i)), how


def _compact(value: str) -> str:
    """A list of values as its first and last (``[32, 64, 128]`` → ``32..128``, ``7 8 9`` → ``7..9``)."""
    v = value.strip()
    inner = v[1:-1] if v.startswith("[") and v.endswith("]") else v
    items = [x for x in re.split(r"[,\s]+", inner) if x]
    if len(items) > 1 and all(re.fullmatch(r"[-+\d.e]+", x) for x in items):
        return f"{items[0]}..{items[-1]}"
    return inner if len(items) == 1 else v


def _same(a: Any, b: Any) -> bool:
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-6)
    except (TypeError, ValueError):
        return str(a).strip() == str(b).strip()


def asked_setting(df: pd.DataFrame) -> dict[str, str]:
    """The ledger's own (D, C, q), read from its rows when the command's setting is not at hand (a CSV):
    the most common plain (D, C, q) among the rows' params; {} when no row names all three."""
    triples: Counter[tuple[str, str, str]] = Counter()
    for p in df["params"] if "params" in df else []:
        d = parse_params(p)
        if all(k in d for k in ("D", "C", "q")) and all(re.fullmatch(r"[-+\d.e]+", d[k]) for k in ("D", "C", "q")):
            triples[(d["D"], d["C"], d["q"])] += 1
    if not triples:
        return {}
    (D, C, q), _ = triples.most_common(1)[0]
    return {"D": D, "C": C, "q": q}


def setting_text(params: Any, asked: Mapping[str, Any]) -> str:
    """The deciding row's setting where it differs from the ledger's: D, C, q unless they equal
    ``asked``'s, then N and steps as run (``Ds``, ``Ns`` count as D, N). "" when it is the asked one.

    >>> setting_text("D=32, C=4, q=0.25, N=16384, eta=10.0, steps=610", {"D": 64, "C": 4, "q": 0.25})
    'D=32 N=16384 steps=610'
    """
    p = parse_params(params)
    out = []
    for key, names, always in (
        ("D", ("D", "Ds"), False),
        ("C", ("C",), False),
        ("q", ("q",), False),
        ("N", ("N", "Ns"), True),
        ("steps", ("steps",), True),
    ):
        value = next((p[n] for n in names if n in p), None)
        if value is None or (not always and key in asked and _same(value, asked[key])):
            continue
        out.append(f"{key}={_compact(value)}")
    return " ".join(out)


def row_ranges(numbers: Sequence[int]) -> str:
    """Row numbers as ranges: ``[3, 4, 5, 9]`` → ``"3-5,9"``.

    >>> row_ranges([14, 15, 16, 17, 18, 19, 25, 26])
    '14-19,25-26'
    """
    out: list[str] = []
    nums = sorted(numbers)
    start = prev = nums[0] if nums else 0
    for n in [*nums[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ",".join(out) if nums else ""


def summarize(df: pd.DataFrame, asked: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """The ledger ``df`` (its rows in ledger order; a CSV read back, or :func:`theorydyn.verify.collect`'s
    frame) as one row per :func:`paper_claim`, in the order the claims first appear.

    Columns :data:`SUMMARY_COLUMNS`: the claim, the verdict that decides it (:func:`deciding_row`), that
    row's quantity, measured, ci_low, ci_high, the three as the detail prints them (``measured_text``:
    ``0.42 [0.40, 0.44]``, ``0.15 (exact)``), its setting where it differs from ``asked`` (default:
    :func:`asked_setting` of the rows; :func:`setting_text`), its number ``row`` (1 = the first row
    of the ledger), the group's rows (``rows``, as ranges) and their count, the tally of the
    group's verdicts (``"PASS 3 · INFO 2"``), ``decided_by`` (``"decides=True"`` or
    ``"precedence"``) and ``paper`` (whether the group names a part of the paper, not a diagnostic);
    then ``form``, the deciding row's logical form, when ``df`` has that column.

    >>> rows = pd.DataFrame(dict(claim=["Theorem 3.1", "Theorem 3.1 (scan)", "Lemma 4.3"],
    ...     quantity=["err", "err", "rate"], measured=[0.2, 0.1, 1.0], ci_low=[0.2, 0.1, 0.9],
    ...     ci_high=[0.2, 0.1, 1.1], verdict=["PASS", "DEVIATES", "PASS"], params=["D=64"] * 3))
    >>> summarize(rows)[["claim", "verdict", "row", "rows"]].values.tolist()
    [['Theorem 3.1', 'DEVIATES', 2, '1-2'], ['Lemma 4.3', 'PASS', 3, '3']]
    """
    if asked is None:
        asked = asked_setting(df)
    has_form = "form" in df.columns
    data = df.reset_index(drop=True)
    params = data["params"] if "params" in data else pd.Series([""] * len(data))
    groups: dict[str, list[int]] = {}
    for i, claim in enumerate(data["claim"]):
        groups.setdefault(paper_claim(claim), []).append(i)
    out = []
    for name, idx in groups.items():
        verdicts = [str(data["verdict"].iloc[i]) for i in idx]
        k, how = deciding_row(verdicts, [params.iloc[i] for i in idx])
        r = data.iloc[idx[k]]
        tally = Counter(verdicts)
        rec: dict[str, Any] = dict(
            claim=name,
            verdict=verdicts[k],
            quantity=_text(r.get("quantity")),
            measured=_num(r.get("measured")),
            ci_low=_num(r.get("ci_low")),
            ci_high=_num(r.get("ci_high")),
            measured_text=format_measured(r.get("measured"), r.get("ci_low"), r.get("ci_high"), r.get("params")),
            setting=setting_text(r.get("params"), asked),
            row=idx[k] + 1,
            rows=row_ranges([i + 1 for i in idx]),
            n_rows=len(idx),
            verdicts=" · ".join(f"{v} {tally[v]}" for v in sorted(tally, key=lambda v: (_rank(v), v))),
            decided_by=how,
            paper=is_paper_part(name),
        )
        if has_form:
            rec["form"] = _text(r.get("form"))
        out.append(rec)
    return pd.DataFrame(out, columns=SUMMARY_COLUMNS + (["form"] if has_form else []))


def format_measured(measured: Any, lo: Any, hi: Any, params: Any = "") -> str:
    """``0.1506 (exact)`` for an exact row (lo == hi == measured and no ``seeds=`` in params),
    ``0.42 [0.40, 0.44]`` with a 95% interval over seeds, else the bare value.

    >>> format_measured(0.5, 0.4, 0.6), format_measured(0.25, 0.25, 0.25), format_measured(float("nan"), 0, 1)
    ('0.5 [0.4, 0.6]', '0.25 (exact)', '—')
    """
    m, a, b = number_text(measured), number_text(lo), number_text(hi)
    if m == "—" or a == "—" or b == "—":
        return m
    if float(lo) == float(hi) == float(measured) and "seeds=" not in str(params):
        return f"{m} (exact)"
    return f"{m} [{a}, {b}]"


def _num(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _text(v: Any) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, its last one an ellipsis when cut.

    >>> clip("Parametrization 3.1", 10), clip("PASS", 10)
    ('Parametri…', 'PASS')
    """
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: width - 1] + "…"


def format_summary(summary: pd.DataFrame, width: int = MAX_WIDTH) -> str:
    """The summary as terminal lines, none longer than ``min(width, MAX_WIDTH)``: one line per claim
    (claim, verdict, measured [95% CI], setting, the deciding row, the group's rows, the quantity), each
    cell cut with an ellipsis where the line would not fit; a line never wraps.

    >>> s = pd.DataFrame([dict(claim="Theorem 3.1", verdict="DEVIATES", quantity="min error",
    ...     measured_text="0.1 (exact)", setting="D=64..256", row=39, rows="28-44")])
    >>> print(format_summary(s, 80))
    claim        verdict   measured [95% CI]  setting    row  of rows  quantity
    Theorem 3.1  DEVIATES  0.1 (exact)        D=64..256   39  28-44    min error
    """
    width = max(20, min(width, MAX_WIDTH))
    heads = ["claim", "verdict", "measured [95% CI]", "setting", "row", "of rows", "quantity"]
    cells = [
        [str(r["claim"]), str(r["verdict"]), str(r["measured_text"]), str(r["setting"]), str(r["row"]), str(r["rows"])]
        for r in summary.to_dict("records")
    ]
    quantities = [str(r["quantity"]) for r in summary.to_dict("records")]
    # natural widths, capped; where the line is still too wide the columns give way in this order
    # (the verdict never): the group's rows, the setting, the measured value, the claim. The quantity
    # takes what is left (none below 10 characters: the --detail row says it whole).
    caps = [19, 12, 32, 18, 3, 11]
    floors = [11, 12, 14, 8, 3, 5]
    order = [5, 3, 2, 0]
    w = [min(cap, max([len(heads[i])] + [len(c[i]) for c in cells])) for i, cap in enumerate(caps)]
    gaps = 2 * (len(w) - 1)
    for i in order:
        w[i] -= max(0, min(w[i] - floors[i], sum(w) + gaps - width))
    rest = width - sum(w) - gaps - 2
    rest = rest if rest >= 10 else 0

    def line(values: list[str], quantity: str) -> str:
        parts = [
            clip(v, wi).rjust(wi) if i == 4 else clip(v, wi).ljust(wi)
            for i, (v, wi) in enumerate(zip(values, w, strict=True))
        ]
        text = "  ".join(parts) + ("  " + clip(quantity, rest) if rest else "")
        return clip(text.rstrip(), width)

    return "\n".join([line(heads[:-1], heads[-1])] + [line(c, q) for c, q in zip(cells, quantities, strict=True)])


def wrap(text: str, width: int, indent: str = "") -> list[str]:
    """``text`` in lines of at most ``width`` characters (long words broken), continuation lines indented."""
    return textwrap.wrap(str(text), width, subsequent_indent=indent, break_on_hyphens=False) or [""]


def paragraphs(text: str, width: int) -> str:
    """Each line of ``text`` wrapped to ``width``, its continuation lines indented by four spaces."""
    return "\n".join(line for para in text.split("\n") for line in wrap(para, width, "    "))


def path_line(label: str, path: Path, width: int) -> str:
    """``label path`` on one line when it fits, else the label (wrapped) and the path on a line of its
    own: a path is never broken, so that it pastes whole (a path wider than the terminal is its only
    line that may be)."""
    line = f"{label} {path}"
    return line if len(line) <= width else f"{paragraphs(label, width)}\n  {path}"


def times_line(info: list[dict[str, Any]]) -> str:
    """The seconds of each claim in one paragraph (``--detail`` prints the table,
    :func:`theorydyn.verify.format_times`)."""
    parts = [
        f"{r['name']} {r['seconds']:.1f}" + (" stored" if r["source"] == "stored" else "")
        if math.isfinite(r["seconds"])
        else f"{r['name']} {r['source']}"
        for r in info
    ]
    ran = sum(r["seconds"] for r in info if r["source"] != "stored" and math.isfinite(r["seconds"]))
    stored = sum(r["source"] == "stored" for r in info)
    return (
        f"seconds per claim: {' · '.join(parts)}; computed now {ran:.1f} s, read from the store: {stored} of "
        f"{len(info)} claims"
    )


def _verdict_order(v: str) -> tuple[int, str]:
    return (PRECEDENCE.index(v) if v in PRECEDENCE else len(PRECEDENCE), v)


def format_glance(df: pd.DataFrame, s: Any, *, quick: bool, seconds: float, csv: Path, times: bool, width: int) -> str:
    """What a ledger run ends with, no line wider than ``min(width, MAX_WIDTH)`` (a path excepted): the
    ledger at a glance (the setting ``s``: its D, C, q, quick or full, then :func:`format_summary` of
    :func:`summarize` against that setting), the verdict counts, the rows and the ``seconds`` of the run,
    the seconds of each claim (``times``: :func:`times_line`, when the ledger's ``attrs["claims"]`` has
    them), the rows that did not run, and the ledger CSV's path ``csv``."""
    width = min(width, MAX_WIDTH)
    asked = {"D": s.D, "C": s.C, "q": round(s.q, 6)}
    lines = [
        paragraphs(
            f"the ledger at a glance, D={s.D} C={s.C} q={s.q:g} ({'quick' if quick else 'full'}): "
            "one line per claim, the verdict of its deciding row (decides=True, else FAIL > DEVIATES > PASS > "
            "OUT_OF_SCOPE > NOT_RUN > INFO)",
            width,
        ),
        format_summary(summarize(df, asked), width),
    ]
    counts = df["verdict"].value_counts().to_dict()
    lines.append(
        paragraphs(
            f"{' · '.join(f'{k} {counts[k]}' for k in sorted(counts, key=_verdict_order))} · {len(df)} rows · "
            f"{seconds:.0f} s",
            width,
        )
    )
    if df.attrs.get("claims") and times:
        lines.append(paragraphs(times_line(df.attrs["claims"]), width))
    if counts.get("NOT_RUN", 0):
        lines.append(
            paragraphs(
                f"NOT_RUN: {counts['NOT_RUN']} rows did not run here (not a pass); each note gives the command "
                "that would run it",
                width,
            )
        )
    lines.append(path_line("every row (--detail prints them; --report makes a page):", csv, width))
    return "\n".join(lines)


def _md(text: Any) -> str:
    return _text(text).replace("|", "\\|")


def format_summary_markdown(summary: pd.DataFrame) -> str:
    """The summary as a Markdown table: | claim | verdict | measured (95% CI) | setting | row (of rows) |
    the deciding row's quantity | the verdicts of its rows |."""
    lines = [
        "| claim | verdict | measured (95% CI) | setting | row (of rows) | deciding quantity | rows' verdicts |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in summary.to_dict("records"):
        lines.append(
            f"| {_md(r['claim'])} | **{_md(r['verdict'])}** | {_md(r['measured_text'])} | {_md(r['setting']) or '—'} | "
            f"{r['row']} ({_md(r['rows'])}) | {_md(r['quantity'])} | {_md(r['verdicts'])} |"
        )
    return "\n".join(lines)


__all__ = [
    "MAX_WIDTH",
    "PRECEDENCE",
    "SUMMARY_COLUMNS",
    "asked_setting",
    "clip",
    "deciding_row",
    "format_measured",
    "format_summary",
    "format_glance",
    "format_summary_markdown",
    "is_paper_part",
    "paper_claim",
    "paragraphs",
    "parse_params",
    "path_line",
    "row_ranges",
    "setting_text",
    "summarize",
    "times_line",
    "wrap",
]
