"""A player's data (`PlayerData`): the export (NDJSON, one line per thing held, read page by
page: bounded memory whatever the player's history), the erasure (one pseudonym for the
player's id and names everywhere, the push subscriptions gone, the ledger written first)
and the reconciliation that applies every erasure of the ledger again (after a restore of
an older backup of either store: at start, and by a leased periodic job) to the stores
whose applied mark says they may need it."""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgspec

from domain.game.views import public_view
from service.core.callers import Caller
from service.core.errors import ServiceError
from service.core.exports import End, ended
from service.core.model import GameRecord
from service.core.ports import GameStore, VersionConflict
from service.core.ports import TournamentStore as Tournaments
from service.core.unit_of_work import Retry, write
from service.correspondence.records import PlayerStore
from service.history.archive import GameArchive
from service.jobs.worker import Job, LeasedQueue, Worker
from service.matchmaking.records import TicketStore
from service.privacy.ports import ArchiveData, ArchivedPlay, Erasure, Ledger, LiveData
from service.privacy.pseudonyms import (
    Subject,
    ids_in,
    ledger_digest,
    ledger_mark,
    new_pseudonym,
    typed,
)

log = logging.getLogger(__name__)

FORMAT = "ten-player-data"
PAGE = 200  # archived games read per page of an export
DEV_KEY = b"ten-privacy-development-key"  # TEN_PRIVACY_KEY unset: development only
IDS_PAGE = 1000  # the archive's player ids read per page of a reconciliation's scan
LIVE, ARCHIVE = "live store", "archive"  # a reconciliation's two sides (its log line)
PASS = "pass:"  # a pass token's prefix (`PlayerData._stale`): never a ledger's mark
QUEUE = "privacy"  # the leased queue of the reconciliation (service.jobs)
RECONCILE = "reconcile"  # its one job, due at each start, then every `period` seconds
_json = msgspec.json.Encoder()


class Erased(msgspec.Struct, frozen=True, kw_only=True):
    """What an erasure did: the pseudonym the id and names became, the things rewritten."""

    pseudonym: str
    live_games: int
    archive_rows: int
    other: int


def _line(kind: str, value: Any) -> bytes:
    return _json.encode({"kind": kind, **msgspec.to_builtins(value)}) + b"\n"


def _trailer(count: int) -> dict[str, Any]:
    """The trailer's fields: the `end` kind, and the lines between the `player` line and it."""
    return {"kind": "end", "lines": max(count - 1, 0)}


class Raw(msgspec.Struct, frozen=True):
    """A line encoded already."""

    line: bytes


def archived_line(play: ArchivedPlay) -> bytes:
    """An archived game's line: the game without `seed` and `deck` (a duplicate deal's may
    still be secret), its log spliced in as archived (each event's JSON, not decoded)."""
    game = msgspec.structs.replace(play.game, seed="", deck=())
    head = _json.encode({"kind": "archived_game", **msgspec.to_builtins(game)})
    head = head.replace(b',"seed":"","deck":[]', b"", 1)
    events = ",".join(play.events).encode()
    return head[:-1] + b',"events":[' + events + b"]}\n"


def live_game(record: GameRecord, player_id: str) -> dict[str, Any]:
    """A live game as its player may see it: no pile, no seed (the public view)."""
    seats = [{"seat": i, "player_id": pid} for i, pid in enumerate(record.player_ids)]
    out: dict[str, Any] = {"game_id": record.id, "status": record.status, "seats": seats,
                           "created_at": record.created_at, "updated_at": record.updated_at}  # fmt: skip
    if record.state is not None:
        out["view"] = msgspec.to_builtins(public_view(record.state))
    if record.table is not None:
        out["table_seats"] = [
            {"seat": i, "name": s.name, "player_id": s.player_id, "bot": s.bot}
            for i, s in enumerate(record.table.seats)
        ]
    return out


