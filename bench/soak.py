"""The soak (issue 22 item 7): mixed play on two replicas of the service, Redis and PostgreSQL,
faults at random (seeded) moments, then an accounting of everything that was acknowledged.

    .venv/bin/python bench/soak.py                    # ten minutes
    .venv/bin/python bench/soak.py --duration 60 --seed 3

Everything runs on loopback and is started here, never the machine's shared servers: a
private redis-server (append-only file, fsync on every write), a private PostgreSQL cluster
(`initdb` in a temporary directory), two uvicorn processes of the service sharing them, and
an HTTP receiver of the service's webhooks (signatures verified, every `webhook-id` counted).

The play, by client threads spreading every request over both replicas (each request to
the next replica; a refused connection, a request cut in flight or a 503 is sent again, same
`Idempotency-Key`, to the next one):
- `humans`: two platform players (the API key names their `player_id`s: ranked, rated) and
  one or two `basic` bots, a whole game through the REST API, each seat reading its legal
  actions and acting;
- `bots`: one player and three `basic` bots;
- `lobby`: an open table of three seats, joined by two players (on either replica), played;
- `clock`: one player and a bot on a 3-second bank clock (`takeover_after` 1); the player
  acts a few times and walks away, so the clock times the seat out, a bot takes it over and
  the game ends by itself;
- event-stream (SSE) watchers following live games, resuming with `Last-Event-ID` on the
  other replica whenever a stream ends before `game_finished`;
- an archive reader (leaderboard, archived games, players' ratings and stats: PostgreSQL).

The faults, one after the other at seeded random moments: Redis restarted (SHUTDOWN or
SIGKILL), a replica SIGKILLed and started again on its port, PostgreSQL restarted (a fast
or an immediate shutdown: a crash), and meanwhile the webhook receiver down (a minute in
ten; a tenth of a shorter run).

Then the play stops, the clocks left running are waited for, the outbox and relay queues
drain (bounded), and the accounting (every check a violation when it fails; exit status 1):
- every acknowledged action (a 200 on an action POST) is in its game's event log exactly
  once: its events at their seqs, the acknowledged versions contiguous from the game's
  start, nothing unacknowledged between them (a clock's timeout only after the last);
- every finished game archived exactly once, its archived events those the log serves; no
  other game archived; each rated exactly once when two counting player seats remain
  (rated_games, rating_history, every player's rated-game count);
- every webhook message the logs call for (`started`, `taken_<seq>`, `finished`) delivered
  at least once, correctly signed (duplicates reported: at-least-once allows them), none
  that no game calls for;
- every clocked game timed out exactly once and ended; every event stream gave its game's
  log in order, without gap or repeat across resumptions;
- every 5xx a 503 with Retry-After while Redis or PostgreSQL was down (or within 10 s of its
  return); any other is listed with its path and body;
- the queues empty, nothing quarantined; and figures: requests, throughput, RSS per replica
  (VmRSS at its start and at the end; a replica SIGKILLed starts a new count).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import collections
import contextlib
import itertools
import json
import random
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import redis
from standardwebhooks import Webhook

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from service.jobs.worker import QUEUES  # every leased queue of the service (service/app.py)
from service.privacy.use_cases import QUEUE as PRIVACY_QUEUE
from service.privacy.use_cases import RECONCILE
from tests.servers import PostgresServer, RedisServer, ServiceProcess, free_port

API_KEY = "soak-platform-key-0123456789abcdef"
SECRET = "whsec_" + base64.b64encode(b"soak-webhook-secret-of-32-bytes!").decode()
ACTION_DEADLINE = 60.0  # seconds one request may take, retries included
RETRY_PAUSE = 0.1
GRACE = 10.0  # seconds after a dependency is back during which its 503s are still expected
CLOCK_SECONDS = 3.0
SPACING = 8.0  # seconds between the starts of two faults at least
THINK = (0.01, 0.05)  # seconds a player thinks between two actions
DRAIN_TIMEOUT = 180.0
CLOCKS_TIMEOUT = 90.0
WORKERS = {"humans": 3, "bots": 1, "lobby": 1, "clock": 1, "watch": 3, "reader": 1}
RANKED_KINDS = ("humans", "lobby")  # the platform names two or more players, standard deck


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _platform() -> dict[str, str]:
    return {"X-API-Key": API_KEY, "Idempotency-Key": uuid.uuid4().hex}


def rss_kb(pid: int) -> int | None:
    """VmRSS of a process (kB), None once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


# ------------------------------------------------------------------ what the run records


@dataclass
class GameNote:
    """A game as its client saw it: the seats it holds and every acknowledged action."""

    id: str
    kind: str
    humans: dict[int, str]  # seat -> the player id the platform gave it
    start_version: int | None = None  # the version the game was dealt at (None: not started)
    acks: list[tuple[int, list[dict[str, Any]]]] = field(default_factory=list)  # version, events
    played_out: bool = False  # its client saw it finish (a clock game: before its player left)


@dataclass
class Watch:
    """One client's following of a game over event streams (resumed across replicas)."""

    game_id: str
    events: list[dict[str, Any]] = field(default_factory=list)
    finished: bool = False  # it received `game_finished`
    streams: int = 0  # streams opened (1 + resumptions)


@dataclass
class Window:
    """A fault: what, and when it began and ended (seconds since the play began)."""

    kind: str  # redis | postgres | replica | webhooks
    detail: str
    down: float
    up: float | None = None


@dataclass
class Incarnation:
    slot: int
    pid: int
    started: float
    rss_start: int | None
    rss_end: int | None = None
    rss_peak: int = 0
    killed: bool = False


