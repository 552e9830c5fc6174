"""``python -m theorydyn.stores`` (also ``theorydyn store``): commands on results stores; the library is
:mod:`theorydyn.infra.store` and :mod:`theorydyn.infra.store_merge`."""
