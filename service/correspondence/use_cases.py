"""Correspondence's use cases: a player's push subscriptions and vacation, each command run
through the one write loop (`service.core.unit_of_work.write`) on the player's record."""

from __future__ import annotations

import base64
import binascii
import hashlib
import time
from collections.abc import Callable

import msgspec

from service.core import idempotency
from service.core.callers import Caller
from service.core.errors import ServiceError
from service.core.unit_of_work import Retry, write
from service.correspondence import vacation
from service.correspondence.endpoints import check_endpoint
from service.correspondence.records import (
    CLAIMS,
    KEPT_CLAIMS,
    KEPT_KEYS,
    PlayerRecord,
    PlayerStore,
    PushKeys,
    PushSubscription,
    Remembered,
)

SUBSCRIBE = "push_subscribe"  # the operation an Idempotency-Key of a subscription names


class VacationView(msgspec.Struct, frozen=True, kw_only=True):
    player_id: str
    on: bool
    since: float | None  # when the spell on began (unix s)
    days_left: float
    allowance: int


def _b64url(text: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None


def check_keys(keys: PushKeys) -> None:
    """A browser's keys: a P-256 public key (an uncompressed point) and a 16-byte secret."""
    public, secret = _b64url(keys.p256dh), _b64url(keys.auth)
    if public is None or len(public) != 65 or public[0] != 4 or secret is None or len(secret) != 16:
        raise ServiceError("invalid_push_keys")


def subscription_id(player_id: str, endpoint: str) -> str:
    """One id per player and browser endpoint: subscribing again is the same subscription."""
    return hashlib.sha256(f"{len(player_id)}:{player_id}|{endpoint}".encode()).hexdigest()[:24]


class Correspondence:
    def __init__(
        self,
        players: PlayerStore,
        retry: Retry,
        *,
        identities_open: bool = True,
        allow_http_loopback: bool = False,
        max_subscriptions: int = 10,
        vacation_days: int = 30,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.players = players
        self.retry = retry
        self.identities_open = identities_open
        self.allow_http_loopback = allow_http_loopback
        self.max_subscriptions = max_subscriptions
        self.vacation_days = vacation_days
        self.clock = clock

    # ------------------------------------------------------------ whose record

    def whose(self, caller: Caller, player_id: str | None) -> str:
        """The player a request is about: the JWT's own, or one named by the platform (or by
        anyone while the service runs open)."""
        if caller.kind == "anonymous" and not self.identities_open:
            raise ServiceError("authentication_required")
        if player_id is None:
            if caller.kind == "player" and caller.player_id is not None:
                return caller.player_id
            raise ServiceError("player_id_required")
        if not caller.may_claim(player_id) and not self.identities_open:
            raise ServiceError("player_id_not_yours")
        return player_id

    async def _load(self, player_id: str) -> PlayerRecord:
        held = await self.players.load_player(player_id)
        return PlayerRecord(player_id=player_id) if held is None else held

    async def _change(
        self, player_id: str, change: Callable[[PlayerRecord], PlayerRecord]
    ) -> PlayerRecord:
        async def attempt(record: PlayerRecord) -> PlayerRecord:
            new = change(record)
            if new is record:
                return record
            await self.players.save_player(new)
            return new

        return await write(
            await self._load(player_id),
            attempt,
            self.retry,
            gone="concurrent_update",
            reread=lambda: self._load(player_id),
        )

    # ------------------------------------------------------------ push subscriptions

    async def subscribe(
        self,
        caller: Caller,
        player_id: str | None,
        endpoint: str,
        keys: PushKeys,
        idempotency_key: str | None = None,
    ) -> tuple[str, PushSubscription, bool]:
        """The player's subscription of this endpoint (the same one when subscribed
        again: its keys replaced), and whether it is the first answer to this
        `idempotency_key` handed back (replayed)."""
        player = self.whose(caller, player_id)
        check_endpoint(endpoint, self.allow_http_loopback)
        check_keys(keys)
        sid = subscription_id(player, endpoint)
        now = self.clock()
        entry = fingerprint = None
        if idempotency_key is not None:
            entry = idempotency.entry_key(SUBSCRIBE, caller.scope, idempotency_key)
            fingerprint = idempotency.fingerprint(SUBSCRIBE, player, endpoint, keys)
        outcome: list[tuple[PushSubscription, bool]] = []

        def add(record: PlayerRecord) -> PlayerRecord:
            outcome.clear()
            prior = next((r for r in record.remembered if r.entry == entry), None)
            if prior is not None and prior.subscription is not None:
                assert fingerprint is not None
                idempotency.check_same(prior, fingerprint)  # type: ignore[arg-type]
                outcome.append((prior.subscription, True))
                return record
            held = record.subscriptions
            known = next((s for s in held if s.id == sid), None)
            if known is not None and known.keys == keys and entry is None:
                outcome.append((known, False))
                return record
            others = tuple(s for s in held if s.id != sid)
            if known is None and self.max_subscriptions and len(others) >= self.max_subscriptions:
                raise ServiceError("too_many_push_subscriptions")
            created = now if known is None else known.created_at
            made = PushSubscription(id=sid, endpoint=endpoint, keys=keys, created_at=created)
            outcome.append((made, False))
            remembered = record.remembered
            if entry is not None and fingerprint is not None:
                kept = Remembered(entry=entry, fingerprint=fingerprint, subscription=made)
                remembered = (*remembered, kept)[-KEPT_KEYS:]
            return record.successor(subscriptions=(*others, made), remembered=remembered)

        claimed = False
        if entry is not None and fingerprint is not None:
            claimed = await self._claim(caller.scope, entry, fingerprint)
        try:
            await self._change(player, add)
        except ServiceError:
            if claimed:  # a refusal changes nothing: the key stays free
                await self._unclaim(caller.scope, entry, fingerprint)
            raise
        made, replayed = outcome[-1]
        return player, made, replayed

    async def _claim(self, scope: str, entry: str, fingerprint: str) -> bool:
        """The key taken for this request in the caller's claims record, before the player's
        record is written: another request under it, for whichever player, is refused
        (`idempotency_key_reused`). Whether it is claimed now (False: by this request
        before, whose retry this is: it goes on, a subscription being idempotent)."""
        taken: list[bool] = []

        def claim(record: PlayerRecord) -> PlayerRecord:
            taken.clear()
            prior = next((r for r in record.remembered if r.entry == entry), None)
            if prior is not None:
                idempotency.check_same(prior, fingerprint)  # type: ignore[arg-type]
                return record
            taken.append(True)
            kept = Remembered(entry=entry, fingerprint=fingerprint)
            return record.successor(remembered=(*record.remembered, kept)[-KEPT_CLAIMS:])

        await self._change(CLAIMS + scope, claim)
        return bool(taken)

    async def _unclaim(self, scope: str, entry: str, fingerprint: str | None) -> None:
        def unclaim(record: PlayerRecord) -> PlayerRecord:
            kept = tuple(
                r for r in record.remembered if (r.entry, r.fingerprint) != (entry, fingerprint)
            )
            return (
                record if len(kept) == len(record.remembered) else record.successor(remembered=kept)
            )

        await self._change(CLAIMS + scope, unclaim)

    async def subscriptions(
        self, caller: Caller, player_id: str | None
    ) -> tuple[str, tuple[PushSubscription, ...]]:
        player = self.whose(caller, player_id)
        return player, (await self._load(player)).subscriptions

    async def unsubscribe(self, caller: Caller, player_id: str | None, sid: str) -> None:
        player = self.whose(caller, player_id)
        found = any(s.id == sid for s in (await self._load(player)).subscriptions)
        if not found:
            raise ServiceError("push_subscription_not_found")
        await self.forget(player, sid)

    async def forget(self, player_id: str, sid: str) -> None:
        """Drop a subscription (its browser unsubscribed, or its push service forgot it)."""

        def drop(record: PlayerRecord) -> PlayerRecord:
            kept = tuple(s for s in record.subscriptions if s.id != sid)
            if len(kept) == len(record.subscriptions):
                return record
            return record.successor(subscriptions=kept)

        await self._change(player_id, drop)

    # ------------------------------------------------------------ vacation

    def _view(self, record: PlayerRecord, now: float) -> VacationView:
        days = self.vacation_days
        on = vacation.on_vacation(record.away, days, now)
        return VacationView(
            player_id=record.player_id,
            on=on,
            since=record.away[-1].start if on else None,
            days_left=round(vacation.days_left(record.away, days, now), 4),
            allowance=days,
        )

    async def vacation(self, caller: Caller, player_id: str) -> VacationView:
        player = self.whose(caller, player_id)
        return self._view(await self._load(player), self.clock())

    async def set_vacation(self, caller: Caller, player_id: str, on: bool) -> VacationView:
        player = self.whose(caller, player_id)
        now = self.clock()
        days = self.vacation_days

        def switch(record: PlayerRecord) -> PlayerRecord:
            away = vacation.switched(record.away, on, days, now)
            if on and not vacation.on_vacation(away, days, now):
                raise ServiceError("vacation_allowance_spent")
            return record if away == record.away else record.successor(away=away)

        return self._view(await self._change(player, switch), now)

    async def away(self, player_id: str, since: float, deadline: float, now: float) -> float:
        """The deadline of `player_id`'s wait that began at `since`, their clock stood still
        while they were away (`vacation.extended_deadline`)."""
        held = await self.players.load_player(player_id)
        if held is None or not held.away:
            return deadline
        return vacation.extended_deadline(deadline, since, held.away, self.vacation_days, now)
