"""The archive end to end: real service processes (uvicorn) on Redis and PostgreSQL (and the
embedded default on a SQLite file), driven over HTTP only.

Games are played to the end over HTTP (all-bot games finish when created; human+bot games
by posting legal actions); what the archive then serves is checked against what the live
API said and against the games re-played here with the domain engine from the seed the
archive reveals. The database is also read directly (SQLAlchemy), not through the service.

Isolation: every server that shares a Redis database shares its archive queue
(`{ten:q:archive}:*`) whatever archive database it writes to, so a server of another test
on the same Redis database (e.g. the e2e servers on db 0, archiving into the default
SQLite file) would take this test's finished games. Each test therefore claims a Redis
logical database of its own (`claim_redis_db`) and a throwaway PostgreSQL database.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from fractions import Fraction
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
import redis
from sqlalchemy.engine import make_url

from domain.bots.basic import BOTS, bot_rng
from domain.game.cards import deck_for
from domain.game.engine import apply, information_state, new_game, to_act
from domain.game.model import Action, Rules
from domain.game.views import public_view
from service.core.ports import ArchiveJob
from tests.servers import free_port
from tests.support.archive import (
    OUTBOX_KEY,
    PG_SERVER,
    ArchiveDb,
    claim_redis_db,
    pg_database,
    served_on,
    servers,
)

# the module's tests on one worker: its module fixture `world` (replicas on Redis and PostgreSQL,
# every game played and archived) is made once (--dist loadgroup would spread them over the
# workers, and each would make it)
pytestmark = pytest.mark.xdist_group("integration-archive-world")

PG_HOST, PG_PORT = "127.0.0.1", make_url(PG_SERVER).port or 5432
VIEW_ONLY = (
    "id",
    "seat",
    "legal_actions",
    "seat_actions",
    "events",
    "seats",
    "host_token",
    "clock",
    "fairness",  # the deal's commitment (game_started's) and, once ended, its seed
)  # beyond a view
PLAYER_POOL = ("ann", "bob", "cy", "dee", "eve", "Zed")  # "Zed" < "ann": ids compare byte-wise
# a player never rated has the prior (service.history.ratings): mu 25, sigma 25/3, ordinal mu - 3 sigma
PRIOR_JSON = {"mu": 25.0, "sigma": 25 / 3, "ordinal": 25 - 3 * (25 / 3), "games": 0}


# ---------------------------------------------------------------- servers


@pytest.fixture
def private_redis(redis_url: str) -> Iterator[tuple[str, redis.Redis]]:
    with claim_redis_db(redis_url) as claimed:
        yield claimed


def outbox_ids(client: redis.Redis) -> set[str]:
    return {key.decode() for key in client.hkeys(OUTBOX_KEY)}


# ---------------------------------------------------------------- archive databases


def wait_until(check: Callable[[], bool], timeout: float, what: str, step: float = 0.05) -> float:
    """Poll `check` until true; the seconds it took."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(step)
    return time.monotonic() - start


# ---------------------------------------------------------------- TCP proxy