@dataclass
class Collected:
    """Everything the accounting looks at (`account` is a pure function of it)."""

    duration: float
    games: dict[str, GameNote]
    logs: dict[str, list[dict[str, Any]]]  # served at the end, whole
    archived: dict[str, dict[str, Any]]  # game id -> {rows, event_count, events, ranked, results}
    rated: dict[str, int]  # game id -> rated_games rows
    history: dict[str, int]  # game id -> rating_history rows
    ratings: dict[str, int]  # player id -> ratings.games
    deliveries: dict[str, int]  # webhook-id -> deliveries received
    bad_signatures: int
    fivexx: list[dict[str, Any]]
    windows: list[Window]
    watches: list[Watch]
    problems: list[str]  # what the clients met that they should not have
    queues_left: dict[str, int]
    quarantined: dict[str, int]
    drain_seconds: float
    statuses: dict[str, int]  # per status class
    refusals: dict[str, int]  # 4xx, per status and problem code
    retries: dict[str, int]
    incarnations: list[Incarnation]


class Recorder:
    """What every client thread reports, under one lock."""

    def __init__(self, t0: float) -> None:
        self.t0 = t0
        self.lock = threading.Lock()
        self.games: dict[str, GameNote] = {}
        self.fivexx: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.statuses: collections.Counter[str] = collections.Counter()
        self.retries: collections.Counter[str] = collections.Counter()
        self.refusals: collections.Counter[str] = collections.Counter()  # 4xx: status code
        self.watches: list[Watch] = []

    def now(self) -> float:
        return time.monotonic() - self.t0

    def response(self, method: str, path: str, response: httpx.Response) -> None:
        with self.lock:
            self.statuses[f"{response.status_code // 100}xx"] += 1
            if 400 <= response.status_code < 500:
                self.refusals[f"{response.status_code} {_code(response)}"] += 1
            if response.status_code >= 500:
                self.fivexx.append(
                    {
                        "t": self.now(),
                        "method": method,
                        "path": path,
                        "status": response.status_code,
                        "retry_after": response.headers.get("retry-after"),
                        "body": response.text[:300],
                    }
                )

    def retry(self, why: str) -> None:
        with self.lock:
            self.retries[why] += 1

    def problem(self, text: str) -> None:
        with self.lock:
            self.problems.append(f"{self.now():7.1f} s  {text}")


# ------------------------------------------------------------------ servers


class Receiver:
    """The platform's webhook endpoint: verifies each delivery's signature and counts its
    `webhook-id`; `stop` closes the port (deliveries are refused) until `start`."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/hooks"
        self.lock = threading.Lock()
        self.deliveries: collections.Counter[str] = collections.Counter()
        self.bad_signatures = 0
        self.server: ThreadingHTTPServer | None = None
        self.start()

    def start(self) -> None:
        receiver, verifier = self, Webhook(SECRET)

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    verifier.verify(body, headers)
                    ok = True
                except Exception:
                    ok = False
                with receiver.lock:
                    if ok:
                        receiver.deliveries[headers.get("webhook-id", "")] += 1
                    else:
                        receiver.bad_signatures += 1
                self.send_response(204 if ok else 400)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True, name="receiver").start()
        self.server = server

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


class Replicas:
    """The service's two processes, each restartable on its port; their RSS per incarnation."""

    def __init__(self, env: dict[str, str], logs: Path, t0: Callable[[], float]) -> None:
        self.env, self.logs, self.now = env, logs, t0
        self.ports = [free_port(), free_port()]
        self.bases = [f"http://127.0.0.1:{port}" for port in self.ports]
        self.procs: list[ServiceProcess | None] = [None, None]
        self.incarnations: list[Incarnation] = []
        self.lock = threading.Lock()
        for slot in range(2):  # one after the other: the first migrates the archive
            self.start(slot)

    def start(self, slot: int) -> None:
        n = sum(1 for i in self.incarnations if i.slot == slot)
        proc = ServiceProcess(
            self.env, port=self.ports[slot], stdout=self.logs / f"replica{slot}-{n}.log"
        )
        with self.lock:
            self.procs[slot] = proc
            rss = rss_kb(proc.proc.pid)
            self.incarnations.append(
                Incarnation(slot, proc.proc.pid, self.now(), rss, rss_peak=rss or 0)
            )

    def kill(self, slot: int) -> None:
        with self.lock:
            proc = self.procs[slot]
            self.procs[slot] = None
            current = self.current(slot)
        assert proc is not None
        self.sample()
        proc.kill()
        current.killed = True

    def current(self, slot: int) -> Incarnation:
        return [i for i in self.incarnations if i.slot == slot][-1]

    def sample(self) -> None:
        with self.lock:
            for slot, proc in enumerate(self.procs):
                if proc is None:
                    continue
                rss = rss_kb(proc.proc.pid)
                if rss is not None:
                    current = self.current(slot)
                    current.rss_end = rss
                    current.rss_peak = max(current.rss_peak, rss)

    def tracebacks(self) -> collections.Counter[str]:
        """The replicas' logged tracebacks by their exception line (the first line after a
        `Traceback` that is not a frame), so a run's report says what went wrong."""
        found: collections.Counter[str] = collections.Counter()
        for path in sorted(self.logs.glob("replica*.log")):
            lines = path.read_text(errors="replace").splitlines()
            for i, line in enumerate(lines):
                if line.startswith("Traceback (most recent call last)"):
                    tail = (x for x in lines[i + 1 :] if x.strip() and not x[0].isspace())
                    found[next(tail, "?")[:200]] += 1
        return found

    def stop(self) -> None:
        for proc in self.procs:
            if proc is not None:
                proc.stop()


# ------------------------------------------------------------------ clients


