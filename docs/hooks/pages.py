"""MkDocs hook: the pages of the site that are generated rather than written (mkdocs.yml, ``hooks``).

* ``tutorial.md`` — the tutorial notebook ``examples/tutorial.ipynb``, executed at build time
  (:func:`executed_notebook`, nbclient with the ``python3`` kernel; a cell that raises fails the
  build): its markdown cells as they are, its code cells as Python blocks, each followed by its
  outputs (text as text, tables as HTML, figures as inline PNG data). The notebook is committed
  without outputs; the executed copy is cached under ``build/docs_cache``, keyed by the notebook and
  the package's source. ``THEORYDYN_DOCS_EXECUTE=0`` builds the page from the source alone.
* ``api/<module>.md`` — one API page per nav entry under ``api/``: the page is the mkdocstrings
  directive ``::: <module>``. The list of documented modules lives only in the nav of mkdocs.yml.

And one rewrite of every page's markdown, :func:`isolate_display_math`: docs/theory.md writes display
math GitHub's way, ``$$ … $$`` inside a paragraph, which pymdownx.arithmatex only recognises as a
block of its own; the hook puts blank lines around each such block (the file itself is unchanged).

And one rewrite of every page's HTML, :func:`sphinx_roles_to_autorefs`: the docstrings cross-reference
in Sphinx's way (``:func:`integrate```, ``:class:`~theorydyn.core.result.Result```), which mkdocstrings'
Google parser leaves as text; the hook turns each into an optional autorefs link (a link when the
target is on the site, plain code otherwise, never a warning).

And one more rewrite of every page's HTML, :func:`math_to_mathml`: the TeX that arithmatex wrapped
(``\\( … \\)`` inline, ``\\[ … \\]`` display) becomes MathML when the site is built (latex2mathml),
which browsers render natively: no script, no font and no network when the site is read.

Nothing here touches the network. The tutorial's kernel imports theorydyn; nothing else does
(mkdocstrings reads the source itself).
"""

from __future__ import annotations

import base64
import hashlib
import html as html_lib
import json
import os
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

NOTEBOOK = Path("examples") / "tutorial.ipynb"
TUTORIAL_PAGE = "tutorial.md"
API_DIR = "api/"


def _nav_paths(nav: Any) -> list[str]:
    """Every page path named in a (nested) mkdocs nav."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [p for v in nav.values() for p in _nav_paths(v)]
    if isinstance(nav, list):
        return [p for item in nav for p in _nav_paths(item)]
    return []


def _source(cell: dict[str, Any]) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else str(src)


def _output_markdown(out: dict[str, Any]) -> str:
    """One output of a code cell as markdown: a stream or plain text as a text block, a table (HTML)
    as raw HTML, a figure as an inline PNG (a data: URI, so the page fetches nothing)."""
    kind = out.get("output_type")
    if kind == "stream":
        text = "".join(out.get("text", ""))
        return f"```text\n{text.rstrip()}\n```" if text.strip() else ""
    if kind == "error":
        return f"```text\n{out.get('ename')}: {out.get('evalue')}\n```"
    data = out.get("data", {})
    if "image/png" in data:
        png = "".join(data["image/png"]).replace("\n", "")
        base64.b64decode(png, validate=True)  # a corrupt figure fails the build, not the reader
        return f'<img alt="figure" src="data:image/png;base64,{png}">'
    if "text/html" in data:
        return '<div class="nb-output">\n' + "".join(data["text/html"]).strip() + "\n</div>"
    if "text/plain" in data:
        return f"```text\n{''.join(data['text/plain']).rstrip()}\n```"
    return ""


def notebook_markdown(path: Path, shown: Path = NOTEBOOK, nb: dict[str, Any] | None = None) -> str:
    """The markdown of a notebook: markdown cells verbatim, code cells as fenced Python blocks, each
    followed by its outputs when ``nb`` (the notebook as executed) carries them; ``shown`` is the
    notebook's path as the page names it (relative to the repository)."""
    nb = nb if nb is not None else json.loads(path.read_text(encoding="utf-8"))
    executed = any(c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code")
    parts: list[str] = []
    for i, cell in enumerate(nb["cells"]):
        src = _source(cell)
        if cell["cell_type"] == "markdown":
            parts.append(src)
        elif cell["cell_type"] == "code":
            parts.append(f"```python\n{src}\n```")
            parts += [m for m in map(_output_markdown, cell.get("outputs", [])) if m]
        if i == 0:
            how = (
                "executed when this site was built: each cell's output is shown below it"
                if executed
                else "shown without its outputs (built with THEORYDYN_DOCS_EXECUTE=0)"
            )
            parts.append(
                '!!! note "This page is a notebook"\n'
                f"    It is `{shown.as_posix()}`, {how}. Run it with "
                f'`pip install -e ".[notebook]"` (JupyterLab and ipywidgets) and `jupyter lab {shown.as_posix()}`, '
                "or execute it headless as the tests do "
                "(`tests/test_docs.py`, nbclient with the `python3` kernel)."
            )
    return "\n\n".join(parts) + "\n"


def _source_key(root: Path, notebook: Path) -> str:
    """A hash of the notebook and every Python file of the package: the executed copy is reused only
    while neither changed."""
    h = hashlib.sha256(notebook.read_bytes())
    for f in sorted((root / "theorydyn").rglob("*.py")):
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def executed_notebook(root: Path, notebook: Path, timeout: int = 900) -> dict[str, Any]:
    """The notebook with its outputs: executed with nbclient in ``root`` (cells that raise fail the
    build with the cell and its traceback), cached in ``root/build/docs_cache`` by :func:`_source_key`."""
    cache = root / "build" / "docs_cache" / f"tutorial_{_source_key(root, notebook)}.ipynb"
    if cache.is_file():
        return dict(json.loads(cache.read_text(encoding="utf-8")))
    import nbformat  # the docs extra; imported here so that the other pages build without it
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(root)}}).execute()
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(".tmp")
    nbformat.write(nb, tmp)
    tmp.replace(cache)  # atomic: an interrupted build leaves no half-written cache
    return dict(json.loads(cache.read_text(encoding="utf-8")))


