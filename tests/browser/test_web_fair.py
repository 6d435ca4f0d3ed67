"""Fair deals in the web client (docs/fairness.md): a live game shows its commitment and that
the seed is sealed, never the seed; once the game has ended the page shows the seed the
service revealed, whose SHA-256 (tagged `ten-commit-v1`) is the commitment shown before, with
how to check the deal (the documentation's page, the verifier's command over the game's
record, which verifies). A player who joins a table adds entropy: random from the browser,
their own, or none. A game dealt from a given deck says it is not verifiable. Every text of
it is translated."""

from __future__ import annotations

import hashlib
import json
import random
import re
import subprocess
import sys
from typing import Any

import httpx

from tests.browser.web import (
    BROWSER_GROUP,
    LANGUAGES,
    ROOT,
    App,
    deck_game,
    hold_seat,
    play_actions,
    wait_for,
)
from tests.support.api import README_DECK, README_GAME, bearer

pytestmark = BROWSER_GROUP

FAIRNESS = "[data-testid=fairness]"
COMMITMENT = "[data-testid=fair-commitment]"
SEED = "[data-testid=fair-seed]"
DOCS = "/static/site/fairness.html"  # docs/fairness.md on the documentation site (mkdocs.yml)
VERIFIER = ROOT / "clients" / "verifier" / "ten_verify.py"
HEX = re.compile(r"^[0-9a-f]{32}$")  # the browser's entropy: 16 random bytes


def commitment_of(seed: str) -> str:
    return hashlib.sha256(b"ten-commit-v1\x00" + seed.encode()).hexdigest()


def state(app: App) -> str | None:
    return app.page.get_attribute(FAIRNESS, "data-state")


def play_out(api: httpx.Client, game_id: str, token: str, rng: random.Random) -> dict[str, Any]:
    """The seat's decisions, chosen at random among its legal actions, sent through the API
    until the game has ended; returns the ended view."""
    for _ in range(2000):
        view = api.get(f"/v1/games/{game_id}", headers=bearer(token)).json()
        if view["status"] != "active":
            return view
        action = rng.choice(view["legal_actions"])
        acted = api.post(f"/v1/games/{game_id}/actions", json=action, headers=bearer(token))
        assert acted.status_code == 200, (action, acted.text)
    raise AssertionError("the game did not end")