class TcpProxy:
    """A loopback TCP proxy to PostgreSQL on a port of its own, listening only once
    started: before that, connecting to its port is refused."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self.connections = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task] = set()

    def __enter__(self) -> TcpProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            for writer in list(self._writers):
                writer.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            if self._server is not None:
                await self._server.wait_closed()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def start(self) -> None:
        async def listen() -> asyncio.Server:
            return await asyncio.start_server(self._accept, "127.0.0.1", self.port)

        self._server = asyncio.run_coroutine_threadsafe(listen(), self._loop).result(10)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        self._writers.add(up_writer)
        try:
            await asyncio.gather(self._pump(reader, up_writer), self._pump(up_reader, writer))
        finally:
            self._writers.discard(writer)
            self._writers.discard(up_writer)
            self._tasks.discard(task)

    @staticmethod
    async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()


# ---------------------------------------------------------------- playing over HTTP


class RawLog(msgspec.Struct):
    events: list[msgspec.Raw]


@dataclass
class Live:
    """A game played over HTTP, with everything the live API said about it."""

    id: str
    players: list[dict[str, Any]]
    request: dict[str, Any]
    t0: float  # wall clock before creating it
    t1: float = 0.0  # ... and once it had finished
    final: dict[str, Any] = field(default_factory=dict)  # GET /v1/games/{id}, no token
    final_etag: str = ""
    events_body: bytes = b""  # GET /v1/games/{id}/events
    events: list[dict[str, Any]] = field(default_factory=list)
    event_bytes: list[bytes] = field(default_factory=list)  # each event's JSON as served
    tokens: dict[int, str] = field(default_factory=dict)
    human_actions: list[dict[str, Any]] = field(default_factory=list)  # as posted, in order
    observed: list[dict[str, Any]] = field(default_factory=list)  # states answered on the way
    bodies: list[bytes] = field(default_factory=list)  # every live response body
    latencies: list[float] = field(default_factory=list)  # of the actions

    @property
    def player_ids(self) -> list[str | None]:
        return [p.get("player_id") for p in self.players]

    @property
    def seat_count(self) -> int:
        return len(self.players)


def view_of(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in VIEW_ONLY}


def create(client: httpx.Client, players: list[dict[str, Any]], **extra: Any) -> Live:
    request = {"players": players, **extra}
    live = Live(id="", players=players, request=request, t0=time.time())
    started = time.monotonic()
    created = client.post("/v1/games", json=request)
    live.latencies.append(time.monotonic() - started)
    assert created.status_code == 201, created.text
    body = created.json()
    live.id = body["id"]
    live.tokens = {s["seat"]: s["token"] for s in body["seats"]}
    live.bodies.append(created.content)
    live.observed.append(body)
    return live


def finish_reading(client: httpx.Client, live: Live) -> Live:
    live.t1 = time.time()
    final = client.get(f"/v1/games/{live.id}")
    assert final.status_code == 200, final.text
    live.final = final.json()
    live.final_etag = final.headers["ETag"]
    assert live.final["status"] == "finished"
    events = client.get(f"/v1/games/{live.id}/events")
    assert events.status_code == 200, events.text
    live.events_body = events.content
    live.events = events.json()["events"]
    live.event_bytes = [
        bytes(raw) for raw in msgspec.json.decode(events.content, type=RawLog).events
    ]
    assert not events.json()["more"]
    live.bodies += [final.content, events.content]
    return live


def play_bot_game(client: httpx.Client, players: list[dict[str, Any]], **extra: Any) -> Live:
    assert all(p.get("bot") for p in players)
    live = create(client, players, **extra)
    assert live.observed[0]["status"] == "finished"  # bots only: played to the end at once
    return finish_reading(client, live)


def play_human_game(
    clients: list[httpx.Client], players: list[dict[str, Any]], rng: random.Random, **extra: Any
) -> Live:
    """Create on the first client, then post a random legal action for whichever human seat
    must decide, alternating clients (replicas), until the game ends."""
    live = create(clients[0], players, **extra)
    state = live.observed[0]
    legal: list[dict[str, Any]] | None = None
    acting: int | None = None
    for turn in range(3000):
        if state["status"] == "finished":
            break
        client = clients[turn % len(clients)]
        seat = state["to_act"]
        assert seat in live.tokens, "bots move by themselves: a human seat must be to act"
        auth = {"Authorization": f"Bearer {live.tokens[seat]}"}
        if seat != acting or legal is None:
            read = client.get(f"/v1/games/{live.id}", headers=auth)
            assert read.status_code == 200, read.text
            live.bodies.append(read.content)
            legal = read.json()["legal_actions"]
        assert legal, "the seat to act has legal actions"
        action = rng.choice(legal)
        started = time.monotonic()
        acted = client.post(f"/v1/games/{live.id}/actions", json=action, headers=auth)
        live.latencies.append(time.monotonic() - started)
        assert acted.status_code == 200, acted.text
        live.bodies.append(acted.content)
        live.human_actions.append(action)
        state = acted.json()
        live.observed.append(state)
        legal, acting = state["legal_actions"], seat
    else:
        raise AssertionError("a game over HTTP did not end")
    return finish_reading(client, live)


def resimulate(live: Live, seed: str) -> tuple[list[bytes], list[Any]]:
    """The game re-played with the domain engine from the archived seed: the bots decide as
    the service's do (`bot_rng(seed, version)`), the human seats as posted. Its events and
    the public state after every action, as JSON values."""
    players = [(p["name"], p.get("bot")) for p in live.players]
    state, events = new_game(
        players,
        seed,
        deck=live.request.get("deck"),
        starting_seat=live.request.get("starting_seat"),
        rules=msgspec.convert(live.request["rules"], type=Rules)
        if "rules" in live.request
        else None,
    )
    views = [public_view(state)]
    humans = iter(msgspec.json.decode(json.dumps(a), type=Action) for a in live.human_actions)
    while (seat := to_act(state)) is not None:
        level = state.players[seat].bot
        if level is None:
            action = next(humans)
        else:
            action = BOTS[level](information_state(state), seat, bot_rng(state.seed, state.version))
        state, produced = apply(state, seat, action)
        events.extend(produced)
        views.append(public_view(state))
    assert next(humans, None) is None, "every posted action was applied"
    return [msgspec.json.encode(e) for e in events], msgspec.json.decode(msgspec.json.encode(views))


def replay_pages(client: httpx.Client, game_id: str, limit: int) -> list[dict[str, Any]]:
    states: list[dict[str, Any]] = []
    version = 0
    while True:
        page = client.get(
            f"/v1/archive/games/{game_id}/replay",
            params={"from_version": version, "limit": limit},
        )
        assert page.status_code == 200, page.text
        body = page.json()
        assert body["game_id"] == game_id
        assert len(body["states"]) <= limit
        states += body["states"]
        if body["next_version"] is None:
            return states
        assert len(body["states"]) == limit
        assert body["next_version"] == body["states"][-1]["version"] + 1
        version = body["next_version"]


def event_pages(client: httpx.Client, path: str, limit: int) -> list[bytes]:
    pages: list[bytes] = []
    after = 0
    while True:
        page = client.get(path, params={"after": after, "limit": limit})
        assert page.status_code == 200, page.text
        pages.append(page.content)
        body = page.json()
        if not body["more"]:
            return pages
        after = body["last_seq"]


def keys_of(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_of(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_of(v)}
    return set()


def perfect_colors(result: dict[str, Any]) -> int:
    return sum(1 for color in result["colors"].values() if len(color["run"]) == 9)


def busts_of(live: Live, seat: int) -> int:
    return sum(1 for e in live.events if e["type"] == "busted" and e["seat"] == seat)


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text)


def archived_or_none(client: httpx.Client, game_id: str) -> dict[str, Any] | None:
    found = client.get(f"/v1/archive/games/{game_id}")
    if found.status_code == 404:
        assert found.json()["code"] == "archived_game_not_found"
        return None
    assert found.status_code == 200, found.text
    return found.json()


def wait_archived(client: httpx.Client, lives: list[Live], timeout: float = 10) -> dict[str, Any]:
    """Poll the archive API until every game is there; their archived records by id."""
    found: dict[str, Any] = {}

    def done() -> bool:
        for live in lives:
            if live.id not in found and (record := archived_or_none(client, live.id)):
                found[live.id] = record
        return len(found) == len(lives)

    wait_until(done, timeout, "finished games archived", step=0.1)
    return found


def complete_counts(lives: list[Live]) -> dict[str, tuple[int, int, int, int]]:
    """The rows a game archived exactly once has: one game row, a seat and a result per
    seat, every event."""
    return {live.id: (1, live.seat_count, live.seat_count, len(live.events)) for live in lives}


def check_archived(client: httpx.Client, live: Live, archived: dict[str, Any]) -> None:
    """Everything the archive says about one game, against the live API and a re-play."""
    n = live.seat_count
    assert archived["id"] == live.id
    assert archived["status"] == "finished"
    assert archived["player_count"] == n
    assert archived["seats"] == [
        {
            "seat": i,
            "name": p["name"],
            "bot": p.get("bot"),
            "player_id": p.get("player_id"),
            # nobody was taken over: each seat counts exactly when the game is ranked
            "ranked": archived["ranked"],
            "unranked_reason": None,
        }
        for i, p in enumerate(live.players)
    ]
    assert archived["rules"] == live.final["rules"]
    assert archived["version"] == live.final["version"]
    assert archived["event_count"] == len(live.events)
    # the results are the live game's final results, plus figures derived from the log
    assert archived["results"] == [
        {**r, "perfect_colors": perfect_colors(r), "busts": busts_of(live, r["seat"])}
        for r in live.final["results"]
    ]
    created_at, finished_at = (
        parse_time(archived["created_at"]),
        parse_time(archived["finished_at"]),
    )
    slack = timedelta(seconds=1)
    assert datetime.fromtimestamp(live.t0, UTC) - slack <= created_at <= finished_at
    assert finished_at <= datetime.fromtimestamp(live.t1, UTC) + slack

    # the event log: byte for byte what the live API served, whole and page by page
    path = f"/v1/archive/games/{live.id}/events"
    whole = client.get(path)
    assert whole.status_code == 200
    assert whole.content == live.events_body
    assert event_pages(client, path, 17) == event_pages(client, f"/v1/games/{live.id}/events", 17)

    # the seed and the deck: in the archive, and the seed in an ended game's `fairness` (its
    # reveal: docs/fairness.md); never in an answer about the game while it was live
    seed, deck = archived["seed"], archived["deck"]
    assert re.fullmatch(r"[0-9a-f]{32}", seed)
    for body in live.bodies:
        shown = unrevealed(json.loads(body), seed)
        assert seed not in json.dumps(shown)
        assert not keys_of(shown) & {"seed", "deck", "draw_pile"}
    assert deck == [e["card"] for e in live.events if e["type"] == "card_drawn"]
    assert len(deck) == live.events[0]["draw_pile_size"]
    if "deck" in live.request:
        assert deck == live.request["deck"]
    else:
        assert sorted(deck) == sorted(deck_for(n))

    # the seed is the game's: re-played from it, the game is the same, event for event
    events, views = resimulate(live, seed)
    assert events == live.event_bytes

    # the replay rebuilds every public state, 0 .. final, in pages
    states = replay_pages(client, live.id, limit=23)
    assert [s["version"] for s in states] == list(range(live.final["version"] + 1))
    assert states == views
    for seen in live.observed:  # what the live API answered on the way
        assert states[seen["version"]] == view_of(seen)
    assert states[-1] == view_of(live.final)


def bot_players(rng: random.Random, n: int, ids: list[str | None]) -> list[dict[str, Any]]:
    players = []
    for seat in range(n):
        player: dict[str, Any] = {"name": f"b{seat}", "bot": rng.choice(("random", "basic"))}
        if ids[seat] is not None:
            player["player_id"] = ids[seat]
        players.append(player)
    return players


def problem(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == status
    assert body["code"] == code
    return body


def random_ids(rng: random.Random, n: int, anonymous: float = 0.2) -> list[str | None]:
    return [pid if rng.random() >= anonymous else None for pid in rng.sample(PLAYER_POOL, n)]


# ---------------------------------------------------------------- 1. finished games are archived


def play_mix(clients: list[httpx.Client], rng: random.Random) -> list[Live]:
    """Bot games of 1, 2 and 5 seats (one with a custom deck, one with other rules) and a
    human+bot game played through every client in turn."""
    client = clients[0]
    deck = deck_for(1)
    rng.shuffle(deck)
    humans = [
        {"name": "Ann", "player_id": "ann"},
        {"name": "Basic", "bot": "basic", "player_id": "bob"},
        {"name": "Random", "bot": "random"},
    ]
    return [
        play_bot_game(client, bot_players(rng, 2, ["ann", "bob"])),
        play_bot_game(
            client,
            bot_players(rng, 5, ["ann", None, "cy", "Zed", None]),
            rules={"perfect_bonus": 3},
        ),
        play_bot_game(client, bot_players(rng, 1, ["dee"]), deck=deck, starting_seat=0),
        play_human_game(clients, humans, rng, starting_seat=1),
    ]


@pytest.mark.parametrize("setup", ["redis+postgresql", "embedded+sqlite"])
def test_finished_games_are_archived(
    setup: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with contextlib.ExitStack() as stack:
        client, db = served_on(setup, stack, tmp_path, request)
        lives = play_mix([client], random.Random(f"archive-service/{setup}"))
        archived = wait_archived(client, lives)
        for live in lives:
            check_archived(client, live, archived[live.id])
        assert db.counts([live.id for live in lives]) == complete_counts(lives)
        assert db.total_games() == len(lives)


# ---------------------------------------------------------------- 2. outbox recovery


def test_the_outbox_archives_what_finished_while_the_database_was_down(
    tmp_path: Path, private_redis: tuple[str, redis.Redis]
) -> None:
    redis_url, outbox = private_redis
    rng = random.Random("archive-service/recovery")
    bot_games = [bot_players(rng, n, random_ids(rng, n)) for n in (1, 2, 3, 4, 5)]
    humans = [{"name": "Ann", "player_id": "ann"}, {"name": "Bot", "bot": "basic"}]
    with pg_database() as db, TcpProxy((PG_HOST, PG_PORT)) as proxy:
        # the database as the service sees it: a port where nothing listens yet
        via_proxy = make_url(db.url).set(host="127.0.0.1", port=proxy.port)
        env = {
            "TEN_REDIS_URL": redis_url,
            "TEN_DATABASE_URL": via_proxy.render_as_string(hide_password=False),
            "TEN_ARCHIVE_INTERVAL": "0.2",
            "TEN_MIGRATE_ON_START": "false",
        }
        with (
            servers(tmp_path, env) as (server,),
            httpx.Client(base_url=server.base, timeout=10) as client,
        ):
            lives = [play_human_game([client], humans, rng)]
            with ThreadPoolExecutor(5) as executor:
                lives += executor.map(lambda players: play_bot_game(client, players), bot_games)
            ids = [live.id for live in lives]

            # archiving never blocks nor fails an action
            assert max(t for live in lives for t in live.latencies) < 2.0
            # nothing reached the database...
            assert db.counts(ids) == dict.fromkeys(ids, (0, 0, 0, 0))
            assert db.total_games() == 0
            # ... every game waits in the outbox, with its whole log
            assert outbox_ids(outbox) == set(ids)
            for live in lives:
                job = msgspec.msgpack.decode(outbox.hget(OUTBOX_KEY, live.id), type=ArchiveJob)
                assert job.record.id == live.id
                assert job.record.state.phase == "finished"
                assert list(job.record.player_ids) == live.player_ids
                assert [e.data for e in job.events] == live.event_bytes
            # the archive's reads say so; the live game is still served from Redis
            down = problem(client.get(f"/v1/archive/games/{ids[0]}"), 503, "store_unavailable")
            assert down["title"]
            assert client.get(f"/v1/archive/games/{ids[0]}").headers["Retry-After"]
            assert client.get(f"/v1/games/{ids[0]}").status_code == 200
            assert "archive unavailable" in server.log()

            proxy.start()
            wait_until(
                lambda: db.counts(ids) == complete_counts(lives),
                40,  # the archiver's backoff is capped at 30 s
                "every game archived once the database is back",
                step=0.1,
            )
            wait_until(lambda: not outbox.exists(OUTBOX_KEY), 5, "the outbox emptied")
            assert proxy.connections > 0
            time.sleep(0.6)  # a few more sweeps: nothing is archived twice
            assert db.counts(ids) == complete_counts(lives)
            assert db.total_games() == len(lives)
            assert outbox.hlen(OUTBOX_KEY) == 0

            archived = wait_archived(client, lives, timeout=5)
            for live in lives:
                check_archived(client, live, archived[live.id])


# ---------------------------------------------------------------- 3. after Redis expired a game


def test_a_game_expired_from_redis_is_read_from_the_archive(
    tmp_path: Path, private_redis: tuple[str, redis.Redis]
) -> None:
    redis_url, raw = private_redis
    rng = random.Random("archive-service/expiry")
    env = {
        "TEN_REDIS_URL": redis_url,
        "TEN_FINISHED_TTL": "1",
        "TEN_ARCHIVE_INTERVAL": "0.2",
        "TEN_MIGRATE_ON_START": "false",
    }
    with pg_database() as db:
        env["TEN_DATABASE_URL"] = db.url
        with (
            servers(tmp_path, env) as (server,),
            httpx.Client(base_url=server.base, timeout=10) as client,
        ):
            humans = [{"name": "Ann", "player_id": "ann"}, {"name": "Bot", "bot": "random"}]
            human = play_human_game([client], humans, rng)
            auth = {"Authorization": f"Bearer {human.tokens[0]}"}
            seated = client.get(f"/v1/games/{human.id}", headers=auth)
            assert seated.status_code == 200
            assert seated.json()["seat"] == 0
            assert seated.json()["legal_actions"] == []
            bot = play_bot_game(client, bot_players(rng, 3, ["ann", "bob", None]))
            lives = [human, bot]
            wait_archived(client, lives)
            for live in lives:
                tag = f"{{game:{live.id}}}"
                wait_until(lambda tag=tag: not raw.exists(tag, f"{tag}:log"), 10, "expired")

            for live in lives:
                read = client.get(f"/v1/games/{live.id}")
                assert read.status_code == 200, read.text
                assert read.json() == live.final
                assert read.headers["ETag"] == live.final_etag
                problem(client.get(f"/v1/games/{live.id}/events"), 404, "game_not_found")
                archived_log = client.get(f"/v1/archive/games/{live.id}/events")
                assert archived_log.content == live.events_body
                problem(
                    client.post(
                        f"/v1/games/{live.id}/actions",
                        json={"type": "draw"},
                        headers={"Authorization": f"Bearer {live.id}.0.x"},
                    ),
                    404,
                    "game_not_found",
                )
            # with the seat token: the same state, without the seat's view of it
            read = client.get(f"/v1/games/{human.id}", headers=auth)
            assert read.status_code == 200
            assert read.json() == {
                **seated.json(),
                "seat": None,
                "legal_actions": None,
                "seat_actions": None,
            }
            problem(client.get(f"/v1/games/{'0' * 20}"), 404, "game_not_found")
            assert db.counts([human.id, bot.id]) == complete_counts(lives)


# ---------------------------------------------------------------- 4. two replicas


def test_two_replicas_archive_every_game_exactly_once(
    tmp_path: Path, private_redis: tuple[str, redis.Redis]
) -> None:
    redis_url, outbox = private_redis
    rng = random.Random("archive-service/replicas")
    bot_games = [bot_players(rng, 1 + i % 5, random_ids(rng, 1 + i % 5)) for i in range(40)]
    with pg_database(migrate=False) as db:
        env = {
            "TEN_REDIS_URL": redis_url,
            "TEN_DATABASE_URL": db.url,
            "TEN_MIGRATE_ON_START": "true",  # both replicas migrate at once
            "TEN_ARCHIVE_INTERVAL": "0.2",
        }
        with (
            servers(tmp_path, env, env) as (a, b),
            httpx.Client(base_url=a.base, timeout=10) as ca,
            httpx.Client(base_url=b.base, timeout=10) as cb,
        ):
            humans = [{"name": "Ann", "player_id": "ann"}, {"name": "Bot", "bot": "basic"}]
            lives = [
                play_human_game([ca, cb], humans, rng),  # created on A, played on both
                play_human_game([cb, ca], humans, rng),
            ]
            replicas = [ca, cb]
            with ThreadPoolExecutor(8) as executor:
                lives += executor.map(
                    lambda i: play_bot_game(replicas[i % 2], bot_games[i]), range(len(bot_games))
                )
            ids = [live.id for live in lives]
            wait_until(
                lambda: db.counts(ids) == complete_counts(lives),
                15,
                "every game archived",
                step=0.1,
            )
            wait_until(lambda: not outbox.exists(OUTBOX_KEY), 5, "the outbox emptied")
            time.sleep(0.6)  # a few more sweeps of both replicas
            assert db.counts(ids) == complete_counts(lives)
            assert db.total_games() == len(lives)
            assert outbox.hlen(OUTBOX_KEY) == 0
            # either replica serves every archived game
            for i, live in enumerate(lives):
                client = replicas[(i + 1) % 2]
                assert client.get(f"/v1/archive/games/{live.id}/events").content == (
                    live.events_body
                )
            archived = wait_archived(cb, lives[:2])
            for live in lives[:2]:
                check_archived(cb, live, archived[live.id])


# ---------------------------------------------------------------- 5/6. stats, leaderboard, lists


@dataclass
class World:
    """Bot games with known player ids, archived by one service on a fresh database."""

    client: httpx.Client
    db: ArchiveDb
    lives: list[Live]  # in the order they were created (and finished)
    archived: dict[str, dict[str, Any]]

    def finished_at(self, live: Live) -> datetime:
        return parse_time(self.archived[live.id]["finished_at"])


@pytest.fixture(scope="module")
def world(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    rng = random.Random("archive-service/world")
    tmp = tmp_path_factory.mktemp("world")
    with claim_redis_db(redis_url) as (url, _), pg_database() as db:
        env = {
            "TEN_REDIS_URL": url,
            "TEN_DATABASE_URL": db.url,
            "TEN_MIGRATE_ON_START": "false",
            "TEN_ARCHIVE_INTERVAL": "0.2",
        }
        with (
            servers(tmp, env) as (server,),
            httpx.Client(base_url=server.base, timeout=10) as client,
        ):
            lives = []
            for i in range(36):
                n = 1 + i % 5
                lives.append(play_bot_game(client, bot_players(rng, n, random_ids(rng, n))))
            archived = wait_archived(client, lives)
            yield World(client=client, db=db, lives=lives, archived=archived)


@dataclass
class Figures:
    games: int = 0
    wins: int = 0
    scores: list[int] = field(default_factory=list)
    busts: int = 0
    perfect_colors: int = 0

    @property
    def mean(self) -> Fraction:
        return Fraction(sum(self.scores), len(self.scores))


def expected_figures(world: World) -> dict[str, Figures]:
    """Per player id, from the live games' final results and event logs."""
    figures: dict[str, Figures] = {}
    for live in world.lives:
        for result in live.final["results"]:
            player_id = live.players[result["seat"]].get("player_id")
            if player_id is None:
                continue
            f = figures.setdefault(player_id, Figures())
            f.games += 1
            f.wins += bool(result["winner"])
            f.scores.append(result["score"])
            f.busts += busts_of(live, result["seat"])
            f.perfect_colors += perfect_colors(result)
    return figures


