"""Game records (`service.history.records`, docs/records.md): one archived game's record, the
archive's bulk export as NDJSON, and the record's JSON Schema."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Request, get
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Parameter
from litestar.response import Stream

from service.entrypoints.api.auth import AuthenticatedRequest, authenticate
from service.entrypoints.api.history_routes import (
    SECRET,
    WHO,
    ArchivedId,
    PlayerFilter,
    Since,
    Until,
    history_of,
    parse_timestamp,
)
from service.entrypoints.api.identity import PLATFORM_KEY, PLAYER_TOKEN
from service.entrypoints.api.ndjson import NDJSON, ndjson_stream
from service.entrypoints.api.problems import get_game_part, problems
from service.entrypoints.api.tournament_routes import TournamentId, tournaments_of
from service.history.records import GameRecordV1, RecordContext, RecordTournament, schema
from service.tournaments.records import game_id

SCHEMA_PATH = "/v1/schemas/game-record"
_SCHEMA = msgspec.json.encode(schema())


@get_game_part(
    "/v1/archive/games/{game_id:str}/record",
    401,
    operation_id="getGameRecord",
    summary="An ended game's record (ten-game-record v1)",
    description="Everything a third party needs to replay and check the game offline: rules, "
    "seats, the revealed seed and the deck as dealt, the fairness commitment and entropy, "
    f"every event as published, the results. Its JSON Schema: `{SCHEMA_PATH}`." + SECRET,
    tags=["archive"],
    security=WHO,
    before_request=authenticate,
)
async def game_record(request: AuthenticatedRequest, game_id: ArchivedId) -> GameRecordV1:
    return await history_of(request).record(game_id, request.user)


@get(
    "/v1/archive/export",
    operation_id="exportArchive",
    summary="The archive's game records as NDJSON, streamed",
    description="One ten-game-record v1 per line (its schema: "
    f"`{SCHEMA_PATH}`), oldest first by end time then id, read from the archive a page at a "
    "time. The platform's (X-API-Key); a player (their JWT) may export their own games "
    "(`player_id` theirs). Filters combine: `player_id` (sat in the game), `since` <= end < "
    "`until`, `tournament_id` (that tournament's tables; each record then names its table "
    "and clock). A game of a duplicate round whose deal is still being played elsewhere is "
    "not archived yet, so it is never exported. The last line is the trailer, no record: "
    '`{"type": "end", "count": <records>, "complete": true}`. A failure once the stream '
    "started (the archive's database lost) cannot be a problem response any more: the "
    'export then ends with `{"type": "end", "count": <records sent>, "complete": false, '
    '"error": {<the problem: type, title, status, detail, code>}}`. An export without a '
    "complete trailer is truncated.",
    tags=["archive"],
    security=[{PLATFORM_KEY: []}, {PLAYER_TOKEN: []}],
    before_request=authenticate,
    responses={
        200: ResponseSpec(
            generate_examples=False,
            data_container=GameRecordV1,
            media_type=NDJSON,
            description="One record per line, then the trailer (`type` `end`: the records "
            "counted, `complete`, and the `error` of an export cut short).",
        ),
        **problems(401, 403, 404),
    },
    media_type=NDJSON,
)
async def export_archive(
    request: AuthenticatedRequest,
    player_id: PlayerFilter = None,
    since: Since = None,
    until: Until = None,
    tournament_id: Annotated[TournamentId | None, Parameter(required=False)] = None,
) -> Stream:
    history = history_of(request)
    history.may_export(request.user, player_id)
    start, end = parse_timestamp("since", since), parse_timestamp("until", until)
    contexts = None
    if tournament_id is not None:
        contexts = await tournament_contexts(request, tournament_id)
    lines = history.bulk_export(player_id=player_id, since=start, until=end, contexts=contexts)
    return ndjson_stream(request, lines, {"X-Accel-Buffering": "no"})


async def tournament_contexts(request: Request, tournament_id: str) -> dict[str, RecordContext]:
    """The games of a tournament's tables, each with its table and the tournament's clock."""
    tournament = await tournaments_of(request).get(tournament_id)
    clock = None if tournament.clock is None else msgspec.to_builtins(tournament.clock)
    return {
        game_id(tournament.id, played.number, table.number): RecordContext(
            tournament=RecordTournament(id=tournament.id, round=played.number, table=table.number),
            clock=clock,
        )
        for played in tournament.rounds
        for table in played.tables
    }


@get(
    SCHEMA_PATH,
    operation_id="getGameRecordSchema",
    summary="The JSON Schema of the game record (ten-game-record v1)",
    tags=["archive"],
    media_type="application/schema+json",
    responses={
        200: ResponseSpec(
            generate_examples=False,
            data_container=dict[str, Any],
            media_type="application/schema+json",
            description="The JSON Schema (2020-12) every record validates against; "
            "`#/components/schemas/GameRecordV1` of this document is the same.",
        )
    },
)
async def game_record_schema() -> bytes:
    return _SCHEMA


RECORD_ROUTES = [game_record, export_archive, game_record_schema]
