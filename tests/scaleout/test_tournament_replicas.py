"""A duplicate tournament across two real replicas, one of them SIGKILLed mid-round (issue 25,
"What it must show"): two service processes on one Redis database of the test's own and one
throwaway PostgreSQL archive, with a webhook receiver on loopback.

16 entrants at tables of 4 for 3 Swiss rounds: 12 random bots and 4 registered players who
never show up, so every round waits on short clocks (a bank of CLOCK seconds, a bot taking
the seat at the first timeout) and stays in progress long enough to kill a replica in it.
As round 2's `round_started` webhook arrives (a director may be dealing its games), or
once round 2 is dealt and not all of its tables have results, the replica the tournament
was created and started on is SIGKILLed; the other one plays it to its end. Then:

- the standings served equal a recomputation (`domain.tournaments.rules.standings`) from the
  archive's rows alone (the games' seeds and their per-seat ranks and scores, read directly
  with SQLAlchemy), and the `tournament_finished` webhook carries them;
- every table of a round has one seed and one deck in the archive, and each round its own;
- every webhook fact has one id (a retry repeats that id with the same body): 1
  `tournament_started`, 3 `round_started`, 1 `tournament_finished`, one `game_finished` per
  table's game.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from infra.archive.models import games, results
from tests.support.archive import ArchiveDb, claim_redis_db, pg_database, servers
from tests.support.tournaments import recomputed
from tests.support.webhooks import SECRET, Receiver

API_KEY = "platform-key-tournament-replicas-0123"
PLATFORM = {"X-API-Key": API_KEY}
NO_SHOWS = [f"absent-{i}" for i in range(1, 5)]
ROUNDS = 3
CLOCK = 1.5  # seconds in a no-show's bank: how long a round waits at least
WAIT = 90.0  # seconds any one wait may take before the test fails (a lapsed 60 s lease fits)


def wait_for(what: str, check: Callable[[], Any], timeout: float = WAIT) -> Any:
    began = time.monotonic()
    while not (found := check()):
        assert time.monotonic() < began + timeout, f"{what}: not within {timeout:g} s"
        time.sleep(0.05)
    print(f"{what}: {time.monotonic() - began:.1f} s")  # where the time goes (-s)
    return found


@contextlib.contextmanager
def cluster(tmp_path: Path, redis_url: str) -> Iterator[tuple[list, ArchiveDb, Receiver]]:
    """Two replicas on one claimed Redis database and one migrated PostgreSQL archive, their
    webhooks going to a receiver: (the replicas, the archive, the receiver)."""
    receiver = Receiver().start()
    try:
        with (
            claim_redis_db(redis_url) as (url, raw),
            pg_database() as db,
        ):
            env = {
                "TEN_REDIS_URL": url,
                "TEN_DATABASE_URL": db.url,
                "TEN_MIGRATE_ON_START": "false",
                "TEN_API_KEYS": API_KEY,
                "TEN_WEBHOOK_URLS": receiver.url,
                "TEN_WEBHOOK_SECRET": SECRET,
                "TEN_WEBHOOK_MAX_BACKOFF": "2",
                "TEN_ARCHIVE_INTERVAL": "0.2",
                "TEN_DEADLINE_POLL": "0.1",
                "TEN_DEADLINE_LEASE": "2",
                "TEN_BOT_WORKERS": "0",
            }
            try:
                with servers(tmp_path, env, env) as replicas:
                    yield replicas, db, receiver
            finally:
                for pattern in ("ten:tournament*", "{ten:webhooks}*"):
                    left = list(raw.scan_iter(match=pattern, count=1000))
                    if left:
                        raw.delete(*left)
    finally:
        receiver.stop()


def archived(db: ArchiveDb, ids: list[str]) -> dict[str, dict]:
    """Per game id in the archive: its status, seed, deck and per-seat (rank, score)."""

    async def body() -> dict[str, dict]:
        found: dict[str, dict] = {}
        async with db.engine.connect() as conn:
            rows = await conn.execute(
                select(games.c.id, games.c.status, games.c.seed, games.c.deck).where(
                    games.c.id.in_(ids)
                )
            )
            for game_id, status, seed, deck in rows:
                found[game_id] = {"status": status, "seed": seed, "deck": deck, "seats": {}}
            rows = await conn.execute(
                select(results.c.game_id, results.c.seat, results.c.rank, results.c.score).where(
                    results.c.game_id.in_(ids)
                )
            )
            for game_id, seat, rank, score in rows:  # a game archived since: looked at again
                if game_id in found:
                    found[game_id]["seats"][seat] = (rank, score)
        return found

    return db.runner.run(body())


def start_tournament(client: httpx.Client) -> str:
    ask = {
        "name": "Replica cup", "table_size": 4, "format": "swiss", "deal_mode": "duplicate",
        "rounds": ROUNDS, "places": 16, "bot_level": "random",
        "clock": {"type": "bank", "initial_seconds": CLOCK, "takeover_after": 1},
    }  # fmt: skip
    created = client.post("/v1/tournaments", json=ask, headers=PLATFORM)
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    for player in NO_SHOWS:
        entered = client.post(
            f"/v1/tournaments/{tid}/registrations", json={"player_id": player}, headers=PLATFORM
        )
        assert entered.status_code == 200, entered.text
    started = client.post(f"/v1/tournaments/{tid}/start", headers=PLATFORM)
    assert started.status_code == 200, started.text
    assert len(started.json()["entrants"]) == 16
    return tid


def round_in_progress(client: httpx.Client, tid: str, number: int) -> bool:
    """Round `number` is dealt and some table of it has no result yet (as the platform sees
    it: to anyone else the tables of a duplicate deal still played by a human are secret)."""
    rounds = client.get(f"/v1/tournaments/{tid}/rounds", headers=PLATFORM).json()["rounds"]
    return len(rounds) == number and any(t["result"] is None for t in rounds[-1]["tables"])


def webhooks_of(receiver: Receiver, tid: str, game_ids: set[str]) -> dict[tuple, set[str]]:
    """(type, the game, round, seat) of a tournament's or its games' fact -> the ids of its deliveries; every delivery of
    one id has one body."""
    bodies: dict[str, set[bytes]] = defaultdict(set)
    facts: dict[tuple, set[str]] = defaultdict(set)
    for delivery in receiver.accepted():
        bodies[delivery.id].add(delivery.body)
        data = json.loads(delivery.body)["data"]
        if data.get("tournament_id") == tid or data.get("game_id") in game_ids:
            kind = json.loads(delivery.body)["type"]
            fact = (kind, data.get("game_id"), data.get("round"), data.get("seat"))
            facts[fact].add(delivery.id)
    repeated = {i: len(b) for i, b in bodies.items() if len(b) > 1}
    assert not repeated, f"one id delivered with different bodies: {repeated}"
    return facts


def round_announced(receiver: Receiver, tid: str, number: int) -> bool:
    """The `round_started` webhook of round `number` was received (its games being dealt)."""
    bodies = [json.loads(d.body) for d in receiver.accepted()]
    return any(
        b["type"] == "round_started"
        and (b["data"]["tournament_id"], b["data"]["round"]) == (tid, number)
        for b in bodies
    )


@pytest.mark.parametrize("kill_when", ["round 2 announced", "round 2 in play"])
def test_a_duplicate_tournament_survives_a_replica_killed_mid_round(
    kill_when: str, tmp_path: Path, redis_url: str
) -> None:
    """The kill comes as the `round_started` webhook of round 2 arrives (a director may be
    dealing its games then), or once round 2 shows a table still in play."""
    with cluster(tmp_path, redis_url) as (replicas, db, receiver):
        doomed, survivor = replicas
        with httpx.Client(base_url=doomed.base, timeout=10) as first:
            tid = start_tournament(first)
        with httpx.Client(base_url=survivor.base, timeout=10) as client:
            if kill_when == "round 2 announced":
                wait_for(kill_when, lambda: round_announced(receiver, tid, 2), 30)
            else:
                wait_for(kill_when, lambda: round_in_progress(client, tid, 2), 30)
            doomed.kill()
            path = f"/v1/tournaments/{tid}"
            final = wait_for(
                "the tournament's end",
                lambda: (b := client.get(path).json())["status"] == "finished" and b,
            )
            rounds = client.get(f"{path}/rounds").json()["rounds"]
            shown = client.get(f"{path}/standings").json()
        assert [r["round"] for r in rounds] == list(range(1, ROUNDS + 1))
        ids = [t["game_id"] for r in rounds for t in r["tables"]]
        assert len(ids) == len(set(ids)) == ROUNDS * 4
        games_of = wait_for(
            "every game archived with its results",
            lambda: (
                len(found := archived(db, ids)) == len(ids)
                and all(len(g["seats"]) == 4 for g in found.values())
                and found
            ),
        )
        assert {g["status"] for g in games_of.values()} == {"finished"}
        for r in rounds:
            played = [games_of[t["game_id"]] for t in r["tables"]]
            assert len({g["seed"] for g in played}) == 1, f"round {r['round']}: several seeds"
            assert all(g["deck"] == played[0]["deck"] for g in played), r["round"]
            for t in r["tables"]:  # the tournament's results are the archive's
                by_seat = games_of[t["game_id"]]["seats"]
                assert t["result"]["ranks"] == [by_seat[s][0] for s in range(4)]
                assert t["result"]["scores"] == [by_seat[s][1] for s in range(4)]
        assert len({games_of[r["tables"][0]["game_id"]]["seed"] for r in rounds}) == ROUNDS
        expected = recomputed(  # from the archive's rows alone: the seed, ranks and scores
            final,
            rounds,
            lambda i: (games_of[i]["seed"], [games_of[i]["seats"][s] for s in range(4)]),
        )
        assert shown["standings"] == expected

        wanted = {
            ("tournament_started", None, None, None),
            *(("round_started", None, n, None) for n in range(1, ROUNDS + 1)),
            ("tournament_finished", None, None, None),
            *(("game_finished", i, None, None) for i in ids),
        }

        def redelivered() -> bool:  # each delivery the SIGKILL cut short, whole since
            accepted = {d.id for d in receiver.accepted()}
            return all(d.id in accepted for d in receiver.received if not d.verified)

        facts = wait_for(  # a delivery a killed replica had claimed waits for its lease
            "every webhook, each cut one delivered again",
            lambda: (
                wanted <= set(f := webhooks_of(receiver, tid, set(ids))) and redelivered() and f
            ),
        )
    # a delivery the SIGKILL cut short fails its signature check; it was delivered again whole
    cut = [(d.id, d.error, len(d.body)) for d in receiver.received if not d.verified]
    assert {i for i, _, _ in cut} <= {d.id for d in receiver.accepted()}, cut
    if cut:
        print(f"deliveries cut by the kill: {cut}")
    per_type: dict[str, int] = defaultdict(int)
    for (kind, *_), delivered in facts.items():
        assert len(delivered) == 1, (kind, delivered)  # one id per fact, whatever the retries
        per_type[kind] += 1
    assert per_type["tournament_started"] == 1
    assert per_type["round_started"] == ROUNDS
    assert per_type["tournament_finished"] == 1
    assert per_type["game_finished"] == len(ids)
    (finished_id,) = facts[("tournament_finished", None, None, None)]
    told = next(json.loads(d.body) for d in receiver.accepted() if d.id == finished_id)
    assert told["data"]["standings"] == expected
    assert told["data"]["rounds_played"] == ROUNDS
