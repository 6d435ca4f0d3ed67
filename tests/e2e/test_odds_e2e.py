"""The odds endpoint end to end (Redis and the embedded store): exact figures a client can
check from the public view, the same for draw piles holding the same cards in any order,
null outside a live draw phase."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import httpx
import pytest

from domain.game.cards import WILDS, deck_for
from domain.game.engine import bust_kind
from tests.support.api import bearer, check_problem

# two decks with the same cards: the first draws match, what lies below is shuffled apart
HEAD = ["R5", "$2", "B3"]
REST = ["R1", "G7", "W5", "$3", "O4", "B9", "$1", "G2"]


def _game(client: httpx.Client, deck: list[str] | None = None) -> tuple[str, str]:
    body: dict = {"players": [{"name": "Ann"}, {"name": "Bo"}], "starting_seat": 0}
    if deck is not None:
        body["deck"] = deck
    created = client.post("/v1/games", json=body)
    assert created.status_code == 201, created.text
    return created.json()["id"], created.json()["seats"][0]["token"]


def _odds(client: httpx.Client, game_id: str) -> dict:
    response = client.get(f"/v1/games/{game_id}/odds")
    assert response.status_code == 200, response.text
    return response.json()


def _draw(client: httpx.Client, game_id: str, token: str, times: int) -> dict:
    for _ in range(times):
        acted = client.post(
            f"/v1/games/{game_id}/actions", json={"type": "draw"}, headers=bearer(token)
        )
        assert acted.status_code == 200, acted.text
    return client.get(f"/v1/games/{game_id}", headers=bearer(token)).json()


def _expected_bust(view: dict) -> tuple[Fraction, Fraction, int]:
    """The bust odds counted here from the public view alone."""
    unseen = Counter(deck_for(len(view["players"])))
    for card in [*view["tableau"], *view["market"], *view["discard"]]:
        unseen[card] -= 1
    for player in view["players"]:
        unseen.subtract(player["cards"])
    unseen = +unseen
    total = sum(unseen.values())
    numbers = currency = 0
    for code, count in unseen.items():
        kind = None if code in WILDS else bust_kind((*view["tableau"], code))
        numbers += count if kind == "numbers" else 0
        currency += count if kind == "currency" else 0
    return Fraction(numbers, total), Fraction(currency, total), total


def test_the_odds_are_exact_and_public(client: httpx.Client) -> None:
    for _ in range(30):  # a shuffled deal whose first two cards are not wild (most are)
        game_id, token = _game(client)
        assert _odds(client, game_id)["odds"]["value"]["stop"] is None  # nothing drawn yet
        view = _draw(client, game_id, token, 1)
        if view["phase"] == "draw":
            view = _draw(client, game_id, token, 1)
        if view["phase"] == "draw" and view["to_act"] == 0:
            break
    else:
        pytest.fail("30 deals each had a wild card in their first two cards")
    odds = _odds(client, game_id)
    assert odds["version"] == view["version"]
    numbers, currency, unseen = _expected_bust(view)
    got = odds["odds"]
    assert got["seat"] == 0
    assert got["unseen"] == unseen == view["draw_pile_size"]  # a standard deck: the pile
    assert got["bust"]["numbers"] == pytest.approx(float(numbers), abs=1e-6)
    assert got["bust"]["currency"] == pytest.approx(float(currency), abs=1e-6)
    assert got["bust"]["total"] == pytest.approx(float(numbers + currency), abs=1e-6)
    value = got["value"]
    assert value["advantage"] == pytest.approx(value["draw"] - value["stop"], abs=1e-5)
    # a spectator (no token) asks the same question and gets the same answer
    assert client.get(f"/v1/games/{game_id}/odds").json() == odds


def test_the_same_cards_in_another_order_give_the_same_odds(client: httpx.Client) -> None:
    first, token_a = _game(client, HEAD + REST)
    second, token_b = _game(client, HEAD + REST[::-1])
    _draw(client, first, token_a, len(HEAD))
    _draw(client, second, token_b, len(HEAD))
    a, b = _odds(client, first), _odds(client, second)
    assert a["odds"] is not None
    assert a["odds"] == b["odds"]


def test_no_odds_outside_a_live_draw_phase(client: httpx.Client) -> None:
    # an auction: the first card is a wild card
    game_id, token = _game(client, ["W#", *REST])
    assert _draw(client, game_id, token, 1)["phase"] == "auction"
    assert _odds(client, game_id)["odds"] is None
    table = client.post("/v1/games", json={"players": [{"name": "Ann"}, {"open": True}]})
    assert _odds(client, table.json()["id"])["odds"] is None
    check_problem(client.get("/v1/games/nosuchgame/odds"), 404, "game_not_found")
