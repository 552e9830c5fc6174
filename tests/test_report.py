"""`verify --report`: one self-contained HTML page of a ledger, every figure inside it.

The page is opened in headless Chromium with the network off; a probe script added to a copy of it
reports, after the load event, every image that did not decode and every resource the page fetched.
The browser test skips (saying why) only where no Chromium binary exists; .ci/run installs Debian's.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from theorydyn.verify.__main__ import main
from theorydyn.verify.report import FIGURES_OF_CLAIM, MIME, html_report
from theorydyn.verify.summary import summarize

ROOT = Path(__file__).resolve().parents[1]
QUICK = ROOT / "docs" / "ledger" / "quick.csv"
MANIFEST = json.loads((ROOT / "figures" / "manifest.json").read_text(encoding="utf-8"))
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")

PROBE = """<script>
window.addEventListener("load", () => {
  const images = [...document.images];
  const report = {
    images: images.length,
    broken: images.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.alt),
    fetched: performance.getEntriesByType("resource").map(e => e.name),
  };
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(report);
  document.body.appendChild(pre);
});
</script>"""


def _shown(entry: dict) -> bool:
    """Whether a manifest entry has a file in a format the page embeds."""
    names = [entry["file"], *entry.get("files", [])]
    return any((ROOT / "figures" / (Path(n).stem + s)).is_file() for n in names for s in MIME)


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    assert main(["--report", str(QUICK), "--out", str(out)]) == 0
    return out / "quick.html"


def test_the_page_is_self_contained(page):
    text = page.read_text(encoding="utf-8")
    # nothing the browser would fetch: every src and href is a data: URI or a link inside the page
    targets = re.findall(r"""(?:src|href)\s*=\s*["']?([^"'\s>]+)""", text)
    outside = [t for t in targets if not (t.startswith("data:") or t.startswith("#"))]
    assert not outside, f"{len(outside)} reference(s) outside the page: {outside[:5]}"
    assert "<script" not in text and "@import" not in text and "url(" not in text


def test_the_page_has_the_summary_each_claims_rows_and_every_figure_once(page):
    text = page.read_text(encoding="utf-8")
    df = pd.read_csv(QUICK)
    s = summarize(df)
    for r in s.itertuples():  # a section per claim, its verdict beside it, its deciding row marked
        assert re.search(rf'<h2 id="[^"]+">{re.escape(r.claim)}: <span class="v {r.verdict}">', text), r.claim
        assert re.search(rf'<tr id="row-{r.row}" class="decides">', text), (r.claim, r.row)
    assert len(re.findall(r'<tr id="row-\d+"', text)) == len(df)  # every row once
    embedded = re.findall(r'<figure id="fig-([\w-]+)"><img', text)
    want = [n for n, e in MANIFEST.items() if _shown(e)]
    assert sorted(embedded) == sorted(want), f"embedded {sorted(embedded)}, the manifest has {sorted(want)}"
    # the setting and the provenance of the run
    assert "D=64, C=4, q=0.25" in text and df["prov_git_commit"].iloc[0] in text


def test_every_claims_figure_is_in_the_manifest():
    named = {n for names in FIGURES_OF_CLAIM.values() for n in names}
    assert named <= set(MANIFEST), f"figures named for a claim but absent from the manifest: {named - set(MANIFEST)}"


def test_a_report_needs_no_figures_folder(tmp_path):
    text = html_report(pd.read_csv(QUICK), source="quick.csv", figures=tmp_path)
    assert "<img" not in text and "Theorem 3.1" in text


def test_report_flags_that_do_nothing_exit_2(tmp_path, capsys):
    for flag in (["--detail"], ["--recompute"], ["--quiet"], ["--markdown"]):
        with pytest.raises(SystemExit) as e:
            main(["--report", str(QUICK), *flag])
        assert e.value.code == 2 and flag[0] in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["--report", str(tmp_path / "absent.csv")])
    assert e.value.code == 2 and "no ledger" in capsys.readouterr().err
    (tmp_path / "taken").write_text("x")
    with pytest.raises(SystemExit) as e:
        main(["--report", str(QUICK), "--out", str(tmp_path / "taken")])
    assert e.value.code == 2 and "--out" in capsys.readouterr().err
    assert main(["--report", str(QUICK), "--out", str(tmp_path / "named.html")]) == 0
    assert (tmp_path / "named.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def _browser() -> str | None:
    return next((p for p in map(shutil.which, BROWSERS) if p), None)


@pytest.mark.skipif(_browser() is None, reason=f"no Chromium binary ({', '.join(BROWSERS)}) on PATH")
def test_every_figure_loads_in_a_headless_browser_offline(page, tmp_path):
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    cmd = [
        _browser(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--virtual-time-budget=10000",
        "--dump-dom",
        probe.as_uri(),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    m = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert m, f"the probe did not report (exit {done.returncode}): {done.stderr[-2000:]}"
    got = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    want = sum(_shown(e) for e in MANIFEST.values())
    assert got["images"] == want and not got["broken"], f"{got['broken']} of {got['images']} images did not load"
    assert got["fetched"] == [], f"the page fetched {got['fetched']}"
