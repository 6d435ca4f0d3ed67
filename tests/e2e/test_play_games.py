"""Whole games over HTTP, for 1 to 5 players, humans and bots, checked at every step.

Humans choose among the `legal_actions` their token is shown (a seeded `random.Random`
picks), bots move on the server. After every action: the ETag, the version (+1 per accepted
action, human or bot), who may act, the events of the response against the log, the token
and card invariants, and the public state against the one rebuilt from the event log. At
the end: the results, and every card of the deck accounted for.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import httpx
import pytest

from tests.support.api import (
    DECK_SIZES,
    Table,
    check_etag,
    check_invariants,
    check_log,
    check_results,
    manifest_deck,
    public_cards,
    public_part,
    rebuilt,
)

H = None  # a human seat
LINEUPS = {
    "1_human": [H],
    "2_humans": [H, H],
    "human_bot": [H, "basic"],
    "human_2_bots": ["random", H, "basic"],
    "4_mixed": [H, "basic", H, "random"],
    "2_humans_3_bots": ["basic", H, "random", H, "basic"],
}


def players_of(lineup: list[str | None]) -> list[dict[str, Any]]:
    return [
        {"name": f"p{seat}"} if bot is None else {"name": f"bot{seat}", "bot": bot}
        for seat, bot in enumerate(lineup)
    ]


def check_step(table: Table, body: dict[str, Any]) -> None:
    """The checks every state read must pass."""
    check_invariants(body, table.events[0]["draw_pile_size"])
    assert table.rebuilt() == public_part(body)
    if body["status"] == "active":
        # bots move by themselves: the game only ever waits for a human
        assert body["to_act"] in table.tokens, (body["to_act"], table.tokens)


def check_created(table: Table, deck_size: int | None = None) -> None:
    body = table.body
    assert body["legal_actions"] is None
    assert body["seat"] is None
    lineup = [p["bot"] for p in body["players"]]
    assert sorted(table.tokens) == [seat for seat, bot in enumerate(lineup) if bot is None]
    table.sync_events()
    check_log(table.events)
    assert table.events[0]["draw_pile_size"] == (deck_size or DECK_SIZES[table.n])
    # the bot moves made at creation: versions 1 .. version, none skipped
    versions = {e["version"] for e in table.events}
    assert versions == set(range(body["version"] + 1))
    check_step(table, body)


def check_seats_view(table: Table, body: dict[str, Any]) -> list[dict[str, Any]]:
    """Each human seat's view: same public state; legal actions only for `to_act`."""
    legal: list[dict[str, Any]] | None = None
    for seat in sorted(table.tokens):
        response = table.get(seat)
        assert response.status_code == 200
        seen = check_etag(response)
        assert seen["seat"] == seat
        assert public_part(seen) == public_part(body)
        if seat == body["to_act"]:
            assert seen["legal_actions"], seen
            legal = seen["legal_actions"]
        else:
            assert seen["legal_actions"] == [], (seat, body["to_act"], seen["legal_actions"])
    assert legal is not None
    return legal


def play_step(table: Table, rng: random.Random) -> dict[str, Any]:
    body = table.body
    legal = check_seats_view(table, body)
    action = rng.choice(legal)
    seat = body["to_act"]
    before_version, before_seq = body["version"], table.last_seq

    response = table.act(seat, action)
    assert response.status_code == 200, (action, response.text)
    assert response.headers["content-type"].startswith("application/json")
    acted = check_etag(response)
    assert acted["seat"] == seat
    events = acted["events"]
    assert events, action
    # +1 per accepted action: the human's and each bot move after it
    versions = [e["version"] for e in events]
    assert versions == sorted(versions)
    assert set(versions) == set(range(before_version + 1, acted["version"] + 1))
    assert [e["seq"] for e in events] == list(range(before_seq + 1, before_seq + 1 + len(events)))
    # the response's events are exactly the new entries of the log
    assert table.sync_events() == events
    check_step(table, acted)

    public = table.get()
    assert public.status_code == 200
    read = check_etag(public)
    assert read["legal_actions"] is None
    assert public_part(read) == public_part(acted)
    table.body = acted
    return acted


def play_to_end(table: Table, rng: random.Random, max_steps: int = 3000) -> dict[str, Any]:
    for _ in range(max_steps):
        if table.body["status"] == "finished":
            return table.body
        play_step(table, rng)
    raise AssertionError("the game did not end")


def check_finished(client: httpx.Client, table: Table) -> None:
    body = table.body
    assert body["status"] == "finished"
    assert body["phase"] == "finished"
    assert body["draw_pile_size"] == 0
    assert body["to_act"] is None
    assert body["tableau"] == []
    for seat in table.tokens:
        assert table.legal(seat) == []
    check_log(table.events)
    assert table.read_events() == table.events
    assert table.events[-1]["type"] == "game_finished"
    assert table.events[-1]["results"] == body["results"]
    check_results(client, body)
    # every card of the deck for this player count, and nothing else
    assert public_cards(body) == manifest_deck(client, table.n)
    assert rebuilt(table.events) == public_part(body)


