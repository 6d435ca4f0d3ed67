"""Every action of a record judged again by the engine (`check_record` through
`domain.game.rejudge`): the records of played games (1 to 5 seats, bots, aborted, clocked
ones with timeouts, seats taken over, resigned, reclaimed, abandoned) are accepted; a move
changed so that the rules refuse it, or so that it is not what the engine makes of it, is
refused with the event's seq and version."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import msgspec
import pytest

from service.history.archiving import archival
from service.history.records import BadRecord, GameRecordV1, check_record, encode_line, record_of
from tests.support.ended_games import Played, aborted_game, clocked, dataset

Document = dict[str, Any]


@cache
def played() -> tuple[Played, ...]:
    return (*dataset(), aborted_game(1), aborted_game(2, after_actions=60), *clocked())


def document(p: Played) -> Document:
    kept = archival(p.record, p.stored, p.player_ids)
    return msgspec.json.decode(encode_line(record_of(kept.game, p.stored)))


def checked(d: Document) -> None:
    check_record(msgspec.json.decode(msgspec.json.encode(d), type=GameRecordV1))


@pytest.mark.parametrize("i", range(len(played())))
def test_every_played_game_is_accepted(i: int) -> None:
    checked(document(played()[i]))


def test_the_games_cover_every_kind_of_move() -> None:
    """What the accepted games hold: each player count, and every event the engine and its
    clock write (timeouts, takeovers, resignations, reclaims)."""
    counts = {len(p.player_ids) for p in played()}
    kinds = {e["type"] for p in played() for e in document(p)["events"]}
    reasons = {e["reason"] for p in played() for e in document(p)["events"] if "reason" in e}
    assert counts == {1, 2, 3, 4, 5}
    assert {"timed_out", "seat_taken_over", "seat_reclaimed", "wild_discarded"} <= kinds
    assert reasons == {"timeouts", "resigned"}


# ---------------------------------------------------------------- tampered moves


def events_of(d: Document, kind: str) -> Iterator[Document]:
    return (e for e in d["events"] if e["type"] == kind)


def first_with(kind: str, games: tuple[Played, ...] | None = None) -> tuple[Document, Document]:
    """A record of a played game and its first event of `kind`."""
    for p in games or played():
        d = document(p)
        found = next(events_of(d, kind), None)
        if found is not None:
            return d, found
    raise AssertionError(f"no played game has a {kind}")


def refused(d: Document, event: Document, why: str) -> None:
    """The record is refused at `event`, named by its seq and version, for `why`."""
    with pytest.raises(BadRecord) as caught:
        checked(d)
    named = f"event {event['seq']} (version {event['version']}): "
    assert str(caught.value).startswith(named), str(caught.value)
    assert re.search(why, str(caught.value)), str(caught.value)


def test_a_bid_below_the_highest_is_refused() -> None:
    for p in played():
        d = document(p)
        bids: list[Document] = []
        for e in d["events"]:
            if e["type"] == "auction_started":
                bids = []
            elif e["type"] == "bid_placed":
                bids.append(e)
                if len(bids) == 2:
                    bids[1]["amount"] = bids[0]["amount"]
                    refused(
                        d, bids[1], r"bid_placed of seat \d is refused by the rules: bid_too_low"
                    )
                    return
    raise AssertionError("no auction with two bids")


def test_a_pass_by_a_seat_not_on_turn_is_refused() -> None:
    d, passed = first_with("bid_passed", tuple(p for p in played() if len(p.player_ids) >= 3))
    passed["seat"] = (passed["seat"] + 1) % d["player_count"]
    refused(d, passed, "bid_passed of seat .* refused by the rules: not_your_turn")


def test_a_draw_by_a_seat_not_on_turn_is_refused() -> None:
    d = document(next(p for p in played() if len(p.player_ids) == 4))
    drawn = list(events_of(d, "card_drawn"))[3]
    drawn["seat"] = (drawn["seat"] + 2) % 4
    refused(d, drawn, "card_drawn of seat .* not_your_turn")


@pytest.mark.parametrize(
    ("change", "code"),
    [
        (
            lambda pay: pay.update(currency=pay.get("currency", 0) + 1),
            "payment_not_(minimal|held)",
        ),
        (lambda pay: pay.update(bust=pay.get("bust", 0) + 20), "payment_not_held"),
        (lambda pay: pay.update(currency=0, bust=0, cards=[]), "insufficient_payment"),
    ],
)
def test_a_buy_with_the_wrong_payment_is_refused(
    change: Callable[[Document], None], code: str
) -> None:
    d, bought = first_with("card_bought")
    change(bought["payment"])
    refused(d, bought, f"card_bought of seat .* refused by the rules: {code}")


def test_a_winning_bid_paid_with_tokens_not_held_is_refused_at_the_bid() -> None:
    """The payment of a bid is public only once it wins (`auction_won`): the bid is judged
    with it."""
    for p in played():
        d = document(p)
        last_bid = None
        for e in d["events"]:
            if e["type"] == "bid_placed":
                last_bid = e
            elif e["type"] == "auction_won" and last_bid is not None:
                e["payment"] = {"currency": 0, "bust": 50}
                refused(d, last_bid, "bid_placed of seat .* refused by the rules: payment_not_held")
                return
    raise AssertionError("no auction won")


def test_an_action_after_the_game_ended_is_refused() -> None:
    d = document(dataset()[3])
    end = d["events"][-1]
    assert end["type"] == "game_finished"
    late = {"type": "buy_declined", "seq": end["seq"] + 1, "version": end["version"] + 1, "seat": 0}
    d["events"].append(late)
    d["version"] += 1
    refused(d, late, "buy_declined of seat 0 is refused by the rules: game_finished")


def test_a_consequence_the_engine_does_not_give_is_refused() -> None:
    d, stopped = first_with("stopped")
    stopped["gains"] = [*stopped["gains"], {"seat": stopped["seat"], "amount": 1}]
    refused(d, stopped, "stopped differs from the engine's in gains")


def test_an_event_no_action_starts_with_is_refused() -> None:
    d, declined = first_with("buy_declined")
    declined["type"] = "turn_started"  # the same fields: a turn where the buy phase ends
    refused(d, declined, "no action starts with turn_started")


def test_a_timeout_of_a_seat_the_game_does_not_wait_on_is_refused() -> None:
    d, timed = first_with("timed_out", clocked())
    timed["seat"] = (timed["seat"] + 1) % d["player_count"]
    refused(d, timed, "seat .* times out, the game waits on seat")


def test_a_move_made_for_another_seat_after_a_timeout_is_refused() -> None:
    d, timed = first_with("timed_out", clocked())
    move = d["events"][d["events"].index(timed) + 1]
    move["seat"] = (move["seat"] + 1) % d["player_count"]
    refused(d, move, "is no move made for seat")


def test_a_takeover_without_a_timeout_just_before_is_refused() -> None:
    for p in clocked():
        d = document(p)
        taken = next(
            (e for e in events_of(d, "seat_taken_over") if e["reason"] == "timeouts"), None
        )
        if taken is not None:
            taken["seat"] = (taken["seat"] + 1) % d["player_count"]
            refused(d, taken, "taken over without timing out just before")
            return
    raise AssertionError("no seat taken over after timeouts")


def test_the_deck_s_next_card_is_named_when_a_draw_differs() -> None:
    d, drawn = first_with("card_drawn")
    other = next(c for c in d["deck"] if c != drawn["card"])
    drawn["card"] = other
    refused(d, drawn, f"draws {re.escape(other)}, the deck's next card is")