class Api:
    """One client's HTTP: each request to the next replica; sent again (same headers, so the
    same Idempotency-Key) on a refused connection, a request cut in flight, a 5xx or a
    `concurrent_update`, until an answer or `ACTION_DEADLINE`."""

    def __init__(self, bases: list[str], rec: Recorder, offset: int) -> None:
        self.clients = [httpx.Client(base_url=b, timeout=10) for b in bases]
        self.turn = itertools.count(offset)
        self.rec = rec

    def client(self) -> httpx.Client:
        return self.clients[next(self.turn) % len(self.clients)]

    def request(
        self, method: str, path: str, *, retry: bool = True, **kwargs: Any
    ) -> httpx.Response | None:
        deadline = time.monotonic() + ACTION_DEADLINE
        while True:
            try:
                response = self.client().request(method, path, **kwargs)
            except (httpx.ConnectError, httpx.ConnectTimeout):
                self.rec.retry("connection refused")
            except httpx.TransportError:
                self.rec.retry("cut in flight")
            else:
                self.rec.response(method, path, response)
                if response.status_code < 500 and not _concurrent(response):
                    return response
                self.rec.retry(f"{response.status_code}")
            if not retry or time.monotonic() > deadline:
                return None
            time.sleep(RETRY_PAUSE)

    def close(self) -> None:
        for client in self.clients:
            client.close()


def _concurrent(response: httpx.Response) -> bool:
    if response.status_code != 409:
        return False
    with contextlib.suppress(ValueError):
        return response.json().get("code") == "concurrent_update"
    return False


def _code(response: httpx.Response) -> str:
    with contextlib.suppress(ValueError, AttributeError):
        return str(response.json().get("code"))
    return "?"


