"""A table created: open, waiting for players, or its game dealt at once when every seat
is taken; counted in its host's quota of open tables while it is open; with an
Idempotency-Key, its id derived from the key and its outcome stored with it, so a copy of
the create gets the first one."""

from __future__ import annotations

import secrets
from collections.abc import Sequence

import msgspec

from domain.bots.simulation import play_bots
from domain.game.errors import RuleError
from service.core import idempotency
from service.core.callers import Caller
from service.core.errors import ServiceError
from service.core.model import GameRecord, Seat, Table
from service.core.ports import GameExists, StoredEvent
from service.core.quotas import GRACE, Quota, owner_of
from service.games.commands import CreateTable, SeatRequest
from service.games.use_cases import GameService, bots_search, hash_token
from service.lobby.dealing import Dealer
from service.lobby.records import Keyed, TableCreated, new_token
from service.lobby.seating import require_credentials


class TableCreation:
    """The lobby's creates (`Lobby.create`, `Lobby.deal`), on the game service's store."""

    def __init__(self, games: GameService, dealer: Dealer, *, identities_open: bool) -> None:
        self.games = games
        self.store = games.store
        self.dealer = dealer
        self.identities_open = identities_open  # nothing configured: ids are unverified
        settings = games.settings
        self.open_tables = Quota(
            games.store, "open-tables", settings.quotas.max_open_tables, "too_many_open_tables",
            self._still_open, keep=settings.games.idle_ttl + 2 * int(GRACE),
            retry_after=lambda oldest, now: oldest + settings.games.idle_ttl - now,
        )  # fmt: skip

    async def create(self, command: CreateTable) -> TableCreated:
        """A table waiting for players, or a game started at once when every seat is taken
        (a bot, or a human the creator seats: their tokens are in `tokens`). `clock`: the
        game's time control (none: no clock); `fill_bot` is also the bot that plays a seat
        taken over after timeouts or resigned. With an `idempotency_key`: `_store_created`."""
        caller, seats = command.caller, tuple(command.seats)
        deck = None if command.deck is None else tuple(command.deck)
        self._check_create(caller, seats, command.starting_seat, deck)
        game_id, keyed = self._new_id(command)
        made = self._table(command, game_id)
        record = made.record
        assert record.table is not None
        events: list[StoredEvent] = []
        if all(s.taken for s in record.table.seats):  # nobody awaited: the game starts at version 0
            # dealt on the loop, the bots' first moves awaited from the pool (no thread)
            dealt = self.dealer.dealt(record, command.fill, 0)
            moved = await self.games.bots.step(bots_search(dealt.state), play_bots, dealt.state)
            record, events = self.dealer.seated(record, dealt, moved)
        else:
            await self._hold_open_table(record, keyed)
        made = msgspec.structs.replace(made, record=record)
        return await self._store_created(made, events, keyed)

    def scheduled(
        self,
        command: CreateTable,
        game_id: str,
        starts_at: float,
        tokens: Sequence[str | None] | None = None,
    ) -> TableCreated:
        """A table whose every seat its creator assigns (a player or a bot), dealt at
        `starts_at` by the lobby's start (`Lobby.start_scheduled`), not when full. Checked
        as a create is, its deal tried too (rules that cannot deal it are refused now, not
        at its time). `tokens`: the human seats' tokens, when handed out before (a retried
        create makes the table its first answer named). Not stored: `store_scheduled`."""
        caller, seats = command.caller, tuple(command.seats)
        deck = None if command.deck is None else tuple(command.deck)
        self._check_create(caller, seats, command.starting_seat, deck)
        for index, wanted in enumerate(seats):
            if wanted.open or (wanted.name is None and wanted.bot is None):
                raise ServiceError(
                    "invalid_table",
                    "Seat {seat}: a scheduled table's seats are all assigned (a name or a bot).",
                    seat=index,
                )
        made = self._table(command, game_id, starts_at=starts_at, tokens=tokens)
        self.dealer.dealt(made.record, command.fill, 0)  # a RuleError for rules that cannot deal it
        return made

    async def store_scheduled(self, made: TableCreated) -> GameRecord | None:
        """Store a scheduled table (`scheduled`): the record as stored, or None when a game
        of its id is stored already (a retried create: each id is made once)."""
        try:
            return await self.games.store_new(made.record, [])
        except GameExists:
            return None

    def _table(
        self,
        command: CreateTable,
        game_id: str,
        *,
        starts_at: float | None = None,
        tokens: Sequence[str | None] | None = None,
    ) -> TableCreated:
        """The table a create makes (not stored), with the credentials it hands out."""
        caller, seats = command.caller, tuple(command.seats)
        deck = None if command.deck is None else tuple(command.deck)
        made = [
            self._seat_at_creation(caller, game_id, i, s, None if tokens is None else tokens[i])
            for i, s in enumerate(seats)
        ]
        table_seats = [seat for seat, _ in made]
        hashes = [None if token is None else hash_token(token) for _, token in made]
        issued = [(i, token) for i, (_, token) in enumerate(made) if token is not None]
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
            casual=not command.ranked,
            table=Table(
                seats=tuple(table_seats),
                invite_hash=None if invite is None else hash_token(invite),
                fill=command.fill,
                fill_bot=command.fill_bot,
                starting_seat=command.starting_seat,
                deck=deck,
                rules=command.rules,
                clock=command.clock,
                # chosen now, before any seat joins: the table's views commit to it
                seed=self.games.new_seed() if command.seed is None else command.seed,
                starts_at=starts_at,
            ),
            tournament=command.tournament,
            host_id=caller.player_id if caller.kind == "player" else None,
            host_token_hash=host_hash,
            host=owner_of(caller, command.origin),
        )
        return TableCreated(record=record, tokens=issued, host_token=host_token, invite_code=invite)

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
        scope = idempotency.key_scope(command.caller, command.origin)
        return idempotency.created_game_id(scope, key), Keyed("create", command, key, scope)

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
        require_credentials(caller, self.identities_open)
        if deck is not None and not self.games.settings.games.allow_custom_deck:
            raise ServiceError("custom_deck_not_allowed")
        if starting_seat is not None and starting_seat >= len(seats):
            raise RuleError(
                "invalid_game", "starting_seat must be between 0 and {last}.", last=len(seats) - 1
            )
        ids = [s.player_id for s in seats if s.player_id is not None]
        if len(ids) != len(set(ids)):
            raise ServiceError("duplicate_player_id")

    def _seat_at_creation(
        self, caller: Caller, game_id: str, index: int, wanted: SeatRequest, token: str | None
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
        if token is None:
            token, _ = new_token(game_id, index)
        return Seat(name=wanted.name, player_id=pid, verified=verified), token
