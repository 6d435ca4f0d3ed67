"""A tournament player follows their own table live while its deal is a secret: a duplicate
round of four humans at two tables of two (the same pile at both), the other table still in
play. Their game is refused to everyone but the platform and its own players
(`service.tournaments.secrecy`, 403 `game_embargoed`), so the page's event stream must say who it is
(`Authorization: Bearer <the player's JWT>`, which an `EventSource` cannot send): the page
opened from the tournament's "your table" gets its stream (200), its event log and no error,
and the other human's move at the same table reaches it through that stream."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.browser.web import BROWSER_GROUP, App, wait_for
from tests.support.platform_server import PLATFORM, platform_server, player_token

pytestmark = BROWSER_GROUP


@pytest.fixture
def app_server() -> Iterator[str]:
    """A service with a platform API key and players' JWTs (HS256): tournaments need both."""
    with platform_server() as base:
        yield base


def as_player(pid: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {player_token(pid)}"}


def duplicate_round(api: httpx.Client, players: list[str]) -> list[dict[str, Any]]:
    """A running duplicate round of `players` at tables of two: its tables, each dealt."""
    body = {
        "name": f"Duplicate {secrets.token_hex(3)}",
        "table_size": 2,
        "places": len(players),
        "rounds": 1,
        "format": "round_robin",
        "deal_mode": "duplicate",
        "bot_level": "random",
        "clock": {"type": "deadline", "hours": 24},  # nobody times out during the test
    }
    created = api.post("/v1/tournaments", json=body, headers=PLATFORM)
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    for pid in players:
        url = f"/v1/tournaments/{tid}/registrations"
        registered = api.post(url, json={"player_id": pid}, headers=PLATFORM)
        assert registered.status_code == 200, registered.text
    started = api.post(f"/v1/tournaments/{tid}/start", headers=PLATFORM)
    assert started.status_code == 200, started.text

    def tables() -> list[dict[str, Any]] | None:
        rounds = api.get(f"/v1/tournaments/{tid}/rounds", headers=PLATFORM).json()["rounds"]
        return rounds[0]["tables"] if rounds else None

    paired = wait_for(tables, "round 1 paired")
    for table in paired:
        game = table["game_id"]
        wait_for(
            lambda g=game: api.get(f"/v1/games/{g}", headers=PLATFORM).status_code == 200,
            f"{game} dealt",
        )
    return [{**t, "tournament": tid} for t in paired]


def test_a_player_follows_their_own_secret_table_on_its_stream(app: App, api: httpx.Client) -> None:
    players = [f"p-{secrets.token_hex(4)}" for _ in range(4)]
    tables = duplicate_round(api, players)
    assert len(tables) == 2, tables
    assert all(not s.startswith("bot:") for t in tables for s in t["seats"]), tables
    mine, other = tables
    tid, game_id = mine["tournament"], mine["game_id"]
    view = api.get(f"/v1/games/{game_id}", headers=PLATFORM).json()
    assert view["status"] == "active", view
    # the one to act is the other human: the browser's player watches their move arrive
    actor = mine["seats"][view["to_act"]]
    watcher = next(p for p in mine["seats"] if p != actor)
    seat = mine["seats"].index(watcher)
    # the embargo is in force: the game's stream is refused to a caller who is not seated
    refused = api.get(f"/v1/games/{game_id}/events/stream")
    assert refused.status_code == 403, refused.text
    assert refused.json()["code"] == "game_embargoed"

    page = app.page
    streams: list[Any] = []
    stream_path = f"/v1/games/{game_id}/events/stream"
    page.on("request", lambda r: streams.append(r) if stream_path in r.url else None)
    token = player_token(watcher)
    app.goto(f"/tournaments/{tid}?token={token}", "tournament")
    page.wait_for_selector(f"[data-testid=signed-in-as][data-player-id='{watcher}']")
    link = page.wait_for_selector(f"[data-testid=your-table][data-game-id='{game_id}']")
    assert link.get_attribute("data-seat") == str(seat)
    page.click("#play-your-game")
    app.wait_screen("table")
    assert app.game_id == game_id

    first = wait_for(lambda: streams[:1], "the page opening the game's stream", page=page)[0]
    answer = first.response()
    assert answer is not None, f"the page's stream failed: {first.failure}"
    assert answer.status == 200, f"the page's stream: {answer.status}"
    assert first.header_value("authorization") == f"Bearer {token}"
    # its log was read too (as the seated player): no error shown
    assert page.locator(".error[role=alert]").count() == 0, page.inner_text("body")[:500]

    acted = api.post(
        f"/v1/games/{game_id}/actions", json={"type": "draw"}, headers=as_player(actor)
    )
    assert acted.status_code == 200, acted.text
    moved = [e for e in acted.json()["events"] if e.get("seat") == view["to_act"]]
    assert moved, acted.json()["events"]
    for event in moved:
        page.wait_for_selector(f"[data-testid=event-log] li[data-seq='{event['seq']}']")
    assert len(streams) == 1, [s.url for s in streams]  # followed on one stream, never refused
    # the other table of the deal is still played: the game was a secret all along
    assert api.get(f"/v1/games/{other['game_id']}", headers=PLATFORM).json()["status"] == "active"
    assert api.get(f"/v1/games/{game_id}/events/stream").status_code == 403
