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


def test_theorem31_claim_only_judges_the_results_of_its_experiment(monkeypatch):
    """verify's one call of Theorem 3.1 (claims.judge) runs experiments.theorem31.run at the claim's config (its
    sizes, the literal construction at LITERAL_EXACT, the scan) and judges its results: the rows are
    check_theorem_3_1's at the same sizes (no flattened GLM at N_flat = 0: 16 rows), the progress message as before."""
    from theorydyn import claims
    from theorydyn.claims.sizes import Sizes

    planted = [
        dict(C=C, D=D, x_star=0.75, q_star=0.75 * C**2 / (D - C), spurious_star=0.75 * C**2, x_star_cond=0.7)
        | dict(err_at_1=0.3)
        for C in (4, 8, 16)
        for D in t31.SCAN_31_D
    ]
    monkeypatch.setattr(xt31, "glm_crossings", lambda n_grid=24: pd.DataFrame(planted))
    small = KW["sizes"]
    monkeypatch.setattr(t31, "SIZES", Sizes(quick=small, full=small))
    s = Setting(D=64, C=4)
    assert t31.EXPERIMENT is xt31.run and t31.config(s, True) == xt31.Theorem31Config(small, t31.LITERAL_EXACT)
    said: list[str] = []
    rows = claims.judge(t31, s, quick=True, progress=said.append)
    assert said == ["Theorem 3.1"]
    expected = t31.check_theorem_3_1(s, small)
    assert [repr(c.row()) for c in rows] == [repr(c.row()) for c in expected]
    assert len(rows) == 16 and sum(c.claim.startswith("Theorem 3.1 (scan)") for c in rows) == 6
