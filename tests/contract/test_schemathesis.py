"""Schemathesis against the app in-process (ASGI): every operation fuzzed with every check,
then the stateful phase that follows the OpenAPI links and plays games.

Checks: all of Schemathesis 4's built-in checks are on (`[checks] enabled = true`), among
them `negative_data_rejection` (schema-invalid input must get a 4xx) and
`positive_data_acceptance` (schema-valid input must not get a 400). `max_response_time`
stays off: timings on a shared 2-core CI machine prove nothing. One adjustment, with its
reason:
- `positive_data_acceptance` also expects 412. `If-Match` is schema-valid whenever it names
  *a* version (`"7"`), but the contract answers 412 when that is not the game's current
  version: the refusal depends on the game's state, not on the request's shape, like a 409
  for an action the rules refuse now (already in Schemathesis' default list).
- `listArchivedGames` also expects 400 from schema-valid requests: its `cursor` is an opaque
  string that only counts when a previous page handed it out; a made-up one is refused. This
  is for the cursor alone: `since`/`until` are declared as exactly what the handler parses
  (pattern and `format: date-time`, no empty default), so a schema-valid time is never a
  400 (a `since=0` was, hidden by this expectation; tests/integration/test_archive_service.py
  checks both sides).
- The copy limit of a `deck` or a scored collection (`too_many_copies`) is in the schema (one
  `contains`/`maxContains` per card code), and so is what a seat must say (`invalid_table`):
  schema-valid bodies are accepted, no 400 is expected from createGame or scoreCollection.

The stateful phase needs one more piece of knowledge: a seat token that came from a
createGame response through a link is a real credential, not a generated one. Schemathesis
cannot tell link values from generated values, so its `ignored_auth` check would call any
200 with such a token "authentication accepted from generated (invalid) credentials". The
state machine below passes the tokens it saw issued as the request's explicit headers;
`ignored_auth` then does its real probe (the same request without the token and with an
invalid one must get 401/403). Generated tokens stay generated.

`streamEvents` (server-sent events) is excluded from fuzzing: a live stream only ends with
the game, so every call would wait for the transport timeout (Schemathesis reads at most 20
events). `test_event_stream_contract` below checks its documented responses on a finished
game; tests/e2e/test_events_stream.py follows live streams over real HTTP.

Hypothesis: `derandomize` (the same examples every run, no example database), `deadline`
off (a call plays bot moves; its time depends on the game and the machine, not on the code
under test). No health check is suppressed: none fires. Hypothesis 6.170 also draws 5% of
its strings and numbers from the constants of every local module already imported (its
"local constants"), so what it generates moved with any change to the service's code and
with which modules a test worker happened to import first: the stateful run's accepted
actions went from 10 to 2 with a change that touched nothing they depend on. The fixture
`schema_examples_of_the_schema_alone` keeps that pool empty while these tests run, so the
examples depend on the schema and the seed alone, as `derandomize` promises.
"""

from __future__ import annotations

import itertools
import secrets
from collections import Counter
from collections.abc import Iterator
from typing import Any, ClassVar

import hypothesis.internal.conjecture.providers as hypothesis_providers
import msgspec
import pytest
import schemathesis
from hypothesis import settings
from litestar import Litestar
from litestar.testing import TestClient
from requests.structures import CaseInsensitiveDict
from schemathesis.config import SchemathesisConfig

from infra.memory_store import MemoryGameStore
from service.core.ports import GameStore
from service.core.settings import GameSettings, RedisSettings, Settings
from service.entrypoints.api.app import create_app
from service.games.use_cases import GameService
from service.lobby.use_cases import Lobby
from tests.support.archive import CLAIM_KEY, claim_redis_db

