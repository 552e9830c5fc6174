"""The one progress style of theorydyn: a tqdm bar on stderr, silent when disabled.

Every long computation takes ``progress: bool`` and reports through :func:`progress_bar`; the
CLIs turn it off with ``--quiet``. tqdm draws one line that redraws in place (no stream of log
lines), and writes nothing when stderr is not a terminal only if ``disable`` is set — the CLIs
pass ``progress=not args.quiet``.
"""

from __future__ import annotations

import sys

from tqdm.auto import tqdm


def progress_bar(enabled: bool, total: float | None, desc: str, unit: str = "it", **kw) -> tqdm:
    """A tqdm bar on stderr (``disable=not enabled``); update it with ``bar.update(n)`` or
    ``bar.n = x; bar.refresh()`` and close it with ``bar.close()`` (or use it as a context)."""
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        disable=not enabled,
        file=sys.stderr,
        leave=False,
        dynamic_ncols=True,
        mininterval=0.5,
        **kw,
    )
