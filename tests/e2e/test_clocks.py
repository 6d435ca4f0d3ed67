"""Clocks end to end, on a real service process (Redis and the embedded store): a seat that
stops answering times out, is taken over by a bot after `takeover_after` timeouts, and the
game plays to its end; a player resigns and ranks last; a taken-over player reclaims.

Short clocks (a second's bank, half a second back per decision) and the default poll
(TEN_DEADLINE_POLL, 0.2 s): the whole game takes a few seconds.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.support.api import bearer, check_log, check_problem, check_results

CLOCK = {"type": "bank", "initial_seconds": 1.0, "increment_seconds": 0.5, "takeover_after": 2}
GAME_SECONDS = 90.0  # a bound, never reached by a working service


def _create(client: httpx.Client, clock: dict[str, Any], seats: int = 4) -> tuple[str, dict]:
    body = {"players": [{"name": f"p{i}"} for i in range(seats)], "clock": clock}
    created = client.post("/v1/games", json=body)
    assert created.status_code == 201, created.text
    game = created.json()
    return game["id"], {s["seat"]: s["token"] for s in game["seats"]}


def _events(client: httpx.Client, game_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    while True:
        page = client.get(f"/v1/games/{game_id}/events", params={"after": len(found)}).json()
        found.extend(page["events"])
        if not page["events"]:
            return found


def _play_except(client: httpx.Client, game_id: str, tokens: dict, idle: int) -> dict:
    """Every seat but `idle` plays its first legal action as soon as it must decide; `idle`
    never answers. Returns the finished game."""
    path = f"/v1/games/{game_id}"
    stop = time.monotonic() + GAME_SECONDS
    while time.monotonic() < stop:
        game = client.get(path).json()
        if game["status"] == "finished":
            return game
        seat = game["to_act"]
        if seat == idle or seat is None:
            time.sleep(0.02)
            continue
        view = client.get(path, headers=bearer(tokens[seat])).json()
        if not view["legal_actions"]:
            continue  # moved on meanwhile (a timeout)
        acted = client.post(
            f"{path}/actions",
            json=view["legal_actions"][0],
            headers={**bearer(tokens[seat]), "If-Match": f'"{view["version"]}"'},
        )
        assert acted.status_code in (200, 409, 412), acted.text  # 409/412: a timeout won
    raise AssertionError(f"game {game_id} did not finish within {GAME_SECONDS} s")


def test_a_seat_that_stops_answering_is_timed_out_taken_over_and_the_game_ends(
    client: httpx.Client,
) -> None:
    game_id, tokens = _create(client, CLOCK)
    started = client.get(f"/v1/games/{game_id}").json()
    clock = started["clock"]
    assert clock["control"] == CLOCK
    assert clock["seat"] == started["to_act"]
    assert clock["deadline"] == pytest.approx(clock["server_time"] + 1.0, abs=0.5)
    idle = started["to_act"]
    finished = _play_except(client, game_id, tokens, idle)

    events = _events(client, game_id)
    check_log(events)
    timeouts = [e for e in events if e["type"] == "timed_out"]
    takeovers = [e for e in events if e["type"] == "seat_taken_over"]
    idle_timeouts = [e for e in timeouts if e["seat"] == idle]
    # the idle seat: exactly `takeover_after` timeouts, then the bot has it for good
    assert len(idle_timeouts) == CLOCK["takeover_after"], timeouts
    assert [(e["seat"], e["reason"]) for e in takeovers if e["seat"] == idle] == [
        (idle, "timeouts")
    ]
    assert takeovers[-1]["seq"] > idle_timeouts[-1]["seq"]
    for event in idle_timeouts:  # the move made for it follows at once, same version
        after = events[event["seq"]]  # events[seq - 1] is the event itself
        assert after["version"] == event["version"]
    player = finished["players"][idle]
    assert (player["stand_in"], player["taken_over"], player["resigned"]) == ("basic", True, False)
    assert finished["clock"]["seat"] is None
    assert finished["clock"]["deadline"] is None
    check_results(client, finished)


def test_resign_at_any_time_ranks_last_and_a_bot_plays_on(client: httpx.Client) -> None:
    clock = {"type": "deadline", "hours": 1}
    game_id, tokens = _create(client, clock, seats=2)
    game = client.get(f"/v1/games/{game_id}").json()
    waiting = game["to_act"]
    other = 1 - waiting
    view = client.get(f"/v1/games/{game_id}", headers=bearer(tokens[other])).json()
    assert view["legal_actions"] == []  # not its turn
    assert view["seat_actions"] == [{"type": "resign"}]
    resigned = client.post(
        f"/v1/games/{game_id}/actions", json={"type": "resign"}, headers=bearer(tokens[other])
    )
    assert resigned.status_code == 200, resigned.text
    body = resigned.json()
    assert [e["type"] for e in body["events"]] == ["seat_taken_over"]
    assert body["events"][0]["reason"] == "resigned"
    assert body["players"][other]["resigned"] is True
    again = client.post(
        f"/v1/games/{game_id}/actions", json={"type": "resign"}, headers=bearer(tokens[other])
    )
    check_problem(again, 409, "illegal_action")
    # the one who stays plays on against the bot to the end, and wins
    finished = _play_except(client, game_id, tokens, idle=other)
    ranks = {r["seat"]: r for r in finished["results"]}
    assert ranks[other]["resigned"] is True
    assert ranks[other]["winner"] is False
    assert ranks[waiting]["rank"] == 1
    assert ranks[waiting]["winner"] is True
    check_results(client, finished)


def _act_first_legal(client: httpx.Client, path: str, token: str) -> None:
    view = client.get(path, headers=bearer(token)).json()
    if view["legal_actions"]:
        acted = client.post(
            f"{path}/actions",
            json=view["legal_actions"][0],
            headers={**bearer(token), "If-Match": f'"{view["version"]}"'},
        )
        assert acted.status_code in (200, 409, 412), acted.text


def test_a_taken_over_player_reclaims_the_seat(client: httpx.Client) -> None:
    clock = {"type": "bank", "initial_seconds": 0.5, "increment_seconds": 1, "takeover_after": 1}
    game_id, tokens = _create(client, clock, seats=2)
    path = f"/v1/games/{game_id}"
    first = client.get(path).json()["to_act"]
    other = 1 - first
    stop = time.monotonic() + 30
    while True:  # `first` times out once and is taken over (takeover_after 1); `other` plays
        game = client.get(path).json()
        assert game["status"] == "active", game["status"]
        if game["players"][first]["stand_in"]:
            break
        assert time.monotonic() < stop, "no takeover within 30 s"
        if game["to_act"] == other:
            _act_first_legal(client, path, tokens[other])
        time.sleep(0.02)
    view = client.get(path, headers=bearer(tokens[first])).json()
    assert view["legal_actions"] == []  # the bot decides for the seat now
    assert view["seat_actions"] == [{"type": "reclaim"}, {"type": "resign"}]
    back = client.post(f"{path}/actions", json={"type": "reclaim"}, headers=bearer(tokens[first]))
    assert back.status_code == 200, back.text
    assert [e["type"] for e in back.json()["events"]] == ["seat_reclaimed"]
    player = back.json()["players"][first]
    assert (player["stand_in"], player["taken_over"]) == (None, True)
    assert back.json()["seat_actions"] == [{"type": "resign"}]
    again = client.post(f"{path}/actions", json={"type": "reclaim"}, headers=bearer(tokens[first]))
    check_problem(again, 409, "illegal_action")


def test_an_idle_game_ends_abandoned_and_is_archived_so(start_server) -> None:
    with start_server(TEN_IDLE_TTL="1") as base, httpx.Client(base_url=base) as client:
        game_id, tokens = _create(client, {"type": "deadline", "hours": 24}, seats=2)
        table = client.post("/v1/games", json={"players": [{"name": "a"}, {"open": True}]})
        assert table.status_code == 201, table.text
        table_id = table.json()["id"]
        stop = time.monotonic() + 30
        while client.get(f"/v1/games/{game_id}").json()["status"] != "abandoned":
            assert time.monotonic() < stop, "the idle game was not ended within 30 s"
            time.sleep(0.1)
        game = client.get(f"/v1/games/{game_id}", headers=bearer(tokens[0])).json()
        assert game["legal_actions"] is None
        assert game["clock"]["deadline"] is not None  # stopped as it was: nobody timed out
        refused = client.post(
            f"/v1/games/{game_id}/actions", json={"type": "draw"}, headers=bearer(tokens[0])
        )
        check_problem(refused, 409, "game_over")
        while client.get(f"/v1/games/{table_id}").json()["status"] != "cancelled":
            assert time.monotonic() < stop, "the idle table was not cancelled within 30 s"
            time.sleep(0.1)
        while (archived := client.get(f"/v1/archive/games/{game_id}")).status_code == 404:
            assert time.monotonic() < stop, "the abandoned game was not archived within 30 s"
            time.sleep(0.1)
        assert archived.status_code == 200, archived.text
        body = archived.json()
        assert (body["status"], body["ranked"], body["unranked_reason"]) == (
            "abandoned",
            False,
            "abandoned",
        )
        assert body["results"] == []
