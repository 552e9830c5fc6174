"""The documentation site builds with ``mkdocs build --strict`` and the tutorial notebook runs.

Both need the ``docs`` extra (``pip install -e ".[docs]"``). Outside CI a missing extra skips these
tests; under CI (``CI`` set) it is an error, because CI installs the extra.
"""

import importlib
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "tutorial.ipynb"


def _require(*modules: str) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as e:
            if os.environ.get("CI"):
                pytest.fail(f"{name} is not installed under CI: install the docs extra (pip install -e '.[docs]'): {e}")
            pytest.skip(f"{name} is not installed (pip install -e '.[docs]')")


def _api_modules() -> list[str]:
    """The modules of the API reference: the nav entries api/<module>.md of mkdocs.yml."""
    return re.findall(r"api/([\w.]+)\.md", (ROOT / "mkdocs.yml").read_text())


@pytest.mark.slow
def test_mkdocs_build_strict(tmp_path):
    _require("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python", "pymdownx")
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    t0 = time.perf_counter()
    cmd = [
        sys.executable,
        "-m",
        "mkdocs",
        "build",
        "--strict",
        "--config-file",
        str(ROOT / "mkdocs.yml"),
        "--site-dir",
        str(site),
    ]
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    assert out.returncode == 0, f"mkdocs build --strict failed ({seconds:.1f} s):\n{out.stderr[-6000:]}"
    for page in ("index.html", "theory.html", "tutorial.html"):
        assert (site / page).is_file(), page
    # it browses from disk: every link of every page names a file that exists (no folder links)
    broken = _broken_links(site)
    assert not broken, f"{len(broken)} link(s) of the built site lead to no file, e.g. {broken[:5]}"
    # every module of the nav got its page, rendered from its docstrings
    modules = _api_modules()
    assert "theorydyn.reduced" in modules and "theorydyn.claims" in modules
    for module in modules:
        html = (site / "api" / f"{module}.html").read_text()
        assert f'id="{module}"' in html, f"no rendered docstring for {module}"
    reduced = (site / "api" / "theorydyn.reduced.html").read_text()
    assert 'id="theorydyn.reduced.integrate"' in reduced
    # the docstrings' Sphinx roles became links, not ":func:" text
    assert 'href="#theorydyn.reduced.integrate"' in reduced
    assert not any(
        re.search(r":(func|class|mod|data|meth):<code>", (site / "api" / f"{m}.html").read_text()) for m in modules
    )
    # the math of the theory is MathML, made at build time: no TeX left for a script to typeset
    theory = (site / "theory.html").read_text()
    assert theory.count('<div class="arithmatex"><math') >= 15 and theory.count("<math") >= 500
    assert "$$" not in theory and "\\(" not in theory and "\\[" not in theory
    # the tutorial page is the notebook executed at build time: code cells highlighted, outputs below
    tutorial = (site / "tutorial.html").read_text()
    assert "Tutorial: from a setting to a ledger row" in tutorial and "<code>examples/tutorial.ipynb</code>" in tutorial
    assert tutorial.count('<div class="highlight">') >= 7
    assert "reduced final association = 1.000" in tutorial and 'src="data:image/png;base64,' in tutorial
    assert tutorial.count('<div class="nb-output">') >= 3  # the DataFrames, as tables
    assert "Warning" not in tutorial, "the tutorial page shows a warning of its execution"
    # read offline: no page loads a script, stylesheet or font from the network
    remote = _remote_assets(site)
    assert not remote, f"{len(remote)} network URLs in the built site, e.g. {remote[:3]}"