def test_player_stats(world: World) -> None:
    figures = expected_figures(world)
    assert set(figures) == set(PLAYER_POOL)
    for player_id, f in figures.items():
        got = world.client.get(f"/v1/players/{player_id}/stats", params={"ranked": "all"})
        assert got.status_code == 200, got.text
        stats = got.json()
        assert stats == {
            "player_id": player_id,
            "ranked_only": False,
            "games": f.games,
            "wins": f.wins,
            "mean_score": pytest.approx(float(f.mean)),
            "best_score": max(f.scores),
            "busts": f.busts,
            "bust_rate": pytest.approx(f.busts / f.games),
            "perfect_colors": f.perfect_colors,
            "rating": PRIOR_JSON,  # bot games are never ranked, so nobody is rated
        }
        # by default ranked games only: bot games never are (fewer than two humans)
        ranked = world.client.get(f"/v1/players/{player_id}/stats").json()
        assert (ranked["ranked_only"], ranked["games"], ranked["wins"]) == (True, 0, 0)
    assert world.client.get("/v1/players/nobody/stats").json() == {
        "player_id": "nobody",
        "ranked_only": True,
        "games": 0,
        "wins": 0,
        "mean_score": None,
        "best_score": None,
        "busts": 0,
        "bust_rate": None,
        "perfect_colors": 0,
        "rating": PRIOR_JSON,
    }


