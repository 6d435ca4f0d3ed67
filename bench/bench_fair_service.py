"""The stand-alone verifier over games the service dealt and archived:
`PYTHONPATH=. .venv/bin/python bench/bench_fair_service.py [--games 1000]`.

Drives the real service in process (the embedded store, a SQLite archive in a temporary
directory, the platform's API key and player JWTs): lobby games of every player count 1 to 5
with 0, 1 or 2 humans beside bots of three levels, the humans seated at the create (by the
platform: no entropy, create takes none) or joining a seat reserved for them or an open one
(with their JWT and entropy, after the table's commitment was published),
every human move a seeded random choice among the legal ones; then a duplicate Swiss
tournament of eight players at tables of four, its humans playing through their JWTs. Once
the archive holds every game, exports it through `GET /v1/archive/export` (NDJSON), runs
clients/verifier/ten_verify.py on it in its own process (`--require-verifiable`: every deal
checked, every draw), then tampers with each record (a card of the deck swapped, a drawn card
swapped, the seed changed, an entropy changed where there is one: bench_fair_verify.py's
`tampered`) and runs it again. Prints counts and times; no assertions: a report for people.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import jwt
from bench_fair_verify import (  # the sibling module: `python bench/bench_fair_verify.py` puts bench/ first
    tampered,
    verify,
)
from litestar.testing import TestClient

from service.core.settings import ArchiveSettings, IdentitySettings, Settings
from service.entrypoints.api.app import create_app

API_KEY = "platform-key-0123456789abcdef"
SECRET = "a-secret-of-the-platform-32-bytes-or-more"
PLATFORM = {"X-API-Key": API_KEY}
LEVELS = ("random", "basic", "expert")
TOURNAMENT = {
    "name": "Duplicate cup", "table_size": 4, "places": 8, "rounds": 3, "format": "swiss",
    "deal_mode": "duplicate", "bot_level": "random", "clock": {"type": "deadline", "hours": 24},
}  # fmt: skip


def player(sub: str) -> dict[str, str]:
    claims = {"sub": sub, "iss": "platform", "aud": "ten", "exp": int(time.time()) + 86400}
    return {"Authorization": f"Bearer {jwt.encode(claims, SECRET, algorithm='HS256')}"}


def settings(directory: str) -> Settings:
    url = f"sqlite+aiosqlite:///{directory}/archive.sqlite3"
    identity = IdentitySettings(
        api_keys=(API_KEY,), jwt_secret=SECRET, jwt_issuer="platform", jwt_audience="ten"
    )
    archive = ArchiveSettings(database_url=url, migrate_on_start=True)
    return Settings(archive=archive, identity=identity)


def play_out(client: TestClient, game: str, seats: dict[int, dict[str, str]], rng) -> int:
    """Plays the humans' seats (`seats`: each one's credentials) until the game ends; the
    moves made."""
    moves = 0
    while True:
        view = client.get(f"/v1/games/{game}", headers=PLATFORM).json()
        if view["status"] != "active":
            return moves
        seat = view["to_act"]
        mine = client.get(f"/v1/games/{game}", headers=seats[seat]).json()
        action = rng.choice(mine["legal_actions"])
        done = client.post(f"/v1/games/{game}/actions", json=action, headers=seats[seat])
        assert done.status_code == 200, done.text
        moves += 1


def lobby_game(client: TestClient, i: int, rng) -> tuple[str, int, int]:
    """Game `i`: its id, its player count and its humans. A human seated on create gives no
    entropy (create takes none); one whose seat is reserved (`player_id`) or left open joins
    it with entropy, after the table's commitment was published."""
    n = 1 + i % 5
    humans = min(i % 3, n)
    players: list[dict[str, Any]] = []
    joins: list[tuple[int, dict[str, Any]]] = []  # (seat, join body) for the joiners
    for s in range(n):
        pid = f"p{i}-{s}"
        if s < humans and i % 4 < 2:  # reserved, joined with entropy
            players.append({"player_id": pid})
            joins.append((s, {"entropy": f"e{i}/{s}"}))
        elif s < humans and humans == 2 and i % 2 == 0 and s == 1:  # an open seat joined
            players.append({"open": True})
            joins.append((s, {"entropy": f"j{i}"}))
        elif s < humans:
            players.append({"name": f"P{i}-{s}", "player_id": pid})
        else:
            players.append({"bot": LEVELS[(i + s) % len(LEVELS)]})
    made = client.post("/v1/games", json={"players": players}, headers=PLATFORM)
    assert made.status_code == 201, made.text
    body = made.json()
    tokens = body["tokens"] if joins else body["seats"]  # an open table's, or a game's
    seats = {t["seat"]: {"Authorization": f"Bearer {t['token']}"} for t in tokens}
    for s, join in joins:
        url = f"/v1/games/{body['id']}/seats"
        joined = client.post(url, json=join, headers=player(f"p{i}-{s}"))
        assert joined.status_code == 201, joined.text
        seats[joined.json()["seat"]] = {"Authorization": f"Bearer {joined.json()['token']}"}
    play_out(client, body["id"], seats, rng)
    return body["id"], n, humans