def _broken_links(site: Path) -> list[str]:
    """Every href and src of the built site's pages that leads to no file when the site is opened from
    disk: a link to a folder (``usage/``, which a browser shows as a listing) or to a missing file.
    Links off the site (a scheme such as https: or mailto:, or //host) and data: URIs are left out, and
    so is 404.html (served by a web server only); a #fragment or ?query is dropped before the lookup."""
    attr = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']*)["']""", re.I)
    broken = []
    for page in sorted(site.rglob("*.html")):
        if page.relative_to(site).as_posix() == "404.html":
            continue  # what a web server sends for a missing page: its links are from the server's root
        for link in attr.findall(page.read_text(encoding="utf-8", errors="replace")):
            target = link.split("#", 1)[0].split("?", 1)[0]
            if not target or re.match(r"[a-z][a-z0-9+.-]*:|//", target, re.I):
                continue  # a link inside the page, off the site, or data:
            path = (page.parent / urllib.parse.unquote(target)).resolve()
            if not path.is_file():
                broken.append(f"{page.relative_to(site)} -> {link}" + (" (a folder)" if path.is_dir() else ""))
    return broken


def test_broken_links_are_found(tmp_path):
    (tmp_path / "api").mkdir()
    (tmp_path / "usage.html").write_text("x")
    (tmp_path / "api" / "m.html").write_text(
        '<a href="../usage.html#top">ok</a><a href="../usage/">folder</a><a href="../gone.html">gone</a>'
        '<img src="data:image/png;base64,AA"><a href="https://x.org/a/">off</a><a href="#here">in</a>'
        '<a href="../api/">folder</a><link href="../usage.html?v=1" rel="stylesheet">'
    )
    assert _broken_links(tmp_path) == [
        "api/m.html -> ../usage/",
        "api/m.html -> ../gone.html",
        "api/m.html -> ../api/ (a folder)",
    ]


def _hooks():
    _require("mkdocs")
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        return importlib.import_module("pages")
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))


def _remote_assets(site: Path) -> list[str]:
    """Every script src, link href (stylesheets, icons, fonts) and CSS url()/@import of the built site
    that points at the network (http:, https: or protocol-relative //); data: URIs are local."""
    remote = []
    tags = re.compile(r"<(?:script|link|img|iframe)\b[^>]*?\b(?:src|href)=[\"']([^\"']+)[\"']", re.I)
    css = re.compile(r"(?:url\(\s*[\"']?|@import\s+[\"'])((?:https?:)?//[^\"')\s]+)", re.I)
    for f in site.rglob("*"):
        if f.suffix in (".html", ".css", ".js"):
            text = f.read_text(encoding="utf-8", errors="replace")
            urls = tags.findall(text) if f.suffix == ".html" else []
            urls += css.findall(text) if f.suffix in (".css", ".html") else []
            remote += [f"{f.relative_to(site)}: {u}" for u in urls if re.match(r"(?:https?:)?//", u)]
    return remote


def test_remote_assets_are_found(tmp_path):
    (tmp_path / "a.html").write_text(
        '<script src="https://cdn.x/m.js"></script><link rel="stylesheet" href="//fonts.x/f.css">'
        '<script src="assets/b.js"></script><a href="https://example.org">a link is no asset</a>'
    )
    (tmp_path / "s.css").write_text(
        "a{background:url(\"data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg'/>\")}@import 'http://f/x.css';"
    )
    assert sorted(r.split(": ", 1)[1] for r in _remote_assets(tmp_path)) == [
        "//fonts.x/f.css",
        "http://f/x.css",
        "https://cdn.x/m.js",
    ]


def test_every_public_package_and_module_is_in_the_api_reference():
    pkg = ROOT / "theorydyn"
    public = {"theorydyn"} | {
        f"theorydyn.{p.stem if p.is_file() else p.name}"
        for p in pkg.iterdir()
        if not p.name.startswith("_") and (p.suffix == ".py" or (p / "__init__.py").is_file())
    }
    missing = sorted(public - set(_api_modules()))
    assert not missing, f"mkdocs.yml's API nav leaves out {missing}"


def test_tex_becomes_mathml():
    hooks = _hooks()
    html = (
        '<p>a <span class="arithmatex">\\(x_i &lt; \\sigma^2\\)</span></p>'
        '<div class="arithmatex">\\[\\frac{1}{8}\\]</div>'
    )
    out = hooks.math_to_mathml(html)
    assert out.count("<math") == 2 and "\\(" not in out and "\\[" not in out
    assert 'display="block"' in out and "<mfrac>" in out and "&#x0003C;" in out  # the escaped &lt; read back as "<"
    with pytest.raises(ValueError, match="cannot turn TeX"):
        hooks.math_to_mathml('<span class="arithmatex">\\(x^\\)</span>')  # a superscript without its argument


def test_the_tutorial_page_shows_the_outputs_of_an_executed_notebook(tmp_path):
    hooks = _hooks()
    nb = {
        "cells": [
            {"cell_type": "markdown", "source": ["# T"]},
            {
                "cell_type": "code",
                "source": "print(1)",
                "outputs": [
                    {"output_type": "stream", "name": "stdout", "text": ["x = 1\n"]},
                    {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}},
                    {"output_type": "execute_result", "data": {"text/html": "<table></table>", "text/plain": "df"}},
                ],
            },
        ]
    }
    md = hooks.notebook_markdown(tmp_path / "nb.ipynb", nb=nb)
    assert "```text\nx = 1\n```" in md and 'src="data:image/png;base64,iVBORw0KGgo="' in md
    assert '<div class="nb-output">\n<table></table>\n</div>' in md and "executed when this site was built" in md


