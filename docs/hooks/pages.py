"""MkDocs hook: the pages of the site that are generated rather than written (mkdocs.yml, ``hooks``).

* ``tutorial.md`` — the tutorial notebook ``examples/tutorial.ipynb``: its markdown cells as they
  are and its code cells as Python blocks (the notebook is committed without outputs; the tests
  execute it). One source, so the page and the notebook cannot drift apart.
* ``api/<module>.md`` — one API page per nav entry under ``api/``: the page is the mkdocstrings
  directive ``::: <module>``. The list of documented modules lives only in the nav of mkdocs.yml.

And one rewrite of every page's markdown, :func:`isolate_display_math`: docs/theory.md writes display
math GitHub's way, ``$$ … $$`` inside a paragraph, which pymdownx.arithmatex only recognises as a
block of its own; the hook puts blank lines around each such block (the file itself is unchanged).

And one rewrite of every page's HTML, :func:`sphinx_roles_to_autorefs`: the docstrings cross-reference
in Sphinx's way (``:func:`integrate```, ``:class:`~theorydyn.result.Result```), which mkdocstrings'
Google parser leaves as text; the hook turns each into an optional autorefs link (a link when the
target is on the site, plain code otherwise, never a warning).

Nothing here touches the network or imports theorydyn (mkdocstrings reads the source itself).
"""

from __future__ import annotations

import json
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


def notebook_markdown(path: Path, shown: Path = NOTEBOOK) -> str:
    """The markdown of a notebook: markdown cells verbatim, code cells as fenced Python blocks;
    ``shown`` is the notebook's path as the page names it (relative to the repository)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    parts: list[str] = []
    for i, cell in enumerate(nb["cells"]):
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "markdown":
            parts.append(src)
        elif cell["cell_type"] == "code":
            parts.append(f"```python\n{src}\n```")
        if i == 0:
            parts.append(
                '!!! note "This page is a notebook"\n'
                f"    It is `{shown.as_posix()}` without its outputs. Run it with "
                f"`jupyter lab {shown.as_posix()}`, or execute it headless as the tests do "
                "(`tests/test_docs.py`, nbclient with the `python3` kernel)."
            )
    return "\n\n".join(parts) + "\n"


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

    return SPHINX_ROLE.sub(link, html)


def on_page_content(html: str, page: Any, config: Any, files: Files) -> str:
    src = page.file.src_uri
    module = src[len(API_DIR) : -len(".md")] if src.startswith(API_DIR) and src.endswith(".md") else None
    return sphinx_roles_to_autorefs(html, module)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    return isolate_display_math(markdown)


def on_files(files: Files, config: Any) -> Files:
    root = Path(config["config_file_path"]).resolve().parent
    files.append(File.generated(config, TUTORIAL_PAGE, content=notebook_markdown(root / NOTEBOOK)))
    for page in _nav_paths(config["nav"]):
        if page.startswith(API_DIR) and page.endswith(".md") and files.get_file_from_path(page) is None:
            module = page[len(API_DIR) : -len(".md")]
            files.append(File.generated(config, page, content=api_markdown(module)))
    return files
