"""Real-image experiments of Section 6 (docs/theory.md §8): ViT with positional or vanilla attention.

Needs the ``vision`` extra (torch, scikit-learn). Entry points: ``python -m theorydyn.vision``
(training and the experiments of Figures 1a, 5 and 7) and ``python -m theorydyn.vision.bench``
(training throughput, positional against vanilla attention; its measurements, which return tables
and print nothing, are :mod:`theorydyn.vision.throughput`).
"""