def expected_board(world: World, by: str, min_games: int) -> list[tuple[str, int, int, Fraction]]:
    rows = [
        (player_id, f.games, f.wins, f.mean)
        for player_id, f in expected_figures(world).items()
        if f.games >= min_games
    ]
    if by == "wins":
        rows.sort(key=lambda r: (-r[2], -r[3], r[0].encode()))
    else:
        rows.sort(key=lambda r: (-r[3], -r[1], r[0].encode()))
    return rows


@pytest.mark.parametrize("by", ["wins", "mean_score"])
def test_leaderboard(world: World, by: str) -> None:
    games = sorted(f.games for f in expected_figures(world).values())
    for min_games in sorted({1, games[len(games) // 2], games[-1], games[-1] + 1}):
        expected = expected_board(world, by, min_games)
        got = world.client.get(
            "/v1/leaderboard",
            params={"by": by, "min_games": min_games, "limit": 200, "ranked": "all"},
        )
        assert got.status_code == 200, got.text
        body = got.json()
        assert (body["by"], body["min_games"], body["offset"]) == (by, min_games, 0)
        assert body["ranked_only"] is False
        assert [(r["position"], r["player_id"], r["games"], r["wins"]) for r in body["rows"]] == [
            (i, pid, g, w) for i, (pid, g, w, _) in enumerate(expected, start=1)
        ]
        for row, (_, _, _, mean) in zip(body["rows"], expected, strict=True):
            assert row["mean_score"] == pytest.approx(float(mean))
        # in pages of two: the same rows, positions counted over the whole ordering
        paged: list[dict[str, Any]] = []
        for offset in range(0, len(expected) + 2, 2):
            page = world.client.get(
                "/v1/leaderboard",
                params={
                    "by": by,
                    "min_games": min_games,
                    "offset": offset,
                    "limit": 2,
                    "ranked": "all",
                },
            ).json()
            assert page["offset"] == offset
            paged += page["rows"]
        assert paged == body["rows"]
    default = world.client.get("/v1/leaderboard").json()
    assert default["by"] == "wins"
    assert default["min_games"] == 1
    assert default["ranked_only"] is True
    assert default["rows"] == []  # bot games are never ranked
    every = world.client.get("/v1/leaderboard", params={"ranked": "all"}).json()
    assert [r["player_id"] for r in every["rows"]] == [
        r[0] for r in expected_board(world, "wins", 1)
    ]


def walk(client: httpx.Client, limit: int, **filters: str) -> list[dict[str, Any]]:
    """Every page of the listing: its items in order, no duplicates."""
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {**filters, "limit": limit}
        if cursor is not None:
            params["cursor"] = cursor
        page = client.get("/v1/archive/games", params=params)
        assert page.status_code == 200, page.text
        body = page.json()
        assert len(body["items"]) <= limit
        items += body["items"]
        cursor = body["next_cursor"]
        if cursor is None:
            break
        assert len(body["items"]) == limit
    ids = [item["id"] for item in items]
    assert len(ids) == len(set(ids)), "a game listed twice"
    return items


def rfc3339(at: datetime, offset_hours: int) -> str:
    text = at.astimezone(timezone(timedelta(hours=offset_hours))).isoformat()
    return text.replace("+00:00", "Z")


def test_listing_filters_and_cursor_paging(world: World) -> None:
    lives, client = world.lives, world.client
    newest_first = [live.id for live in reversed(lives)]  # created (and finished) one by one
    by_time = sorted(lives, key=lambda live: (world.finished_at(live), live.id), reverse=True)
    assert [live.id for live in by_time] == newest_first

    # every page size walks the same games, newest first, with no gap and no duplicate
    for limit in (1, 4, 7, 36, 200):
        assert [item["id"] for item in walk(client, limit)] == newest_first

    # the items: the archived records, seat by seat
    for item in walk(client, 200):
        record = world.archived[item["id"]]
        for name in ("player_count", "created_at", "finished_at", "version", "event_count"):
            assert item[name] == record[name]
        assert item["status"] == "finished"
        assert (item["ranked"], item["unranked_reason"]) == (False, "too_few_humans")
        assert item["unranked_reasons"] == ["too_few_humans"]
        assert (record["ranked"], record["unranked_reason"]) == (False, "too_few_humans")
        assert item["seats"] == [
            {**seat, "score": result["score"], "rank": result["rank"], "winner": result["winner"]}
            for seat, result in zip(record["seats"], record["results"], strict=True)
        ]

    for player_id in PLAYER_POOL:
        expected = [live.id for live in reversed(lives) if player_id in live.player_ids]
        assert [item["id"] for item in walk(client, 3, player_id=player_id)] == expected
    assert walk(client, 5, player_id="nobody") == []

    # since (inclusive) and until (exclusive), as RFC 3339 strings with any offset
    times = [world.finished_at(live) for live in lives]
    lo, hi = len(lives) // 4, 3 * len(lives) // 4
    since, until = rfc3339(times[lo], 2), rfc3339(times[hi], 0)
    assert until.endswith("Z")
    assert since.endswith("+02:00")
    window = [live.id for live in reversed(lives[lo:hi])]
    assert [item["id"] for item in walk(client, 4, since=since, until=until)] == window
    assert [item["id"] for item in walk(client, 4, since=since)] == newest_first[: len(lives) - lo]
    assert [item["id"] for item in walk(client, 4, until=rfc3339(times[hi], -5))] == (
        newest_first[len(lives) - hi :]
    )
    for player_id in ("ann", "Zed"):
        expected = [live.id for live in reversed(lives[lo:hi]) if player_id in live.player_ids]
        got = walk(client, 2, player_id=player_id, since=since, until=until)
        assert [item["id"] for item in got] == expected
    assert walk(client, 3, since=until, until=since) == []
    assert [item["id"] for item in walk(client, 50, status="finished")] == newest_first
    assert [item["id"] for item in walk(client, 50, status="all")] == newest_first
    assert walk(client, 50, status="aborted") == []
    assert [item["id"] for item in walk(client, 50, ranked="false")] == newest_first
    assert [item["id"] for item in walk(client, 50, ranked="all")] == newest_first
    assert walk(client, 50, ranked="true") == []
    problem(client.get("/v1/archive/games", params={"ranked": "yes"}), 400, "invalid_request")
    problem(client.get("/v1/archive/games", params={"status": "active"}), 400, "invalid_request")
    problem(client.get("/v1/archive/games", params={"since": "yesterday"}), 400, "invalid_request")


def b64(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode()).rstrip(b"=").decode()


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage",
        "!!!!",
        "",
        b64('[2, 0, "x"]'),  # another cursor version
        b64('{"finished_at": 0, "id": "x"}'),
        b64('[1, "soon", "x"]'),
        b64('[1, 1000000000000000000, "x"]'),  # after the year 9999
    ],
)
def test_a_made_up_cursor_is_a_bad_request(world: World, cursor: str) -> None:
    problem(
        world.client.get("/v1/archive/games", params={"cursor": cursor}), 400, "invalid_request"
    )


def test_a_player_id_in_two_seats_is_a_conflict(world: World) -> None:
    before = world.db.total_games()
    for players in (
        [{"name": "A", "bot": "basic", "player_id": "ann"}, {"name": "B", "player_id": "ann"}],
        [
            {"name": "A", "bot": "basic", "player_id": "x"},
            {"name": "B", "bot": "random"},
            {"name": "C", "bot": "random", "player_id": "x"},
        ],
    ):
        created = world.client.post("/v1/games", json={"players": players})
        problem(created, 409, "duplicate_player_id")
    time.sleep(0.5)  # a game created by mistake would be archived by now
    assert world.db.total_games() == before


# ---------------------------------------------------------------- bugs found (fixed)


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/v1/games/%00", {}),
        ("/v1/archive/games/%00", {}),
        ("/v1/archive/games/%00/events", {}),
        ("/v1/archive/games/%00/replay", {}),
        ("/v1/players/%00/stats", {}),
        ("/v1/archive/games", {"cursor": b64('[1, 0, "\\u0000"]')}),
    ],
)
def test_a_nul_character_is_a_client_error(world: World, path: str, params: dict[str, str]) -> None:
    got = world.client.get(path, params=params)
    assert got.status_code in (400, 404), got.text
    assert got.headers["content-type"] == "application/problem+json"