class Soak:
    def __init__(self, bases: list[str], rec: Recorder, seed: int, run_id: str) -> None:
        self.bases, self.rec, self.seed, self.run_id = bases, rec, seed, run_id
        self.stop = threading.Event()
        self.live: collections.deque[str] = collections.deque(maxlen=40)  # started, unwatched
        self.finished: collections.deque[str] = collections.deque(maxlen=200)
        self.clocks: list[str] = []  # clock games left to time out
        self.names = itertools.count()

    # ---- games

    def create(self, api: Api, kind: str, players: list[dict[str, Any]], **extra: Any):
        response = api.request(
            "POST", "/v1/games", json={"players": players, **extra}, headers=_platform()
        )
        if response is None or response.status_code != 201:
            self.rec.problem(f"create ({kind}): {_describe(response)}")
            return None
        body = response.json()
        humans = {s: p["player_id"] for s, p in enumerate(players) if p.get("player_id")}
        note = GameNote(body["id"], kind, humans)
        with self.rec.lock:
            self.rec.games[note.id] = note
        return note, body

    def play(
        self,
        api: Api,
        rng: random.Random,
        note: GameNote,
        body: dict[str, Any],
        tokens: dict[int, str],
        stop_after: int | None = None,
    ) -> None:
        """Act for every seat the client holds until the game ends (or `stop_after` actions:
        the player walks away), each action with an Idempotency-Key of its own."""
        path, acted = f"/v1/games/{note.id}", 0
        while body["status"] != "finished" and not self.stop.is_set():
            if stop_after is not None and acted >= stop_after:
                return
            seat = body["to_act"]
            legal = body.get("legal_actions") if body.get("seat") == seat else None
            if seat not in tokens:
                self.rec.problem(f"{note.id} ({note.kind}) waits on seat {seat}, not ours")
                return
            if not legal:
                read = api.request("GET", path, headers=_bearer(tokens[seat]))
                if read is None or read.status_code != 200:
                    self.rec.problem(f"GET {path}: {_describe(read)}")
                    return
                body = read.json()
                if body["players"][seat].get("taken_over") and note.kind == "clock":
                    return  # the clock ran out meanwhile
                if body["status"] == "finished" or body["to_act"] != seat:
                    continue
                legal = body["legal_actions"]
            headers = {**_bearer(tokens[seat]), "Idempotency-Key": uuid.uuid4().hex}
            acted_on = api.request(
                "POST", f"{path}/actions", json=rng.choice(legal), headers=headers
            )
            if acted_on is not None and acted_on.status_code == 200:
                body = acted_on.json()
                note.acks.append((body["version"], body["events"]))
                acted += 1
            elif acted_on is not None and note.kind == "clock" and acted_on.status_code == 409:
                return  # the clock timed the seat out while the action was on its way
            else:
                self.rec.problem(f"POST {path}/actions: {_describe(acted_on)}")
                return
            time.sleep(rng.uniform(*THINK))
        if body["status"] == "finished":
            note.played_out = True
            self.finished.append(note.id)

    def humans_game(self, api: Api, rng: random.Random, pool: list[str]) -> None:
        players: list[dict[str, Any]] = [
            {"name": f"Player {pid[-2:]}", "player_id": pid} for pid in rng.sample(pool, 2)
        ]
        players += [{"name": f"Basic {i}", "bot": "basic"} for i in range(rng.randint(1, 2))]
        rng.shuffle(players)
        self._deal_and_play(api, rng, "humans", players)

    def bots_game(self, api: Api, rng: random.Random, pool: list[str]) -> None:
        players: list[dict[str, Any]] = [{"name": f"Basic {i}", "bot": "basic"} for i in range(3)]
        players.insert(rng.randrange(4), {"name": "Solo", "player_id": rng.choice(pool)})
        self._deal_and_play(api, rng, "bots", players)

    def _deal_and_play(self, api: Api, rng: random.Random, kind: str, players: list) -> None:
        created = self.create(api, kind, players)
        if created is None:
            return
        note, body = created
        note.start_version = body["version"]
        self.live.append(note.id)
        tokens = {s["seat"]: s["token"] for s in body["seats"]}
        self.play(api, rng, note, body, tokens)

    def lobby_game(self, api: Api, rng: random.Random, pool: list[str]) -> None:
        host, *joiners = rng.sample(pool, 3)
        players = [{"name": "Host", "player_id": host}, {"open": True}, {"open": True}]
        created = self.create(api, "lobby", players)
        if created is None:
            return
        note, table = created
        tokens = {t["seat"]: t["token"] for t in table["tokens"]}
        game = None
        for pid in joiners:
            joined = api.request(
                "POST",
                f"/v1/games/{note.id}/seats",
                json={"name": f"Joiner {pid[-2:]}", "player_id": pid},
                headers=_platform(),
            )
            if joined is None or joined.status_code != 201:
                self.rec.problem(f"join {note.id}: {_describe(joined)}")
                return
            seat = joined.json()
            tokens[seat["seat"]] = seat["token"]
            note.humans[seat["seat"]] = pid
            game = seat.get("game") or game
        if game is None:
            self.rec.problem(f"{note.id}: the join that filled the table did not start it")
            return
        note.start_version = game["version"]
        self.live.append(note.id)
        self.play(api, rng, note, game, tokens)

    def clock_game(self, api: Api, rng: random.Random, pool: list[str]) -> None:
        clock = {
            "type": "bank",
            "initial_seconds": CLOCK_SECONDS,
            "increment_seconds": 0,
            "takeover_after": 1,
        }
        players = [{"name": "Away", "player_id": rng.choice(pool)}, {"name": "Bot", "bot": "basic"}]
        created = self.create(api, "clock", players, starting_seat=0, clock=clock)
        if created is None:
            return
        note, body = created
        note.start_version = body["version"]
        tokens = {s["seat"]: s["token"] for s in body["seats"]}
        with self.rec.lock:
            self.clocks.append(note.id)
        self.play(api, rng, note, body, tokens, stop_after=rng.randint(0, 6))
        self.stop.wait(rng.uniform(0.5, 2.0))

    # ---- watchers and readers

    def watch(self, api: Api, rng: random.Random, _pool: list[str]) -> None:
        try:
            game_id = self.live.pop()
        except IndexError:
            self.stop.wait(0.3)
            return
        watch = Watch(game_id)
        with self.rec.lock:
            self.rec.watches.append(watch)
        deadline = time.monotonic() + 300
        while not watch.finished and not self.stop.is_set() and time.monotonic() < deadline:
            self._stream(api, watch)

    def _stream(self, api: Api, watch: Watch) -> None:
        path = f"/v1/games/{watch.game_id}/events/stream"
        headers = {"Last-Event-ID": str(watch.events[-1]["seq"])} if watch.events else {}
        client = api.client()
        try:
            with client.stream("GET", path, headers=headers, timeout=6) as response:
                if response.status_code != 200:
                    response.read()
                    self.rec.response("GET", path, response)
                    self.rec.retry(f"stream {response.status_code}")
                    time.sleep(0.5)
                    return
                watch.streams += 1
                fields: dict[str, str] = {}
                for line in response.iter_lines():
                    if self.stop.is_set():
                        return
                    if line:
                        if not line.startswith(":"):
                            name, _, value = line.partition(":")
                            fields[name] = fields.get(name, "") + value.removeprefix(" ")
                        continue
                    if fields.get("event") == "reconnect":
                        return
                    if "data" in fields and "id" in fields:
                        event = json.loads(fields["data"])
                        watch.events.append(event)
                        if event["type"] == "game_finished":
                            watch.finished = True
                    fields = {}
        except httpx.TransportError:
            self.rec.retry("stream cut")
            time.sleep(0.2)

    def read_archive(self, api: Api, rng: random.Random, pool: list[str]) -> None:
        self.stop.wait(0.5)
        pid = rng.choice(pool)
        choices = [
            "/v1/leaderboard?by=rating",
            "/v1/leaderboard?by=wins",
            f"/v1/players/{pid}/ratings",
            f"/v1/players/{pid}/stats",
            f"/v1/archive/games?player_id={pid}&limit=5",
        ]
        if self.finished:
            choices.append(f"/v1/archive/games/{rng.choice(list(self.finished))}")
        path = rng.choice(choices)
        response = api.request("GET", path, retry=False)
        if response is not None and response.status_code not in (200, 404):
            self.rec.problem(f"GET {path}: {_describe(response)}")

    def worker(self, kind: str, index: int) -> None:
        rng = random.Random(f"{self.seed}/{kind}/{index}")
        api = Api(self.bases, self.rec, offset=index)
        pool = [f"soak-{self.run_id}-{kind[0]}{index}-{k:02d}" for k in range(6)]
        step = {
            "humans": self.humans_game,
            "bots": self.bots_game,
            "lobby": self.lobby_game,
            "clock": self.clock_game,
            "watch": self.watch,
            "reader": self.read_archive,
        }[kind]
        try:
            while not self.stop.is_set():
                step(api, rng, pool)
        except Exception as exc:
            self.rec.problem(f"{kind} worker {index} crashed: {exc!r}")
        finally:
            api.close()


def _describe(response: httpx.Response | None) -> str:
    if response is None:
        return f"no answer within {ACTION_DEADLINE:g} s"
    return f"{response.status_code} {response.text[:300]}"


# ------------------------------------------------------------------ faults


def plan_faults(duration: float, rng: random.Random) -> list[tuple[float, str]]:
    """Each kind at least once (more in a longer run), at random moments from a twentieth of
    the run on, `SPACING` seconds apart at least (they run one after the other), the last
    starting 15 s (or 15% of the run) before its end when it fits: the play goes on after."""
    per_kind = max(1, round(duration / 200))
    kinds = ["redis"] * per_kind + ["replica"] * per_kind + ["postgres"] * per_kind
    kinds += ["webhooks"] * max(1, round(duration / 600))
    rng.shuffle(kinds)
    span = max(0.0, 0.95 * duration - max(15.0, 0.15 * duration) - SPACING * (len(kinds) - 1))
    starts = sorted(rng.uniform(0, span) for _ in kinds)
    return [
        (0.05 * duration + at + SPACING * i, kind)
        for i, (at, kind) in enumerate(zip(starts, kinds, strict=True))
    ]


