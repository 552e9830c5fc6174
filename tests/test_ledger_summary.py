"""The ledger at a glance (theorydyn.verify.summary): one line per claim of the paper, decided by one rule.

The rule is checked against a second implementation written apart (a pandas sort on an ordered
categorical), on the committed ledgers and on planted groups where each branch of the rule flips the
verdict; the printed summary against the one-screen budget (40 lines of at most 100 columns) through
the command itself.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from theorydyn.claims.check import LEDGER_COLUMNS
from theorydyn.verify.summary import (
    PRECEDENCE,
    deciding_row,
    format_summary,
    paper_claim,
    parse_params,
    row_ranges,
    setting_text,
    summarize,
)

ROOT = Path(__file__).resolve().parents[1]
LEDGERS = sorted((ROOT / "docs" / "ledger").glob("*.csv"))


def _independent(df: pd.DataFrame) -> dict[str, tuple[str, int]]:
    """claim → (verdict, row number) by another route: a stable sort of the rows on (group, marked
    decides=True first, verdict as an ordered categorical, position), the first row of each group."""
    d = df.reset_index(drop=True).assign(
        group=[paper_claim(c) for c in df["claim"]],
        marked=[not bool(re.search(r"(^|, )decides=True(,|$)", str(p))) for p in df["params"]],
        v=pd.Categorical(df["verdict"], categories=list(PRECEDENCE), ordered=True),
        pos=range(len(df)),
    )
    first = d.sort_values(["marked", "v", "pos"], kind="stable").groupby("group", sort=False).head(1)
    return {r.group: (str(r.verdict), r.pos + 1) for r in first.itertuples()}


@pytest.mark.parametrize("path", LEDGERS, ids=lambda p: p.stem)
def test_each_committed_ledgers_summary_agrees_with_a_second_route(path):
    df = pd.read_csv(path)
    got = {r.claim: (r.verdict, r.row) for r in summarize(df).itertuples()}
    want = _independent(df)
    diff = {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}
    assert not diff, f"{len(diff)} claim(s) differ (summary, second route): {diff}"
    # every row belongs to exactly one claim, and the claims appear in ledger order
    s = summarize(df)
    assert s["n_rows"].sum() == len(df)
    firsts = [min(int(x.split("-")[0]) for x in r.split(",")) for r in s["rows"]]
    assert firsts == sorted(firsts)


def test_the_quick_ledger_has_one_line_per_part_of_the_paper():
    s = summarize(pd.read_csv(ROOT / "docs" / "ledger" / "quick.csv"))
    assert list(s["claim"]) == [
        "Definition 2.1",
        "Assumption 1",
        "Parametrization 3.1",
        "Lemma 4.3",
        "Section 4.1",
        "Theorem 4.1",
        "docs/theory.md §3",
        "Theorem 3.1",
        "Theorem 3.2",
        "Lemma 4.1",
        "Theorem 4.2",
        "Lemma 4.2",
        "Figure 4",
        "Section 4",
        "Theorem 5.1",
        "Theorem 5.2",
        "Figure 2",
        "Section 6",
    ]
    assert list(s.loc[~s["paper"], "claim"]) == ["docs/theory.md §3"]  # the one diagnostic group


@pytest.mark.parametrize(
    "text, part",
    [
        ("Theorem 3.1 (literal: any w_j, any phi) [scope: Assumptions 1 + 2, toolkit rule]", "Theorem 3.1"),
        ("Theorem 4.2 (N = poly(d)) [D = 32, q = 0.5 (q = C^2/D), 1003 steps]", "Theorem 4.2"),
        ("Theorem 4.2 (1) on CUDA [D = 128, N = 32768]", "Theorem 4.2"),
        ("Figure 2 (model (T)) / Definition 2.2", "Figure 2"),
        ("Lemma 4.2 / Theorem 4.2 proof (semi-realistic closeness) [D = 24]", "Lemma 4.2"),
        ("Section 4, without patch association (Theorem 3.1) [D = 32]", "Section 4"),
        ("Section 6, Figure 5a (digits, a proxy for CIFAR)", "Section 6"),
        ("Definition 2.1 (along Assumption 2, C ~ log2 D)", "Definition 2.1"),
        ("docs/theory.md §3 (GD vs flow) [D = 16, q = 0.25, s <= 200; not the ledger's D]", "docs/theory.md §3"),
        ("theorydyn.claims.theorem31", "theorydyn.claims.theorem31"),  # the FAIL row of a claim that raised
        ("Toy 2 (scope)", "Toy 2"),
        ("Theorems 5.1, 5.2", "Theorem 5.1"),
    ],
)
def test_paper_claim_takes_the_first_part_named(text, part):
    assert paper_claim(text) == part


@pytest.mark.parametrize(
    "verdicts, params, want",
    [
        (["INFO", "PASS", "DEVIATES", "PASS"], [""] * 4, (2, "precedence")),
        (["PASS", "DEVIATES", "FAIL", "FAIL"], [""] * 4, (2, "precedence")),  # a FAIL is never hidden
        (["INFO", "NOT_RUN", "OUT_OF_SCOPE"], [""] * 3, (2, "precedence")),
        (["INFO", "NOT_RUN", "INFO"], [""] * 3, (1, "precedence")),
        (["INFO", "INFO"], [""] * 2, (0, "precedence")),
        # a summary row that reconciles the others decides, whatever they say
        (["FAIL", "DEVIATES", "PASS"], ["", "", "N=8, decides=True"], (2, "decides=True")),
        (["FAIL", "PASS", "DEVIATES"], ["decides=False", "decides=True", "decides=True, D=4"], (2, "decides=True")),
    ],
)
def test_the_deciding_row(verdicts, params, want):
    assert deciding_row(verdicts, params) == want


def test_deciding_row_refuses_an_empty_group():
    with pytest.raises(ValueError, match="verdicts"):
        deciding_row([], [])


def test_params_text_parses_back_to_what_check_row_wrote():
    from theorydyn.claims.check import Check

    params = {"D": [32, 64], "q": "C^2/D", "departures": "eta=10 (paper: eta <= 1/poly(d)); beta=1", "decides": True}
    text = Check("Theorem 9", "x", 1.0, "> 0", True, params=params).row()["params"]
    assert parse_params(text) == {k: str(v) for k, v in params.items()}
    assert parse_params(math.nan) == {} and parse_params("") == {}


def test_the_setting_names_only_what_differs_and_the_run_size():
    asked = {"D": 64, "C": 4, "q": 0.25}
    assert setting_text("D=64, C=4, q=0.25, N=5000, kappa=60.0", asked) == "N=5000"
    assert setting_text("D=64, C=4, q=0.250000, tau=1.0", asked) == ""
    assert setting_text("C=4, D=[64, 128, 256], q=C^2/D", asked) == "D=64..256 q=C^2/D"
    assert setting_text("Ds=[32, 64, 128, 256], Ns=[1, 2, 4]", asked) == "D=32..256 N=1..4"


def test_row_ranges():
    assert row_ranges([5]) == "5" and row_ranges([1, 2, 3, 7, 9, 10]) == "1-3,7,9-10" and row_ranges([]) == ""


def test_a_ledger_with_a_form_column_keeps_it_and_one_without_does_not_need_it():
    df = pd.read_csv(ROOT / "docs" / "ledger" / "D128_theorem4.csv")
    assert "form" not in summarize(df).columns
    forms = [f"form {i}" for i in range(len(df))]
    s = summarize(df.assign(form=forms))
    assert list(s["form"]) == [forms[r - 1] for r in s["row"]]


@pytest.mark.parametrize("width", [20, 40, 60, 80, 100, 120, 250])
@pytest.mark.parametrize("name", ["quick", "full"])
def test_the_summary_never_wraps_a_line(name, width):
    s = summarize(pd.read_csv(ROOT / "docs" / "ledger" / f"{name}.csv"))
    lines = format_summary(s, width).splitlines()
    assert len(lines) == len(s) + 1
    longest = max(map(len, lines))
    assert longest <= min(width, 100), f"a line of {longest} characters at width {width}"
    if width >= 80:  # wide enough: every claim and verdict whole, the number of its deciding row shown
        for line, r in zip(lines[1:], s.itertuples(), strict=True):
            assert line.startswith(r.claim) and f" {r.verdict} " in line and f" {r.row} " in line, line


class _Row:
    """A stand-in for a Check whose row is a committed ledger's row, as it was written."""

    def __init__(self, row: dict):
        self._row = row

    def row(self) -> dict:
        return {c: self._row[c] for c in LEDGER_COLUMNS}


@pytest.mark.parametrize("name", ["quick", "full"])
def test_the_command_ends_with_one_screen(monkeypatch, tmp_path, capsys, name):
    """`verify` over the committed ledger's rows (a claim that returns them) prints at most 40 lines of
    at most 100 columns, one line per claim, and the CSV's path whole."""
    from conftest import claim_module, register_claims

    from theorydyn.verify.__main__ import main

    rows = pd.read_csv(ROOT / "docs" / "ledger" / f"{name}.csv").to_dict("records")
    register_claims(
        monkeypatch, {"csv": claim_module("csv", lambda s, quick=False, progress=None: [_Row(r) for r in rows])}
    )
    monkeypatch.setenv("COLUMNS", "180")
    out = tmp_path / ("a-folder-with-a-long-name-" * 4) / "ledger.csv"
    main(["--D", "64", "--C", "4", "--quick", "--quiet", "--out", str(out)])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) <= 40, "\n".join(lines)
    assert max(len(line) for line in lines if line.strip() != str(out)) <= 100
    assert f"  {out}" in lines  # the path on a line of its own, whole
    claims = summarize(pd.read_csv(out))["claim"]
    assert sum(any(line.startswith(c + " ") for line in lines) for c in claims) == len(claims)
