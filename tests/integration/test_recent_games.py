"""The per-process copy of recent games (`GameService._recent`) never changes an answer.

An action starts from the copy of the game this process saved or read last, skipping a read;
the save's version check refuses a stale copy. Here two `GameService`s stand for two replicas
(or two workers) on one store: on Redis each has its own client, on the embedded store they
share it. They act on the same game in turns, so every action of one starts from a copy the
other made stale: nothing may be lost or applied twice, and If-Match, rule errors, idempotent
replays and expiry must be judged on the stored game, never on the stale copy.
"""

from __future__ import annotations

import random
import secrets
from collections import Counter

import httpx
import msgspec
import pytest
import redis

from domain.game.engine import to_act
from domain.game.errors import RuleError
from domain.game.legal import legal_actions
from domain.game.model import Draw, Stop
from service.core.callers import Caller
from service.core.errors import ServiceError
from service.core.settings import RedisSettings, Settings
from service.entrypoints.api.game_views import render_acted
from service.games.commands import Act
from service.games.use_cases import GameService as _GameService
from service.lobby.use_cases import Lobby
from tests.servers import run_server


class GameService(_GameService):
    """The use cases, called here with seat tokens as the API's callers carry them."""

    async def act(self, game_id, token, action, **kwargs):
        command = Act(caller=Caller(seat_token=token), game_id=game_id, action=action, **kwargs)
        return await super().act(command)

    async def create(self, players, **kwargs):
        return await Lobby(self).deal(players, **kwargs)


HUMANS = [("ann", None), ("bob", None), ("cy", None)]


def two_services(backend, **kwargs):
    """Two services on the same store (two clients of one Redis; one shared embedded store),
    whose game ids are the backend's (so that their keys are deleted after the test)."""

    def random_hex(n: int) -> str:
        return backend.new_id() if n == 10 else secrets.token_hex(n)

    settings = Settings(redis=RedisSettings(url=backend.url))
    first = backend.store()
    second = backend.store() if backend.kind == "redis" else first
    return (
        GameService(first, settings, random_hex=random_hex, **kwargs),
        GameService(second, settings, random_hex=random_hex, **kwargs),
    )


async def close(*services: GameService) -> None:
    for store in {id(s.store): s.store for s in services}.values():
        await store.close()


def tokens_of(created) -> dict[int, str]:
    return dict(created.tokens)


def test_two_replicas_acting_in_turns_lose_and_repeat_nothing(backend) -> None:
    async def body(_store) -> None:
        a, b = two_services(backend)
        try:
            created = await a.create(HUMANS)
            game_id, tokens = created.record.id, tokens_of(created)
            await b.get(game_id)  # both hold a copy of version 0
            rng = random.Random(11)
            returned, done = [], 0
            for turn in range(60):
                stored = await a.store.load(game_id)
                if stored.state.phase == "finished":
                    break
                seat = to_act(stored.state)
                action = rng.choice(legal_actions(stored.state, seat))
                service = (a, b)[turn % 2]  # its copy is one action behind, from turn 2 on
                acted = await service.act(game_id, tokens[seat], action)
                reply = msgspec.json.decode(render_acted(acted))
                assert not acted.replayed
                assert acted.record.version == reply["version"] == stored.version + 1  # humans
                returned.extend(e["seq"] for e in reply["events"])
                done += 1
            assert done > 20
            final = await a.store.load(game_id)
            assert final.version == created.record.version + done
            log = await a.store.events(game_id, 0, 100_000)
            after_create = [e.seq for e in log if e.seq > created.record.state.last_seq]
            assert Counter(returned) == Counter(after_create)  # each event in one response
            assert [e.seq for e in log] == list(range(1, len(log) + 1))
        finally:
            await close(a, b)

    backend.run(body)


def test_a_stale_copy_never_decides_a_412(backend) -> None:
    async def body(_store) -> None:
        a, b = two_services(backend)
        try:
            created = await a.create(HUMANS, starting_seat=0)
            game_id, tokens = created.record.id, tokens_of(created)
            v0 = created.record.version

            async def next_move():
                stored = await a.store.load(game_id)
                seat = to_act(stored.state)
                return tokens[seat], legal_actions(stored.state, seat)[0]

            await b.act(game_id, *await next_move())  # a's copy: v0
            # If-Match on the stored version: accepted, though a's copy names another
            acted = await a.act(game_id, *await next_move(), expected_version=v0 + 1)
            assert acted.record.version == v0 + 2
            # b's copy is at v0 + 1 and If-Match names it: the stored game moved on, 412
            with pytest.raises(ServiceError) as refused:
                await b.act(game_id, *await next_move(), expected_version=v0 + 1)
            assert refused.value.code == "version_mismatch"
            assert f"the game is at {v0 + 2}" in refused.value.detail
            # and a's copy, now at v0 + 2, is right: If-Match on it is accepted
            acted = await a.act(game_id, *await next_move(), expected_version=v0 + 2)
            assert acted.record.version == v0 + 3
            assert (await a.store.load(game_id)).version == v0 + 3
        finally:
            await close(a, b)

    backend.run(body)


