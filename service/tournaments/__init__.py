"""Tournaments: their use cases and director (`use_cases`), their event feeds (`feeds`),
and who may read a game of a deal still played elsewhere (`secrecy`)."""
