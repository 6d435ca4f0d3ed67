"""What the HTTP tests share (e2e, browser, scale-out, faults): a table over HTTP and the checks
every state must pass.

Everything here talks to the service through its public HTTP API only; the domain package is
used for what a client library would do with the events (decode them, rebuild the game).
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import httpx
import msgspec

from domain.game.model import AnyEvent
from domain.game.replay import rebuild

# The README's curl game: one human, a five-card deck, nine actions to the end (5 draws, a
# bid, a stop, two declines).
README_DECK = ["R1", "R2", "W5", "$3", "R4"]
README_GAME = [
    {"type": "draw"},
    {"type": "draw"},
    {"type": "draw"},
    {"type": "bid", "amount": 2},
    {"type": "draw"},
    {"type": "draw"},
    {"type": "stop", "take": "numbers"},
    {"type": "decline"},
    {"type": "decline"},
]

DECK_SIZES = {1: 81, 2: 81, 3: 105, 4: 129, 5: 129}
COLORS = ("R", "B", "O", "G")
NUMBER_CARDS = frozenset(f"{c}{n}" for c in COLORS for n in range(1, 10))
PROBLEM_JSON = "application/problem+json"
TOTAL_CURRENCY = 50
TOTAL_BUST = 15
CURRENCY_CAP = 10
# fields of a game body beside the public state its log rebuilds, or not seen alike by every reader
PRIVATE_FIELDS = (
    "id", "seat", "legal_actions", "seat_actions", "seats", "host_token", "events", "clock",
    "fairness",
)  # fmt: skip


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def public_part(body: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in PRIVATE_FIELDS}


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


# ------------------------------------------------------------------ checks


def check_etag(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert response.headers.get("etag") == f'"{body["version"]}"', (
        response.headers.get("etag"),
        body["version"],
    )
    return body


def check_problem(response: httpx.Response, status: int, code: str | None = None) -> dict[str, Any]:
    """An RFC 9457 problem with the given status (and code)."""
    assert response.status_code == status, (response.status_code, response.text[:500])
    media_type = response.headers.get("content-type", "").split(";")[0].strip()
    assert media_type == PROBLEM_JSON, response.headers.get("content-type")
    body = response.json()
    assert isinstance(body, dict), body
    assert body.get("status") == status, body
    for field in ("title", "detail", "code"):
        assert isinstance(body.get(field), str), (field, body)
        assert body[field], (field, body)
    if code is not None:
        assert body["code"] == code, body
    return body


def public_cards(body: Mapping[str, Any]) -> Counter[str]:
    """Every card a client can see: tableau, market, discard, collections, the auctioned one."""
    cards: Counter[str] = Counter()
    cards.update(body["tableau"])
    cards.update(body["market"])
    cards.update(body["discard"])
    for player in body["players"]:
        cards.update(player["cards"])
    if body["auction"] is not None:
        cards[body["auction"]["card"]] += 1
    return cards


def check_invariants(body: Mapping[str, Any], deck_size: int) -> None:
    """rules.md section 8 and the status fields, on a game body as the API returns it."""
    players = body["players"]
    supply = body["supply"]
    assert supply["currency"] + sum(p["currency"] for p in players) == TOTAL_CURRENCY, body
    assert supply["bust"] + sum(p["bust"] for p in players) == TOTAL_BUST, body
    assert supply["currency"] >= 0
    assert supply["bust"] >= 0
    for seat, player in enumerate(players):
        assert player["seat"] == seat
        assert 0 <= player["currency"] <= CURRENCY_CAP, player
        assert player["bust"] >= 0, player
    assert all(card in NUMBER_CARDS for card in body["market"]), body["market"]
    on_table = sum(public_cards(body).values())
    assert on_table + body["draw_pile_size"] == deck_size, (on_table, body["draw_pile_size"])
    assert body["last_turn"] == (body["draw_pile_size"] == 0)
    finished = body["status"] == "finished"
    assert body["status"] in ("active", "finished")
    assert finished == (body["phase"] == "finished")
    assert finished == (body["to_act"] is None)
    assert finished == (body["results"] is not None)
    if body["phase"] == "auction":
        assert body["auction"] is not None
        assert body["auction"]["to_act"] == body["to_act"]
    else:
        assert body["auction"] is None
    if not finished:
        assert 0 <= body["to_act"] < len(players)


def decode_events(events: Iterable[Mapping[str, Any]]) -> list[Any]:
    return msgspec.json.decode(msgspec.json.encode(list(events)), type=list[AnyEvent])


def rebuilt(events: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The public state a client rebuilds from the event log (as plain JSON values)."""
    return msgspec.json.decode(msgspec.json.encode(rebuild(decode_events(events))))


