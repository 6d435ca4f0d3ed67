"""Matchmaking: a waiting ticket's rating window, and which waiting tickets sit together."""
