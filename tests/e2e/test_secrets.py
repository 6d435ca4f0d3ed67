"""Hidden information (rules.md 9): no byte the service sends reveals the draw pile or the seed.

A test cannot read the server's memory, so it reads the game's record in Redis (the layout
of infra/redis_layout.py: hash `{game:<id>}`, field `rec`, msgpack `GameRecord`) to learn the
secrets, then walks a whole game (humans and bots) and collects every response: bodies and
headers of reads, actions, event pages and the 4xx problems it provokes on the way, and
the server-sent event stream of the game. Checked:
(a) the seed, and the deal's seed made of it and the seats' entropy (`deal_seed`), never
    appear in any of it while the game is live; once it has finished, its view reveals the
    seed (provably fair deals), and the deal's seed still appears nowhere;
(b) no field is named `draw_pile` or `seed`, at any depth, in a live game's answers;
(c) at every step the public cards (tableau, market, discard, collections, auction) are
    exactly the cards drawn so far (by the `card_drawn` events), and the order of the cards
    still in the pile (the next five as a JSON list, the next eight as a run) is in no
    response.
"""

from __future__ import annotations

import json
import random
import threading
from collections import Counter
from typing import Any

import httpx
import redis

from domain.game.fairness import commitment, deal_seed
from tests.support.api import DECK_SIZES, Table, check_problem, compact, public_cards
from tests.support.secrets import SECRET_FIELDS, field_names, reveals_seed, stored_record


def pile_patterns(pile: tuple[str, ...]) -> list[bytes]:
    """Encodings of the next cards of the pile, in order, that must appear nowhere.

    The next five as a whole JSON list, and the next eight (when the pile has at least six)
    as a run of JSON items or of bare codes: long enough that public lists never match them
    by chance."""
    patterns = []
    if len(pile) >= 5:
        head = list(pile[:5])
        patterns += [compact(head).encode(), json.dumps(head).encode()]
    if len(pile) >= 6:
        head = list(pile[:8])
        patterns += [
            compact(head)[1:-1].encode(),
            json.dumps(head)[1:-1].encode(),
            "".join(head).encode(),
        ]
    return patterns


class Recorder:
    """Every byte received, and the checks of each step against the secrets of that step."""

    def __init__(self, client: httpx.Client, redis_client: redis.Redis) -> None:
        self.client = client
        self.redis = redis_client
        self.seed: str | None = None
        self.deal_seed: str | None = None  # the seed with the seats' entropy
        self.received: list[bytes] = []  # everything while live, for the final check of the seed
        self.revealed: list[bytes] = []  # the answers of the game ended: its seed shown
        self.step: list[bytes] = []  # what arrived since the last check

    def record(self, response: httpx.Response) -> httpx.Response:
        response.read()
        assert response.status_code < 500, response.text
        blob = b"".join(
            [response.content] + [f"{k}: {v}\n".encode() for k, v in response.headers.multi_items()]
        )
        if response.headers.get("content-type", "").split(";")[0] in (
            "application/json",
            "application/problem+json",
        ):
            body = response.json()
            if reveals_seed(body):  # the game has ended: the seed is revealed, nothing more
                assert self.seed is not None
                assert body["fairness"]["seed"] == self.seed
                assert "draw_pile" not in set(field_names(body))
                self.revealed.append(blob)
                return response
            names = set(field_names(body))
            assert not names & SECRET_FIELDS, names & SECRET_FIELDS
        self.received.append(blob)
        self.step.append(blob)
        return response

    def check_step(self, table: Table, body: dict[str, Any]) -> None:
        record = stored_record(self.redis, table.id)
        state = record.state
        assert record.version == body["version"]
        if self.seed is None:
            self.seed = state.seed
            assert state.fairness is not None
            self.deal_seed = deal_seed(state.seed, state.fairness.entropy)
            assert self.deal_seed != self.seed  # the seats gave entropy
            assert body["fairness"]["commitment"] == commitment(state.seed)
        assert state.seed == self.seed
        assert len(self.seed) >= 16
        # (c) public cards = cards drawn so far; with the pile, the whole deck
        drawn = Counter(e["card"] for e in table.events if e["type"] == "card_drawn")
        public = public_cards(body)
        assert public == drawn, (public - drawn, drawn - public)
        assert body["draw_pile_size"] == len(state.draw_pile)
        assert sum(public.values()) + len(state.draw_pile) == DECK_SIZES[table.n]
        patterns = pile_patterns(state.draw_pile)
        for blob in self.step:
            assert self.seed.encode() not in blob
            assert self.deal_seed is not None
            assert self.deal_seed.encode() not in blob
            for pattern in patterns:
                assert pattern not in blob, pattern
        self.step = []