class Faults(threading.Thread):
    """Runs the plan one fault after the other (the webhook receiver's downtime meanwhile)."""

    def __init__(self, plan, rng, rec, redis_server, pg, replicas, receiver, duration) -> None:
        super().__init__(name="faults", daemon=True)
        self.plan, self.rng, self.rec = plan, rng, rec
        self.redis, self.pg, self.replicas, self.receiver = redis_server, pg, replicas, receiver
        self.webhook_downtime = min(60.0, max(3.0, duration / 10))
        self.windows: list[Window] = []
        self.error: BaseException | None = None
        self.receiver_up = threading.Event()
        self.receiver_up.set()
        self.next_slot = rng.randrange(2)

    def run(self) -> None:
        try:
            for at, kind in self.plan:
                wait = at - self.rec.now()
                if wait > 0:
                    time.sleep(wait)
                getattr(self, f"_{kind}")()
        except BaseException as exc:
            self.error = exc

    def _window(self, kind: str, detail: str) -> Window:
        window = Window(kind, detail, self.rec.now())
        self.windows.append(window)
        return window

    def _redis(self) -> None:
        how = self.rng.choice(["SHUTDOWN", "SIGKILL"])
        down = self.rng.uniform(2, 5)
        window = self._window("redis", f"Redis stopped ({how}), down {down:.1f} s")
        if how == "SHUTDOWN":
            self.redis.shutdown()
        else:
            self.redis.kill()
        time.sleep(down)
        self.redis.start()
        window.up = self.rec.now()

    def _postgres(self) -> None:
        mode = self.rng.choice(["fast", "immediate"])
        down = self.rng.uniform(2, 6)
        window = self._window("postgres", f"PostgreSQL stopped ({mode}), down {down:.1f} s")
        self.pg.stop(mode)
        time.sleep(down)
        self.pg.start()
        window.up = self.rec.now()

    def _replica(self) -> None:
        slot, self.next_slot = self.next_slot, 1 - self.next_slot
        down = self.rng.uniform(1, 3)
        window = self._window("replica", f"replica {slot} SIGKILLed, restarted after {down:.1f} s")
        self.replicas.kill(slot)
        time.sleep(down)
        self.replicas.start(slot)
        window.up = self.rec.now()

    def _webhooks(self) -> None:
        window = self._window("webhooks", f"receiver down {self.webhook_downtime:.0f} s")
        self.receiver.stop()
        self.receiver_up.clear()

        def back() -> None:
            self.receiver.start()
            window.up = self.rec.now()
            self.receiver_up.set()

        timer = threading.Timer(self.webhook_downtime, back)
        timer.daemon = True
        timer.start()


# ------------------------------------------------------------------ the end: collect


def _fetch_log(api: Api, game_id: str) -> list[dict[str, Any]] | None:
    events: list[dict[str, Any]] = []
    while True:
        after = events[-1]["seq"] if events else 0
        page = api.request(
            "GET", f"/v1/games/{game_id}/events", params={"after": after, "limit": 1000}
        )
        if page is None or page.status_code != 200:
            return None
        body = page.json()
        events += body["events"]
        if not body["more"]:
            return events


def _pending_clocks(api: Api, clocks: list[str]) -> list[str]:
    left = []
    for game_id in clocks:
        read = api.request("GET", f"/v1/games/{game_id}")
        if read is None or read.status_code != 200 or read.json()["status"] != "finished":
            left.append(game_id)
    return left


# jobs that stay in their queue for good (a periodic job is put back due later, never done)
STANDING = {PRIVACY_QUEUE: {RECONCILE}}


def _queue_sizes(client: redis.Redis) -> tuple[dict[str, int], dict[str, int]]:
    jobs = {q: len(_job_ids(client, q) - STANDING.get(q, set())) for q in QUEUES}
    quarantined = {q: int(client.hlen(f"{{ten:q:{q}}}:quarantine")) for q in QUEUES}
    return jobs, quarantined


def _job_ids(client: redis.Redis, queue: str) -> set[str]:
    ids = client.hkeys(f"{{ten:q:{queue}}}:jobs")
    return {i.decode() if isinstance(i, bytes) else i for i in ids}


async def _archive(dsn: str, ids: list[str]):
    conn = await asyncpg.connect(dsn)
    try:
        archived: dict[str, dict[str, Any]] = {}
        for row in await conn.fetch(
            "SELECT id, count(*) OVER (PARTITION BY id) AS n, event_count, ranked FROM games"
        ):
            archived[row["id"]] = {
                "rows": row["n"],
                "event_count": row["event_count"],
                "ranked": row["ranked"],
                "events": [],
                "results": 0,
            }
        for row in await conn.fetch("SELECT game_id, seq, data FROM events ORDER BY game_id, seq"):
            if row["game_id"] in archived:
                archived[row["game_id"]]["events"].append(json.loads(row["data"]))
        for row in await conn.fetch("SELECT game_id, count(*) AS n FROM results GROUP BY game_id"):
            if row["game_id"] in archived:
                archived[row["game_id"]]["results"] = row["n"]
        rated = {
            r["game_id"]: r["n"]
            for r in await conn.fetch(
                "SELECT game_id, count(*) AS n FROM rated_games GROUP BY game_id"
            )
        }
        history = {
            r["game_id"]: r["n"]
            for r in await conn.fetch(
                "SELECT game_id, count(*) AS n FROM rating_history GROUP BY game_id"
            )
        }
        ratings = {r["player_id"]: r["games"] for r in await conn.fetch("SELECT * FROM ratings")}
        return archived, rated, history, ratings
    finally:
        await conn.close()


