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
    for page in ("index.html", "theory/index.html", "tutorial/index.html"):
        assert (site / page).is_file(), page
    # every module of the nav got its page, rendered from its docstrings
    modules = _api_modules()
    assert "theorydyn.reduced" in modules and "theorydyn.claims" in modules
    for module in modules:
        html = (site / "api" / module / "index.html").read_text()
        assert f'id="{module}"' in html, f"no rendered docstring for {module}"
    reduced = (site / "api" / "theorydyn.reduced" / "index.html").read_text()
    assert 'id="theorydyn.reduced.integrate"' in reduced
    # the docstrings' Sphinx roles became links, not ":func:" text
    assert 'href="#theorydyn.reduced.integrate"' in reduced
    assert not any(
        re.search(r":(func|class|mod|data|meth):<code>", (site / "api" / m / "index.html").read_text()) for m in modules
    )
    # the math of the theory is handed to MathJax: no display math left as raw $$ text
    theory = (site / "theory" / "index.html").read_text()
    assert theory.count('<div class="arithmatex">') >= 15
    assert "$$" not in theory
    # the tutorial page is the notebook, its code cells highlighted
    tutorial = (site / "tutorial" / "index.html").read_text()
    assert "Tutorial: from a setting to a ledger row" in tutorial and "<code>examples/tutorial.ipynb</code>" in tutorial
    assert tutorial.count('<div class="highlight">') >= 7


def _hooks():
    _require("mkdocs")
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        return importlib.import_module("pages")
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))


def test_sphinx_roles_become_optional_autorefs():
    roles = _hooks().sphinx_roles_to_autorefs
    html = "see :func:<code>integrate</code> and :class:<code>~theorydyn.result.Result</code>, :mod:<code>.check</code>"
    assert roles(html, "theorydyn.reduced") == (
        'see <autoref identifier="theorydyn.reduced.integrate" optional><code>integrate</code></autoref> and '
        '<autoref identifier="theorydyn.result.Result" optional><code>Result</code></autoref>, '
        '<autoref identifier="theorydyn.reduced.check" optional><code>check</code></autoref>'
    )


def test_display_math_gets_a_block_of_its_own():
    isolate_display_math = _hooks().isolate_display_math
    md = "text\n$$ a = b,\nc = d. $$\nmore\n```\n$$ in code\n```\n$$ x $$\n"
    assert isolate_display_math(md) == "text\n\n$$ a = b,\nc = d. $$\n\nmore\n```\n$$ in code\n```\n\n$$ x $$\n\n"


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
    numbers = {k: float(v) for k, v in re.findall(r"^(.+?) = ([-+0-9.eE]+)$", text, flags=re.M)}
    # Theorem 4.1 (1) at the end of the reduced flow, and a simulator that learned the task
    assert numbers["reduced final association"] == 1.0, text
    assert 0.5 <= numbers["simulator final association"] <= 1.0, text
    assert numbers["simulator final err_f"] < 0.05, text
    print(f"tutorial notebook executed in {seconds:.1f} s")