CONFIG = """
[checks]
enabled = true  # every built-in check (max_response_time needs a limit: left unset, so off)

[checks.positive_data_acceptance]
# the defaults, plus 412: If-Match naming a version that is not the current one (see above)
expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "412", "429", "5xx"]

[[operations]]
# `cursor` is opaque: only a cursor that a previous page handed out is valid, which no
# schema can describe; any other string is a 400 (see the module docstring). The cursor
# only: since/until are exact (a schema-valid time is answered 200)
include-operation-id = ["listArchivedGames", "listGames", "listTournaments"]
checks.positive_data_acceptance.expected-statuses = [
  "2xx", "3xx", "400", "401", "403", "404", "409", "412", "429", "5xx",
]
"""
ALL_CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "positive_data_acceptance",
    "missing_required_header",
    "unsupported_method",
    "allow_header_conformance",
    "use_after_free",
    "ensure_resource_availability",
    "ignored_auth",
    "object_level_authorization",
)
# Budget: the whole contract suite in well under 3 minutes on 2 cores. The coverage phase
# (boundary and invalid values of every keyword, a fixed set per operation) runs in full;
# the fuzzing phase draws this many examples per operation.
FUZZ_EXAMPLES = 100
STATEFUL_SCENARIOS = 150
STATEFUL_STEPS = 16
# the stateful run must play games, not only knock on the door. Since the lobby most generated
# creations are open tables (a seat `open` or reserved by `player_id` waits for a player) and
# only games dealt at once get a seat token from the `Act` link: 5-9 accepted actions per run
# were seen (20+ before the lobby), 3 once the service's own constants left the examples; an
# action on a game the run dealt is now sent as the seat to act (`_as_the_seat_to_act`): 10.
# With `master` among the bot levels the generated data moved and 12 steps a scenario played
# 2; 16 steps play 13. With a seat's `entropy` (fair deals) they moved again: 16 steps played 2, 18
# play 11; with create's `entropy` gone (entropy is given on join only) 18 played 2, 16 play 10.
# The lobby's own flows are played in tests/e2e/test_lobby.py
MIN_ACT_OK = 3
REDIS_FUZZ_EXAMPLES = 25

COMMON = settings(derandomize=True, deadline=None, database=None)


@pytest.fixture(autouse=True, scope="module")
def schema_examples_of_the_schema_alone() -> Iterator[None]:
    """No constants of the project's modules among the generated values (see the module
    docstring): Hypothesis' private hook, pinned with Hypothesis in pyproject.toml."""
    original = hypothesis_providers._get_local_constants
    hypothesis_providers._get_local_constants = hypothesis_providers.Constants
    hypothesis_providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        hypothesis_providers._get_local_constants = original
        hypothesis_providers.CONSTANTS_CACHE.cache.clear()


FUZZ_SETTINGS = settings(COMMON, max_examples=FUZZ_EXAMPLES)
REDIS_FUZZ_SETTINGS = settings(COMMON, max_examples=REDIS_FUZZ_EXAMPLES)
STATEFUL_SETTINGS = settings(
    COMMON, max_examples=STATEFUL_SCENARIOS, stateful_step_count=STATEFUL_STEPS
)


def load_schema(app: Any) -> schemathesis.schemas.BaseSchema:
    config = SchemathesisConfig.from_str(CONFIG)
    loaded = schemathesis.openapi.from_asgi("/schema/openapi.json", app, config=config)
    return loaded.exclude(operation_id="streamEvents")  # streams until the game ends: see above


class ReplayableRandomness:
    """`random_hex` for GameService: unique game ids, one fixed shuffle seed.

    Hypothesis replays a scenario's prefix and expects the same choices to lead to the same
    responses. With a fresh random seed per game the same request gets another starting seat
    and deck order, a replay answers 409 where the first run answered 200, and Hypothesis
    stops with FlakyStrategyDefinition (seen in 3 runs of 4 before this). Games stay varied:
    the generated bodies vary players, bots, `starting_seat` and `deck`. Ids start with a
    per-app random part, so runs against a Redis that outlives them never collide.
    """

    GAME_ID_BYTES = 10  # GameService.create draws the id with 10 random bytes, the seed with 16

    def __init__(self) -> None:
        self._prefix = secrets.token_hex(4)
        self._ids = itertools.count(1)

    def __call__(self, nbytes: int) -> str:
        if nbytes == self.GAME_ID_BYTES:
            return f"{self._prefix}{next(self._ids):012x}"
        return "5e" * nbytes


