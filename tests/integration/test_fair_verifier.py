"""The stand-alone verifier (clients/verifier/ten_verify.py) on records of games the engine
dealt and bots played to the end: every player count, with and without the seats'
entropy, a named and a drawn starting seat, a given deck; each kind of tampering refused.
One run as a user runs it, a separate process on a file, which also shows that it needs
nothing of the service."""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fair_records import VERIFIER, bot_record, load_verifier

verifier = load_verifier()
ENTROPY = ["ann's luck", "", "ç'est moi", "🂡", "x" * 64]


def games() -> list[dict]:
    found = []
    for players in range(1, 6):
        found.append(bot_record(players, f"plain-{players}"))
        found.append(bot_record(players, f"mixed-{players}", ENTROPY[:players]))
        found.append(bot_record(players, f"named-{players}", ENTROPY[:players], starting_seat=0))
    return found


GAMES = games()


@pytest.mark.parametrize("record", GAMES, ids=lambda r: r["id"])
def test_a_fair_game_verifies(record: dict) -> None:
    verdict = verifier.verify(record)
    assert verdict["error"] is None
    assert verdict["ok"]
    assert verdict["verifiable"]
    assert verdict["draws"] == len(record["deck"])  # a finished game draws every card


def test_a_given_deck_is_not_verifiable_but_its_draws_are_checked() -> None:
    record = bot_record(2, "given", deck=["R1", "B2", "O3", "G4", "$1", "R5"])
    assert record["fairness"]["verifiable"] is False
    assert verifier.verify(record)["ok"]
    assert not verifier.verify(record)["verifiable"]
    swapped = copy.deepcopy(record)
    swapped["deck"][0], swapped["deck"][1] = swapped["deck"][1], swapped["deck"][0]
    assert "draws" in verifier.verify(swapped)["error"]


def _swap_deck_card(record: dict) -> None:
    deck = record["deck"]
    other = next(i for i, c in enumerate(deck) if c != deck[0])
    deck[0], deck[other] = deck[other], deck[0]