@pytest.mark.parametrize(
    "params",
    [
        {"since": "0001-01-01T00:00:00+01:00"},  # 0000-12-31T23:00Z: before every game
        {"until": "9999-12-31T23:59:59-01:00"},  # past year 9999 in UTC: after every game
        {"since": "0001-01-01T00:00:00Z", "until": "9999-12-31T23:59:59.999999Z"},
    ],
)
def test_an_instant_at_the_end_of_the_range_is_accepted(
    world: World, params: dict[str, str]
) -> None:
    """The schema accepts every RFC 3339 time of years 0001-9999 with any offset: so does
    the handler (was a 400 for the two just past Python's range); they bound nothing."""
    got = walk(world.client, 200, **params)
    assert [item["id"] for item in got] == [live.id for live in reversed(world.lives)]


@pytest.mark.parametrize(
    "value",
    [
        "0",  # was answered 400 while the schema allowed it (the stock Schemathesis run)
        "",
        "2025-02-30T00:00:00Z",  # no such date (the schema's format: date-time)
        "2025-02-29T00:00:00Z",
        "0000-01-01T00:00:00Z",
        "2025-01-01T24:00:00Z",
        "2025-01-01T00:00:60Z",  # a leap second: RFC 3339 has them, the archive not
        "2025-01-01 00:00:00Z",
        "2025-01-01T00:00:00",  # no offset
        "2025-01-01T00:00:00.1234567Z",
        "2025-01-01T00:00:00Z\n",
        "1700000000",
    ],
)
def test_a_time_the_schema_refuses_is_a_400(world: World, value: str) -> None:
    for name in ("since", "until"):
        got = world.client.get("/v1/archive/games", params={name: value})
        problem(got, 400, "invalid_request")


