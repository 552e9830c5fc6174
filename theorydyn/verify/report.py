"""The ledger as one HTML page a reader can send: ``python -m theorydyn.verify --report [CSV]``.

One self-contained file: the summary (:mod:`theorydyn.verify.summary`, one line per claim), then per
claim its verdict, the row that decided it, the committed figures that show it (from ``figures/``
and its ``manifest.json``, embedded as ``data:`` URIs: the page loads nothing from the network or
the disk), and its detail rows; then the setting and the provenance of the run (the ledger CSV's
``prov_*`` columns). The style is inline; the page has no script.

Which figure shows which claim is :data:`FIGURES_OF_CLAIM` (figures/README.md says what each one
shows); a figure the manifest lists and no claim names is shown under "Other figures", so a new
figure is never silently left out.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from .summary import asked_setting, format_measured, paper_claim, summarize

#: The committed figures that show each claim (names of figures/manifest.json), in the order shown.
FIGURES_OF_CLAIM: dict[str, tuple[str, ...]] = {
    "Theorem 3.1": ("theorem31",),
    "Lemma 4.3": ("phases", "scaling"),
    "Section 4.1": ("phases", "scaling", "qscan"),
    "Theorem 4.1": ("phases",),
    "Theorem 4.2": ("figure4", "figure4_d64", "association_window", "attention"),
    "Figure 4": ("figure4", "figure4_d64"),
    "Lemma 4.2": ("semirealistic",),
    "Theorem 5.1": ("transfer_target", "transfer_curves"),
    "Theorem 5.2": ("transfer_target", "transfer_curves"),
    "Figure 2": ("figure2",),
    "Section 6": ("vision_compare", "vision_permuted", "vision_pos_similarity"),
}
#: What a browser shows inline, by suffix (a PDF figure is shown through a sibling of these, if any).
MIME = {".svg": "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}
#: The detail columns shown per row (``form`` too when the ledger has it).
DETAIL = ("claim", "quantity", "measured", "threshold", "verdict", "note", "params")

_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;max-width:1180px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2.2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;width:100%;margin:.6em 0;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}th{background:#f4f4f4}
tr.decides td{background:#fff8d6}
.v{font-weight:600;white-space:nowrap}.PASS{color:#1a7f37}.FAIL{color:#c62828}.DEVIATES{color:#b35c00}
.OUT_OF_SCOPE{color:#6a4c93}.NOT_RUN{color:#555}.INFO{color:#1f5fa8}.SKIP{color:#555}
figure{margin:1em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:13px;color:#444}td.m{white-space:nowrap}code{font-size:13px}.small{font-size:13px;color:#555}
"""


def default_figures_dir() -> Path | None:
    """The checkout's ``figures/`` (beside the ``theorydyn`` package), or None in an installed copy."""
    d = Path(__file__).resolve().parents[2] / "figures"
    return d if (d / "manifest.json").is_file() else None


def _anchor(name: str) -> str:
    return "claim-" + (re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "x")


def _e(v: Any) -> str:
    return html.escape("" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))


def _shown_file(folder: Path, entry: Mapping[str, Any]) -> Path | None:
    """The file of a manifest entry that a browser shows inline: its ``file`` (or one of ``files``) when
    SVG, PNG or JPEG, else a sibling of the same stem in one of those formats (SVG first)."""
    names = [entry.get("file")] + list(entry.get("files") or [])
    paths = [folder / n for n in names if isinstance(n, str) and n]
    for suffix in MIME:
        for p in paths + [folder / (Path(n).stem + suffix) for n in names if isinstance(n, str) and n]:
            if p.suffix.lower() == suffix and p.is_file():
                return p
    return None


def figure_html(folder: Path, name: str, entry: Mapping[str, Any]) -> str:
    """One ``<figure>``: the image embedded as a ``data:`` URI, captioned with its name, setting,
    the command that remakes it and when it was made; a note instead when no shown format exists."""
    path = _shown_file(folder, entry)
    setting = ", ".join(f"{k}={v}" for k, v in (entry.get("setting") or {}).items())
    caption = (
        f"<b>{_e(name)}</b> (<code>figures/{_e(entry.get('file', ''))}</code>): {_e(setting)}. "
        f"Remade by <code>{_e(entry.get('command', ''))}</code>; made {_e(entry.get('made_utc', '?'))}."
    )
    if path is None:
        return f'<figure class="missing"><figcaption>{caption} (no SVG, PNG or JPEG of it here)</figcaption></figure>'
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (
        f'<figure id="fig-{_e(name)}"><img alt="{_e(name)}" src="data:{MIME[path.suffix.lower()]};base64,{data}">'
        f"<figcaption>{caption}</figcaption></figure>"
    )


def _verdict(v: Any) -> str:
    return f'<span class="v {_e(v)}">{_e(v)}</span>'