def test_sphinx_roles_become_optional_autorefs():
    roles = _hooks().sphinx_roles_to_autorefs
    html = (
        "see :func:<code>integrate</code> and :class:<code>~theorydyn.core.result.Result</code>, "
        ":mod:<code>.check</code>"
    )
    assert roles(html, "theorydyn.reduced") == (
        'see <autoref identifier="theorydyn.reduced.integrate" optional><code>integrate</code></autoref> and '
        '<autoref identifier="theorydyn.core.result.Result" optional><code>Result</code></autoref>, '
        '<autoref identifier="theorydyn.reduced.check" optional><code>check</code></autoref>'
    )


def test_display_math_gets_a_block_of_its_own():
    isolate_display_math = _hooks().isolate_display_math
    md = "text\n$$ a = b,\nc = d. $$\nmore\n```\n$$ in code\n```\n$$ x $$\n"
    assert isolate_display_math(md) == "text\n\n$$ a = b,\nc = d. $$\n\nmore\n```\n$$ in code\n```\n\n$$ x $$\n\n"


def test_the_notebook_extra_brings_jupyterlab_and_the_widgets_the_docs_extra_executes_with():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    pins = {e.split("==")[0]: e for e in extras["notebook"]}
    assert set(pins) >= {"jupyterlab", "ipywidgets", "ipykernel"} and all("==" in e for e in pins.values())
    # the tests execute the tutorial with the docs extra: the same kernel and widgets as a JupyterLab user's
    assert {pins["ipywidgets"], pins["ipykernel"]} <= set(extras["docs"])


def test_tutorial_notebook_is_committed_without_outputs():
    nb = json.loads(NOTEBOOK.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(c["outputs"] == [] and c["execution_count"] is None for c in code)


@pytest.mark.slow
def test_tutorial_notebook_runs():
    _require("nbclient", "nbformat", "ipykernel")
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    t0 = time.perf_counter()
    # raises CellExecutionError, with the cell and its traceback, if any cell fails
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    seconds = time.perf_counter() - t0
    text = "".join(
        o.get("text", "")
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "stream" and o.get("name") == "stdout"
    )
    # no warning in any output (the TqdmWarning "IProgress not found" of a kernel without ipywidgets, say)
    warned = [
        f"cell {i}: {o.get('text', '') or o.get('evalue', '')}"[:300]
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code"
        for o in c.outputs
        if (o.output_type == "stream" and o.get("name") == "stderr") or "Warning" in str(o.get("text", ""))
    ]
    assert not warned, f"{len(warned)} output(s) on stderr or with a warning: {warned}"
    numbers = {k: float(v) for k, v in re.findall(r"^(.+?) = ([-+0-9.eE]+)$", text, flags=re.M)}
    # Theorem 4.1 (1) at the end of the reduced flow, and a simulator that learned the task
    assert numbers["reduced final association"] == 1.0, text
    assert 0.5 <= numbers["simulator final association"] <= 1.0, text
    assert numbers["simulator final err_f"] < 0.05, text
    print(f"tutorial notebook executed in {seconds:.1f} s")