def test_the_schema_and_the_handler_agree_on_times(world: World) -> None:
    """The served schema declares since/until as the pattern the handler parses, plus
    `format: date-time`; `0` matches neither (the stock Schemathesis run sent it as valid
    when the pattern also matched the empty string)."""
    document = world.client.get("/schema/openapi.json").json()
    [operation] = [
        item["get"] for path, item in document["paths"].items() if path == "/v1/archive/games"
    ]
    params = {p["name"]: p["schema"] for p in operation["parameters"]}
    for name in ("since", "until"):
        schema = params[name]
        assert schema["format"] == "date-time"
        assert "default" not in schema
        pattern = re.compile(schema["pattern"])
        assert not pattern.search("0")
        assert not pattern.search("")
        assert pattern.search("2026-11-29T18:00:00Z")


# ---------------------------------------------------------------- hostile text, both dialects

# names a client may send that the text policy keeps (NFC-normalized, trimmed), with what is
# stored; and names it refuses (400 invalid_text, nothing created)
KEPT_NAMES = {
    " Zoe\u0301 ": "Zo\u00e9",  # decomposed, trailing space: composed, trimmed
    "\u05d0\u05d1\u05d2 12": "\u05d0\u05d1\u05d2 12",  # right to left, then digits
    "\u0aae\u0ac7\u0ab9\u0ac1\u0ab2": "\u0aae\u0ac7\u0ab9\u0ac1\u0ab2",  # Gujarati
    "\U0001f469\u200d\U0001f4bb": "\U0001f469\u200d\U0001f4bb",  # an emoji sequence (a joiner)
    "\u0645\u06cc\u200c\u062e\u0648\u0627\u0645": "\u0645\u06cc\u200c\u062e\u0648\u0627\u0645",
}
REFUSED_NAMES = [
    "Ann\x00",
    "Ann\x07",
    "a\u2028b",
    "x \u202egnp.exe",
    "\u200b\u200b",
    "   ",
    "\u200d",
]


