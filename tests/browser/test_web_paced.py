"""Paced play: the bots' moves that come back with a player's move (and through the event
stream, to a spectator) are shown one at a time, about half a second apart, each named in
words in the log and in the live region; the table moves on from the events (it is never
read again: the page sends no GET of the game meanwhile), and at the end it is the API's.
"Show them all now" shows the rest at once; with `prefers-reduced-motion: reduce` every move
shows at once.

The game: Ann and two basic bots on a stacked deck (`DECK`): after Ann's first turn, Bot 2
draws a wild card, Bot 3 bids, Ann passes, and the bots' moves after her pass (the auction's
end, their draws, stops and buys) are the ones watched. Every wait is bounded; the only
timing asserted is a lower bound (moves apart), never a speed."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from itertools import pairwise
from typing import Any

import httpx

from tests.browser.web import BROWSER_GROUP, App, api_table, hold_seat, wait_for

pytestmark = BROWSER_GROUP

DECK = [
    "R1", "W5", "B2", "B3", "G2", "$1", "G3", "O2", "O3", "R2", "W#", "R3",
    "B4", "G4", "O4", "$2", "R5", "B5", "G5", "O5",
]  # fmt: skip
NAMES = ["Ann", "Bot 2", "Bot 3"]
MIN_BOT_MOVES = 4  # the watched reply must hold this many bots' moves, else the deck is no test
APART_MS = 300  # the normal pace is 500 ms a move: never less than this between two


def bot_game(api: httpx.Client) -> dict[str, Any]:
    created = api.post(
        "/v1/games",
        json={
            "players": [{"name": "Ann"}, *({"name": n, "bot": "basic"} for n in NAMES[1:])],
            "deck": DECK,
            "starting_seat": 0,
        },
    )
    assert created.status_code == 201, created.text
    return created.json()


def decide(view: Mapping[str, Any]) -> dict[str, Any]:
    """Ann's plan: one draw, then stop with the numbers, buy nothing, pass every auction."""
    legal = view["legal_actions"]
    types = {a["type"] for a in legal}
    if "stop" in types and view["tableau"]:
        return next(a for a in legal if a["type"] == "stop" and a["take"] == "numbers")
    for kind in ("draw", "pass", "decline"):
        if kind in types:
            return next(a for a in legal if a["type"] == kind)
    raise AssertionError(f"nothing Ann plays: {legal}")


def play(app: App, api: httpx.Client, view: Mapping[str, Any]) -> dict[str, Any]:
    """Ann's move through the page, once the service applied it, and the page caught up."""
    action = decide(view)
    app.act(action)
    wait_for(lambda: app.view(api)["version"] > view["version"], f"{action} applied")
    return app.synced(api)


def to_next_pass(app: App, api: httpx.Client) -> dict[str, Any]:
    """Plays Ann's moves through the page until her next pass; returns the view there."""
    for _ in range(20):
        view = app.synced(api)
        assert view["status"] == "active", "the game ended before Ann's pass"
        if decide(view)["type"] == "pass":
            return view
        play(app, api, view)
    raise AssertionError("no auction for Ann to pass")


def game_reads(app: App, game_id: str) -> list[str]:
    """The page's GETs of the game itself (not of its events or odds) from now on."""
    reads: list[str] = []
    path = re.compile(rf"/v1/games/{re.escape(game_id)}(\?.*)?$")

    def seen(request) -> None:
        if request.method == "GET" and path.search(request.url):
            reads.append(request.url)

    app.page.on("request", seen)
    return reads


def moves_after(api: httpx.Client, game_id: str, version: int) -> tuple[list[int], list[dict]]:
    """The versions (one per move) after `version`, and the whole log."""
    log = api.get(f"/v1/games/{game_id}/events", params={"after": 0}).json()
    assert not log.get("more"), "the log has more than one page"
    events = log["events"]
    return sorted({e["version"] for e in events if e["version"] > version}), events


def seat_named(move: list[dict]) -> str | None:
    seat = next((e["seat"] for e in move if "seat" in e), None)
    return None if seat is None else NAMES[seat]


