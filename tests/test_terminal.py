"""Check rows printed for the terminal fit its width, lose no word, and put notes under their row."""

import pandas as pd
import pytest

from theorydyn.claims.check import Check, Verdict
from theorydyn.infra.terminal import check_rows_text, measured_text

LONG = (
    "Theorem 3.1 [scope: Assumptions 1 + 2, toolkit rule]",
    "exact Pr[f g <= 0], g = equal-weight GLM, best link (w_j = w*, phi = majority of sign f given the projection)",
)
NOTE = "the bound fails inside Assumption 2 wherever C < q(D-C) < x* C^2 " * 4


def _rows():
    return pd.DataFrame(
        [
            Check.exact(*LONG, 0.1537, ">= 0.125", Verdict.DEVIATES, note=NOTE).row(),
            Check.over_seeds("Lemma 4.3", "ratio", [3.1, 3.2, 3.3, 3.25, 3.15], "> 1", True).row(),
            Check.exact("Theorem 3.2", "an info row", 1.0, "INFO", Verdict.INFO, note="kept in the CSV").row(),
        ]
    )


@pytest.mark.parametrize("columns", [40, 80, 100, 160])
def test_rows_fit_the_width_and_keep_every_word(columns):
    text = check_rows_text(_rows(), columns)
    assert max(len(line) for line in text.splitlines()) <= columns
    flat = " ".join(text.split())
    for words in (*LONG, NOTE):
        assert " ".join(words.split()) in flat
    assert "kept in the CSV" not in flat  # an INFO note stays in the CSV
    lines = text.splitlines()
    assert lines[0].startswith("DEVIATES ") and any(line.startswith("PASS ") for line in lines)
    assert "0.1537 (exact)" in flat and "the paper says >= 0.125" in flat


def test_measured_text_forms():
    assert measured_text({"measured": 0.5, "ci_low": 0.5, "ci_high": 0.5}) == "0.5 (exact)"
    assert measured_text({"measured": 0.5, "ci_low": 0.4, "ci_high": 0.6}) == "0.5 [0.4, 0.6]"
    assert measured_text({"measured": float("nan"), "ci_low": None, "ci_high": None}) == "—"
    assert measured_text({"measured": 1, "ci_low": 1, "ci_high": 1, "params": "seeds=5"}) == "1 [1, 1]"
