"""The lobby's use cases: tables created open, joined, left, started, cancelled, aborted;
seat tokens reissued; games listed. Free of HTTP, like `service.games.use_cases`.

A table is a `GameRecord` without engine state (`state` None) and with a `Table`: its seats,
who may take them, how it starts. Every change is one save with the record's stamp
compared (`Games.save`), retried on the game as stored when another request won the
race, so 50 players joining the last seat at once leave exactly one seated. A table's
creation is `service.lobby.creation`, the deal of its game when it starts
`service.lobby.dealing`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import msgspec

from domain.game.model import Rules, TimeControl
from service.core.callers import ANONYMOUS, Caller
from service.core.errors import ServiceError
from service.core.model import OPEN_INDEX, GameRecord, Seat, player_index
from service.core.ports import (
    Games,
    IdempotentResponse,
    Listings,
    StoredEvent,
)
from service.core.unit_of_work import write
from service.games.commands import (
    AbortGame,
    CancelTable,
    CreateTable,
    JoinSeat,
    LeaveSeat,
    ReissueToken,
    SeatRequest,
    StartTable,
)
from service.games.use_cases import (
    GameService,
    token_matches,
)
from service.lobby.creation import TableCreation
from service.lobby.dealing import Dealer
from service.lobby.records import (
    Joined,
    Keyed,
    Page,
    Ready,
    TableCreated,
    decode_cursor,
    encode_cursor,
    new_token,
    replace_at,
)
from service.lobby.seating import joined_again, open_table, refusal, require_credentials, seat_for
from service.lobby.to_move import player_page


class _Changed(Exception):
    """A start dealt ahead met its table changed since (`Lobby.start_scheduled`)."""


class LobbyStore(Games, Listings, Protocol):
    """What the lobby reads of the game service's store itself: the responses remembered
    under an idempotency key, the listings (every write goes through the game service)."""


class Lobby:
    """Tables for real people, on the game service's store, clock and archive hand-off."""

    def __init__(self, games: GameService, *, identities_open: bool = True) -> None:
        self.games = games
        self.store: LobbyStore = games.store
        self.identities_open = identities_open  # nothing configured: ids are unverified
        self.dealer = Dealer(games)
        self.creation = TableCreation(games, self.dealer, identities_open=identities_open)

    def require_credentials(self, caller: Caller) -> None:
        require_credentials(caller, self.identities_open)

    # ------------------------------------------------------------ creating

    async def create(self, command: CreateTable) -> TableCreated:
        """A table, or a game dealt at once (`TableCreation.create`)."""
        return await self.creation.create(command)

    async def deal(
        self,
        players: Sequence[tuple[str, str | None]],
        *,
        starting_seat: int | None = None,
        deck: Sequence[str] | None = None,
        rules: Rules | None = None,
        clock: TimeControl | None = None,
    ) -> TableCreated:
        """A game dealt at once for (name, bot level or None) seats, as an anonymous caller
        creates it (tools, benchmarks, tests)."""
        seats = tuple(SeatRequest(name=name, bot=bot) for name, bot in players)
        return await self.create(
            CreateTable(
                caller=ANONYMOUS,
                seats=seats,
                starting_seat=starting_seat,
                deck=None if deck is None else tuple(deck),
                rules=rules,
                clock=clock,
            )
        )

    # ------------------------------------------------------------ joining and leaving

    async def join(self, command: JoinSeat) -> Joined:
        """Take a seat; the table starts when this fills it. With an `idempotency_key` the
        outcome is saved with the join (`_update`): a copy of it gets the first outcome."""
        caller, pid, wanted = command.caller, command.player_id, command.seat
        pid, verified = self._joiner(caller, pid)
        issued: dict[str, Any] = {}
        keyed = None
        if command.idempotency_key is not None:
            keyed = Keyed("join", command, command.idempotency_key)

        def outcome(record: GameRecord) -> IdempotentResponse:  # keyed: see `_update`
            index = issued["seat"]
            assert keyed is not None
            return keyed.outcome(record, index, tokens=[(index, issued["token"])])

        def change(record: GameRecord) -> tuple[GameRecord, list[StoredEvent]]:
            table = open_table(record)
            if table.private and not caller.platform:
                reserved = pid is not None and any(s.player_id == pid for s in table.seats)
                if not reserved and not token_matches(table.invite_hash, command.invite):
                    raise ServiceError("invite_required")
            index = seat_for(table, pid, wanted)
            token, token_hash = new_token(record.id, index)
            taken = Seat(
                name=command.name or pid or f"Player {index + 1}",
                player_id=pid,
                verified=verified,
                open=table.seats[index].open,
                entropy=command.entropy,
            )
            new_table = msgspec.structs.replace(
                table,
                seats=replace_at(table.seats, index, taken),
                version=table.version + 1,
            )
            new = record.successor(
                table=new_table,
                token_hashes=replace_at(record.token_hashes, index, token_hash),
                updated_at=self.games.now(),
            )
            issued.update(seat=index, token=token)
            if all(s.taken for s in new_table.seats):
                return self.dealer.started(new, new_table.fill)
            return new, []

        record, events = await self._update(command.game_id, change, keyed, outcome)
        if keyed is not None and keyed.prior is not None:
            return joined_again(keyed.prior)
        return Joined(record=record, seat=issued["seat"], token=issued["token"], events=events)

    def _joiner(self, caller: Caller, player_id: str | None) -> tuple[str | None, bool]:
        """The player_id a join seats, and whether it is proven."""
        if caller.kind == "player":
            if player_id is not None and player_id != caller.player_id:
                raise ServiceError("player_id_not_yours")
            return caller.player_id, True
        if caller.platform:
            return player_id, player_id is not None
        self.require_credentials(caller)
        return player_id, False

    async def leave(self, command: LeaveSeat) -> GameRecord:
        """Give a seat back before the start: it is open (or reserved) again."""
        caller, seat = command.caller, command.seat

        def change(record: GameRecord) -> tuple[GameRecord, list[StoredEvent]]:
            self._check_seat_holder(caller, record, seat)  # who, before what (401 first)
            table = open_table(record)
            was = table.seats[seat]
            if table.scheduled:
                raise ServiceError("seat_unavailable", "A scheduled table's seats are fixed.")
            if was.bot is not None:
                raise ServiceError("seat_unavailable", "A bot's seat cannot be left.")
            empty = Seat(open=True) if was.open else Seat(player_id=was.player_id)
            new_table = msgspec.structs.replace(
                table, seats=replace_at(table.seats, seat, empty), version=table.version + 1
            )
            new = record.successor(
                table=new_table,
                token_hashes=replace_at(record.token_hashes, seat, None),
                updated_at=self.games.now(),
            )
            return new, []

        record, _ = await self._update(command.game_id, change)
        return record

    async def reissue(self, command: ReissueToken) -> tuple[GameRecord, str]:
        """A fresh seat token for a taken seat; the old one stops working at once."""
        caller, seat = command.caller, command.seat
        issued: list[str] = []

        def change(record: GameRecord) -> tuple[GameRecord, list[StoredEvent]]:
            self._check_seat_holder(caller, record, seat)
            if record.ended:
                raise ServiceError("game_over")
            token, token_hash = new_token(record.id, seat)
            issued[:] = [token]
            new = record.successor(
                token_hashes=replace_at(record.token_hashes, seat, token_hash),
                updated_at=self.games.now(),
            )
            return new, []

        record, _ = await self._update(command.game_id, change)
        return record, issued[0]

    def _check_seat_holder(self, caller: Caller, record: GameRecord, seat: int) -> None:
        """The platform, the seat's verified player, or the holder of its seat token."""
        if caller.kind == "anonymous" and caller.seat_token is None:
            raise ServiceError("unauthorized")
        if not 0 <= seat < len(record.token_hashes):
            raise ServiceError("seat_not_found")
        if caller.platform:
            return
        if caller.kind == "player" and record.verified_seat_of(caller.player_id) == seat:
            return
        if token_matches(record.token_hashes[seat], caller.seat_token):
            return
        raise refusal(caller, record, "not_your_seat")

    # ------------------------------------------------------------ the host's decisions

    async def start(self, command: StartTable) -> tuple[GameRecord, list[StoredEvent]]:
        """Start now: empty seats become bots or are dropped, as chosen at creation."""
        caller = command.caller

        def change(record: GameRecord) -> tuple[GameRecord, list[StoredEvent]]:
            self._check_host(caller, record)
            table = open_table(record)
            if not any(s.taken and s.bot is None for s in table.seats):
                raise ServiceError("no_players")
            return self.dealer.started(record, table.fill)

        return await self._update(command.game_id, change)

    def ready_to_start(self, record: GameRecord) -> Ready | None:
        """A scheduled table's deal and its bots' first moves, made ahead of its time (in a
        worker thread), so that its start then is a save alone (`start_scheduled`); None for
        a table that is no longer open."""
        if record.status != "open" or record.table is None:
            return None
        return Ready(record, *self.dealer.ahead(record, record.table.fill))

    async def start_scheduled(
        self, game_id: str, ready: Ready | None = None, *, relay_now: bool = True
    ) -> GameRecord:
        """A scheduled table's start (its time came, or its creator starts it early): dealt
        as any table's start is, from `ready` (`ready_to_start`) while the table is still as
        it was read then. A table started or cancelled already is left as it is (a start run
        twice, on two replicas or after a crash, deals it once). `relay_now` False: its
        reactions (`game_started`'s webhooks) are left to the relay's workers
        (`GameService.store_change`)."""

        def change(record: GameRecord) -> tuple[GameRecord, list[StoredEvent]]:
            fill = open_table(record).fill
            if ready is None:
                return self.dealer.started(record, fill)
            if record.stamp != ready.record.stamp:
                raise _Changed  # dealt ahead from another table than this one
            return self.dealer.seated(record, ready.dealt, ready.moved)  # no search: inline

        try:
            first = None if ready is None else ready.record
            record, _ = await self._update(
                game_id, change, first=first, inline=ready is not None, relay_now=relay_now
            )
        except _Changed:
            return await self.start_scheduled(game_id, relay_now=relay_now)
        except ServiceError as error:
            if error.code != "game_not_open":
                raise
            record = await self.games.get(game_id)
        return record

    async def cancel(self, command: CancelTable) -> GameRecord:
        """Call off a table that has not started."""
        caller = command.caller

        def change(record: GameRecord) -> tuple[GameRecord, list[StoredEvent]]:
            self._check_host(caller, record)
            table = open_table(record)
            new_table = msgspec.structs.replace(table, cancelled=True, version=table.version + 1)
            return record.successor(table=new_table, updated_at=self.games.now()), []

        record, _ = await self._update(command.game_id, change)
        return record

    async def abort(self, command: AbortGame) -> GameRecord:
        """Stop a live game: it is archived as aborted (never ranked)."""
        caller = command.caller

        def change(record: GameRecord) -> tuple[GameRecord, list[StoredEvent]]:
            self._check_host(caller, record)
            if record.status == "open":
                raise ServiceError("game_not_started", "Cancel a table that has not started.")
            if record.ended:
                raise ServiceError("game_over")
            return record.successor(aborted=True, updated_at=self.games.now()), []

        record, _ = await self._update(command.game_id, change)
        return record

    def _check_host(self, caller: Caller, record: GameRecord) -> None:
        if caller.platform:
            return
        if caller.kind == "player" and record.host_id is not None:
            if caller.player_id == record.host_id:
                return
        elif token_matches(record.host_token_hash, caller.seat_token):
            return
        if caller.kind == "anonymous" and caller.seat_token is None:
            raise ServiceError("unauthorized", "The host's credential is needed.")
        raise refusal(caller, record, "not_host")

    # ------------------------------------------------------------ saving

    async def _update(
        self,
        game_id: str,
        change: Callable[[GameRecord], tuple[GameRecord, list[StoredEvent]]],
        keyed: Keyed | None = None,
        outcome: Callable[[GameRecord], IdempotentResponse] | None = None,
        *,
        first: GameRecord | None = None,
        inline: bool = False,
        relay_now: bool = True,
    ) -> tuple[GameRecord, list[StoredEvent]]:
        """Apply `change` to the stored game and save it with its stamp compared; on a lost
        race, judge the change again on the game as it is now. `keyed`: a change sent with
        an Idempotency-Key, its `outcome` saved with it; when the game remembers one for
        that key already (before each try: the race may have been lost to a copy), nothing
        is changed and `keyed.prior` holds it. `first`: the game as read before (its save
        compares its stamp: a game changed since is read again and judged anew); `inline`: the
        change is computed on the event loop (it cannot start a bot's search); `relay_now`: see
        `GameService.store_change`."""

        async def attempt(record: GameRecord) -> tuple[GameRecord, list[StoredEvent]]:
            if keyed is not None:
                prior = await self.store.idempotent_response(game_id, keyed.entry)
                if prior is not None:
                    first = keyed.first(prior)
                    return first.record, first.events
            # a change may start the game, and bots then move first (`Dealer.started`): in a
            # worker thread, whose searching bots' moves the pool computes (`blocking_step`)
            new, events = change(record) if inline else await asyncio.to_thread(change, record)
            remembered = None
            if keyed is not None and outcome is not None:
                remembered = (keyed.entry, outcome(new))
            new = await self.games.store_change(
                record, new, events, remembered, relay_now=relay_now
            )
            return new, events

        record = first if first is not None else await self.games.get(game_id)
        return await write(
            record, attempt, self.games.retry, gone="game_not_found", stale=first is not None,
            reread=lambda: self.games.get(game_id),
        )  # fmt: skip

    # ------------------------------------------------------------ listing

    async def list_open(self, cursor: str | None, limit: int) -> Page:
        return await self._page(OPEN_INDEX, cursor, limit)

    async def list_player(
        self, caller: Caller, player_id: str, cursor: str | None, limit: int
    ) -> Page:
        """A player's open tables and live games, those waiting on them first
        (`service.lobby.to_move`): for that player (JWT) or the platform; anyone while the
        service is open (identities unverified)."""
        if not caller.may_claim(player_id) and not self.identities_open:
            raise ServiceError(
                "player_id_not_yours", "Only that player or the platform may list them."
            )
        return await player_page(
            self.store.list_games, player_index(player_id), player_id, cursor, limit
        )

    async def _page(self, index: str, cursor: str | None, limit: int) -> Page:
        games = await self.store.list_games(index, decode_cursor(cursor), limit + 1)
        more = len(games) > limit
        games = games[:limit]
        last = games[-1] if games and more else None
        return Page(
            games=games,
            next_cursor=None if last is None else encode_cursor(last.created_at, last.id),
        )
