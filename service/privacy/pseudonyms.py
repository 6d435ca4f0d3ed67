"""Pure rules of an erasure: who is erased (`Subject`: the player id, the names they were
seated under, the one pseudonym both become), and how each kind of stored thing is
rewritten: a game record (its seats' ids and names, its table, its host), an event's JSON
(the names `game_started` gave the player's seats), any other record or payload
(`rewritten`: a walk of its builtins that rewrites only the fields holding player ids,
`ID_FIELDS`, and a `name` beside the player's `player_id`), and a store's key naming the
player (`renamed_key`). No I/O: the stores in `infra/` call these."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable
from typing import Any, TypeVar

import msgspec

from service.core.model import GameRecord, Seat
from service.core.ports import ArchiveJob, IdempotentResponse, StoredEvent

PREFIX = "erased-"
T = TypeVar("T")
# the fields of the records and payloads (tickets, tournaments, queued jobs, webhooks) that
# hold a player id, a list of them or a scope naming one (`player:<id>`): no other string is
# rewritten, so an id equal to another field's value (`live`, `basic`) changes nothing else
ID_FIELDS = frozenset({
    "player_id", "players", "registered", "invited", "entrant", "seats", "byes", "owner",
    "organiser", "host", "host_id",
})  # fmt: skip
_KIND = re.compile(r"(?:[^:{}]+:)?")  # a listing's or quota's kind before `player:` (or none)


def new_pseudonym() -> str:
    """A fresh pseudonym: `erased-` and 32 random hex digits."""
    return PREFIX + secrets.token_hex(16)


def ledger_digest(key: bytes, player_id: str) -> str:
    """What the erasure ledger keeps instead of the id: HMAC-SHA-256 under the ledger key
    (TEN_PRIVACY_KEY), hex. Without the key, an id cannot be tested against the ledger."""
    return hmac.new(key, player_id.encode(), hashlib.sha256).hexdigest()


def ledger_mark(digests: Iterable[str]) -> str:
    """A store's applied mark for a ledger (`service.privacy.ports.Ledger.applied`): the
    SHA-256 of its entries' digests, sorted, one a line (hex). Equal ledgers, equal marks,
    whatever order each store keeps them in."""
    return hashlib.sha256("".join(f"{d}\n" for d in sorted(digests)).encode()).hexdigest()


class Subject(msgspec.Struct, frozen=True, kw_only=True):
    """One erasure: `player_id` and every name in `names` become `pseudonym`."""

    player_id: str
    pseudonym: str
    names: frozenset[str] = frozenset()

    def with_names(self, names: set[str] | frozenset[str]) -> Subject:
        found = {n for n in names if n and n != self.pseudonym}
        return msgspec.structs.replace(self, names=self.names | found)

    def scoped(self, value: str) -> str | None:
        """`value` rewritten when it is the id or names it (`player:<id>`), else None."""
        if value == self.player_id:
            return self.pseudonym
        for scope in ("player:", "host:player:"):
            if value == scope + self.player_id:
                return scope + self.pseudonym
        return None


def renamed_key(key: str, subject: Subject) -> str | None:
    """A store's key naming exactly this player, renamed to the pseudonym's; else None. The
    keys that name a player: a listing's or a quota's, `...{[<kind>:]player:<id>}` on Redis
    (`infra.redis_layout`, `infra.quotas`) and `[<kind>:]player:<id>` in memory; a ticket
    holder's `{...}:holder:<id>` (`infra.redis_matchmaking`). The id is the key's whole end:
    another's that holds it (`acme:7` in `acme:7:eu`) is never renamed."""
    pid, new = subject.player_id, subject.pseudonym
    end = f"player:{pid}}}"
    if key.endswith(end):
        head, brace, kind = key[: -len(end)].rpartition("{")
        if brace and "}" not in kind and _KIND.fullmatch(kind):
            return f"{head}{{{kind}player:{new}}}"
    end = f"player:{pid}"
    if key.endswith(end) and _KIND.fullmatch(key[: -len(end)]):
        return f"{key[: -len(end)]}player:{new}"
    end = f"}}:holder:{pid}"
    if key.startswith("{") and key.endswith(end) and key.index("}") == len(key) - len(end):
        return f"{key[: -len(end)]}}}:holder:{new}"
    return None


def seats_of(record: GameRecord, player_id: str) -> set[int]:
    """The seats of `record` that carry `player_id` (its game's, or its open table's)."""
    seats = {i for i, pid in enumerate(record.player_ids) if pid == player_id}
    if record.table is not None:
        seats |= {i for i, s in enumerate(record.table.seats) if s.player_id == player_id}
    return seats