# ------------------------------------------------------------------ the accounting


@dataclass
class Accounting:
    violations: list[str]
    lines: list[tuple[bool, str]]  # (clean, what was checked and found)
    figures: dict[str, Any]


def _events_of(log: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in log if e["type"] == kind]


def account(c: Collected) -> Accounting:
    """Every check of the run's end, from what was collected only."""
    violations: list[str] = []
    lines: list[tuple[bool, str]] = []
    figures: dict[str, Any] = {}

    def check(name: str, found: list[str], summary: str) -> None:
        violations.extend(f"{name}: {v}" for v in found)
        lines.append(
            (not found, f"{name}: {summary}" + (f" - {len(found)} violation(s)" if found else ""))
        )

    # -- acknowledged actions, each in its game's log exactly once
    found, acks = [], 0
    for note in c.games.values():
        log = c.logs.get(note.id)
        if log is None:
            found.append(f"{note.id}: its log could not be read")
            continue
        if [e["seq"] for e in log] != list(range(1, len(log) + 1)):
            found.append(f"{note.id}: log seqs are not 1..{len(log)}")
            continue
        expected = None if note.start_version is None else note.start_version + 1
        for version, events in note.acks:
            acks += 1
            if not events:
                found.append(f"{note.id} v{version}: an acknowledged action with no events")
                continue
            first = events[0]["seq"]
            if log[first - 1 : first - 1 + len(events)] != events:
                found.append(f"{note.id} v{version}: its events are not in the log at their seqs")
            if expected is not None and events[0]["version"] != expected:
                found.append(
                    f"{note.id} v{version}: began at version {events[0]['version']}, "
                    f"{expected} expected (an action applied without acknowledgement, "
                    "or twice)"
                )
            expected = version + 1
        last = note.acks[-1][0] if note.acks else note.start_version
        after = [e for e in log if last is not None and e["version"] > last]
        if after and note.kind != "clock":
            found.append(f"{note.id}: {len(after)} events after its last acknowledged action")
        if after and note.kind == "clock" and after[0]["type"] != "timed_out":
            found.append(f"{note.id}: after its last acknowledged action: {after[0]['type']}")
    figures["acks"] = acks
    check(
        "acknowledged actions",
        found,
        f"{acks} in {sum(1 for n in c.games.values() if n.acks)} games, each in its log once",
    )

    # -- finished games archived exactly once; rated exactly once
    finished = {g for g, log in c.logs.items() if log and log[-1]["type"] == "game_finished"}
    figures["finished"] = len(finished)
    found = []
    for game_id in sorted(finished):
        row = c.archived.get(game_id)
        if row is None:
            found.append(f"{game_id}: finished, not archived")
            continue
        if row["rows"] != 1:
            found.append(f"{game_id}: archived {row['rows']} times")
        if row["event_count"] != len(c.logs[game_id]) or row["events"] != c.logs[game_id]:
            found.append(f"{game_id}: the archived events differ from the log served")
        if row["results"] != len(_events_of(c.logs[game_id], "game_started")[0]["players"]):
            found.append(f"{game_id}: {row['results']} result rows")
    for game_id in sorted(set(c.archived) - finished):
        found.append(f"{game_id}: archived, but no finished game of this run")
    check("archive", found, f"{len(finished)} finished games, each archived once, events equal")

    found, rated_games, seats_rated = [], 0, 0
    per_player: collections.Counter[str] = collections.Counter()
    for game_id in sorted(finished):
        note = c.games.get(game_id)
        if note is None:
            continue
        log = c.logs[game_id]
        taken = {e["seat"] for e in _events_of(log, "seat_taken_over")}
        counting = [pid for seat, pid in note.humans.items() if seat not in taken]
        should = note.kind in RANKED_KINDS and len(counting) >= 2
        row = c.archived.get(game_id)
        if row is not None and row["ranked"] != (note.kind in RANKED_KINDS):
            found.append(f"{game_id} ({note.kind}): ranked {row['ranked']}")
        if c.rated.get(game_id, 0) != (1 if should else 0):
            found.append(f"{game_id} ({note.kind}): rated {c.rated.get(game_id, 0)} times")
        if c.history.get(game_id, 0) != (len(counting) if should else 0):
            found.append(f"{game_id}: {c.history.get(game_id, 0)} rating_history rows")
        if should:
            rated_games += 1
            seats_rated += len(counting)
            per_player.update(counting)
    for game_id in sorted(set(c.rated) - finished):
        found.append(f"{game_id}: rated, but no finished game of this run")
    for pid in sorted(set(per_player) | set(c.ratings)):
        if c.ratings.get(pid, 0) != per_player[pid]:
            found.append(f"{pid}: ratings.games {c.ratings.get(pid, 0)}, {per_player[pid]} rated")
    figures["rated"] = rated_games
    check(
        "ratings",
        found,
        f"{rated_games} games rated once ({seats_rated} seats), "
        f"{len(per_player)} players' rated-game counts equal",
    )

    # -- webhooks: every message the logs call for, delivered
    wanted = set()
    for game_id, log in c.logs.items():
        if _events_of(log, "game_started"):
            wanted.add(f"msg_{game_id}_started")
        wanted.update(f"msg_{game_id}_taken_{e['seq']}" for e in _events_of(log, "seat_taken_over"))
        if game_id in finished:
            wanted.add(f"msg_{game_id}_finished")
    missing = sorted(wanted - set(c.deliveries))
    unexpected = sorted(set(c.deliveries) - wanted)
    repeated = {m: n for m, n in c.deliveries.items() if n > 1}
    found = [f"{m}: never delivered" for m in missing]
    found += [f"{m}: delivered, but no game of this run calls for it" for m in unexpected]
    if c.bad_signatures:
        found.append(f"{c.bad_signatures} deliveries with a bad signature")
    figures["webhooks"] = len(wanted)
    figures["webhook_duplicates"] = len(repeated)
    check(
        "webhooks",
        found,
        f"{len(wanted) - len(missing)} of {len(wanted)} messages delivered "
        f"({sum(c.deliveries.values())} deliveries; {len(repeated)} ids more than once, "
        f"at most {max(repeated.values(), default=1)} times)",
    )

    # -- clocks: each timed out once and ended
    found, timed_out = [], 0
    for note in c.games.values():
        if note.kind != "clock" or note.played_out:
            continue
        log = c.logs.get(note.id) or []
        fired = len(_events_of(log, "timed_out"))
        timed_out += 1
        if fired != 1:
            found.append(f"{note.id}: timed out {fired} times")
        if note.id not in finished:
            found.append(f"{note.id}: left to its clock, never finished")
    figures["timed_out"] = timed_out
    check("clocks", found, f"{timed_out} games left to their clock, each timed out once and ended")

    # -- event streams: the log, in order, without gap or repeat across resumptions
    found, streamed = [], 0
    for watch in c.watches:
        log = c.logs.get(watch.game_id) or []
        seqs = [e["seq"] for e in watch.events]
        streamed += len(seqs)
        if seqs != list(range(1, len(seqs) + 1)):
            found.append(f"{watch.game_id}: streamed seqs not 1..n ({seqs[:3]}...)")
        elif watch.events != log[: len(seqs)]:
            found.append(f"{watch.game_id}: streamed events differ from the log")
        elif watch.finished and len(seqs) != len(log):
            found.append(f"{watch.game_id}: {len(seqs)} of {len(log)} events streamed")
    figures["streamed"] = streamed
    check(
        "event streams",
        found,
        f"{len(c.watches)} games followed ({sum(w.streams for w in c.watches)} streams, "
        f"{sum(w.finished for w in c.watches)} to game_finished), {streamed} events, in order",
    )

    # -- 5xx: only 503 + Retry-After while a dependency was down
    found, expected_503 = [], collections.Counter()
    outages = [w for w in c.windows if w.kind in ("redis", "postgres")]
    for r in c.fivexx:
        during = [
            w
            for w in outages
            if w.down - 0.5 <= r["t"] <= (w.up if w.up is not None else c.duration) + GRACE
        ]
        if r["status"] == 503 and r["retry_after"] and during:
            expected_503[during[0].kind] += 1
        else:
            found.append(f"{r['t']:.1f} s {r['method']} {r['path']} {r['status']}: {r['body']}")
    figures["5xx"] = len(c.fivexx)
    check(
        "5xx",
        found,
        f"{len(c.fivexx)} answers, {sum(expected_503.values())} of them 503 with Retry-After "
        f"during an outage ({', '.join(f'{k} {n}' for k, n in sorted(expected_503.items())) or 'none'})",
    )

    # -- the queues drained, nothing set aside; and what the clients met
    found = [f"{q}: {n} jobs left" for q, n in c.queues_left.items() if n]
    found += [f"{q}: {n} jobs quarantined" for q, n in c.quarantined.items() if n]
    check("queues", found, f"relay, archive and webhooks empty after {c.drain_seconds:.1f} s")
    check("clients", list(c.problems), f"{len(c.problems)} unexpected answers or crashes")
    return Accounting(violations, lines, figures)