def check_log(events: list[Mapping[str, Any]]) -> None:
    """seq 1, 2, 3 ... and versions that never go down and never skip."""
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["type"] == "game_started"
    versions = [e["version"] for e in events]
    assert versions[0] == 0
    for before, after in itertools.pairwise(versions):
        assert after in (before, before + 1), versions


def expected_rank_keys(body: Mapping[str, Any]) -> list[tuple[bool, int, int, int]]:
    """Rank order (rules 6): resigned seats after the others, then score, currency, cards."""
    results = {r["seat"]: r for r in body["results"]}
    return [
        (p["resigned"], -results[p["seat"]]["score"], -p["currency"], len(p["cards"]))
        for p in body["players"]
    ]


def check_results(client: httpx.Client, body: Mapping[str, Any]) -> None:
    """One result per seat; colours and runs; score = sum of colours = /v1/scores; ranks."""
    players = body["players"]
    results = body["results"]
    assert [r["seat"] for r in results] == list(range(len(players)))
    bonus = body["rules"]["perfect_bonus"]
    keys = expected_rank_keys(body)
    for result, player in zip(results, players, strict=True):
        assert set(result["colors"]) == set(COLORS), result
        owned = Counter(player["cards"])
        for color, part in result["colors"].items():
            run = part["run"]
            assert not Counter(run) - owned, (color, run, player["cards"])
            for code in run:
                if code in NUMBER_CARDS or code == f"{code[0]}#" != "W#":
                    assert code[0] == color, (color, run)  # a number card or colour wild
            # the cards whose number is printed: distinct, and within one run's span
            numbers = [int(code[1]) for code in run if code[1].isdigit()]
            assert len(numbers) == len(set(numbers)), run
            if numbers:
                assert max(numbers) - min(numbers) < len(run), run
            extra = bonus if len(run) == 9 else 0
            assert part["points"] == len(run) + extra, (color, part)
        assert result["score"] == sum(p["points"] for p in result["colors"].values())
        assert result["currency"] == player["currency"]
        assert result["bust"] == player["bust"]
        assert result["cards"] == len(player["cards"])
        scored = client.post("/v1/scores", json={"cards": player["cards"], "rules": body["rules"]})
        assert scored.status_code == 200, scored.text
        assert scored.json()["total"] == result["score"], (scored.json(), result)
        mine = keys[result["seat"]]
        rank = 1 + sum(1 for other in keys if other < mine)
        assert result["rank"] == rank, (result, keys)
        assert result["resigned"] == player["resigned"], (result, player)
        assert result["winner"] == (rank == 1 and not player["resigned"]), result
    assert any(r["winner"] for r in results) or all(p["resigned"] for p in players)


def manifest_deck(client: httpx.Client, players: int) -> Counter[str]:
    """The deck for a player count, from the manifest `GET /v1/rules` publishes."""
    rules = client.get("/v1/rules").json()
    deck: Counter[str] = Counter()
    for entry in rules["manifest"]:
        if entry["min_players"] <= players:
            deck[entry["code"]] += entry["copies"]
    assert sum(deck.values()) == rules["deck_sizes"][str(players)] == DECK_SIZES[players]
    return deck


# ------------------------------------------------------------------ a table


