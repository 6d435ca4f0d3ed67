"""The commands: each change a client can ask of a game, as data.

The HTTP entrypoint (`service/entrypoints/api/`) decodes a request once, strictly, learns its caller once
(`service.entrypoints.api.identity`), and builds one of these; one use case handles each (`Lobby.create`,
`join`, `leave`, `reissue`, `start`, `cancel`, `abort`; `GameService.act`). A command carries everything its handler needs and nothing of HTTP, so the use
cases are driven the same way by the API, the tools and the tests (`tests/unit`).

`fingerprint_fields` is what identifies a command sent with an `Idempotency-Key` beyond the
key (`service.core.idempotency.fingerprint`): its decoded fields, without the caller (whose scope
keys the entry) and without the game it targets (the entry lives in that game).
"""

from __future__ import annotations

from typing import Literal

import msgspec

from domain.game.model import Action, Rules, TimeControl
from service.core.callers import Caller
from service.core.model import TableRef

Fill = Literal["bots", "drop"]
# characters of a name (a player's, a tournament's), as sent: the request schemas state it
# and the text policy enforces it at the one boundary (`service.entrypoints.api.boundary`)
NAME_LIMIT = 40


class SeatRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A seat as the creator asks for it: a bot, a human the creator seats now (`name`), a
    seat reserved for `player_id`, or one open to anyone."""

    name: str | None = None
    bot: str | None = None
    player_id: str | None = None
    open: bool = False


class Command(msgspec.Struct, frozen=True, kw_only=True):
    """Who asks: the caller as the entrypoint established it."""

    caller: Caller


class CreateTable(Command, frozen=True, kw_only=True):
    """A table for these seats (a game dealt at once when every seat is taken)."""

    seats: tuple[SeatRequest, ...]
    private: bool = False
    fill: Fill = "bots"  # what empty seats become if the host starts early
    fill_bot: str = "basic"  # also the bot that plays a seat taken over or resigned
    starting_seat: int | None = None
    deck: tuple[str, ...] | None = None
    rules: Rules | None = None
    clock: TimeControl | None = None
    # a tournament's table (`service.tournaments.use_cases`): the game's seed and where it belongs;
    # never sent by a client
    seed: str | None = None
    tournament: TableRef | None = None
    # False: a casual game, never ranked (a casual matchmaking ticket's table); never sent by
    # a client
    ranked: bool = True
    idempotency_key: str | None = None
    # the client's network address as the entrypoint saw it: an anonymous host's quota of
    # open tables is counted by it (`Lobby.create`); None (tools, tests): no quota
    origin: str | None = None

    def fingerprint_fields(self) -> tuple:
        fields = (
            list(self.seats), self.private, self.fill, self.fill_bot, self.starting_seat,
            self.deck, self.rules, self.clock,
        )  # fmt: skip
        if self.seed is None and self.tournament is None and self.ranked:
            return fields  # as every create was fingerprinted before tournaments
        if self.ranked:
            return (*fields, self.seed, self.tournament)
        return (*fields, self.seed, self.tournament, self.ranked)


class JoinSeat(Command, frozen=True, kw_only=True):
    """Take a seat of an open table: the one reserved for the player, the one asked for, or
    the first open one."""

    game_id: str
    name: str | None = None
    seat: int | None = None
    invite: str | None = None  # a private table's invite code
    player_id: str | None = None
    idempotency_key: str | None = None
    entropy: str = ""  # what the player adds to the deal (`domain.game.fairness`)

    def fingerprint_fields(self) -> tuple:
        fields = (self.name, self.seat, self.invite, self.player_id)
        return (*fields, self.entropy) if self.entropy else fields


class LeaveSeat(Command, frozen=True, kw_only=True):
    """Give a seat back before the start."""

    game_id: str
    seat: int


class ReissueToken(Command, frozen=True, kw_only=True):
    """A fresh seat token for a taken seat (the old one stops working)."""

    game_id: str
    seat: int


class StartTable(Command, frozen=True, kw_only=True):
    """The host starts the table now."""

    game_id: str


class CancelTable(Command, frozen=True, kw_only=True):
    """The host calls off a table that has not started."""

    game_id: str


class AbortGame(Command, frozen=True, kw_only=True):
    """The host (or the platform) stops a live game."""

    game_id: str


class Act(Command, frozen=True, kw_only=True):
    """One action of the caller's seat; with `expected_version`, only on that version."""

    game_id: str
    action: Action
    expected_version: int | None = None
    idempotency_key: str | None = None