def player_ids_in(record: GameRecord) -> set[str]:
    """Every player id a game record carries (its seats', its open table's)."""
    ids = {p for p in record.player_ids if p}
    if record.table is not None:
        ids |= {s.player_id for s in record.table.seats if s.player_id}
    return ids


def holds(record: GameRecord, player_id: str) -> bool:
    """Whether the erasure of `player_id` rewrites `record` (a seat, a table seat, a host)."""
    return game_record(record, Subject(player_id=player_id, pseudonym=PREFIX)) is not None


def plan(record: GameRecord, subject: Subject) -> tuple[GameRecord, set[int]] | None:
    """The record rewritten (`game_record`) and the subject's seats in it (whose names its
    log and answers carry), or None when it holds nothing of the subject."""
    new = game_record(record, subject)
    return None if new is None else (new, seats_of(record, subject.player_id))


def names_in(record: GameRecord, player_id: str) -> set[str]:
    """The names the player sat under in `record`."""
    seats, names = seats_of(record, player_id), set()
    if record.state is not None:
        names |= {p.name for p in record.state.players if p.seat in seats}
    if record.table is not None:
        names |= {s.name for i, s in enumerate(record.table.seats) if i in seats and s.name}
    return names


def _seat(seat: Seat, subject: Subject) -> Seat:
    if seat.player_id != subject.player_id:
        return seat
    name = subject.pseudonym if seat.name is not None else None
    return msgspec.structs.replace(seat, player_id=subject.pseudonym, name=name)


def game_record(record: GameRecord, subject: Subject) -> GameRecord | None:
    """The record with the subject pseudonymized (a successor: its stamp moves, so a save
    in flight from the old one loses its compare-and-set), or None when it holds nothing
    of the subject."""
    seats = seats_of(record, subject.player_id)
    host_id = subject.scoped(record.host_id) if record.host_id else None
    host = subject.scoped(record.host) if record.host else None
    if not seats and host_id is None and host is None:
        return None
    changes: dict[str, Any] = {
        "player_ids": tuple(subject.pseudonym if i in seats else p
                            for i, p in enumerate(record.player_ids)),
    }  # fmt: skip
    if host_id is not None:
        changes["host_id"] = host_id
    if host is not None:
        changes["host"] = host
    if record.state is not None:
        players = tuple(
            msgspec.structs.replace(p, name=subject.pseudonym) if p.seat in seats else p
            for p in record.state.players
        )
        changes["state"] = msgspec.structs.replace(record.state, players=players)
    if record.table is not None:
        table_seats = tuple(_seat(s, subject) for s in record.table.seats)
        changes["table"] = msgspec.structs.replace(record.table, seats=table_seats)
    return record.successor(**changes)


def event_json(data: bytes, seats: set[int], subject: Subject) -> bytes:
    """A JSON document of a game (an event, a review) with the names of the subject's seats
    pseudonymized (any object with a `seat` of theirs and a `name`: `game_started` names
    every seat) and the fields holding the id (`rewritten`); the same bytes when nothing is.
    A seat's free text (its `entropy`) is kept: the deal's verification needs it."""
    if not seats and subject.player_id.encode() not in data:
        return data
    value = msgspec.json.decode(data)
    seated = _seated(value, seats, subject)
    walked = rewritten(value if seated is None else seated, subject)
    if walked is None and seated is None:
        return data
    return msgspec.json.encode(seated if walked is None else walked)


def _seated(value: Any, seats: set[int], subject: Subject) -> Any:
    """`value` with `name` rewritten in each object of one of `seats` (None: unchanged)."""
    if isinstance(value, list | tuple):  # msgspec.to_builtins keeps tuples
        items = [_seated(v, seats, subject) for v in value]
        if all(i is None for i in items):
            return None
        return [v if i is None else i for v, i in zip(value, items, strict=True)]
    if not isinstance(value, dict):
        return None
    out, changed = dict(value), False
    for key, item in value.items():
        new = _seated(item, seats, subject)
        if new is not None:
            out[key], changed = new, True
    name = value.get("name")
    if value.get("seat") in seats and isinstance(name, str) and name != subject.pseudonym:
        out["name"], changed = subject.pseudonym, True
    return out if changed else None


def stored_events(events: list[StoredEvent], seats: set[int], subject: Subject):
    return [StoredEvent(e.seq, event_json(e.data, seats, subject)) for e in events]


