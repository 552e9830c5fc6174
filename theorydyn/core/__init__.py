"""The paper's objects: the setting and its data, model (T), the phases, the one result type.

* :mod:`.setting` — :class:`Setting` (Assumption 1, Simplification 3.1), one frozen validated dataclass;
* :mod:`.data` — the sampler of Assumption 1 (X: (N, D, d)), the labelling function f, Figure 2's data;
* :mod:`.model` — model (T): softmax attention, forward, logistic risk, analytic gradients;
* :mod:`.phases` — the phase detector of Section 4.1; :mod:`.result` — :class:`Result`, the trajectory schema;
* :mod:`.stats` — intervals over seeds, power-law fits; :mod:`.glm`, :mod:`.logreg` — Theorem 3.1's GLMs;
* :mod:`.validate` — the argument rules every solver and command shares;
* :mod:`.numba_activation`, :mod:`.plotting` — σ in Numba; the shared figure style.

Imports only :mod:`theorydyn.infra`.
"""

from typing import TYPE_CHECKING

from ..infra._lazy import lazy_exports

if TYPE_CHECKING:  # the names, for type checkers; at run time each submodule loads on first use (NumPy)
    from .phases import Phases
    from .result import Result
    from .setting import Setting

__all__ = ["Phases", "Result", "Setting"]
__getattr__, __dir__ = lazy_exports(__name__)