def tournament(client: TestClient, rng) -> list[str]:
    """A duplicate Swiss tournament played to its end by its humans; its games."""
    tid = client.post("/v1/tournaments", json=TOURNAMENT, headers=PLATFORM).json()["id"]
    for k in range(TOURNAMENT["places"]):
        url = f"/v1/tournaments/{tid}/registrations"
        assert client.post(url, json={"player_id": f"t{k}"}, headers=PLATFORM).is_success
    assert client.post(f"/v1/tournaments/{tid}/start", headers=PLATFORM).is_success
    games: list[str] = []
    for r in range(TOURNAMENT["rounds"]):
        tables = wait(lambda r=r: round_tables(client, tid, r))
        for table in tables:
            seats = {s: player(p) for s, p in enumerate(table["seats"]) if not p.startswith("bot:")}
            wait(
                lambda g=table["game_id"]: client.get(f"/v1/games/{g}", headers=PLATFORM).is_success
            )
            play_out(client, table["game_id"], seats, rng)
            games.append(table["game_id"])
    return games


def round_tables(client: TestClient, tid: str, r: int) -> list[dict] | None:
    rounds = client.get(f"/v1/tournaments/{tid}/rounds", headers=PLATFORM).json()["rounds"]
    if len(rounds) <= r:
        return None
    tables = rounds[r]["tables"]
    return tables if tables and all(t.get("game_id") for t in tables) else None


def wait(fact, seconds: float = 120.0):
    deadline = time.monotonic() + seconds
    while not (found := fact()):
        if time.monotonic() > deadline:
            raise SystemExit("the service did not get there in time")
        time.sleep(0.05)
    return found


def exported(client: TestClient, expected: int) -> list[dict]:
    def lines() -> list[str] | None:
        got = client.get("/v1/archive/export", headers=PLATFORM)
        assert got.status_code == 200, got.text
        *found, end = got.text.splitlines()  # the records, then the export's trailer
        assert json.loads(end)["complete"], end
        return found if len(found) >= expected else None

    return [json.loads(line) for line in wait(lines, 600.0)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=1000)
    args = parser.parse_args()
    rng = random.Random(41)
    with tempfile.TemporaryDirectory() as directory, TestClient(create_app(settings(directory))) as client:  # fmt: skip
        started = time.perf_counter()
        cup = tournament(client, rng)
        kinds: Counter[tuple[int, int]] = Counter()
        for i in range(args.games - len(cup)):
            _game, n, humans = lobby_game(client, i, rng)
            kinds[n, humans] += 1
        played = time.perf_counter() - started
        records = exported(client, args.games)
        path = Path(directory) / "records.ndjson"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        seconds, report = verify(path, "--require-verifiable")
        bad = Path(directory) / "tampered.ndjson"
        changed = [tampered(r, how) for r in records for how in range(4) if how < 3 or entropy(r)]
        bad.write_text("".join(json.dumps(r) + "\n" for r in changed))
        bad_seconds, bad_report = verify(bad)
    draws = sum(1 for r in records for e in r["events"] if e["type"] == "card_drawn")
    print(f"{len(records)} games dealt and archived by the service in {played:.1f} s:")
    for (n, humans), count in sorted(kinds.items()):
        print(f"  {n} players, {humans} human(s): {count} games")
    print(f"  a duplicate Swiss tournament: {len(cup)} games (8 players, tables of 4, 3 rounds)")
    print(
        f"  {sum(1 for r in records if any(r['fairness']['entropy']))} with seat entropy, {draws} draws"
    )
    print(f"verifier: {summary(report)} in {seconds:.1f} s")
    print(f"tampered: {len(changed)} records, {summary(bad_report)} in {bad_seconds:.1f} s")


def entropy(record: dict) -> bool:
    return any(record["fairness"]["entropy"])


def summary(report: dict) -> str:
    return f"{report['verified']} verified, {report['refused']} refused"


if __name__ == "__main__":
    main()