def _swap_drawn_card(record: dict) -> None:
    drawn = [e for e in record["events"] if e["type"] == "card_drawn"]
    first = drawn[len(drawn) // 2]
    first["card"] = next(e["card"] for e in drawn if e["card"] != first["card"])


def _change_seed(record: dict) -> None:
    record["fairness"]["seed"] += "0"


def _change_entropy(record: dict) -> None:
    for fair in (record["fairness"], record["events"][0]["fairness"]):
        fair["entropy"][0] += "!"


def _change_commitment(record: dict) -> None:
    fake = "0" * 64
    record["fairness"]["commitment"] = record["events"][0]["fairness"]["commitment"] = fake


def _change_starting_seat(record: dict) -> None:
    started = record["events"][0]
    started["starting_seat"] = (started["starting_seat"] + 1) % record["player_count"]


TAMPERINGS = {
    "a card swapped in the deck": (_swap_deck_card, "deck"),
    "a drawn card swapped in the events": (_swap_drawn_card, "draws"),
    "the seed changed": (_change_seed, "commitment"),
    "an entropy changed": (_change_entropy, "deck"),
    "the commitment changed": (_change_commitment, "commitment"),
    "the starting seat changed": (_change_starting_seat, "starting seat"),
}


@pytest.mark.parametrize("tampering", sorted(TAMPERINGS))
def test_every_tampered_record_is_refused(tampering: str) -> None:
    change, said = TAMPERINGS[tampering]
    for record in GAMES:
        if tampering == "the starting seat changed" and (
            record["player_count"] == 1 or not record["fairness"]["start_drawn"]
        ):
            continue  # one seat, or a seat the creator named: nothing drawn to check
        tampered = copy.deepcopy(record)
        change(tampered)
        verdict = verifier.verify(tampered)
        assert not verdict["ok"], (tampering, record["id"])
        assert said in verdict["error"], verdict["error"]


def test_the_record_must_agree_with_what_game_started_published() -> None:
    tampered = copy.deepcopy(GAMES[4])
    tampered["fairness"]["entropy"] = [""] * tampered["player_count"]
    assert "differs from the one game_started published" in verifier.verify(tampered)["error"]


def test_it_runs_alone_on_files_and_stdin(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.ndjson", tmp_path / "bad.json"
    good.write_text("".join(json.dumps(r) + "\n" for r in GAMES[:4]))
    tampered = copy.deepcopy(GAMES[5])
    _swap_drawn_card(tampered)
    bad.write_text(json.dumps(tampered))
    # -I: isolated (no PYTHONPATH, no current directory on the path): nothing of the repo
    run = [sys.executable, "-I", str(VERIFIER)]
    ok = subprocess.run([*run, str(good)], capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.count("OK ") == 4
    mixed = subprocess.run(
        [*run, "--json", str(good), str(bad)], capture_output=True, text=True, check=False
    )
    assert mixed.returncode == 1
    report = json.loads(mixed.stdout)
    assert (report["records"], report["verified"], report["refused"]) == (5, 4, 1)
    refused = [r for r in report["results"] if not r["ok"]]
    assert refused[0]["id"] == tampered["id"]
    assert "draws" in refused[0]["error"]
    piped = subprocess.run(
        run, input=json.dumps(tampered), capture_output=True, text=True, check=False
    )
    assert piped.returncode == 1
    assert f"REFUSED {tampered['id']}" in piped.stdout
    broken = subprocess.run(run, input="{nope", capture_output=True, text=True, check=False)
    assert broken.returncode == 2


def test_the_documented_example_holds() -> None:
    """The worked example of docs/fairness.md and the verifier's README."""
    seed = "0123456789abcdef0123456789abcdef"
    assert verifier.commitment(seed) == (
        "98afec6e3d168a0095f76be319fdb9e75fca901cc329ae6a9b69c463db2d37e1"
    )
    dealt = verifier.deal_seed(seed, ["ann", ""])
    assert dealt == "f672399b906ca2a085678d47628f98caeb216c7273349c39a8924ddff11e6897"
    assert verifier.Stream(dealt).next_u64() == 5940706471332029219
    stream = verifier.Stream(dealt)
    pile = stream.shuffled(verifier.deck_for(2))
    assert pile[:8] == ["$3", "B#", "$1", "W5", "$1", "$3", "W9", "$1"]
    assert stream.randbelow(2) == 1
    for doc in (Path("docs/fairness.md"), VERIFIER.with_name("README.md")):
        text = (VERIFIER.parents[2] / doc).read_text()
        assert dealt in text
        assert "$3 B# $1 W5 $1 $3 W9 $1" in text
    assert [len(verifier.deck_for(n)) for n in range(1, 6)] == [81, 81, 105, 129, 129]


def _refusal(record: dict) -> str:
    verdict = verifier.verify(record)
    assert not verdict["ok"], record["id"]
    assert isinstance(verdict["error"], str)
    return verdict["error"]


def test_a_published_commitment_cannot_be_disclaimed() -> None:
    """game_started published a commitment: the record must verify fully, whatever its own
    fairness says; a swapped deck behind `verifiable: false` is refused."""
    for record in GAMES:
        tampered = copy.deepcopy(record)
        tampered["fairness"]["verifiable"] = False
        assert "fairness.verifiable" in _refusal(tampered)
        _swap_deck_card(tampered)
        drawn = [e for e in tampered["events"] if e["type"] == "card_drawn"]
        for event, card in zip(drawn, tampered["deck"], strict=False):
            event["card"] = card
        assert verifier.verify(tampered)["verifiable"]
        _refusal(tampered)
    for field, value in (("scheme", None), ("commitment", None), ("start_drawn", None)):
        tampered = copy.deepcopy(GAMES[4])
        tampered["fairness"][field] = value
        assert f"fairness.{field} differs" in _refusal(tampered)
    absent = copy.deepcopy(GAMES[4])
    del absent["fairness"]["start_drawn"], absent["events"][0]["fairness"]["start_drawn"]
    assert "start_drawn" in _refusal(absent)


def test_a_given_deck_holds_only_the_games_cards() -> None:
    record = bot_record(2, "given", deck=["R1", "B2", "O3", "G4", "$1", "R5"])
    foreign = copy.deepcopy(record)
    foreign["deck"][0] = "X99"
    next(e for e in foreign["events"] if e["type"] == "card_drawn")["card"] = "X99"
    assert "no card of the game" in _refusal(foreign)
    doubled = copy.deepcopy(record)
    doubled["deck"] = ["R7", "R7", *doubled["deck"][2:]]
    drawn = [e for e in doubled["events"] if e["type"] == "card_drawn"]
    drawn[0]["card"] = drawn[1]["card"] = "R7"
    assert "more R7" in _refusal(doubled)
    claimed = copy.deepcopy(record)
    claimed["fairness"]["verifiable"] = True
    assert "fairness.verifiable" in _refusal(claimed)
    stripped = copy.deepcopy(GAMES[4])  # the commitment cut out of game_started, not the record
    stripped["fairness"]["verifiable"] = False
    stripped["events"][0]["fairness"] = None
    assert "fairness.scheme" in _refusal(stripped)


def test_a_truncated_or_lengthened_deck_is_refused_with_a_reason() -> None:
    for record in GAMES:
        for deck in (record["deck"][:-1], record["deck"][:1], [*record["deck"], "$1"]):
            tampered = copy.deepcopy(record)
            tampered["deck"] = deck
            tampered["events"][0]["draw_pile_size"] = len(deck)
            assert "the deck has" in _refusal(tampered)


def test_an_auction_is_of_the_card_just_drawn() -> None:
    tampered = copy.deepcopy(next(r for r in GAMES if r["player_count"] == 3))
    auctions = [e for e in tampered["events"] if e["type"] == "auction_started"]
    auctions[0]["card"] = "W9" if auctions[0]["card"] != "W9" else "W8"
    assert "not the card just drawn" in _refusal(tampered)
    moved = copy.deepcopy(next(r for r in GAMES if r["player_count"] == 3))
    events = moved["events"]
    at = next(i for i, e in enumerate(events) if e["type"] == "auction_started")
    events.insert(1, events.pop(at))  # right after game_started, before any draw
    assert "not the card just drawn" in _refusal(moved)


def refused_report(records: Path) -> dict:
    """The verifier's JSON report on a file where some record is refused, run alone."""
    run = subprocess.run(
        [sys.executable, "-I", str(VERIFIER), "--json", str(records)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode == 1, run.stderr
    return json.loads(run.stdout)


def _mutate(value: object, rng: random.Random) -> object:
    """One random change somewhere in a JSON value."""
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(sorted(value))
        if rng.random() < 0.15:
            del value[key]
        else:
            value[key] = _mutate(value[key], rng)
        return value
    if isinstance(value, list) and value and rng.random() < 0.8:
        if rng.random() < 0.15:
            del value[rng.randrange(len(value)) :]
        else:
            at = rng.randrange(len(value))
            value[at] = _mutate(value[at], rng)
        return value
    return rng.choice([None, True, 0, -1, 2**70, 1.5, "", "R1", [], {}, [None], {"a": 1}])


def test_a_malformed_record_is_refused_never_a_traceback(tmp_path: Path) -> None:
    rng = random.Random(41)
    mutated = []
    for _ in range(300):
        record = copy.deepcopy(rng.choice(GAMES))
        for _ in range(rng.randint(1, 3)):
            record = _mutate(record, rng)
        verdict = verifier.verify(record)  # never raises
        assert verdict["ok"] or isinstance(verdict["error"], str)
        mutated.append(record)
    trunc = copy.deepcopy(GAMES[7])
    trunc["deck"].pop()
    trunc["events"][0]["draw_pile_size"] -= 1
    records = tmp_path / "records.ndjson"
    lines = [json.dumps(r) for r in [trunc, *mutated[:20], GAMES[0], 5, [], "x"]]
    records.write_text("\n".join(lines) + "\n")
    report = refused_report(records)
    assert report["records"] == len(lines)  # one bad record stops none of the others
    assert report["results"][0]["error"] == "the deck has 104 cards, the shuffle of 3 players 105"
    assert report["results"][21]["ok"]
    assert [r["ok"] for r in report["results"][-3:]] == [False] * 3


def test_ndjson_is_read_a_line_at_a_time() -> None:
    """A bulk export is streamed: each record is yielded before the next line is read."""

    def lines() -> Iterator[str]:
        yield json.dumps(GAMES[0]) + "\n"
        yield "\n"
        yield json.dumps(GAMES[1]) + "\n"
        raise AssertionError("read past the record asked for")

    records = verifier.records_in(lines())
    assert next(records)["id"] == GAMES[0]["id"]
    assert next(records)["id"] == GAMES[1]["id"]
    pretty = json.dumps(GAMES[2], indent=1).splitlines(keepends=True)  # one document, whole
    assert list(verifier.records_in(pretty)) == [GAMES[2]]
    listed = json.dumps(GAMES[:2], indent=1).splitlines(keepends=True)
    assert list(verifier.records_in(listed)) == GAMES[:2]
    assert list(verifier.records_in(["\n", " \n"])) == []


def test_a_line_that_is_not_json_is_refused_and_the_others_checked(tmp_path: Path) -> None:
    records = tmp_path / "records.ndjson"
    lines = [json.dumps(GAMES[0]), '{"id": "cut', json.dumps(GAMES[1])]
    records.write_text("\n".join(lines) + "\n")
    report = refused_report(records)
    assert [r["ok"] for r in report["results"]] == [True, False, True]
    assert report["results"][1]["error"].startswith("line 2: not JSON")


def end(count: int, complete: bool = True, **more: object) -> str:
    return json.dumps({"type": "end", "count": count, "complete": complete, **more})


def run_on(tmp_path: Path, lines: list[str], *flags: str) -> subprocess.CompletedProcess:
    path = tmp_path / "export.ndjson"
    path.write_text("\n".join(lines) + "\n")
    run = [sys.executable, "-I", str(VERIFIER), *flags, str(path)]
    return subprocess.run(run, capture_output=True, text=True, check=False)


def test_the_export_s_complete_end_line_is_no_record(tmp_path: Path) -> None:
    """The bulk export's trailer is read, not verified as a record: the records verify."""
    whole = run_on(tmp_path, [*map(json.dumps, GAMES[:3]), end(3)], "--json")
    assert whole.returncode == 0, whole.stdout + whole.stderr
    report = json.loads(whole.stdout)
    assert (report["records"], report["verified"], report["incomplete_exports"]) == (3, 3, [])
    empty = run_on(tmp_path, [end(0)])
    assert empty.returncode == 0, empty.stdout + empty.stderr


def test_an_incomplete_export_is_reported(tmp_path: Path) -> None:
    error = {"type": "https://ten.example/problems/store_unavailable", "status": 503,
             "title": "Service Unavailable", "code": "store_unavailable",
             "detail": "The game store cannot be reached; retry shortly."}  # fmt: skip
    cut = run_on(tmp_path, [*map(json.dumps, GAMES[:2]), end(2, False, error=error)])
    assert cut.returncode == 1
    assert "INCOMPLETE" in cut.stdout
    assert "cut after 2 records (store_unavailable: The game store" in cut.stdout
    assert cut.stdout.count("OK ") == 2  # the records sent are still verified
    report = json.loads(
        run_on(tmp_path, [json.dumps(GAMES[0]), end(2, False, error=error)], "--json").stdout
    )
    assert report["refused"] == 0
    assert [e["index"] for e in report["incomplete_exports"]] == [1]


@pytest.mark.parametrize(
    ("lines", "why"),
    [
        ([json.dumps(GAMES[0]), end(2)], "the export's end counts 2 records, 1 came before it"),
        ([json.dumps(GAMES[0]), end(1), json.dumps(GAMES[1])], "a line after the export's end"),
    ],
)
def test_an_end_line_that_does_not_fit_is_reported(
    tmp_path: Path, lines: list[str], why: str
) -> None:
    got = run_on(tmp_path, lines)
    assert got.returncode == 1
    assert why in got.stdout