# ------------------------------------------------------------------ the run


@dataclass
class Outcome:
    collected: Collected
    accounting: Accounting


def run(
    duration: float, seed: int, out: Callable[[str], None] = print, work: Path | None = None
) -> Outcome:
    """The soak; `work`: where the replicas' logs go (default: a temporary directory, kept)."""
    rng = random.Random(seed)
    run_id = uuid.uuid4().hex[:6]
    work = work if work is not None else Path(tempfile.mkdtemp(prefix="ten-soak-"))
    redis_server = RedisServer("--appendonly", "yes", "--appendfsync", "always")
    pg = replicas = receiver = None
    try:
        pg = PostgresServer()
        receiver = Receiver()
        env = {
            "TEN_REDIS_URL": redis_server.url,
            "TEN_DATABASE_URL": pg.url,
            "TEN_MIGRATE_ON_START": "true",
            "TEN_ARCHIVE_INTERVAL": "0.2",
            "TEN_API_KEYS": API_KEY,
            "TEN_WEBHOOK_URLS": receiver.url,
            "TEN_WEBHOOK_SECRET": SECRET,
            "TEN_WEBHOOK_MAX_BACKOFF": "5",
            "TEN_WEBHOOK_TIMEOUT": "5",
            "TEN_DEADLINE_POLL": "0.1",
            "TEN_DEADLINE_LEASE": "5",
            "TEN_SSE_KEEPALIVE": "2",
            "TEN_LOG_FORMAT": "json",
        }
        t0 = time.monotonic()
        rec = Recorder(t0)
        replicas = Replicas(env, work, rec.now)
        rec.t0 = t0 = time.monotonic()  # the play begins now (the replicas are up)
        for inc in replicas.incarnations:
            inc.started = 0.0
        plan = plan_faults(duration, rng)
        out(
            f"soak: {duration:g} s, seed {seed}, 2 replicas {replicas.bases}, "
            f"Redis :{redis_server.port} (AOF, fsync always), PostgreSQL :{pg.port}, "
            f"webhooks -> {receiver.url}; logs in {work}"
        )
        out("faults planned at " + ", ".join(f"{at:.0f} s {kind}" for at, kind in plan))
        soak = Soak(replicas.bases, rec, seed, run_id)
        faults = Faults(plan, rng, rec, redis_server, pg, replicas, receiver, duration)
        threads = [
            threading.Thread(target=soak.worker, args=(kind, i), name=f"{kind}{i}", daemon=True)
            for kind, count in WORKERS.items()
            for i in range(count)
        ]
        for thread in threads:
            thread.start()
        faults.start()
        every = max(5.0, duration / 20)
        while rec.now() < duration:
            time.sleep(min(every, max(0.0, duration - rec.now())))
            replicas.sample()
            out(
                f"  {rec.now():6.0f} s  {len(rec.games)} games, "
                f"{sum(len(n.acks) for n in list(rec.games.values()))} actions acknowledged, "
                f"{len(rec.fivexx)} 5xx, {len(rec.problems)} problems"
            )
        played = rec.now()
        soak.stop.set()
        for thread in threads:
            thread.join(timeout=ACTION_DEADLINE + 30)
        faults.join(timeout=120)
        if faults.error is not None:
            raise RuntimeError(f"a fault could not be applied: {faults.error!r}")
        faults.receiver_up.wait(120)
        out(f"play stopped at {played:.0f} s; waiting for clocks and queues")

        api = Api(replicas.bases, rec, 0)
        end = time.monotonic() + CLOCKS_TIMEOUT
        left = list(soak.clocks)
        while left and time.monotonic() < end:
            left = _pending_clocks(api, left)
            if left:
                time.sleep(1)
        client = redis_server.client()
        drain_start = time.monotonic()
        while True:
            jobs, quarantined = _queue_sizes(client)
            if not any(jobs.values()) or time.monotonic() - drain_start > DRAIN_TIMEOUT:
                break
            time.sleep(0.5)
        drain = time.monotonic() - drain_start
        time.sleep(1.0)  # a delivery in flight as its job was settled
        replicas.sample()
        logs = {}
        for game_id in list(rec.games):
            log = _fetch_log(api, game_id)
            if log is not None:
                logs[game_id] = log
        api.close()
        archived, rated, history, ratings = asyncio.run(_archive(pg.dsn, list(rec.games)))
        with receiver.lock:
            deliveries, bad = dict(receiver.deliveries), receiver.bad_signatures
        collected = Collected(
            duration=played,
            games=dict(rec.games),
            logs=logs,
            archived=archived,
            rated=rated,
            history=history,
            ratings=ratings,
            deliveries=deliveries,
            bad_signatures=bad,
            fivexx=list(rec.fivexx),
            windows=list(faults.windows),
            watches=list(rec.watches),
            problems=list(rec.problems),
            queues_left=jobs,
            quarantined=quarantined,
            drain_seconds=drain,
            statuses=dict(rec.statuses),
            refusals=dict(rec.refusals),
            retries=dict(rec.retries),
            incarnations=list(replicas.incarnations),
        )
        tracebacks = replicas.tracebacks()
        client.close()
    finally:
        if replicas is not None:
            replicas.stop()
        if receiver is not None:
            receiver.stop()
        if pg is not None:
            pg.close()
        redis_server.close()
    accounting = account(collected)
    report(collected, accounting, tracebacks, out)
    return Outcome(collected, accounting)