def remembered(response: IdempotentResponse, subject: Subject) -> IdempotentResponse | None:
    """An idempotent response whose game holds the subject, rewritten (else None)."""
    seats = seats_of(response.record, subject.player_id)
    record = game_record(response.record, subject)
    if record is None:
        return None
    events = stored_events(list(response.events), seats, subject)
    return msgspec.structs.replace(response, record=record, events=events)


def rewritten(value: Any, subject: Subject, field: str | None = None) -> Any:
    """A walk of builtins (decoded JSON or msgpack): None when nothing holds the subject,
    else the value rewritten. In a field of `ID_FIELDS` (or an entrant's `id`), a string
    equal to the id (or `player:<id>`) becomes the pseudonym's; in a mapping whose
    `player_id` is the subject's, so does `name`. `field`: the key `value` is held under."""
    if isinstance(value, str):
        return subject.scoped(value) if field in ID_FIELDS else None
    if isinstance(value, list | tuple):  # msgspec.to_builtins keeps tuples
        items = [rewritten(v, subject, field) for v in value]
        if all(i is None for i in items):
            return None
        return [v if i is None else i for v, i in zip(value, items, strict=True)]
    if isinstance(value, dict):
        return _mapping(value, subject, field)
    return None


def _mapping(value: dict, subject: Subject, field: str | None) -> dict | None:
    changed, out = False, {}
    for key, item in value.items():
        inner = "player_id" if (field, key) == ("entrants", "id") else key
        new_item = rewritten(item, subject, inner)
        changed = changed or new_item is not None
        out[key] = item if new_item is None else new_item
    name = value.get("name")
    mine = value.get("player_id") == subject.player_id
    if mine and isinstance(name, str) and name != subject.pseudonym:
        out["name"], changed = subject.pseudonym, True
    return out if changed else None


def typed(record: T, subject: Subject) -> T | None:
    """A msgspec record rewritten by `rewritten` (None: unchanged): tickets, tournaments;
    a versioned one's `version` moves on by one (its store's compare-and-set save then
    refuses a save in flight from the old one)."""
    walked = rewritten(msgspec.to_builtins(record), subject)
    if walked is None:
        return None
    if isinstance(walked.get("version"), int):
        walked["version"] += 1
    return msgspec.convert(walked, type(record))


_archive_job = msgspec.msgpack.Decoder(ArchiveJob)


def payload(blob: bytes, subject: Subject) -> bytes | None:
    """A queued job's payload rewritten (None: unchanged or not understood): the archive's
    jobs (a game and its log), JSON (the webhooks' messages) or any other msgpack."""
    if subject.player_id.encode() not in blob and not any(
        n.encode() in blob for n in subject.names
    ):
        return None
    try:
        job = _archive_job.decode(blob)
    except (msgspec.DecodeError, msgspec.ValidationError):
        job = None
    if job is not None:
        seats = seats_of(job.record, subject.player_id)
        record = game_record(job.record, subject)
        if record is None:
            return None
        events = stored_events(list(job.events), seats, subject)
        return msgspec.msgpack.encode(ArchiveJob(record=record, events=events))
    for decode, encode in ((msgspec.json.decode, msgspec.json.encode),
                           (msgspec.msgpack.decode, msgspec.msgpack.encode)):  # fmt: skip
        try:
            value = decode(blob)
        except msgspec.DecodeError:
            continue
        walked = rewritten(value, subject)
        return None if walked is None else encode(walked)
    return None


def ids_in(value: Any, field: str | None = None) -> set[str]:
    """The player ids a walk of builtins finds in the fields `rewritten` rewrites (a scope's,
    `player:<id>`, as its id): a reconciliation's candidates."""
    if isinstance(value, str):
        if field not in ID_FIELDS:
            return set()
        return {value.removeprefix("host:").removeprefix("player:"), value}
    if isinstance(value, list | tuple):
        return set().union(*(ids_in(v, field) for v in value))
    if isinstance(value, dict):
        return set().union(*(
            ids_in(v, "player_id" if (field, k) == ("entrants", "id") else k)
            for k, v in value.items()
        ))  # fmt: skip
    return set()


def payload_ids(blob: bytes) -> set[str]:
    """The player ids a queued job's payload holds (as `payload` reads it)."""
    try:
        return player_ids_in(_archive_job.decode(blob).record)
    except (msgspec.DecodeError, msgspec.ValidationError):
        pass
    for decode in (msgspec.json.decode, msgspec.msgpack.decode):
        try:
            return ids_in(decode(blob))
        except msgspec.DecodeError:
            continue
    return set()
