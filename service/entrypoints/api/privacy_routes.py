"""A player's data over HTTP: its export (NDJSON, streamed) and its erasure. Thin: the use
cases are `service.privacy.use_cases.PlayerData`."""

from __future__ import annotations

from litestar import Request, delete, get
from litestar.response import Stream

from service.entrypoints.api.auth import AuthenticatedRequest, authenticate
from service.entrypoints.api.identity import PLATFORM_KEY, PLAYER_TOKEN
from service.entrypoints.api.ndjson import NDJSON, ndjson_stream
from service.entrypoints.api.parameters import PlayerIdParam
from service.entrypoints.api.problems import problems
from service.privacy.use_cases import Erased, PlayerData

WHO = [{}, {PLATFORM_KEY: []}, {PLAYER_TOKEN: []}]  # {}: anyone while the service runs open
_WHO_TEXT = (
    " For the platform (API key) or that player (their JWT; another player's id is 403 "
    "`player_id_not_yours`); anyone while the service runs open. See "
    "[Privacy](privacy.md)."
)


def player_data_of(request: Request) -> PlayerData:
    return request.app.state.player_data


@get(
    "/v1/players/{player_id:str}/data",
    operation_id="exportPlayerData",
    summary="Everything the service holds about a player, as NDJSON",
    description="One JSON object a line, each with its `kind`: `player` (first), "
    "`live_game` (public view: no pile, no seed), `archived_game` (with its log; no seed, "
    "no deck), `rating`, `rating_change`, `ticket`, `tournament`, `push_subscription`, "
    "`vacation`, `end` (last, the trailer: `lines`, the count of lines between, and "
    "`complete` true). A player the service knows nothing of has the first and last lines "
    "only. A failure once the stream started (a store lost) cannot be a problem response "
    'any more: the export then ends with `{"kind": "end", "lines": <lines sent between>, '
    '"complete": false, "error": {<the problem: type, title, status, detail, code>}}`. An '
    "export without a complete `end` is truncated." + _WHO_TEXT,
    security=WHO,
    responses=problems(401, 403),
    before_request=authenticate,
    tags=["players"],
    media_type=NDJSON,
)
async def export_player_data(request: AuthenticatedRequest, player_id: PlayerIdParam) -> Stream:
    lines = await player_data_of(request).export(request.user, player_id)
    return ndjson_stream(request, lines, {"Cache-Control": "no-store"})


@delete(
    "/v1/players/{player_id:str}/data",
    operation_id="erasePlayerData",
    summary="Erase a player: their id and names become one pseudonym everywhere",
    description="Live games, the archive (seats, names in the logs, results), ratings and "
    "their history, tickets, tournaments and queued webhooks carry `erased-<hex>` instead; "
    "the player's push subscriptions and vacation are deleted; the other players' games and "
    "ratings are unchanged. Recorded in the erasure ledger (a keyed digest, never the id), "
    "so that a restore of an older backup is erased again. Idempotent: again, the same "
    "pseudonym." + _WHO_TEXT,
    status_code=200,
    security=WHO,
    responses=problems(401, 403),
    before_request=authenticate,
    tags=["players"],
)
async def erase_player_data(request: AuthenticatedRequest, player_id: PlayerIdParam) -> Erased:
    return await player_data_of(request).erase(request.user, player_id)


PRIVACY_ROUTES = [export_player_data, erase_player_data]