def _detail_table(df: pd.DataFrame, numbers: list[int], decides: int) -> str:
    cols = [c for c in DETAIL if c in df.columns] + (["form"] if "form" in df.columns else [])
    head = "".join(f"<th>{_e(c if c != 'measured' else 'measured [95% CI]')}</th>" for c in ["#", *cols])
    body = []
    for n in numbers:
        r = df.iloc[n - 1]
        cells = [f"<td>{n}</td>"]
        for c in cols:
            if c == "measured":
                text = _e(format_measured(r.get("measured"), r.get("ci_low"), r.get("ci_high"), r.get("params")))
            elif c == "verdict":
                text = _verdict(r.get("verdict"))
            else:
                text = _e(r.get(c))
            cells.append(f"<td>{text}</td>")
        mark = ' class="decides"' if n == decides else ""
        body.append(f'<tr id="row-{n}"{mark}>{"".join(cells)}</tr>')
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def provenance_rows(df: pd.DataFrame) -> dict[str, str]:
    """The ledger's provenance (its ``prov_*`` columns, first row; they are the same on every row)."""
    cols = [c for c in df.columns if c.startswith("prov_")] + (["ledger_rows"] if "ledger_rows" in df else [])
    return {c.removeprefix("prov_"): _e(df[c].iloc[0]) for c in cols} if len(df) else {}


def html_report(
    df: pd.DataFrame,
    *,
    source: str,
    figures: Path | None = None,
    asked: Mapping[str, Any] | None = None,
    setting: str | None = None,
    made: str | None = None,
) -> str:
    """The report page of the ledger ``df`` (module docstring).

    ``source``: where the rows came from (the CSV's path, printed whole); ``figures``: the folder
    with ``manifest.json`` (default :func:`default_figures_dir`; none: no figures); ``asked``: the
    ledger's (D, C, q) (default: read from the rows); ``setting``: the full setting as text when known;
    ``made``: the page's UTC time stamp (default now).
    """
    df = df.reset_index(drop=True)
    summary = summarize(df, asked)
    folder = figures if figures is not None else default_figures_dir()
    manifest: dict[str, Any] = {}
    if folder is not None and (folder / "manifest.json").is_file():
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    made = made or _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    counts = df["verdict"].value_counts()
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>theorydyn ledger: {_e(Path(source).name)}</title><style>{_STYLE}</style></head><body>",
        "<h1>The claims ledger of <i>Vision Transformers provably learn spatial structure</i></h1>",
        f'<p class="small">Jelassi, Sander, Li, NeurIPS 2022 · {len(df)} rows from <code>{_e(source)}</code> · '
        + " · ".join(f"{_e(v)} {int(counts[v])}" for v in sorted(counts.index))
        + f" · page made {_e(made)}</p>",
        "<h2>At a glance</h2>",
        "<p>One line per claim of the paper. The verdict is that of one row: a row marked "
        "<code>decides=True</code>, else the first of FAIL &gt; DEVIATES &gt; PASS &gt; OUT_OF_SCOPE &gt; "
        "NOT_RUN &gt; INFO. Its setting is given where it differs from the ledger's; rows are numbered "
        "as the CSV's data rows (1 = the first after the header).</p>",
        "<table><tr><th>claim</th><th>verdict</th><th>measured [95% CI]</th><th>setting</th>"
        "<th>row (of rows)</th><th>deciding quantity</th><th>rows' verdicts</th></tr>",
    ]
    for r in summary.to_dict("records"):
        parts.append(
            f'<tr><td><a href="#{_anchor(r["claim"])}">{_e(r["claim"])}</a></td><td>{_verdict(r["verdict"])}</td>'
            f"<td class=m>{_e(r['measured_text'])}</td><td>{_e(r['setting']) or '—'}</td>"
            f'<td><a href="#row-{r["row"]}">{r["row"]}</a> ({_e(r["rows"])})</td>'
            f"<td>{_e(r['quantity'])}</td><td>{_e(r['verdicts'])}</td></tr>"
        )
    parts.append("</table>")
    groups = [paper_claim(c) for c in df["claim"]]
    shown: set[str] = set()
    for r in summary.to_dict("records"):
        numbers = [i + 1 for i, g in enumerate(groups) if g == r["claim"]]
        parts += [
            f'<h2 id="{_anchor(r["claim"])}">{_e(r["claim"])}: {_verdict(r["verdict"])}</h2>',
            f"<p>Decided by row {r['row']} ({_e(r['decided_by'])}): {_e(r['quantity'])} = "
            f"<b>{_e(r['measured_text'])}</b>{' at ' + _e(r['setting']) if r['setting'] else ''}. "
            f"Its rows: {_e(r['verdicts'])}.</p>",
        ]
        for name in FIGURES_OF_CLAIM.get(r["claim"], ()):
            if name in manifest and folder is not None:
                if name in shown:  # each figure embedded once: later claims point to it
                    parts.append(f'<p class="small">Figure <a href="#fig-{_e(name)}">{_e(name)}</a> (above).</p>')
                else:
                    parts.append(figure_html(folder, name, manifest[name]))
                    shown.add(name)
        parts.append(_detail_table(df, numbers, r["row"]))
    rest = [n for n in manifest if n not in shown]
    if rest and folder is not None:
        parts.append('<h2 id="other-figures">Other figures</h2>')
        parts += [figure_html(folder, n, manifest[n]) for n in rest]
    asked_text = ", ".join(f"{k}={v}" for k, v in (asked or asked_setting(df)).items())
    parts += [
        '<h2 id="setting">Setting and provenance</h2>',
        f"<p>The ledger's setting: <code>{_e(setting or asked_text)}</code>.</p>",
        "<table>"
        + "".join(f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in provenance_rows(df).items())
        + f"<tr><th>rows from</th><td><code>{_e(source)}</code></td></tr>"
        + f"<tr><th>figures from</th><td><code>{_e(folder) if folder else '(none here)'}</code></td></tr>"
        + "</table>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


__all__ = ["FIGURES_OF_CLAIM", "default_figures_dir", "figure_html", "html_report", "provenance_rows"]