def build_app(settings: Settings, store: GameStore | None = None) -> Litestar:
    """The app as create_app builds it, its game service given replayable randomness; no
    quota of open tables (TEN_MAX_OPEN_TABLES, tests/integration/test_table_quota.py): the
    store outlives Hypothesis's examples, so a create its replay sends could meet a quota
    the first run filled (429), and the bundle of created games come up empty (flaky)."""
    quotas = msgspec.structs.replace(settings.quotas, max_open_tables=0)
    settings = msgspec.structs.replace(settings, quotas=quotas)
    app = create_app(settings, store=store)
    built: GameService = app.state.service
    app.state.service = GameService(built.store, settings, random_hex=ReplayableRandomness())
    app.state.lobby = Lobby(app.state.service, identities_open=app.state.lobby.identities_open)
    return app


def operation_id(case: schemathesis.Case) -> str:
    return case.operation.definition.raw["operationId"]


LOBBY_OPERATIONS = [
    "listGames", "joinGame", "leaveGame", "startGame", "cancelGame", "abortGame",
    "reissueSeatToken",
]  # fmt: skip
# the tournaments' operations (their own state, none of a game's)
TOURNAMENT_OPERATIONS = [
    "createTournament", "listTournaments", "getTournament", "getTournamentStandings",
    "listTournamentRounds", "getTournamentTable", "registerTournament", "withdrawTournament",
    "startTournament", "pauseTournament", "resumeTournament", "stopTournament",
]  # fmt: skip
# the matchmaking's operations (their own state; a ticket's stream lasts until it is matched)
MATCHMAKING_OPERATIONS = ["createTicket", "getTicket", "cancelTicket", "streamTicket"]


def issued_tokens(body: dict) -> list[str]:
    """The credentials a createGame or joinGame answer hands out: seat tokens (a game's
    `seats`, a table's `tokens`, a join's `token`) and an anonymous host's `host_token`."""
    found = [s["token"] for s in body.get("seats", []) if "token" in s]
    found += [t["token"] for t in body.get("tokens", [])]
    found += [body[k] for k in ("token", "host_token") if body.get(k)]
    return found


def workflow_for(loaded: schemathesis.schemas.BaseSchema) -> Any:
    """The stateful phase's state machine, counting what it did and knowing issued tokens."""

    # The lobby's operations stay out of this state machine: their answers depend on what
    # earlier scenarios did to a table (joined, started...), so Hypothesis' replays of one
    # scenario draw differently ("inconsistent data generation"). They are fuzzed one by one
    # (test_api_conforms), walked through their links by the stock CLI's stateful phase
    # (tests/contract/test_schemathesis_cli.py) and played in tests/e2e/test_lobby.py. So does
    # the review (`getGameReview`): its answer for one game changes with time (202 while the
    # background computes it, then 200), and each call takes a step from the games played;
    # it is fuzzed, walked by the CLI and tested in tests/integration/test_reviews_http.py.
    # The tournaments' too: on this app (no API key, no JWT key) every write of theirs is
    # 401 (a tournament needs the platform or a verified player), so they only took the
    # steps that play games (12 operations: 1 accepted action a run was seen); they are
    # fuzzed one by one and played in tests/integration/test_tournaments_http.py. The
    # matchmaking's are fuzzed one by one and played in tests/integration/test_matchmaking_http.py.
    stateful = loaded.exclude(
        operation_id=[
            *LOBBY_OPERATIONS,
            *TOURNAMENT_OPERATIONS,
            "getGameReview",
            *MATCHMAKING_OPERATIONS,
        ]
    )

    class Workflow(stateful.as_state_machine()):  # type: ignore[misc]
        calls: ClassVar[Counter[tuple[str, int]]] = Counter()
        issued: ClassVar[set[str]] = set()  # `Bearer <token>` of every seat createGame returned
        # what a player at the table knows: each dealt game's seat tokens, and whose turn
        # its last answer said it is
        seats: ClassVar[dict[str, dict[int, str]]] = {}
        to_act: ClassVar[dict[str, int]] = {}

        def before_call(self, case: schemathesis.Case) -> None:
            # a create's Idempotency-Key is remembered for a day (by caller, not by game): a
            # replay of a scenario would get the game an earlier scenario made with the same
            # generated key, moved on since, and Hypothesis stops ("inconsistent data
            # generation"). Idempotent creates are fuzzed apart and played in the e2e tests.
            super().before_call(case)
            op = operation_id(case)
            if op == "createGame" and case.headers:
                case.headers.pop("Idempotency-Key", None)
            if op == "act":
                self._as_the_seat_to_act(case)

        def _as_the_seat_to_act(self, case: schemathesis.Case) -> None:
            """An action on a game this run dealt, sent with a generated credential, is
            sent as the seat whose turn it is would send it (its token), as a client
            playing the game does: most generated tokens are refused (401), and the
            stateful phase must play games. A credential a link passed stays; refusals of
            bad tokens are fuzzed by test_api_conforms and the `ignored_auth` check."""
            game_id = (case.path_parameters or {}).get("game_id")
            seat = self.to_act.get(game_id)
            token = self.seats.get(game_id, {}).get(seat) if seat is not None else None
            headers = CaseInsensitiveDict(case.headers or {})
            if token is None or headers.get("Authorization") in self.issued:
                return
            headers["Authorization"] = f"Bearer {token}"
            case.headers = dict(headers)

        def after_call(self, response: Any, case: schemathesis.Case) -> None:
            super().after_call(response, case)
            op = operation_id(case)
            self.calls[(op, response.status_code)] += 1
            if op in ("createGame", "joinGame") and response.status_code == 201:
                self.issued.update(f"Bearer {token}" for token in issued_tokens(response.json()))
            if op in ("createGame", "getGame", "act") and response.status_code in (200, 201):
                body = response.json()
                if isinstance(body.get("id"), str) and "to_act" in body:
                    self.to_act[body["id"]] = body["to_act"]
                    if op == "createGame":
                        tokens = {s["seat"]: s["token"] for s in body.get("seats", [])}
                        self.seats[body["id"]] = tokens

        def validate_response(
            self,
            response: Any,
            case: schemathesis.Case,
            additional_checks: Any = None,
            **kwargs: Any,
        ) -> None:
            # an issued token is the caller's own credential (see the module docstring)
            sent = CaseInsensitiveDict(case.headers or {}).get("Authorization")
            explicit = {"Authorization": sent} if sent in self.issued else None
            case.validate_response(
                response,
                additional_checks=additional_checks,
                headers=explicit,
                transport_kwargs=kwargs or None,
                recorder=self.recorder,
            )

    return Workflow


