"""Bulk pairing: the platform's tables by the hundred, each a scheduled table of the lobby,
started together at a time by a leased job."""
