"""The rules as the API serves them: the deck manifest and rule options, and scoring a
collection."""

from __future__ import annotations

from litestar import Request, get, post
from litestar.params import JSONBody

from domain.game.cards import MANIFEST, check_copies, deck_size
from domain.game.errors import RULE_ERROR_CODES
from domain.game.model import BOT_LEVELS, Rules
from domain.game.scoring import score_collection
from service.core.errors import SERVICE_ERROR_CODES
from service.entrypoints.api.bodies import strictly
from service.entrypoints.api.problems import problems
from service.entrypoints.api.schemas import RuleOption, RulesOut, ScoreIn, ScoreOut


@post(
    "/v1/scores",
    operation_id="scoreCollection",
    summary="Score a collection",
    status_code=200,
    tags=["rules"],
    responses=problems(413),
)
async def score(request: Request, data: JSONBody[ScoreIn]) -> ScoreOut:
    data = await strictly(request, ScoreIn)
    rules = data.rules or Rules()
    check_copies(data.cards)
    result = score_collection(data.cards, rules.perfect_bonus)
    return ScoreOut(total=result.total, colors=result.colors)


@get(
    "/v1/rules",
    operation_id="getRules",
    summary="The deck manifest and rule options",
    tags=["rules"],
)
async def rules() -> RulesOut:
    return RulesOut(
        manifest=list(MANIFEST),
        deck_sizes={str(n): deck_size(n) for n in range(1, 6)},
        options={
            "perfect_bonus": RuleOption(
                default=Rules().perfect_bonus,
                minimum=0,
                maximum=100,
                description="Points added for a colour whose run is 1-9.",
            )
        },
        bots=list(BOT_LEVELS),
        error_codes={**RULE_ERROR_CODES, **SERVICE_ERROR_CODES},
    )