def provoke_errors(rec: Recorder, table: Table, body: dict[str, Any], rng: random.Random) -> None:
    """4xx answers of several kinds: none of them may say more than the public state."""
    path = table.path
    to_act = body["to_act"]
    others = [s for s in table.tokens if s != to_act]
    if others:
        seat = rng.choice(others)
        check_problem(rec.record(table.act(seat, {"type": "draw"})), 409, "not_your_turn")
    mover = table.tokens[to_act]
    phase = body["phase"]
    wrong = {"type": "pass"} if phase != "auction" else {"type": "decline"}
    check_problem(
        rec.record(rec.client.post(f"{path}/actions", json=wrong, headers=_bearer(mover))),
        409,
        "illegal_action",
    )
    if phase == "draw" and body["drawn"]:
        check_problem(
            rec.record(
                rec.client.post(
                    f"{path}/actions",
                    json={"type": "buy", "card": "R9"},
                    headers=_bearer(mover),
                )
            ),
            409,
            "illegal_action",
        )
    check_problem(
        rec.record(
            rec.client.post(
                f"{path}/actions",
                json={"type": "draw"},
                headers={**_bearer(mover), "If-Match": f'"{body["version"] + 7}"'},
            )
        ),
        412,
        "version_mismatch",
    )
    check_problem(
        rec.record(rec.client.post(f"{path}/actions", json={"type": "draw"})), 401, "unauthorized"
    )
    check_problem(
        rec.record(
            rec.client.post(
                f"{path}/actions",
                json={"type": "draw"},
                headers=_bearer(f"{table.id}.{to_act}.not-the-secret"),
            )
        ),
        401,
    )
    check_problem(
        rec.record(
            rec.client.post(
                f"{path}/actions",
                json={"type": "bid", "amount": 10**30},
                headers=_bearer(mover),
            )
        ),
        400,
    )
    check_problem(
        rec.record(
            rec.client.post(
                f"{path}/actions",
                content=b'{"type": "draw", "peek": true}',
                headers={**_bearer(mover), "Content-Type": "application/json"},
            )
        ),
        400,
    )


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class StreamReader(threading.Thread):
    """Reads the whole SSE stream of a game (it ends after `game_finished`)."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.chunks: list[bytes] = []
        self.error: BaseException | None = None
        self.status: int | None = None
        self.connected = threading.Event()

    def run(self) -> None:
        try:
            with httpx.stream("GET", self.url, timeout=httpx.Timeout(30.0)) as response:
                self.status = response.status_code
                self.connected.set()
                for chunk in response.iter_raw():
                    self.chunks.append(chunk)
        except BaseException as exc:  # reported by the test
            self.error = exc
        finally:
            self.connected.set()


def test_no_response_reveals_the_draw_pile_or_the_seed(
    redis_base: str, redis_client: redis.Redis
) -> None:
    rng = random.Random("e2e/secrets")
    with httpx.Client(base_url=redis_base, timeout=10) as client:
        rec = Recorder(client, redis_client)
        # Ann's seat reserved, Cid's open: each gives entropy on join, after the commitment
        players = [
            {"player_id": "ann"},
            {"name": "Bob", "bot": "basic"},
            {"open": True},
            {"name": "Dee", "bot": "random"},
        ]
        created = rec.record(client.post("/v1/games", json={"players": players}))
        assert created.status_code == 201, created.text
        seats = f"/v1/games/{created.json()['id']}/seats"
        joins = [
            rec.record(client.post(seats, json={"player_id": "ann", "entropy": "ann's own luck"})),
            rec.record(client.post(seats, json={"name": "Cid", "entropy": "cid"})),
        ]
        table = Table.started_by_joins(client, joins)
        stream = StreamReader(f"{redis_base}{table.path}/events/stream")
        stream.start()
        assert stream.connected.wait(10)
        assert stream.status == 200

        def sync() -> None:
            page = rec.record(client.get(f"{table.path}/events", params={"after": table.last_seq}))
            table.events.extend(page.json()["events"])

        sync()
        body = table.body
        rec.check_step(table, body)
        # unknown game, unknown route, wrong method: nothing about this game either
        check_problem(rec.record(client.get("/v1/games/0123456789abcdef0123")), 404)
        check_problem(rec.record(client.get(f"{table.path}/nothing")), 404)
        check_problem(rec.record(client.delete(table.path)), 405)

        steps = 0
        while body["status"] != "finished":
            steps += 1
            if steps % 7 == 1:
                provoke_errors(rec, table, body, rng)
            legal: list[dict[str, Any]] = []
            for seat, token in table.tokens.items():
                seen = rec.record(client.get(table.path, headers=_bearer(token))).json()
                if seat == body["to_act"]:
                    legal = seen["legal_actions"]
            rec.record(client.get(table.path))
            mover = table.tokens[body["to_act"]]
            response = rec.record(
                client.post(f"{table.path}/actions", json=rng.choice(legal), headers=_bearer(mover))
            )
            assert response.status_code == 200, response.text
            body = response.json()
            sync()
            assert body["events"] == table.events[-len(body["events"]) :]
            rec.check_step(table, body)
            assert steps < 3000

        # the whole log and the stream, read while the game was live
        rec.record(client.get(f"{table.path}/events"))
        stream.join(30)
        assert not stream.is_alive(), "the event stream did not end after game_finished"
        assert stream.error is None, stream.error
        streamed = b"".join(stream.chunks)
        assert b"event: game_finished" in streamed
        ids = [int(line[4:]) for line in streamed.splitlines() if line.startswith(b"id: ")]
        assert ids == [e["seq"] for e in table.events]
        rec.received.append(streamed)
        for line in streamed.splitlines():
            if line.startswith(b"data: {"):
                names = set(field_names(json.loads(line[6:])))
                assert not names & SECRET_FIELDS

    assert rec.seed is not None
    assert rec.deal_seed is not None
    assert rec.revealed, "the finished game's view did not reveal its seed"
    everything = b"".join(rec.received)
    assert rec.deal_seed.encode() not in everything + b"".join(rec.revealed)
    assert rec.seed.encode() not in everything
    assert rec.seed.upper().encode() not in everything.upper()
    for name in SECRET_FIELDS:
        assert f'"{name}"'.encode() not in everything