class Table:
    """A game seen over HTTP: its id, the human seats' tokens and the event log read so far."""

    def __init__(self, client: httpx.Client, created: httpx.Response) -> None:
        assert created.status_code == 201, created.text
        body = check_etag(created)
        assert created.headers["location"] == f"/v1/games/{body['id']}"
        self._start(client, body, {s["seat"]: s["token"] for s in body["seats"]})

    def _start(self, client: httpx.Client, body: dict[str, Any], tokens: dict[int, str]) -> None:
        self.client = client
        self.id: str = body["id"]
        self.body: dict[str, Any] = body
        self.tokens: dict[int, str] = tokens
        self.n = len(body["players"])
        self.events: list[dict[str, Any]] = []
        self._decoded: list[Any] = []

    @classmethod
    def started_by_joins(cls, client: httpx.Client, joins: list[httpx.Response]) -> Table:
        """A table's game, started by the last of these joins: the joiners' tokens, the game
        as the last join shows it."""
        for joined in joins:
            assert joined.status_code == 201, joined.text
        table = cls.__new__(cls)
        tokens = {j.json()["seat"]: j.json()["token"] for j in joins}
        table._start(client, joins[-1].json()["game"], tokens)
        return table

    @classmethod
    def create(cls, client: httpx.Client, players: list[dict[str, Any]], **extra: Any) -> Table:
        return cls(client, client.post("/v1/games", json={"players": players, **extra}))

    @property
    def path(self) -> str:
        return f"/v1/games/{self.id}"

    @property
    def last_seq(self) -> int:
        return self.events[-1]["seq"] if self.events else 0

    def get(self, seat: int | None = None) -> httpx.Response:
        headers = bearer(self.tokens[seat]) if seat is not None else {}
        return self.client.get(self.path, headers=headers)

    def act(
        self, seat: int, action: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> httpx.Response:
        return self.client.post(
            f"{self.path}/actions",
            json=action,
            headers={**bearer(self.tokens[seat]), **(headers or {})},
        )

    def read_events(self, after: int = 0) -> list[dict[str, Any]]:
        """`GET /events?after=N`, following `more` until the end."""
        events: list[dict[str, Any]] = []
        while True:
            response = self.client.get(f"{self.path}/events", params={"after": after})
            assert response.status_code == 200, response.text
            page = response.json()
            assert page["game_id"] == self.id
            events.extend(page["events"])
            if page["events"]:
                assert page["last_seq"] == page["events"][-1]["seq"]
            else:
                assert page["last_seq"] == after
            if not page["more"]:
                return events
            after = page["last_seq"]

    def sync_events(self) -> list[dict[str, Any]]:
        new = self.read_events(self.last_seq)
        self.events.extend(new)
        return new

    def rebuilt(self) -> dict[str, Any]:
        """The public state rebuilt from the events read so far (decoded once each)."""
        self._decoded.extend(decode_events(self.events[len(self._decoded) :]))
        view = rebuild(self._decoded)
        return msgspec.json.decode(msgspec.json.encode(view))

    def snapshot(self) -> tuple[bytes, bytes]:
        """The full public body and the full event log, as bytes: to show nothing changed."""
        game = self.client.get(self.path)
        log = self.client.get(f"{self.path}/events")
        assert game.status_code == 200
        assert log.status_code == 200
        return game.content, log.content

    def legal(self, seat: int) -> list[dict[str, Any]]:
        response = self.get(seat)
        assert response.status_code == 200, response.text
        return check_etag(response)["legal_actions"]

    def to_act_legal(self) -> tuple[int, list[dict[str, Any]]]:
        body = check_etag(self.get())
        seat = body["to_act"]
        return seat, self.legal(seat)


def no_server_errors(response: httpx.Response) -> None:
    if response.status_code >= 500:
        response.read()
        raise AssertionError(
            f"{response.request.method} {response.request.url} -> {response.status_code}: "
            f"{response.text[:500]}"
        )


def strict_client(base: str) -> httpx.Client:
    """A client that fails the test on any 5xx answer."""
    return httpx.Client(base_url=base, timeout=10, event_hooks={"response": [no_server_errors]})


def check_serves_client(base: str) -> str:
    index = httpx.get(f"{base}/", timeout=10)
    assert index.status_code == 200, (
        f"GET / answered {index.status_code}: the service does not serve the web client "
        "(service/static/app/index.html)"
    )
    assert "text/html" in index.headers.get("content-type", ""), index.headers
    return base