def test_a_stale_copy_never_decides_a_rule_error(backend) -> None:
    async def body(_store) -> None:
        a, b = two_services(backend)
        try:
            created = await a.create(HUMANS, starting_seat=0)
            game_id, tokens = created.record.id, tokens_of(created)
            # seat 0 ends its turn through b; a's copy (made by create) still has seat 0 to act
            stored = await b.get(game_id)
            while to_act(stored.state) == 0:
                action = legal_actions(stored.state, 0)[0]
                await b.act(game_id, tokens[0], action)
                stored = await b.get(game_id)
            seat = to_act(stored.state)
            assert seat != 0
            # the seat whose turn it now is acts through a: its copy says "not your turn"
            acted = await a.act(
                game_id,
                tokens[seat],
                legal_actions(stored.state, seat)[0],
            )
            assert acted.seat == seat
            assert acted.record.version == stored.version + 1
            # b's copy has seat 0 to act no more either way; seat 0 is refused on the stored
            # game by a, whose copy (now fresh) agrees; and nothing was saved
            after = await a.store.load(game_id)
            if to_act(after.state) != 0:
                with pytest.raises(RuleError):
                    await a.act(game_id, tokens[0], Draw())
                assert (await a.store.load(game_id)).version == after.version
        finally:
            await close(a, b)

    backend.run(body)


def test_idempotent_retries_through_the_other_replica_replay(backend) -> None:
    async def body(_store) -> None:
        a, b = two_services(backend)
        try:
            created = await a.create(HUMANS, starting_seat=0)
            game_id, tokens = created.record.id, tokens_of(created)
            await b.get(game_id)
            first = await a.act(game_id, tokens[0], Draw(), idempotency_key="k")
            again = await b.act(game_id, tokens[0], Draw(), idempotency_key="k")
            assert again.replayed
            assert render_acted(again) == render_acted(first)  # the same answer, byte for byte
            assert (again.record, again.seat, again.events) == (
                first.record,
                first.seat,
                first.events,
            )
            with pytest.raises(ServiceError) as reused:
                await b.act(game_id, tokens[0], Stop(take="numbers"), idempotency_key="k")
            assert reused.value.code == "idempotency_key_reused"
            assert (await a.store.load(game_id)).version == first.record.version
        finally:
            await close(a, b)

    backend.run(body)


def test_a_copy_of_a_game_gone_from_the_store_gets_404(redis_backend) -> None:
    backend = redis_backend

    async def body(_store) -> None:
        a, b = two_services(backend)
        try:
            created = await a.create(HUMANS, starting_seat=0)
            game_id, tokens = created.record.id, tokens_of(created)
            backend.client.delete(*backend.keys(game_id))  # expired
            for token in (tokens[0], "not-a-token"):  # a wrong token: 404 too, as before
                with pytest.raises(ServiceError) as gone:
                    await a.act(game_id, token, Draw())
                assert gone.value.code == "game_not_found"
            assert not backend.client.exists(*backend.keys(game_id))  # nothing written back
        finally:
            await close(a, b)

    backend.run(body)


def test_the_copies_are_bounded(backend) -> None:
    async def body(_store) -> None:
        a, b = two_services(backend, recent_games=3)
        try:
            ids = []
            for _ in range(5):
                created = await a.create(HUMANS, starting_seat=0)
                ids.append(created.record.id)
                await a.act(ids[-1], tokens_of(created)[0], Draw())
            assert list(a._recent) == ids[-3:]  # the least recently used ones went first
        finally:
            await close(a, b)

    backend.run(body)


def test_two_service_processes_acting_in_turns_over_http(redis_url: str) -> None:
    """The same as above with two real service processes on one Redis: each action goes to
    the process that did not make the last one, so its copy is always stale. With If-Match on
    the version just read, every action is accepted; with the version before it, 412."""
    with (
        run_server({"TEN_REDIS_URL": redis_url}) as first,
        run_server({"TEN_REDIS_URL": redis_url}) as second,
        httpx.Client(base_url=first, timeout=30) as a,
        httpx.Client(base_url=second, timeout=30) as b,
    ):
        created = a.post("/v1/games", json={"players": [{"name": n} for n, _ in HUMANS]})
        assert created.status_code == 201
        game_id = created.json()["id"]
        auth = {
            s["seat"]: {"Authorization": f"Bearer {s['token']}"} for s in created.json()["seats"]
        }
        rng = random.Random(5)
        returned, done = [], 0
        try:
            for turn in range(30):
                client = (a, b)[turn % 2]
                view = client.get(f"/v1/games/{game_id}").json()
                if view["status"] == "finished":
                    break
                seat = view["to_act"]
                legal = client.get(f"/v1/games/{game_id}", headers=auth[seat]).json()
                action = rng.choice(legal["legal_actions"])
                url = f"/v1/games/{game_id}/actions"
                other = view["version"] - 1 if view["version"] else 1  # not the stored version
                stale = client.post(
                    url, json=action, headers={**auth[seat], "If-Match": f'"{other}"'}
                )
                assert stale.status_code == 412, stale.text
                acted = client.post(
                    url, json=action, headers={**auth[seat], "If-Match": f'"{view["version"]}"'}
                )
                assert acted.status_code == 200, acted.text
                assert acted.json()["version"] == view["version"] + 1
                returned.extend(e["seq"] for e in acted.json()["events"])
                done += 1
            assert done >= 20
            log = a.get(f"/v1/games/{game_id}/events", params={"limit": 1000}).json()["events"]
            after_create = [e["seq"] for e in log if e["version"] > created.json()["version"]]
            assert Counter(returned) == Counter(after_create)
            assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
            final = b.get(f"/v1/games/{game_id}").json()
            assert final["version"] == created.json()["version"] + done
        finally:
            with redis.Redis.from_url(redis_url) as client:
                tag = f"{{game:{game_id}}}"
                client.delete(tag, f"{tag}:log", f"{tag}:idem")
