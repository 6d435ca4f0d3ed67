"""A game, a table, an action's answer and a page of listed games, as the API renders them."""

from __future__ import annotations

import time

import msgspec

from domain.bots.clock import remaining
from domain.game.fairness import SCHEME, Fairness, commitment
from domain.game.legal import legal_actions, seat_actions
from domain.game.model import Clock, Rules
from domain.game.views import public_view
from service.core.model import GameRecord
from service.entrypoints.api.schemas import (
    ActedOut,
    ClockOut,
    FairnessOut,
    GameListItem,
    GameOut,
    GamesPage,
    TableOut,
    TableSeatOut,
)
from service.games.use_cases import Acted
from service.lobby.records import Page

_encoder = msgspec.json.Encoder()


def etag(version: int) -> str:
    """The `ETag` of a game version: the version, quoted."""
    return f'"{version}"'


def view_fields(record: GameRecord, seat: int | None, reveal: bool | None = None) -> dict:
    """A game's fields as `GameOut` holds them, with the legal actions of `seat` if any.
    `reveal`: whether its fairness shows the seed (default: once ended, but a tournament's
    game, whose reader decides: `revealed`)."""
    state = record.state
    assert state is not None
    view = public_view(state)
    stopped = record.stopped
    legal = others = None
    if seat is not None and not stopped:
        legal, others = legal_actions(state, seat), seat_actions(state, seat)
    fields = {
        "id": record.id,
        "seat": seat,
        "legal_actions": legal,
        "seat_actions": others,
        **msgspec.structs.asdict(view),
    }
    if stopped:
        fields["status"] = record.status
    if state.clock is not None:
        fields["clock"] = clock_out(state.clock, time.time())
    if reveal is None:
        reveal = record.ended and record.tournament is None
    fields["fairness"] = fairness_out(record, reveal)
    return fields


def archived_fairness(fair: Fairness, seed: str | None) -> FairnessOut:
    """A dealt game's fair deal as published, with `seed` (None: not revealed)."""
    return FairnessOut(
        scheme=fair.scheme, commitment=fair.commitment, entropy=list(fair.entropy),
        start_drawn=fair.start_drawn, seed=seed,
    )  # fmt: skip


def fairness_out(record: GameRecord, reveal: bool = False) -> FairnessOut | None:
    """A game's or a table's fair deal as published: the commitment and the entropy, and
    the seed only when `reveal` and the game has ended (a live game's never)."""
    state, table = record.state, record.table
    if state is not None:
        fair = state.fairness
        if fair is None:
            return None
        return archived_fairness(fair, state.seed if reveal and record.ended else None)
    if table is None or table.seed is None or table.deck is not None:
        return None  # a given deck, or a table stored before the fair deals
    return FairnessOut(
        scheme=SCHEME, commitment=commitment(table.seed),
        entropy=[s.entropy if s.taken else "" for s in table.seats], start_drawn=None, seed=None,
    )  # fmt: skip


def clock_out(clock: Clock, now: float) -> ClockOut:
    """A game's clock as of `now`, with what each seat has left."""
    left = None  # a deadline clock has no banks
    if clock.banks:
        left = [remaining(clock, seat, now) or 0.0 for seat in range(len(clock.banks))]
    return ClockOut(
        control=clock.control,
        seat=clock.seat,
        since=clock.since,
        deadline=clock.deadline,
        server_time=now,
        remaining=left,
        timeouts=list(clock.timeouts),
    )


def seats_out(record: GameRecord) -> list[TableSeatOut]:
    """Who sits where: a table's seats, or a game's players with their ids."""
    if record.table is not None and record.state is None:
        return [
            TableSeatOut(
                seat=i, name=s.name, bot=s.bot, player_id=s.player_id, verified=s.verified,
                open=s.open, taken=s.taken,
            )
            for i, s in enumerate(record.table.seats)
        ]  # fmt: skip
    assert record.state is not None
    ids, verified = record.player_ids, record.verified
    return [
        TableSeatOut(
            seat=p.seat, name=p.name, bot=p.bot,
            player_id=ids[p.seat] if p.seat < len(ids) else None,
            verified=p.seat < len(verified) and verified[p.seat], open=False, taken=True,
        )
        for p in record.state.players
    ]  # fmt: skip


def table_fields(record: GameRecord) -> dict:
    """A table's fields (a game not started yet) as `TableOut` holds them."""
    table = record.table
    assert table is not None
    return {
        "id": record.id,
        "version": record.version,
        "status": record.status,
        "created_at": record.created_at,
        "private": table.private,
        "fill": table.fill,
        "fill_bot": table.fill_bot,
        "rules": table.rules or Rules(),
        "seats": seats_out(record),
        "clock": table.clock,
        "starts_at": table.starts_at,
        "fairness": fairness_out(record),
    }


def game_or_table(
    record: GameRecord, seat: int | None, reveal: bool | None = None
) -> GameOut | TableOut:
    """A started game as `seat` sees it, or the table still filling."""
    if record.state is None:
        return TableOut(**table_fields(record))
    return GameOut(**view_fields(record, seat, reveal))


def render_acted(acted: Acted) -> bytes:
    """An action's answer; a replayed one renders to the bytes of the first. Its events are
    their JSON as stored (the log's bytes, encoded once)."""
    events = [msgspec.Raw(e.data) for e in acted.events]
    return _encoder.encode(ActedOut(events=events, **view_fields(acted.record, acted.seat)))


def listed(record: GameRecord) -> GameListItem:
    """A game as a listing shows it."""
    private = record.table is not None and record.table.private
    return GameListItem(
        id=record.id,
        status=record.status,  # type: ignore[arg-type]  # listings hold open and live games
        version=record.version,
        created_at=record.created_at,
        private=private,
        seats=seats_out(record),
    )


def games_page(page: Page) -> GamesPage:
    """A page of listed games."""
    return GamesPage(games=[listed(r) for r in page.games], next_cursor=page.next_cursor)
