"""The command layer: :mod:`.runner` (one runner: parsing, the global flags, the memory guard, output
probes, exit codes) and :mod:`.tools` (the pieces it is made of). Only commands import it.
"""

from __future__ import annotations

__all__: list[str] = []
