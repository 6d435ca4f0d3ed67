"""The page's event stream when the server refuses it: with one stream allowed per client,
a stream already held from the same address makes the page's first EventSource fail for
good (429); the page says it is reconnecting, opens a new stream later (backing off), and
once the slot is free it follows the game again, missing nothing."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.browser.web import BROWSER_GROUP, App, wait_for
from tests.servers import run_server
from tests.support.api import bearer, check_serves_client

pytestmark = BROWSER_GROUP


@pytest.fixture
def app_server() -> Iterator[str]:
    """A service that lets each client address hold one event stream."""
    with run_server({"TEN_SSE_MAX_PER_CLIENT": "1", "TEN_SSE_KEEPALIVE": "1"}) as base:
        yield check_serves_client(base)


def test_a_refused_stream_is_opened_again_and_misses_nothing(
    app: App, api: httpx.Client, app_server: str
) -> None:
    created = api.post("/v1/games", json={"players": [{"name": "Ann"}, {"name": "Bob"}]})
    assert created.status_code == 201, created.text
    game = created.json()
    first = game["seats"][game["to_act"]]["token"]
    with (
        httpx.Client(base_url=app_server, timeout=10) as other,
        other.stream("GET", f"/v1/games/{game['id']}/events/stream") as held,
    ):
        assert held.status_code == 200
        app.goto(f"/game/{game['id']}", "table")
        wait_for(
            lambda: app.page.locator("[role=status]").is_visible(),
            "the page saying it is reconnecting",
        )
        refused = api.get(f"/v1/games/{game['id']}/events/stream")
        assert refused.status_code == 429, refused.text  # the one slot is still held
    # the slot is free again: a move now must reach the page through its new stream
    acted = api.post(
        f"/v1/games/{game['id']}/actions", json={"type": "draw"}, headers=bearer(first)
    )
    assert acted.status_code == 200, acted.text
    drawn = next(e for e in acted.json()["events"] if e["type"] == "card_drawn")
    wait_for(
        lambda: any(
            li.get_attribute("data-seq") == str(drawn["seq"])
            for li in app.page.locator("[data-testid=event-log] li").all()
        ),
        "the draw reaching the page's event log",
        timeout=30,
    )
    wait_for(
        lambda: not app.page.locator("[role=status]").is_visible(), "the reconnecting notice gone"
    )
