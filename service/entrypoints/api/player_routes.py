"""A player's vacation over HTTP (read, turn on or off). Thin: the use cases are
`service.correspondence.use_cases.Correspondence`."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
from litestar import Request, get, put
from litestar.params import JSONBody

from service.correspondence.use_cases import Correspondence, VacationView
from service.entrypoints.api.auth import AuthenticatedRequest, authenticate
from service.entrypoints.api.bodies import strictly
from service.entrypoints.api.identity import PLATFORM_KEY, PLAYER_TOKEN
from service.entrypoints.api.parameters import PlayerIdParam
from service.entrypoints.api.problems import problems

WHO = [{}, {PLATFORM_KEY: []}, {PLAYER_TOKEN: []}]


class VacationIn(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    on: bool


class VacationOut(msgspec.Struct, frozen=True, kw_only=True):
    player_id: str
    on: bool
    since: datetime | None  # when the vacation on began
    days_left: float  # this year's allowance left, in days
    allowance: int  # days off a year (TEN_VACATION_DAYS)


def correspondence_of(request: Request) -> Correspondence:
    return request.app.state.correspondence


def _out(view: VacationView) -> VacationOut:
    since = None if view.since is None else datetime.fromtimestamp(view.since, UTC)
    return VacationOut(
        player_id=view.player_id, on=view.on, since=since, days_left=view.days_left,
        allowance=view.allowance,
    )  # fmt: skip


_VACATION = (
    "While a player's vacation is on, the deadline clocks of their correspondence games "
    '(`"clock": {"type": "deadline"}`) stand still: a deadline that comes is moved by '
    "the time the player was away while the game waited on them. A year's allowance is "
    "`TEN_VACATION_DAYS` days (calendar year, UTC); a vacation that would use more ends "
    "where the allowance runs out. For that player (JWT) or the platform; anyone while the "
    "service runs open."
)


@get(
    "/v1/players/{player_id:str}/vacation",
    operation_id="getVacation",
    summary="A player's vacation",
    description=_VACATION,
    security=WHO,
    responses=problems(401, 403),
    before_request=authenticate,
    tags=["players"],
)
async def get_vacation(request: AuthenticatedRequest, player_id: PlayerIdParam) -> VacationOut:
    return _out(await correspondence_of(request).vacation(request.user, player_id))


@put(
    "/v1/players/{player_id:str}/vacation",
    operation_id="setVacation",
    summary="Turn a player's vacation on or off",
    description=_VACATION + " Turning it on with the allowance spent is 409 "
    "`vacation_allowance_spent`; asking for what already is changes nothing.",
    security=WHO,
    responses=problems(401, 403, 409),
    before_request=authenticate,
    tags=["players"],
)
async def set_vacation(
    request: AuthenticatedRequest, player_id: PlayerIdParam, data: JSONBody[VacationIn]
) -> VacationOut:
    data = await strictly(request, VacationIn)
    view = await correspondence_of(request).set_vacation(request.user, player_id, data.on)
    return _out(view)


PLAYER_ROUTES = [get_vacation, set_vacation]