class PlayerData:
    def __init__(
        self,
        store: GameStore,
        live: LiveData,
        archive: GameArchive,
        archived: ArchiveData,
        tournaments: Tournaments,
        players: PlayerStore,
        tickets: TicketStore,
        *,
        key: bytes | None,
        retry: Retry,
        queue: LeasedQueue | None = None,
        period: float = 900.0,
        settle: float | None = None,
        identities_open: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store, self.live, self.archive, self.archived = store, live, archive, archived
        self.tournaments, self.players, self.tickets = tournaments, players, tickets
        self.key = DEV_KEY if key is None else key
        self.retry, self.identities_open, self.clock = retry, identities_open, clock
        self.queue, self.period = queue, period
        self.settle = period if settle is None else settle  # see `reconcile`

    def whose(self, caller: Caller, player_id: str) -> str:
        """The platform for anyone, a player (JWT) for themself: else 403."""
        if caller.may_claim(player_id) or self.identities_open:
            return player_id
        if caller.kind == "anonymous":
            raise ServiceError("authentication_required")
        raise ServiceError("player_id_not_yours")

    # ------------------------------------------------------------------ export

    async def export(self, caller: Caller, player_id: str) -> AsyncIterator[bytes | End]:
        """The NDJSON lines of the export (checked before the first one is read), then its
        trailer `{"kind": "end", "lines": <lines between>, "complete": ...}`
        (`service.core.exports`): complete once everything was read, else with the failure
        that cut it."""
        self.whose(caller, player_id)
        return ended(self._lines(player_id), _trailer)

    async def _lines(self, player_id: str) -> AsyncIterator[bytes]:
        yield _line("player", {"format": FORMAT, "version": 1, "player_id": player_id,
                               "exported_at": self.clock()})  # fmt: skip
        async for kind, value in self._things(player_id):
            yield value.line if isinstance(value, Raw) else _line(kind, value)

    async def _things(self, player_id: str) -> AsyncIterator[tuple[str, Any]]:
        # every game the live store holds of the player, ended ones too: the erasure's set
        for game_id in await self.live.games_of(player_id):
            record = await self.store.load(game_id)
            if record is not None:
                yield "live_game", live_game(record, player_id)
        async for thing in self._archived(player_id):
            yield thing
        for ticket in await self.live.tickets_of(player_id):
            yield "ticket", _public_ticket(ticket)
        async for tournament in self._tournaments(player_id):
            yield "tournament", tournament
        held = await self.players.load_player(player_id)
        if held is not None:
            for sub in held.subscriptions:
                yield "push_subscription", {"id": sub.id, "endpoint": sub.endpoint,
                                            "created_at": sub.created_at}  # fmt: skip
            yield "vacation", {"away": [[a.start, a.end] for a in held.away]}

    async def _archived(self, player_id: str) -> AsyncIterator[tuple[str, Any]]:
        after = None
        while True:
            page = await self.archived.games_page(player_id, after, PAGE)
            for play in page:
                yield "archived_game", Raw(archived_line(play))
            if len(page) < PAGE:
                break
            after = (page[-1].game.finished_at, page[-1].game.id)
        rating = (await self.archive.ratings([player_id])).get(player_id)
        if rating is not None:
            yield "rating", rating
        before = None
        while True:
            changes = await self.archive.rating_history(player_id, before=before, limit=PAGE)
            for change in changes:
                yield "rating_change", change
            if len(changes) < PAGE:
                break
            before = changes[-1].seq

    async def _tournaments(self, player_id: str) -> AsyncIterator[dict[str, Any]]:
        async for t in self._all_tournaments():
            entrants = {e.id for e in t.entrants}
            if player_id in {*t.registered, *(t.invited or ()), *entrants}:
                yield {"tournament_id": t.id, "name": t.name, "status": t.status,
                       "registered": player_id in t.registered,
                       "results": [msgspec.to_builtins(r) | {"deal": None}
                                   for r in t.results if player_id in r.seats]}  # fmt: skip

    # ------------------------------------------------------------------ erasure

    async def erase(self, caller: Caller, player_id: str) -> Erased:
        """Erase the player (idempotent: again, the same pseudonym from the ledger). The
        ledger is written first, in both stores, so a crash midway is finished by the
        next reconciliation."""
        self.whose(caller, player_id)
        digest = ledger_digest(self.key, player_id)
        known = {e.digest: e for e in await self.live.erasures()}
        known.update({e.digest: e for e in await self.archived.erasures()})
        entry = known.get(digest) or Erasure(digest=digest, pseudonym=new_pseudonym(),
                                             at=self.clock())  # fmt: skip
        await self.live.record_erasures([entry])
        await self.archived.record_erasures([entry])
        return await self.apply(Subject(player_id=player_id, pseudonym=entry.pseudonym))

    async def apply(self, subject: Subject) -> Erased:
        games = 0
        for game_id in await self.live.games_of(subject.player_id):
            games += await self._rewrite(game_id, subject)
        rows = await self.archived.erase_player(subject)
        other = await self.live.erase_rest(subject)
        for ticket in await self.live.tickets_of(subject.player_id):
            other += await self._versioned(ticket, subject, self._save_ticket, "ticket_not_found")
        async for tournament in self._all_tournaments():
            save = self.tournaments.save_tournament
            other += await self._versioned(tournament, subject, save, "tournament_not_found")
        return Erased(pseudonym=subject.pseudonym, live_games=games, archive_rows=rows,
                      other=other)  # fmt: skip

    async def _rewrite(self, game_id: str, subject: Subject) -> int:
        record = await self.store.load(game_id)
        if record is None:
            return 0

        async def attempt(current: GameRecord) -> bool:
            return await self.live.rewrite_game(current, subject)

        async def reread() -> GameRecord:
            found = await self.store.load(game_id)
            if found is None:
                raise VersionConflict("gone", current=None)
            return found

        try:
            done = await write(record, attempt, self.retry, gone="game_not_found", reread=reread)
        except ServiceError as exc:
            if exc.code == "game_not_found":
                return 0
            raise
        return int(done)

    async def _save_ticket(self, ticket: Any) -> None:
        await self.tickets.save_tickets([ticket])

    async def _versioned(self, record: Any, subject: Subject, save: Any, gone: str) -> int:
        """A versioned record (a ticket, a tournament) rewritten through its store's
        compare-and-set save (`typed` moves its version on: a save in flight from the old
        one is refused); again on the one stored when another save won. 1: changed."""

        async def attempt(current: Any) -> int:
            new = typed(current, subject)
            if new is None:
                return 0
            await save(new)
            return 1

        try:
            return await write(record, attempt, self.retry, gone=gone)
        except ServiceError as exc:
            if exc.code == gone:
                return 0
            raise

    async def _all_tournaments(self) -> AsyncIterator[Any]:
        before = None
        while True:
            page = await self.tournaments.list_tournaments(before, PAGE)
            for tournament in page:
                yield tournament
            if len(page) < PAGE:
                return
            before = (page[-1].created_at, page[-1].id)

    # ------------------------------------------------------------------ the ledger

    async def schedule(self) -> None:
        """At start: the reconciliation due now (a restore is erased again at once), on
        whichever process works the queue (one at a time: its lease)."""
        if self.key == DEV_KEY:
            log.warning("TEN_PRIVACY_KEY is not set: the erasure ledger uses a development key")
        if self.queue is not None:
            now = self.clock()
            await self.queue.put(RECONCILE, b"", now, keep=True)
            await self.queue.hasten(RECONCILE, now)

    def worker(self, count: Any = None) -> Worker:
        """The reconciliation's worker: each run, due again `period` seconds later."""
        assert self.queue is not None

        async def handle(job: Job) -> float:
            await self.reconcile()
            return self.clock() + self.period

        return Worker(
            self.queue, handle, lease=self.period, max_failures=None, clock=self.clock, count=count
        )

    async def reconcile(self) -> int:
        """Both ledgers made one (each gets the other's entries), then every erasure applied
        again to the ids still found in each store whose applied mark is not the ledger's
        (`_stale`: a restored backup's, a store never reconciled, an erasure not settled);
        how many ids. A store whose mark is the ledger's is not read at all: in the steady
        state a run reads the two ledgers and the two marks, whatever the archive holds."""
        live, archived = await self.live.erasures(), await self.archived.erasures()
        await self.live.record_erasures(_missing(archived, live))
        await self.archived.record_erasures(_missing(live, archived))
        ledger = {e.digest: e for e in (*live, *archived)}
        if not ledger:
            return 0
        mark = ledger_mark(ledger)
        # an erasure vouched for only once older than `settle`: a write in flight that read
        # the player's data before the ledger had them (a ticket paired, a game archived)
        # may land after the erasure's own pass, and a pass that starts later finds it
        settled = max(e.at for e in ledger.values()) <= self.clock() - self.settle
        stale = await self._stale(mark)
        if not stale:
            return 0
        log.info(
            "erasure ledger: the %s scanned (a mark not the ledger's)", " and the ".join(stale)
        )
        found: set[str] = set()
        async for player_id in self._candidates(live=LIVE in stale, archive=ARCHIVE in stale):
            entry = ledger.get(ledger_digest(self.key, player_id))
            if entry is not None and player_id not in found:
                found.add(player_id)
                await self.apply(Subject(player_id=player_id, pseudonym=entry.pseudonym))
        if settled:
            for side, token in stale.values():
                if token is not None:
                    await side.swap_applied(token, mark)
        if found:
            log.info("erasure ledger: %d erased player(s) found again and erased", len(found))
        return len(found)

    async def _stale(self, mark: str) -> dict[str, tuple[Ledger, str | None]]:
        """The stores whose applied mark is not `mark`, by name, each with the pass token
        written in its place (None: its mark changed meanwhile, or it never vouches): the
        pass writes `mark` at its end only over its own token, so a restore during the pass
        (which brings back its backup's mark) leaves the store to the next pass."""
        stale: dict[str, tuple[Ledger, str | None]] = {}
        for name, side in ((LIVE, self.live), (ARCHIVE, self.archived)):
            held = await side.applied()
            if held != mark:
                token = PASS + secrets.token_hex(16)
                stale[name] = (side, token if await side.swap_applied(held, token) else None)
        return stale

    async def _candidates(self, *, live: bool, archive: bool) -> AsyncIterator[str]:
        """The player ids held in the live stores (games, tickets, players' records, queued
        jobs, tournaments), then in the archive (seats and ratings, page by page)."""
        if live:
            ids = set(await self.live.player_ids())
            async for tournament in self._all_tournaments():
                ids |= ids_in(msgspec.to_builtins(tournament))
            for player_id in ids:
                yield player_id
        after = None
        while archive:
            page = await self.archived.player_ids_page(after, IDS_PAGE)
            for player_id in page:
                yield player_id
            if len(page) < IDS_PAGE:
                return
            after = page[-1]


def _missing(entries: list[Erasure], held: list[Erasure]) -> list[Erasure]:
    """The entries of `entries` whose digest `held` does not have."""
    known = {e.digest for e in held}
    return [e for e in entries if e.digest not in known]


def _public_ticket(ticket) -> dict[str, Any]:
    out = msgspec.to_builtins(ticket)
    for secret in ("token_hash", "seat_token", "fingerprint"):
        out.pop(secret, None)
    for seat in out.get("party_seats", ()):  # a party's seats handed to its holder
        seat.pop("seat_token", None)
    return out