def test_a_played_game_shows_its_commitment_then_its_seed(app: App, api: httpx.Client) -> None:
    rng = random.Random("browser/fair")
    app.goto("/", "lobby")
    game_id = app.create_table("Ann", [])
    app.choose_pace("instant")
    published = api.get(f"/v1/games/{game_id}").json()["fairness"]
    commitment = published["commitment"]
    assert "seed" not in published

    # in play: the commitment, shortened (all of it in its title), the seed sealed
    app.wait_screen("table")
    assert state(app) == "sealed"
    assert app.page.get_attribute(COMMITMENT, "title") == commitment
    assert app.page.text_content(COMMITMENT) == f"{commitment[:12]}…"
    assert "sealed until the game ends" in app.page.inner_text(FAIRNESS)
    app.play_turn(api, rng)  # a move of the page's own
    app.synced(api)
    assert state(app) == "sealed"
    assert app.page.locator(SEED).count() == 0
    live = app.page.content()

    ended = play_out(api, game_id, app.seat(game_id)["token"], rng)
    assert ended["status"] == "finished"
    seed = ended["fairness"]["seed"]
    app.wait_screen("results")
    wait_for(lambda: state(app) == "revealed", "the seed revealed on the page")
    assert seed not in live  # the live page never held it
    shown = app.page.text_content(SEED)
    assert shown == seed
    assert app.page.text_content(COMMITMENT) == commitment  # in full now
    assert commitment_of(shown) == app.page.text_content(COMMITMENT)

    # how to check it: the documentation, the record, the verifier's command
    record = f"{app.base}/v1/archive/games/{game_id}/record"
    assert app.page.get_attribute("[data-testid=fair-docs]", "href") == DOCS
    assert (ROOT / "docs" / "fairness.md").is_file()
    assert app.page.get_attribute("[data-testid=fair-record]", "href") == record
    command = app.page.input_value("[data-testid=fair-verify]")
    assert command == f"curl -s '{record}' | python3 clients/verifier/ten_verify.py -"
    assert "clients/verifier/ten_verify.py" in app.page.inner_text(FAIRNESS)
    # the command's record, handed to the verifier, verifies (once the archive has it)
    url = re.search(r"'([^']+)'", command).group(1)
    body = wait_for(
        lambda: (r := api.get(url)).status_code == 200 and r.content, "the game's record"
    )
    checked = subprocess.run(
        [sys.executable, str(VERIFIER), "--require-verifiable", "-"],
        input=body, capture_output=True, check=False, timeout=60,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert json.loads(body)["fairness"]["seed"] == seed


def join(app: App, game_id: str, name: str, entropy: str | None = None) -> str:
    """Joins the table from its waiting room, keeping the browser's entropy (None) or typing
    `entropy` ("": none); returns the entropy the form held when it was sent."""
    app.goto(f"/join/{game_id}", "waiting")
    page = app.page
    page.fill("#join-name", name)
    if entropy is not None:
        page.fill("#join-entropy", entropy)
    sent = page.input_value("#join-entropy")
    page.click("#join-submit")
    page.wait_for_selector("#join-form", state="detached")
    return sent


def test_players_who_join_add_their_entropy(new_context, api: httpx.Client) -> None:
    ann, bob, cy, dee = (new_context() for _ in range(4))
    ann.goto("/", "lobby")
    game_id = ann.create_table("Ann", ["open", "open", "open"])
    assert ann.screen() == "waiting"
    table = api.get(f"/v1/games/{game_id}").json()
    assert table["status"] == "open"
    assert state(ann) == "sealed"
    assert ann.page.get_attribute(COMMITMENT, "title") == table["fairness"]["commitment"]

    bob.goto(f"/join/{game_id}", "waiting")
    assert state(bob) == "sealed"  # published before anyone joins
    chosen = bob.page.input_value("#join-entropy")
    assert HEX.match(chosen), chosen
    kept = join(bob, game_id, "Bob")
    assert kept == chosen
    cy.goto(f"/join/{game_id}", "waiting")
    other = cy.page.input_value("#join-entropy")
    assert HEX.match(other), other
    assert other != chosen  # each browser draws its own
    join(cy, game_id, "Cy", "Cy's own luck")
    join(dee, game_id, "Dee", "")  # none
    ann.wait_screen("table")
    view = api.get(f"/v1/games/{game_id}").json()
    assert view["status"] == "active"
    assert view["fairness"]["entropy"] == ["", chosen, "Cy's own luck", ""]
    assert view["fairness"]["commitment"] == table["fairness"]["commitment"]
    assert ann.page.get_attribute(COMMITMENT, "title") == table["fairness"]["commitment"]


def test_a_game_dealt_from_a_given_deck_is_not_verifiable(app: App, api: httpx.Client) -> None:
    game = deck_game(api, ["Ann"], README_DECK)
    assert game["fairness"] is None
    hold_seat(app, game)
    app.goto(f"/game/{game['id']}", "table")
    assert state(app) == "none"
    assert app.page.inner_text(FAIRNESS).startswith("Not verifiable")
    play_actions(api, game, README_GAME)
    app.wait_screen("results")
    assert state(app) == "none"
    assert app.page.locator(f"{COMMITMENT}, {SEED}, [data-testid=fair-verify]").count() == 0


def fair_lines(app: App) -> list[str]:
    """The lines of text the fair deal's elements show (and the join's entropy field's)."""
    texts = app.page.eval_on_selector_all(
        f"{FAIRNESS}, label[for=join-entropy], #join-entropy-help",
        "els => els.map(e => e.innerText)",
    )
    return [line.strip() for text in texts for line in text.splitlines() if line.strip()]


def test_the_fair_deal_is_told_in_every_language(app: App, api: httpx.Client) -> None:
    created = api.post("/v1/games", json={"players": [{"name": "Ann"}]})
    assert created.status_code == 201, created.text
    ended = created.json()
    aborted = api.post(f"/v1/games/{ended['id']}/abort", headers=bearer(ended["host_token"]))
    assert aborted.status_code == 200, aborted.text
    seed = aborted.json()["fairness"]["seed"]
    table = api.post("/v1/games", json={"players": [{"name": "Bo"}, {"open": True}]})
    assert table.status_code == 201, table.text
    deck = deck_game(api, ["Ann"], README_DECK)
    hold_seat(app, ended)
    hold_seat(app, deck)
    screens = {
        "revealed": (f"/game/{ended['id']}", "results"),
        "sealed": (f"/join/{table.json()['id']}", "waiting"),
        "none": (f"/game/{deck['id']}", "table"),
    }
    shown: dict[tuple[str, str], list[str]] = {}
    for lang in LANGUAGES:
        app.goto("/", "lobby")
        app.set_language(lang)
        for kind, (route, screen) in screens.items():
            app.goto(route, screen)
            wait_for(lambda kind=kind: state(app) == kind, f"{kind} in {lang}")
            lines = fair_lines(app)
            assert lines, (lang, kind)
            assert not [line for line in lines if re.search(r"\{\w+\}", line)], (lang, lines)
            if kind == "revealed":
                assert app.page.text_content(SEED) == seed, lang
            shown[lang, kind] = lines
    for (lang, kind), lines in shown.items():
        english = shown["en", kind]
        assert len(lines) == len(english), (lang, kind, lines, english)
        if lang != "en":
            same = [line for line in lines if line in english]
            assert not same, (lang, kind, same)
