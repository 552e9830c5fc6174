"""Planted counter-cases for the Theorem 3.1 rows whose inputs are fixed constants (the literal row's
exact setting, the scan's crossings): the same procedure fed other inputs flips the verdict."""

import pandas as pd

from theorydyn.claims import theorem31 as t31
from theorydyn.core.setting import Setting
from theorydyn.experiments import theorem31 as xt31

KW = dict(sizes=t31.Theorem31Sizes(N_fit=2_000, N_test=2_000, N_flat=0, seeds=(0, 1), N_literal=1_000), scan=False)


def _literal_exact(rows):
    return next(c for c in rows if c.claim.startswith("Theorem 3.1 (literal") and "enumerated" in c.quantity)


def test_literal_exact_row_deviates_where_f_is_rarely_zero(monkeypatch):
    """At D = 8, C = 2, q = 1/2 the lookup GLM errs only where f = 0, Pr = 0.144 >= 1/8: PASS. Planted
    q = 1/4: Pr[f = 0] ≈ 3/64 < 1/8, the same row DEVIATES (and names its D, C, q)."""
    row = _literal_exact(t31.check_theorem_3_1(Setting(D=64, C=4), **KW))
    assert str(row.verdict) == "PASS" and "D=8, C=2, q=0.5" in row.quantity
    monkeypatch.setattr(t31, "LITERAL_EXACT", dict(D=8, C=2, q=0.25))
    bad = _literal_exact(t31.check_theorem_3_1(Setting(D=64, C=4), **KW))
    assert str(bad.verdict) == "DEVIATES" and bad.measured < 1 / 8 and "q=0.25" in bad.quantity


def test_scan_rows_pass_when_the_crossings_sit_at_the_scope_edge(monkeypatch):
    """The scan rows DEVIATE (x* ≈ 0.75 > 1/C); planted crossings at q* = q_min (the bound holds at every
    q) make both readings PASS."""
    rows = []
    for C in (4, 8, 16):
        for D in t31.SCAN_31_D:
            rows.append(
                dict(C=C, D=D, x_star=1e-3 * (D - C) / C**2, q_star=1e-3, spurious_star=1e-3 * (D - C))
                | dict(x_star_cond=0.0, err_at_1=0.2)
            )
    monkeypatch.setattr(xt31, "glm_crossings", lambda n_grid=24: pd.DataFrame(rows))
    got = t31._scan_rows()
    assert len(got) == 6 and {str(c.verdict) for c in got} == {"PASS"}
    assert all("over D = 64, 128, 256" in c.quantity for c in got)