def check_one_at_a_time(
    steps: list[dict], versions: list[int], events: list[dict], who: str
) -> None:
    """Every move shown on its own, in order, the log growing by its events with the table,
    each named in the live region, and moves at least APART_MS apart."""
    later = steps[1:]
    assert [s["v"] for s in later] == versions, (who, [(s["v"], s["n"]) for s in steps])
    for step in later:
        shown = sum(1 for e in events if e["version"] <= step["v"])
        assert step["n"] == min(60, shown), (who, step, shown)  # the log shows the last 60
        move = [e for e in events if e["version"] == step["v"]]
        name = seat_named(move)
        assert step["said"], (who, step)
        if name:
            assert name in step["said"], (who, name, step["said"])
    gaps = [b["t"] - a["t"] for a, b in pairwise(later)]
    assert min(gaps) >= APART_MS, (who, gaps)
    # the table changes in between: a bot's draw puts its card on the tableau, step by step
    grew = [b for a, b in pairwise(later) if len(b["tableau"]) == len(a["tableau"]) + 1]
    assert grew, (who, [s["tableau"] for s in later])


def test_the_bots_moves_show_one_at_a_time(
    new_context: Callable[..., App], api: httpx.Client
) -> None:
    game = bot_game(api)
    game_id = game["id"]
    ann, watcher = new_context(), new_context()
    hold_seat(ann, game)
    ann.goto(f"/game/{game_id}", "table")
    view = to_next_pass(ann, api)
    watcher.goto(f"/game/{game_id}", "table")
    wait_for(lambda: watcher.shown_table()["version"] == view["version"], "the spectator in sync")

    for page in (ann, watcher):
        page.record_steps()
    reads = {name: game_reads(page, game_id) for name, page in (("ann", ann), ("watcher", watcher))}
    after = play(ann, api, view)  # the pass: the auction ends, the bots play on
    versions, events = moves_after(api, game_id, view["version"])
    assert len(versions) - 1 >= MIN_BOT_MOVES, versions
    assert after["version"] == versions[-1]
    wait_for(lambda: watcher.shown_table()["version"] == versions[-1], "the spectator caught up")

    check_one_at_a_time(ann.recorded_steps(), versions, events, "the player")
    check_one_at_a_time(watcher.recorded_steps(), versions, events, "the spectator")
    public = api.get(f"/v1/games/{game_id}").json()
    assert ann.shown_table() == api_table(ann.view(api))
    assert watcher.shown_table() == api_table(public)
    assert ann.fold_mismatches() == 0
    assert reads == {"ann": [], "watcher": []}, "the table was read again, not folded"
    log = ann.log_texts()
    assert any(re.search(r"Bot \d wins Wild card 5 for \d+\.", line) for line in log), log

    # the next auction: "show them all now" once the first bot move is shown
    view = to_next_pass(ann, api)
    ann.record_steps()
    ann.act(decide(view))
    wait_for(lambda: len(ann.recorded_steps()) >= 3, "the player's pass and a bot's move shown")
    clicked = ann.page.evaluate(
        "() => { document.getElementById('pace-skip').click(); return performance.now(); }"
    )
    wait_for(lambda: ann.view(api)["version"] > view["version"], "the pass applied")
    after = ann.synced(api)
    versions, events = moves_after(api, game_id, view["version"])
    assert len(versions) - 1 >= MIN_BOT_MOVES, versions
    steps = ann.recorded_steps()[1:]
    before = [s["v"] for s in steps if s["t"] < clicked]
    rest = [s for s in steps if s["t"] >= clicked]
    assert before == versions[: len(before)], (before, versions)
    assert len(before) < len(versions) - 1, "every move was shown before the skip"
    assert [s["v"] for s in rest] == [versions[-1]], steps  # the rest at once
    assert ann.shown_table() == api_table(after)
    assert ann.fold_mismatches() == 0


def test_with_reduced_motion_the_moves_show_at_once(
    new_context: Callable[..., App], api: httpx.Client
) -> None:
    game = bot_game(api)
    ann = new_context(reduced_motion="reduce")
    hold_seat(ann, game)
    ann.goto(f"/game/{game['id']}", "table")
    view = to_next_pass(ann, api)
    pace = ann.page.text_content("[data-testid=pace]") or ""
    assert "Reduced motion is on" in pace, pace
    assert not ann.page.query_selector("#pace")

    ann.record_steps()
    after = play(ann, api, view)
    versions, events = moves_after(api, game["id"], view["version"])
    assert len(versions) - 1 >= MIN_BOT_MOVES, versions
    steps = ann.recorded_steps()[1:]
    # every move, the player's and the bots', in one change of the page: no delay at all
    assert [(s["v"], s["n"]) for s in steps] == [(versions[-1], min(60, len(events)))], steps
    assert "Ann" in steps[0]["said"], steps[0]  # the last move said: Ann's turn comes
    assert ann.shown_table() == api_table(after)
    assert ann.fold_mismatches() == 0
