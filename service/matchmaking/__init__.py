"""Matchmaking tickets: a player (or a party) waits for a table of players near their rating."""
