"""The lobby's use cases: tables created open, joined, left, started, cancelled, aborted;
seat tokens reissued; games listed. Free of HTTP, like `service.games.use_cases`.

A table is a `GameRecord` without engine state (`state` None) and with a `Table`: its seats,
who may take them, how it starts. Every change is one save with the record's stamp
compared (`Games.save`), retried on the game as stored when another request won the
race, so 50 players joining the last seat at once leave exactly one seated.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import msgspec

from domain.bots.clock import start_clock
from domain.bots.simulation import play_bots
from domain.game.engine import new_game
from domain.game.errors import RuleError
from domain.game.model import Event, GameState, Rules, TimeControl
from service.core import idempotency
from service.core.callers import ANONYMOUS, Caller
from service.core.errors import ServiceError
from service.core.model import OPEN_INDEX, GameRecord, Seat, Table, player_index
from service.core.ports import (
    GameExists,
    Games,
    IdempotentResponse,
    Listings,
    StoredEvent,
)
from service.core.quotas import GRACE, Quota, owner_of
from service.core.unit_of_work import write
from service.games.commands import (
    AbortGame,
    CancelTable,
    CreateTable,
    Fill,
    JoinSeat,
    LeaveSeat,
    ReissueToken,
    SeatRequest,
    StartTable,
)
from service.games.use_cases import (
    GameService,
    bots_search,
    encode_events,
    hash_token,
    token_matches,
)
from service.lobby.records import (
    Dealt,
    Joined,
    Keyed,
    Page,
    TableCreated,
    decode_cursor,
    encode_cursor,
    new_token,
    replace_at,
)
from service.lobby.seating import joined_again, open_table, refusal, seat_for


class LobbyStore(Games, Listings, Protocol):
    """What the lobby reads of the game service's store itself: the responses remembered
    under an idempotency key, the listings (every write goes through the game service)."""


class Lobby:
    """Tables for real people, on the game service's store, clock and archive hand-off."""

    def __init__(self, games: GameService, *, identities_open: bool = True) -> None:
        self.games = games
        self.store: LobbyStore = games.store
        self.identities_open = identities_open  # nothing configured: ids are unverified
        settings = games.settings
        self.open_tables = Quota(
            games.store, "open-tables", settings.max_open_tables, "too_many_open_tables",
            self._still_open, keep=settings.idle_ttl + 2 * int(GRACE),
            retry_after=lambda oldest, now: oldest + settings.idle_ttl - now,
        )  # fmt: skip

    def require_credentials(self, caller: Caller) -> None:
        if caller.kind == "anonymous" and not self.identities_open:
            raise ServiceError("authentication_required")

    # ------------------------------------------------------------ creating

    async def create(self, command: CreateTable) -> TableCreated:
        """A table waiting for players, or a game started at once when every seat is taken
        (a bot, or a human the creator seats: their tokens are in `tokens`). `clock`: the
        game's time control (none: no clock); `fill_bot` is also the bot that plays a seat
        taken over after timeouts or resigned. With an `idempotency_key`: `_store_created`."""
        caller, seats = command.caller, tuple(command.seats)
        deck = None if command.deck is None else tuple(command.deck)
        self._check_create(caller, seats, command.starting_seat, deck)
        game_id, keyed = self._new_id(command)
        made = [self._seat_at_creation(caller, game_id, i, s) for i, s in enumerate(seats)]
        table_seats = [seat for seat, _ in made]
        hashes = [None if token is None else hash_token(token) for _, token in made]
        tokens = [(i, token) for i, (_, token) in enumerate(made) if token is not None]
        host_token = host_hash = invite = None
        if caller.kind == "anonymous":
            host_token, host_hash = new_token(game_id, "host")
        if command.private:
            invite = secrets.token_urlsafe(12)
        now = self.games.now()
        record = GameRecord(
            id=game_id,
            state=None,
            token_hashes=tuple(hashes),
            created_at=now,
            updated_at=now,
            custom_deck=deck is not None,
            table=Table(
                seats=tuple(table_seats),
                invite_hash=None if invite is None else hash_token(invite),
                fill=command.fill,
                fill_bot=command.fill_bot,
                starting_seat=command.starting_seat,
                deck=deck,
                rules=command.rules,
                clock=command.clock,
                seed=command.seed,
            ),
            tournament=command.tournament,
            host_id=caller.player_id if caller.kind == "player" else None,
            host_token_hash=host_hash,
            host=owner_of(caller, command.origin),
        )
        events: list[StoredEvent] = []
        if all(s.taken for s in table_seats):  # nobody awaited: the game starts at version 0
            # dealt on the loop, the bots' first moves awaited from the pool (no thread)
            dealt = self._dealt(record, command.fill, 0)
            moved = await self.games.bots.step(bots_search(dealt.state), play_bots, dealt.state)
            record, events = self._seated(record, dealt, moved)
        else:
            await self._hold_open_table(record, keyed)
        made = TableCreated(record=record, tokens=tokens, host_token=host_token, invite_code=invite)
        return await self._store_created(made, events, keyed)

    async def _hold_open_table(self, record: GameRecord, keyed: Keyed | None) -> None:
        """Count a table about to be created open in its host's quota (`service.core.quotas`:
        a table counts while it is open), or refuse: 429 `too_many_open_tables`, with
        Retry-After the seconds until the host's oldest open table would expire idle
        (`TEN_IDLE_TTL` after its creation at the earliest; starting or cancelling one frees
        a slot at once). A copy of a keyed create whose table is stored is let through:
        `_store_created` answers it."""
        try:
            await self.open_tables.take(record.host, record.id, record.created_at)
        except ServiceError:
            if keyed is not None and await self.store.load(record.id) is not None:
                return
            raise

    async def _still_open(self, game_ids: Sequence[str]) -> dict[str, bool]:
        """Of these games, the ones stored, and whether each is still an open table."""
        found = {}
        for game_id in game_ids:
            record = await self.store.load(game_id)
            if record is not None:
                found[game_id] = record.status == "open"
        return found

    def _new_id(self, command: CreateTable) -> tuple[str, Keyed | None]:
        """A new game's id: random, or with an Idempotency-Key derived from it (a keyed
        create, with its fingerprint)."""
        key = command.idempotency_key
        if key is None:
            return self.games.new_game_id(), None
        game_id = idempotency.created_game_id(command.caller.scope, key)
        return game_id, Keyed("create", command, key)

    async def _store_created(
        self, made: TableCreated, events: list[StoredEvent], keyed: Keyed | None
    ) -> TableCreated:
        """Store a created game. A keyed one's id is derived from the caller's scope and the
        key (`idempotency.created_game_id`), and its outcome is stored with it: a copy of the
        create, after the first or beside it, finds the id taken and gets the first outcome
        (`replayed`)."""
        remembered = None
        if keyed is not None:
            credentials = {"host_token": made.host_token, "invite_code": made.invite_code}
            outcome = keyed.outcome(made.record, None, tokens=made.tokens, **credentials)
            remembered = (keyed.entry, outcome)
        try:
            record = await self.games.store_new(made.record, events, remembered)
        except GameExists as taken:
            if keyed is None:
                raise
            first = keyed.first(taken.remembered)
            return TableCreated(
                record=first.record, tokens=first.tokens, host_token=first.host_token,
                invite_code=first.invite_code, replayed=True,
            )  # fmt: skip
        return msgspec.structs.replace(made, record=record)

    def _check_create(
        self,
        caller: Caller,
        seats: Sequence[SeatRequest],
        starting_seat: int | None,
        deck: Sequence[str] | None,
    ) -> None:
        self.require_credentials(caller)
        if deck is not None and not self.games.settings.allow_custom_deck:
            raise ServiceError("custom_deck_not_allowed")
        if starting_seat is not None and starting_seat >= len(seats):
            raise RuleError(
                "invalid_game", "starting_seat must be between 0 and {last}.", last=len(seats) - 1
            )
        ids = [s.player_id for s in seats if s.player_id is not None]
        if len(ids) != len(set(ids)):
            raise ServiceError("duplicate_player_id")

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

    def _seat_at_creation(
        self, caller: Caller, game_id: str, index: int, wanted: SeatRequest
    ) -> tuple[Seat, str | None]:
        if wanted.open:
            return Seat(open=True), None
        if wanted.name is None and wanted.bot is None:  # reserved: its player joins it
            if wanted.player_id is None:
                raise ServiceError(
                    "invalid_table",
                    "Seat {seat}: give a name, a bot, a player_id or open.",
                    seat=index,
                )
            return Seat(player_id=wanted.player_id), None
        pid = wanted.player_id
        verified = pid is not None and caller.may_claim(pid)
        if pid is not None and not verified and not self.identities_open:
            raise ServiceError("player_id_not_yours")
        if wanted.bot is not None:  # a bot may play under a player id (the platform's bots)
            name = wanted.name or f"Bot {index + 1}"
            return Seat(name=name, bot=wanted.bot, player_id=pid, verified=verified), None
        token, _ = new_token(game_id, index)
        return Seat(name=wanted.name, player_id=pid, verified=verified), token

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
                return self._started(new, new_table.fill)
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
            return self._started(record, table.fill)

        return await self._update(command.game_id, change)

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

    # ------------------------------------------------------------ starting

    def _started(
        self, record: GameRecord, fill: Fill, version: int | None = None
    ) -> tuple[GameRecord, list[StoredEvent]]:
        """The table's game dealt: empty seats filled with bots or dropped, the game's
        version going on from the table's (or `version`), bots moving until a human must
        decide. For a change computed in a worker thread (a join, a start): a searching
        bot's moves are waited for there (`BotWork.blocking_step`)."""
        dealt = self._dealt(record, fill, version)
        search = bots_search(dealt.state)
        moved = self.games.bots.blocking_step(search, play_bots, dealt.state)
        return self._seated(record, dealt, moved)

    def _dealt(self, record: GameRecord, fill: Fill, version: int | None) -> Dealt:
        """`_started`'s deal: the new game before any bot moves, and the seats kept."""
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
        )
        state = msgspec.structs.replace(state, takeover_bot=table.fill_bot)
        return Dealt(state=state, events=events, kept=kept)

    def _seated(
        self, record: GameRecord, dealt: Dealt, moved: tuple[GameState, list[Event]]
    ) -> tuple[GameRecord, list[StoredEvent]]:
        """`_started`'s end: the game after the bots' moves `moved`, its clock started, in
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

    # ------------------------------------------------------------ saving

    async def _update(
        self,
        game_id: str,
        change: Callable[[GameRecord], tuple[GameRecord, list[StoredEvent]]],
        keyed: Keyed | None = None,
        outcome: Callable[[GameRecord], IdempotentResponse] | None = None,
    ) -> tuple[GameRecord, list[StoredEvent]]:
        """Apply `change` to the stored game and save it with its stamp compared; on a lost
        race, judge the change again on the game as it is now. `keyed`: a change sent with
        an Idempotency-Key, its `outcome` saved with it; when the game remembers one for
        that key already (before each try: the race may have been lost to a copy), nothing
        is changed and `keyed.prior` holds it."""

        async def attempt(record: GameRecord) -> tuple[GameRecord, list[StoredEvent]]:
            if keyed is not None:
                prior = await self.store.idempotent_response(game_id, keyed.entry)
                if prior is not None:
                    first = keyed.first(prior)
                    return first.record, first.events
            # a change may start the game, and bots then move first (`_started`): in a
            # worker thread, whose searching bots' moves the pool computes (`blocking_step`)
            new, events = await asyncio.to_thread(change, record)
            remembered = None
            if keyed is not None and outcome is not None:
                remembered = (keyed.entry, outcome(new))
            new = await self.games.store_change(record, new, events, remembered)
            return new, events

        record = await self.games.get(game_id)
        return await write(
            record, attempt, self.games.retry, gone="game_not_found",
            reread=lambda: self.games.get(game_id),
        )  # fmt: skip

    # ------------------------------------------------------------ listing

    async def list_open(self, cursor: str | None, limit: int) -> Page:
        return await self._page(OPEN_INDEX, cursor, limit)

    async def list_player(
        self, caller: Caller, player_id: str, cursor: str | None, limit: int
    ) -> Page:
        """A player's open tables and live games: for that player (JWT) or the platform;
        anyone while the service is open (identities unverified)."""
        if not caller.may_claim(player_id) and not self.identities_open:
            raise ServiceError(
                "player_id_not_yours", "Only that player or the platform may list them."
            )
        return await self._page(player_index(player_id), cursor, limit)

    async def _page(self, index: str, cursor: str | None, limit: int) -> Page:
        games = await self.store.list_games(index, decode_cursor(cursor), limit + 1)
        more = len(games) > limit
        games = games[:limit]
        last = games[-1] if games and more else None
        return Page(
            games=games,
            next_cursor=None if last is None else encode_cursor(last.created_at, last.id),
        )