def report(
    c: Collected, a: Accounting, tracebacks: collections.Counter[str], out: Callable[[str], None]
) -> None:
    kinds = collections.Counter(n.kind for n in c.games.values())
    out("\n== faults (seconds since the play began)")
    for w in c.windows:
        up = f"{w.up:6.1f}" if w.up is not None else "   ?  "
        out(f"  {w.down:6.1f} -> {up}  {w.detail}")
    out("\n== play")
    out(
        f"  {len(c.games)} games ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}), "
        f"{a.figures['finished']} finished; {a.figures['acks']} actions acknowledged "
        f"({a.figures['acks'] / max(c.duration, 1):.1f}/s over {c.duration:.0f} s)"
    )
    out(
        f"  answers by class: {', '.join(f'{k} {n}' for k, n in sorted(c.statuses.items()))}; "
        f"sent again: {', '.join(f'{k} {n}' for k, n in sorted(c.retries.items())) or 'none'}"
    )
    refusals = ", ".join(f"{k} {n}" for k, n in sorted(c.refusals.items())) or "none"
    out(f"  4xx: {refusals} (a clock game's player acting as its clock ran out: 409)")
    out(f"  tracebacks in the replicas' logs: {tracebacks.total()}")
    for line, count in tracebacks.most_common():
        out(f"    {count} x {line}")
    out("\n== accounting")
    for clean, line in a.lines:
        out(f"  [{'ok' if clean else 'FAIL'}] {line}")
    out("\n== RSS per replica (VmRSS)")
    for inc in c.incarnations:
        start = f"{inc.rss_start / 1024:.1f}" if inc.rss_start else "?"
        end = f"{inc.rss_end / 1024:.1f}" if inc.rss_end else "?"
        growth = (
            f"{(inc.rss_end - inc.rss_start) / 1024:+.1f} MB"
            if inc.rss_end and inc.rss_start
            else "?"
        )
        out(
            f"  replica {inc.slot} pid {inc.pid} from {inc.started:.0f} s: {start} -> {end} MB "
            f"({growth}, peak {inc.rss_peak / 1024:.1f} MB)"
            + ("  [SIGKILLed]" if inc.killed else "")
        )
    if a.violations:
        out(f"\n== {len(a.violations)} VIOLATION(S)")
        for v in a.violations[:200]:
            out(f"  - {v}")
    else:
        out("\n== clean: no violation")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=600.0, help="seconds of play")
    parser.add_argument("--seed", type=int, default=1, help="the faults' and players' seed")
    args = parser.parse_args()
    outcome = run(args.duration, args.seed)
    return 1 if outcome.accounting.violations else 0


if __name__ == "__main__":
    sys.exit(main())