def api_markdown(module: str) -> str:
    return f"::: {module}\n"


def isolate_display_math(markdown: str) -> str:
    """Blank lines around every display-math block (a line starting with ``$$`` up to the line that
    ends with ``$$``), outside fenced code, so that arithmatex sees a block of its own."""
    out: list[str] = []
    fence: str | None = None
    in_math = False
    for line in markdown.split("\n"):
        stripped = line.strip()
        if not in_math and stripped.startswith(("```", "~~~")):
            mark = stripped[:3]
            fence = None if fence == mark else (fence or mark)
            out.append(line)
            continue
        if fence is None and not in_math and line.startswith("$$"):
            if out and out[-1].strip():
                out.append("")
            in_math = True
            stripped = stripped[2:]
        out.append(line)
        if in_math and stripped.endswith("$$"):
            out.append("")
            in_math = False
    return "\n".join(out)


SPHINX_ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|exc|obj):<code>(?P<target>[~.\w]+?)(?P<call>\(\))?</code>")


SPHINX_TITLED_ROLE = re.compile(
    r":(?:func|class|meth|mod|data|attr|exc|obj):<code>(?P<title>[^<&]+?) &lt;(?P<target>theorydyn[.\w]*)&gt;</code>"
)


def sphinx_roles_to_autorefs(html: str, module: str | None) -> str:
    """``:role:<code>target</code>`` → an optional autoref to ``target``; a name that is not absolute
    (no ``theorydyn.`` prefix) is read relative to ``module``, the page's module, when there is one."""

    def link(m: re.Match[str]) -> str:
        target = m["target"]
        short = target.startswith("~")
        target = target.lstrip("~")
        title = (target.rsplit(".", 1)[-1] if short else target.lstrip(".")) + (m["call"] or "")
        if module and not target.startswith("theorydyn."):
            target = f"{module}.{target.lstrip('.')}"
        return f'<autoref identifier="{target}" optional><code>{title}</code></autoref>'

    def titled(m: re.Match[str]) -> str:  # :mod:`manifest <theorydyn.figures.manifest>`
        return f'<autoref identifier="{m["target"]}" optional><code>{m["title"]}</code></autoref>'

    return SPHINX_ROLE.sub(link, SPHINX_TITLED_ROLE.sub(titled, html))


ARITHMATEX = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">\\(?P<open>[(\[])(?P<tex>.*?)\\(?P<close>[)\]])</(?P=tag)>', re.S
)


def math_to_mathml(html: str) -> str:
    """Every arithmatex-wrapped formula (generic mode: ``<span class="arithmatex">\\(…\\)</span>``,
    ``<div class="arithmatex">\\[…\\]</div>``) as MathML, inline or display, inside the same
    wrapper. Raises ValueError naming the formula when latex2mathml cannot read it."""
    from latex2mathml.converter import convert  # the docs extra

    def render(m: re.Match[str]) -> str:
        tex = html_lib.unescape(m["tex"]).strip()
        try:
            mathml = convert(tex, display="block" if m["open"] == "[" else "inline")
        except Exception as e:  # noqa: BLE001 — latex2mathml raises many types; the build names the formula
            raise ValueError(f"cannot turn TeX into MathML: {tex!r}: {type(e).__name__}: {e}") from e
        return f'<{m["tag"]} class="arithmatex">{mathml}</{m["tag"]}>'

    return ARITHMATEX.sub(render, html)


def on_page_content(html: str, page: Any, config: Any, files: Files) -> str:
    src = page.file.src_uri
    module = src[len(API_DIR) : -len(".md")] if src.startswith(API_DIR) and src.endswith(".md") else None
    return math_to_mathml(sphinx_roles_to_autorefs(html, module))


NAV_TEXT = re.compile(r'(<span class="md-ellipsis">)(.*?)(</span>)', re.S)
NAV_MATH = re.compile(r"\\\((.+?)\\\)")


def nav_math_to_mathml(html: str) -> str:
    """The table of contents repeats each heading as text, so a heading's ``\\(…\\)`` reaches it as
    TeX: turn those into inline MathML as well (only inside the nav's ``md-ellipsis`` labels)."""
    from latex2mathml.converter import convert  # the docs extra

    def label(m: re.Match[str]) -> str:
        inner = NAV_MATH.sub(lambda f: convert(html_lib.unescape(f[1]).strip()), m[2])
        return m[1] + inner + m[3]

    return NAV_TEXT.sub(label, html)


def on_post_page(output: str, page: Any, config: Any) -> str:
    return nav_math_to_mathml(output)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    return isolate_display_math(markdown)


def on_files(files: Files, config: Any) -> Files:
    root = Path(config["config_file_path"]).resolve().parent
    execute = os.environ.get("THEORYDYN_DOCS_EXECUTE", "1") != "0"
    nb = executed_notebook(root, root / NOTEBOOK) if execute else None
    files.append(File.generated(config, TUTORIAL_PAGE, content=notebook_markdown(root / NOTEBOOK, nb=nb)))
    for page in _nav_paths(config["nav"]):
        if page.startswith(API_DIR) and page.endswith(".md") and files.get_file_from_path(page) is None:
            module = page[len(API_DIR) : -len(".md")]
            files.append(File.generated(config, page, content=api_markdown(module)))
    return files
