"""``python -m theorydyn.stores`` (also ``theorydyn store``): commands on results stores; the library is
:mod:`theorydyn.store` and :mod:`theorydyn.store_merge`."""
