"""A player's data: its export, its erasure (a pseudonym everywhere the player's id and
names are kept) and the erasure ledger that applies an erasure again after a restore."""
