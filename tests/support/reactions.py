"""Reaction tables for tests of the relay and its reactions."""

from __future__ import annotations

from service.reactions.relay import EVENT_TYPES, RECORD_FACTS, ReactionTable


def every_kind(*reactions: object) -> ReactionTable:
    """A table that lists `reactions` for every kind of change."""
    return dict.fromkeys((*EVENT_TYPES, *RECORD_FACTS), reactions)  # type: ignore[misc]
