"""Tournaments: their use cases (`use_cases`), their director (`director`), the saves both
make (`saving`), their event feeds (`feeds`), and who may read a game of a deal still
played elsewhere (`secrecy`)."""