@pytest.mark.parametrize("lineup", list(LINEUPS), ids=list(LINEUPS))
def test_complete_game(client: httpx.Client, lineup: str) -> None:
    rng = random.Random(f"e2e/{lineup}")
    table = Table.create(client, players_of(LINEUPS[lineup]))
    check_created(table)
    play_to_end(table, rng)
    check_finished(client, table)


@pytest.mark.parametrize("size", [1, 3, 5])
def test_all_bots_game_is_played_at_creation(client: httpx.Client, size: int) -> None:
    lineup = ["basic" if seat % 2 else "random" for seat in range(size)]
    table = Table.create(client, players_of(lineup))
    assert table.tokens == {}
    assert table.body["status"] == "finished"
    check_created(table)
    check_finished(client, table)
    # read again later: the same finished game
    again = client.get(table.path)
    assert again.status_code == 200
    read = check_etag(again)
    assert read["id"] == table.id
    assert public_part(read) == public_part(table.body)


def test_explicit_deck_and_starting_seat(client: httpx.Client) -> None:
    deck = ["R1", "$2", "W#", "B5", "G9", "$5", "O3"]
    table = Table.create(client, players_of([H, H]), deck=deck, starting_seat=1)
    body = table.body
    assert body["starting_seat"] == body["active_seat"] == body["to_act"] == 1
    assert body["draw_pile_size"] == len(deck)
    assert body["version"] == 0
    assert body["supply"] == {"currency": 40, "bust": 15}
    assert table.sync_events() == [
        {
            "type": "game_started",
            "players": [
                {"seat": 0, "name": "p0", "bot": None},
                {"seat": 1, "name": "p1", "bot": None},
            ],
            "rules": {"perfect_bonus": 1},
            "starting_seat": 1,
            "draw_pile_size": 7,
            "starting_currency": 5,
            "supply_currency": 40,
            "supply_bust": 15,
            "fairness": None,  # a given deck: not verifiable
            "seq": 1,
            "version": 0,
        },
        {"type": "turn_started", "seat": 1, "seq": 2, "version": 0},
    ]
    assert table.act(0, {"type": "draw"}).json()["code"] == "not_your_turn"

    first = table.act(1, {"type": "draw"})
    assert first.status_code == 200
    assert first.json()["events"] == [
        {"type": "card_drawn", "seat": 1, "card": "R1", "draw_pile_size": 6, "seq": 3, "version": 1}
    ]
    assert first.json()["tableau"] == ["R1"]
    second = table.act(1, {"type": "draw"}).json()
    assert second["events"] == [
        {"type": "card_drawn", "seat": 1, "card": "$2", "draw_pile_size": 5, "seq": 4, "version": 2}
    ]
    third = table.act(1, {"type": "draw"}).json()
    assert third["events"] == [
        {
            "type": "card_drawn",
            "seat": 1,
            "card": "W#",
            "draw_pile_size": 4,
            "seq": 5,
            "version": 3,
        },
        {"type": "auction_started", "card": "W#", "bidders": [0, 1], "seq": 6, "version": 3},
    ]
    assert third["phase"] == "auction"
    assert third["to_act"] == 0
    assert third["tableau"] == ["R1", "$2"]
    assert third["auction"] == {
        "card": "W#",
        "high_bid": 0,
        "high_bidder": None,
        "to_act": 0,
        "bidders": [0, 1],
    }
    table.sync_events()
    table.body = third
    check_step(table, third)
    # and the rest of that short game plays out to a consistent end
    play_to_end(table, random.Random("e2e/explicit"))
    assert table.body["status"] == "finished"
    check_results(client, table.body)
    assert public_cards(table.body) == Counter(deck)


def test_explicit_deck_with_a_bot_to_start(client: httpx.Client) -> None:
    """A bot that starts moves at creation: its first move is a draw of the top card."""
    deck = ["G4", "R2", "B3", "$1", "O5", "W3", "R7", "$4", "B1", "G6"]
    table = Table.create(client, players_of(["basic", H]), deck=deck, starting_seat=0)
    check_created(table, len(deck))
    events = table.events
    assert events[1] == {"type": "turn_started", "seat": 0, "seq": 2, "version": 0}
    assert events[2] == {
        "type": "card_drawn",
        "seat": 0,
        "card": "G4",
        "draw_pile_size": 9,
        "seq": 3,
        "version": 1,
    }
    play_to_end(table, random.Random("e2e/bot-start"))
    check_results(client, table.body)
    assert public_cards(table.body) == Counter(deck)


def test_event_log_pages(client: httpx.Client) -> None:
    """`limit` cuts the log into pages; `more` and `last_seq` lead through all of it."""
    table = Table.create(client, players_of(["basic", "random", "basic"]))
    full = table.read_events()
    assert len(full) > 20
    paged: list[dict[str, Any]] = []
    after = 0
    while True:
        page = client.get(f"{table.path}/events", params={"after": after, "limit": 7}).json()
        assert len(page["events"]) <= 7
        paged.extend(page["events"])
        after = page["last_seq"]
        if not page["more"]:
            break
        assert len(page["events"]) == 7
    assert paged == full
    past_end = client.get(f"{table.path}/events", params={"after": after + 5}).json()
    assert past_end["events"] == []
    assert past_end["last_seq"] == after + 5
    assert past_end["more"] is False