@pytest.mark.parametrize("setup", ["redis+postgresql", "embedded+sqlite"])
def test_hostile_text_is_refused_or_archived_as_normalized_on_both_dialects(
    setup: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Names through create and join: the ones the policy refuses never reach a game (nor the
    archive: before the policy, a U+0000 stopped PostgreSQL's archive for good); the ones it
    keeps are archived as normalized, on PostgreSQL as on SQLite, and the ratings of their
    players read without a `before` (a 500 on PostgreSQL before: a default past INTEGER)."""
    with contextlib.ExitStack() as stack:
        client, db = served_on(setup, stack, tmp_path, request)
        for name in REFUSED_NAMES:
            made = client.post("/v1/games", json={"players": [{"name": name, "bot": "basic"}]})
            assert problem(made, 400, "invalid_text")["detail"]
        table = client.post("/v1/games", json={"players": [{"name": "Host"}, {"open": True}]})
        assert table.status_code == 201, table.text
        game_id = table.json()["id"]
        for name in REFUSED_NAMES:
            joined = client.post(f"/v1/games/{game_id}/seats", json={"name": name})
            problem(joined, 400, "invalid_text")
        for bad_id in ("p-bob\n", "p-bob\r\n", "p bob"):
            joined = client.post(f"/v1/games/{game_id}/seats", json={"player_id": bad_id})
            problem(joined, 400, "invalid_request")
        assert client.get(f"/v1/games/{game_id}").json()["seats"][1]["taken"] is False

        players = [
            {"name": sent, "bot": "basic", "player_id": f"p-{i}"}
            for i, sent in enumerate(KEPT_NAMES)
        ]
        live = play_bot_game(client, players)
        [archived] = wait_archived(client, [live]).values()
        assert [s["name"] for s in archived["seats"]] == list(KEPT_NAMES.values())
        assert db.total_games() == 1  # the refused never made a game
        for i in range(len(players)):
            ratings = client.get(f"/v1/players/p-{i}/ratings")
            assert ratings.status_code == 200, ratings.text
            assert ratings.json()["player_id"] == f"p-{i}"
        problem(
            client.get("/v1/players/p-0/ratings", params={"before": 2**31}), 400, "invalid_request"
        )


def unrevealed(view: Any, seed: str) -> Any:
    """`view` without the seed an ended game reveals (`fairness.seed`, checked to be the
    game's): what is left must not show it."""
    fairness = view.get("fairness") if isinstance(view, dict) else None
    if not isinstance(fairness, dict) or "seed" not in fairness:
        return view
    assert view["status"] in ("finished", "aborted", "abandoned"), view["status"]
    assert fairness["seed"] == seed
    return {**view, "fairness": {k: v for k, v in fairness.items() if k != "seed"}}