def assert_games_were_played(calls: Counter[tuple[str, int]], minimum: int) -> None:
    summary = ", ".join(f"{op} {status}: {n}" for (op, status), n in sorted(calls.items()))
    print(f"\nstateful calls: {summary}")
    assert calls[("createGame", 201)] > 0, summary
    assert calls[("act", 200)] >= minimum, f"too few accepted actions: {summary}"


# ---------------------------------------------------------------- the embedded store

schema = load_schema(build_app(Settings(), MemoryGameStore()))


def test_every_check_is_enabled() -> None:
    checks = schema.config.checks
    assert [name for name in ALL_CHECKS if not checks.get_by_name(name=name).enabled] == []
    assert not checks.max_response_time.enabled


@schema.parametrize()
@FUZZ_SETTINGS
def test_api_conforms(case: schemathesis.Case) -> None:
    case.call_and_validate()


Workflow = workflow_for(schema)


class TestStateful(Workflow.TestCase):  # type: ignore[misc, valid-type]
    settings = STATEFUL_SETTINGS

    def runTest(self) -> None:
        Workflow.calls.clear()
        super().runTest()
        assert_games_were_played(Workflow.calls, MIN_ACT_OK)


# ---------------------------------------------------------------- the Redis store
# The same app on the real Redis, with fewer fuzz examples (the HTTP layer is already fuzzed
# above; this checks the store's answers: versions, event logs, idempotent replays).
# Schemathesis runs every ASGI app on one long-lived event loop thread, and the store's
# clients connect on first use, inside that loop: no "attached to a different loop".


@pytest.fixture(scope="module")
def redis_schema(redis_url: str) -> Iterator[schemathesis.schemas.BaseSchema]:
    """The app on a Redis database of this module alone, emptied first: Hypothesis replays
    the examples it saved (their Idempotency-Keys included), and a create's first answer is
    remembered for a day, so a Redis that outlived an earlier run (of an older release)
    would hand that run's answers back."""
    with claim_redis_db(redis_url) as (url, client):
        for key in client.scan_iter(count=1000):
            if key != CLAIM_KEY.encode():
                client.delete(key)
        # short expiry: these games are litter in a Redis that outlives the run
        yield load_schema(
            build_app(
                Settings(
                    redis=RedisSettings(url=url), games=GameSettings(idle_ttl=600, finished_ttl=600)
                )
            )
        )


