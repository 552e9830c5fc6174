"""``python -m theorydyn.theorems`` (also ``theorydyn theorems``): exactly ``python -m theorydyn.verify
--only theorems`` (Theorems 3.1, 3.2, 4.2, Lemma 4.1 and N*), quick by default as this command always
was (``--full`` for the full sizes). The rows, their store and their ledger CSV are the ledger's."""
