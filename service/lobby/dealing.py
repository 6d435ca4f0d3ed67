"""A table's game dealt once it starts: its empty seats filled with bots or dropped, as
chosen at creation, the game's version going on from the table's, the bots moving until a
human must decide, its clock started. For the lobby's creates, joins and starts alike."""

from __future__ import annotations

import msgspec

from domain.bots.clock import start_clock
from domain.bots.simulation import play_bots
from domain.game.engine import new_game
from domain.game.model import Event, GameState
from service.core.model import GameRecord
from service.core.ports import StoredEvent
from service.games.commands import Fill
from service.games.use_cases import GameService, bots_search, encode_events
from service.lobby.records import Dealt


class Dealer:
    """Deals a table's game with the game service's seeds, clock and bots."""

    def __init__(self, games: GameService) -> None:
        self.games = games

    def started(
        self, record: GameRecord, fill: Fill, version: int | None = None
    ) -> tuple[GameRecord, list[StoredEvent]]:
        """The table's game dealt: empty seats filled with bots or dropped, the game's
        version going on from the table's (or `version`), bots moving until a human must
        decide. For a change computed in a worker thread (a join, a start): a searching
        bot's moves are waited for there (`BotWork.blocking_step`)."""
        return self.seated(record, *self.ahead(record, fill, version))

    def ahead(
        self, record: GameRecord, fill: Fill, version: int | None = None
    ) -> tuple[Dealt, tuple[GameState, list[Event]]]:
        """`started` up to its clock: the deal and the bots' first moves (in a worker
        thread), which `seated` then starts at the time it is called."""
        dealt = self.dealt(record, fill, version)
        search = bots_search(dealt.state)
        return dealt, self.games.bots.blocking_step(search, play_bots, dealt.state)

    def dealt(self, record: GameRecord, fill: Fill, version: int | None) -> Dealt:
        """`started`'s deal: the new game before any bot moves, and the seats kept."""
        table = record.table
        assert table is not None
        kept = [(i, s) for i, s in enumerate(table.seats) if s.taken or fill == "bots"]
        players = [
            (s.name, s.bot) if s.taken else (f"Bot {i + 1}", table.fill_bot) for i, s in kept
        ]
        starting = table.starting_seat
        if starting is not None and starting >= len(players):
            starting = None  # its seat was dropped: drawn from the seed
        state, events = new_game(
            players,  # type: ignore[arg-type]
            table.seed or self.games.new_seed(),
            deck=table.deck,
            starting_seat=starting,
            rules=table.rules,
            version=table.version + 1 if version is None else version,
            entropy=[s.entropy if s.taken else "" for _, s in kept],
        )
        state = msgspec.structs.replace(state, takeover_bot=table.fill_bot)
        return Dealt(state=state, events=events, kept=kept)

    def seated(
        self, record: GameRecord, dealt: Dealt, moved: tuple[GameState, list[Event]]
    ) -> tuple[GameRecord, list[StoredEvent]]:
        """`started`'s end: the game after the bots' moves `moved`, its clock started, in
        the record with the kept seats' tokens and ids."""
        table = record.table
        assert table is not None
        state, bot_events = moved
        now = self.games.now()
        if table.clock is not None:
            state = start_clock(state, table.clock, now)
        kept = dealt.kept
        new = record.successor(
            state=state,
            token_hashes=tuple(record.token_hashes[i] for i, _ in kept),
            player_ids=tuple(s.player_id if s.taken else None for _, s in kept),
            verified=tuple(s.verified and s.taken for _, s in kept),
            updated_at=now,
        )
        return new, encode_events([*dealt.events, *bot_events])