redis_lazy = schemathesis.pytest.from_fixture("redis_schema")


@redis_lazy.parametrize()
@REDIS_FUZZ_SETTINGS
def test_api_conforms_on_redis(case: schemathesis.Case) -> None:
    case.call_and_validate()


def test_stateful_on_redis(redis_schema: schemathesis.schemas.BaseSchema) -> None:
    machine = workflow_for(redis_schema)
    machine.run(settings=STATEFUL_SETTINGS)
    assert_games_were_played(machine.calls, MIN_ACT_OK)


# ---------------------------------------------------------------- the event stream


def test_event_stream_contract() -> None:
    """streamEvents, left out of fuzzing: the stream of a finished game (bots only: played to
    the end at creation) is a 200 text/event-stream from event 1; an unknown game a 404."""
    full = schemathesis.openapi.from_asgi("/schema/openapi.json", build_app(Settings()))
    create = full.find_operation_by_id("createGame")
    stream = full.find_operation_by_id("streamEvents")
    players = [{"name": "A", "bot": "basic"}, {"name": "B", "bot": "random"}]
    created = create.Case(body={"players": players}).call_and_validate()
    assert created.status_code == 201
    game_id = created.json()["id"]
    response = stream.Case(path_parameters={"game_id": game_id}).call_and_validate()
    assert response.status_code == 200
    assert response.headers["content-type"][0].startswith("text/event-stream")
    # Schemathesis reads the first 20 events of a stream (the whole game is longer)
    assert "id: 1\r\nevent: game_started\r\n" in response.text
    missing = stream.Case(path_parameters={"game_id": "0" * 20}).call_and_validate()
    assert missing.status_code == 404


# ---------------------------------------------------------------- strict bodies
# Values of the wrong JSON type that msgspec's lax conversion (Litestar's) would turn into
# the right one: the schema refuses them, so the API must answer 400 (found by reading, not by
# Schemathesis: its negative values for integers are not numeric strings).
WRONG_TYPES = {
    "createGame": [
        {"players": [{"name": "A"}], "starting_seat": "0"},
        {"players": [{"name": "A"}], "rules": {"perfect_bonus": "2"}},
        {"players": [{"name": "A"}], "starting_seat": 0.5},
    ],
    "scoreCollection": [{"cards": ["R1"], "rules": {"perfect_bonus": "2"}}],
}


@pytest.mark.parametrize(
    ("op_id", "body"),
    [(op_id, body) for op_id, bodies in WRONG_TYPES.items() for body in bodies],
)
def test_numbers_sent_as_strings_are_refused(op_id: str, body: dict[str, Any]) -> None:
    response = schema.find_operation_by_id(op_id).Case(body=body).call_and_validate()
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "invalid_request"


def test_an_integral_float_is_an_integer() -> None:
    """As in JSON Schema (`0.0` is an integer): Schemathesis sends it as valid data."""
    body = {"players": [{"name": "A"}, {"name": "B"}], "starting_seat": 1.0}
    response = schema.find_operation_by_id("createGame").Case(body=body).call_and_validate()
    assert response.status_code == 201, response.text
    assert response.json()["starting_seat"] == 1


def test_an_action_with_a_string_amount_is_refused() -> None:
    created = schema.find_operation_by_id("createGame").Case(body={"players": [{"name": "A"}]})
    game = created.call_and_validate().json()
    act = schema.find_operation_by_id("act").Case(
        path_parameters={"game_id": game["id"]},
        headers={"Authorization": f"Bearer {game['seats'][0]['token']}"},
        body={"type": "bid", "amount": "4"},
    )
    response = act.call_and_validate()
    assert response.status_code == 400, response.text


@pytest.mark.parametrize("path", ["/v1/games", "/v1/scores"])
def test_deeply_nested_json_is_a_400_problem(client: TestClient, path: str) -> None:
    nested = b"[" * 2000 + b"]" * 2000  # 4 KB: msgspec gives up at 1000 levels
    body = b'{"players": ' + nested + b"}" if path == "/v1/games" else b'{"cards": ' + nested + b"}"
    response = client.post(path, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] == "invalid_request"
