"""The lobby: creating tables, joining, leaving, starting, listing open tables."""
